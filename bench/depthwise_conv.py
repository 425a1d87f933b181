"""DepthwiseConv2dNative and its two backprops on MobileNet-like shapes
(112x112x32, 56x56x128, 14x14x512; 3x3 filters; strides 1 and 2), by
tensorweave and by TensorFlow in the same run.

Inputs, filters and output gradients are variables (initialized once), and
each op runs as a target, so a step measures the op and not feeding or
fetching its tensors. Forward at batch 1 and 8, the backprops at batch 8.

TensorFlow is never a project dependency: its side runs this script again
under the Python named by $TENSORFLOW_PYTHON (default /work/tfvenv/bin/python,
a separate virtualenv), or in this process if tensorflow is importable here.
Usage: PYTHONPATH=python python bench/depthwise_conv.py [--repeats N]
"""

import argparse
import json
import time

import numpy as np
import tensorflow_side

# (rows/cols, channels, stride)
LAYERS = [(112, 32, 1), (112, 32, 2), (56, 128, 1), (56, 128, 2), (14, 512, 1), (14, 512, 2)]
# (op, batch)
WORKLOADS = [("forward", 1), ("forward", 8), ("backprop_input", 8), ("backprop_filter", 8)]


def _case_name(op, batch, size, channels, stride):
    return f"{op:<16} n{batch} {size}x{size}x{channels} s{stride}"


def build(tf, op, batch, size, channels, stride):
    """The op of one case on variables; returns it (to run as a target)."""
    rng = np.random.RandomState(0)
    strides = [1, stride, stride, 1]
    x = tf.Variable(rng.standard_normal([batch, size, size, channels]).astype(np.float32))
    w = tf.Variable(rng.standard_normal([3, 3, channels, 1]).astype(np.float32))
    if op == "forward":
        return tf.nn.depthwise_conv2d_native(x, w, strides, "SAME").op
    out_size = -(-size // stride)
    dy = tf.Variable(rng.standard_normal([batch, out_size, out_size, channels]).astype(np.float32))
    if op == "backprop_input":
        return tf.nn.depthwise_conv2d_native_backprop_input(
            [batch, size, size, channels], w, dy, strides, "SAME"
        ).op
    return tf.nn.depthwise_conv2d_native_backprop_filter(
        x, [3, 3, channels, 1], dy, strides, "SAME"
    ).op


def bench(tf, repeats):
    """{case name: best milliseconds per run}."""
    figures = {}
    for op, batch in WORKLOADS:
        for size, channels, stride in LAYERS:
            graph = tf.Graph()
            with graph.as_default():
                target = build(tf, op, batch, size, channels, stride)
                init = tf.global_variables_initializer()
            with tf.Session(graph=graph) as sess:
                sess.run(init)
                for _ in range(3):  # warm up
                    sess.run(target)
                best = float("inf")
                for _ in range(repeats):
                    start = time.perf_counter()
                    sess.run(target)
                    best = min(best, time.perf_counter() - start)
            figures[_case_name(op, batch, size, channels, stride)] = best * 1e3
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        print(json.dumps(bench(tensorflow_side.tensorflow_v1(), args.repeats)))
        return
    import tensorweave as tw

    ours = bench(tw, args.repeats)
    theirs = (
        tensorflow_side.figures(
            __file__,
            ["--repeats", str(args.repeats)],
            lambda: bench(tensorflow_side.tensorflow_v1(), args.repeats),
            timeout=1200,
        )
        or {}
    )
    print(f"{'case':<40} {'tensorweave':>12} {'tensorflow':>12} {'ratio':>8}")
    ratios = []
    for name, ms in ours.items():
        if name in theirs:
            ratios.append(ms / theirs[name])
            print(f"{name:<40} {ms:10.3f}ms {theirs[name]:10.3f}ms {ratios[-1]:7.2f}x")
        else:
            print(f"{name:<40} {ms:10.3f}ms {'n/a':>12}")
    if ratios:
        geomean = float(np.exp(np.mean(np.log(ratios))))
        print(f"{'geometric mean tensorweave / tensorflow':<66} {geomean:7.2f}x")


if __name__ == "__main__":
    main()
