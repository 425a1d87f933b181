"""Where the time of model_inference.py's models goes: each model at one
batch size run with RunOptions FULL_TRACE by tensorweave and by TensorFlow
in the same run, and the step stats' node times summed by op type (best
step of --repeats for each op type), side by side with the ratio. The
node names differ after each side's graph optimizer (TensorFlow's oneDNN
build runs _MklNative* ops), so ops are grouped by type, with oneDNN's
prefixes dropped (_MklNativeFusedConv2D counts as _FusedConv2D).

Usage: PYTHONPATH=python python bench/model_profile.py [--model mobilenet_v2] [--batch 1]
"""

import argparse
import collections
import json
import os

import numpy as np
import tensorflow_side
from model_inference import _graph_def


def _op_type(node_stats):
    # Both sides' timeline labels read "name = Op(inputs)".
    label = node_stats.timeline_label
    op = label.split(" = ")[1].split("(")[0] if " = " in label else node_stats.node_name
    for prefix in ("_MklNative", "_Mkl"):
        if op.startswith(prefix):
            op = op[len(prefix) :]
            op = op if op.startswith("_Fused") or not op.startswith("Fused") else "_" + op
    return op


def profile(tf, name, batch, repeats):
    """{op type: [best microseconds per step, node count]}."""
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(_graph_def(tf, name), name="")
    x = graph.get_tensor_by_name("x:0")
    logits = graph.get_tensor_by_name("Identity:0")
    size = int(x.shape[1])
    images = np.random.default_rng(batch).uniform(-1, 1, [batch, size, size, 3])
    feeds = {x: images.astype(np.float32)}
    best = {}
    with tf.Session(graph=graph) as sess:
        for _ in range(3):
            sess.run(logits, feeds)
        for _ in range(repeats):
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            metadata = tf.RunMetadata()
            sess.run(logits, feeds, options=options, run_metadata=metadata)
            step = collections.defaultdict(lambda: [0.0, 0])
            for device in metadata.step_stats.dev_stats:
                if "stream" in device.device or "memcpy" in device.device:
                    continue
                for node in device.node_stats:
                    if node.node_name in ("_SOURCE", "_SINK"):
                        continue
                    micros = node.all_end_rel_micros or (
                        node.op_end_rel_micros - node.op_start_rel_micros
                    )
                    entry = step[_op_type(node)]
                    entry[0] += micros
                    entry[1] += 1
            for op, (micros, count) in step.items():
                if op not in best or micros < best[op][0]:
                    best[op] = [micros, count]
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mobilenet_v2")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        tf = tensorflow_side.tensorflow_v1()
        print(json.dumps(profile(tf, args.model, args.batch, args.repeats)))
        return
    import tensorweave as tw

    load = os.getloadavg()[0]
    ours = profile(tw, args.model, args.batch, args.repeats)
    theirs = (
        tensorflow_side.figures(
            __file__,
            ["--model", args.model, "--batch", str(args.batch), "--repeats", str(args.repeats)],
            lambda: profile(tensorflow_side.tensorflow_v1(), args.model, args.batch, args.repeats),
        )
        or {}
    )
    print(f"{args.model} batch {args.batch}, load average (1 min) {load:.2f}")
    print(f"{'op type':<30} {'tensorweave us (n)':>20} {'tensorflow us (n)':>20} {'ratio':>7}")
    total = [0.0, 0.0]
    for op in sorted(set(ours) | set(theirs), key=lambda o: -ours.get(o, [0])[0]):
        mine, their = ours.get(op, [0, 0]), theirs.get(op, [0, 0])
        total[0] += mine[0]
        total[1] += their[0]
        ratio = f"{mine[0] / their[0]:6.2f}x" if their[0] else ""
        print(
            f"{op:<30} {mine[0]:14.0f} ({mine[1]:3d}) {their[0]:14.0f} ({their[1]:3d}) {ratio:>7}"
        )
    print(f"{'sum of node times':<30} {total[0]:14.0f}       {total[1]:14.0f}")


if __name__ == "__main__":
    main()
