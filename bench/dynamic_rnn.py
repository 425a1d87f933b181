"""A TF 1.x dynamic_rnn LSTM step: BasicLSTMCell(128) over 50 steps of a
batch of 32 (input depth 128), forward only and forward+backward
(tf.gradients of the summed outputs with respect to the kernel and bias),
by tensorweave and by TensorFlow in the same run.

TensorFlow is never a project dependency: its side runs this script again
under the Python named by $TENSORFLOW_PYTHON (default /work/tfvenv/bin/python,
a separate virtualenv), or in this process if tensorflow is importable here.
Each side reports its best of --repeats runs (ours half before TensorFlow's
and half after): on a machine shared with other work the best run is the
least disturbed one, so more repeats steady the ratio.
Usage: PYTHONPATH=python python bench/dynamic_rnn.py [--repeats N]
"""

import argparse
import json
import time

import numpy as np
import tensorflow_side

BATCH, STEPS, UNITS, DEPTH = 32, 50, 128, 128


def build_lstm(tf, rnn_cell, nn):
    """The benchmarked program: (outputs, list of gradients or None)."""
    x = tf.placeholder(tf.float32, [BATCH, STEPS, DEPTH], name="x")
    cell = rnn_cell.BasicLSTMCell(UNITS)
    outputs, _ = nn.dynamic_rnn(cell, x, dtype=tf.float32)
    loss = tf.reduce_sum(outputs)
    try:
        gradients = tf.gradients(loss, tf.trainable_variables())
    except NotImplementedError:  # no gradients through while loops yet
        gradients = None
    return outputs, gradients


def _best_seconds(sess, fetches, feeds, repeats):
    sess.run(fetches, feeds)  # warm up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        sess.run(fetches, feeds)
        best = min(best, time.perf_counter() - start)
    return best


def bench(toolkit, repeats):
    """{"forward": ms, "forward_backward": ms or None}, best of `repeats`."""
    tf, rnn_cell, nn = toolkit
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(1)
        outputs, gradients = build_lstm(tf, rnn_cell, nn)
        init = tf.global_variables_initializer()
    feeds = {"x:0": np.random.RandomState(0).uniform(-1, 1, [BATCH, STEPS, DEPTH]).astype("f")}
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        figures = {"forward": _best_seconds(sess, outputs, feeds, repeats) * 1e3}
        figures["forward_backward"] = (
            None
            if gradients is None
            else _best_seconds(sess, [outputs] + gradients, feeds, repeats) * 1e3
        )
    return figures


def tensorflow_toolkit():
    v1 = tensorflow_side.tensorflow_v1(control_flow_v2=False)
    from tensorflow.python.ops import rnn, rnn_cell_impl

    return v1, rnn_cell_impl, rnn


def _line(label, ours, theirs):
    if ours is None:
        print(f"{label:28s} tensorweave: not available (no gradients through while loops)")
        return
    if theirs is None:
        print(f"{label:28s} tensorweave {ours:9.2f} ms   tensorflow not available")
        return
    print(
        f"{label:28s} tensorweave {ours:9.2f} ms   tensorflow {theirs:9.2f} ms   "
        f"ratio {ours / theirs:5.2f}x (target <= 0.5x)"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        print(json.dumps(bench(tensorflow_toolkit(), args.repeats)))
        return
    import tensorweave as tw

    # Half of our runs before TensorFlow's and half after, so that a spell
    # of load from other work on the machine weighs on both sides alike.
    toolkit = (tw, tw.nn.rnn_cell, tw.nn)
    ours = bench(toolkit, (args.repeats + 1) // 2)
    theirs = (
        tensorflow_side.figures(
            __file__,
            ["--repeats", str(args.repeats)],
            lambda: bench(tensorflow_toolkit(), args.repeats),
        )
        or {}
    )
    after = bench(toolkit, max(1, args.repeats // 2))
    ours = {key: None if value is None else min(value, after[key]) for key, value in ours.items()}
    print(f"dynamic_rnn BasicLSTMCell({UNITS}), batch {BATCH}, {STEPS} steps, depth {DEPTH}")
    _line("forward", ours["forward"], theirs.get("forward"))
    _line("forward+backward", ours["forward_backward"], theirs.get("forward_backward"))


if __name__ == "__main__":
    main()
