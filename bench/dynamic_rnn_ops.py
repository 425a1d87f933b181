"""Where bench/dynamic_rnn.py's forward+backward LSTM step spends its time,
per op type, by tensorweave and by TensorFlow in the same run: the summed
node times of a FULL_TRACE run's step_stats (the traced run with the
shortest wall time of --repeats), side by side.

Node times of nodes that ran at once on different threads add up, so a
column can sum to more than the step's wall time. Op types are those of
the graph the client built: tensorweave's optimizer fuses the cell's
MatMul and BiasAdd into one _FusedMatMul node, which keeps one of the two
names (it shows up under that op's type); the MatMuls of the gradient stay.
Usage: PYTHONPATH=python python bench/dynamic_rnn_ops.py [--repeats N]
"""

import argparse
import collections
import json
import time

import dynamic_rnn
import numpy as np
import tensorflow_side


def bench(toolkit, repeats):
    """{"step": wall ms, "ops": {op type: [summed ms, runs]}} of the fastest
    of `repeats` traced steps."""
    tf, rnn_cell, nn = toolkit
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(1)
        outputs, gradients = dynamic_rnn.build_lstm(tf, rnn_cell, nn)
        init = tf.global_variables_initializer()
    op_types = {op.name: op.type for op in graph.get_operations()}
    shape = [dynamic_rnn.BATCH, dynamic_rnn.STEPS, dynamic_rnn.DEPTH]
    feeds = {"x:0": np.random.RandomState(0).uniform(-1, 1, shape).astype("f")}
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    best, best_metadata = float("inf"), None
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        sess.run([outputs] + gradients, feeds)  # warm up
        for _ in range(repeats):
            metadata = tf.RunMetadata()
            start = time.perf_counter()
            sess.run([outputs] + gradients, feeds, options=options, run_metadata=metadata)
            seconds = time.perf_counter() - start
            if seconds < best:
                best, best_metadata = seconds, metadata
    ops = collections.defaultdict(lambda: [0.0, 0])
    for device in best_metadata.step_stats.dev_stats:
        for node in device.node_stats:
            name = node.node_name.split(":")[0]
            micros = node.all_end_rel_micros or node.op_end_rel_micros
            entry = ops[op_types.get(name, name)]
            entry[0] += micros / 1e3
            entry[1] += 1
    return {"step": best * 1e3, "ops": dict(ops)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        print(json.dumps(bench(dynamic_rnn.tensorflow_toolkit(), args.repeats)))
        return
    import tensorweave as tw

    ours = bench((tw, tw.nn.rnn_cell, tw.nn), args.repeats)
    theirs = tensorflow_side.figures(
        __file__,
        ["--repeats", str(args.repeats)],
        lambda: bench(dynamic_rnn.tensorflow_toolkit(), args.repeats),
    ) or {"step": None, "ops": {}}
    print(f"dynamic_rnn LSTM forward+backward, traced step (fastest of {args.repeats})")
    step = "n/a" if theirs["step"] is None else f"{theirs['step']:.2f} ms"
    print(f"wall time: tensorweave {ours['step']:.2f} ms, tensorflow {step}")
    print(
        f"{'op type':24s} {'tensorweave ms':>15s} {'runs':>6s} {'tensorflow ms':>15s} {'runs':>6s}"
    )
    types = sorted(
        set(ours["ops"]) | set(theirs["ops"]),
        key=lambda t: -max(ours["ops"].get(t, [0])[0], theirs["ops"].get(t, [0])[0]),
    )
    for op_type in types[: args.top]:
        ms, runs = ours["ops"].get(op_type, [0.0, 0])
        their_ms, their_runs = theirs["ops"].get(op_type, [0.0, 0])
        print(f"{op_type:24s} {ms:15.2f} {runs:6d} {their_ms:15.2f} {their_runs:6d}")


if __name__ == "__main__":
    main()
