"""Conv2D forward (or, with --op input / filter, Conv2DBackpropInput /
Conv2DBackpropFilter) on the convolution shapes of the recorded MobileNetV2
and ResNet50 (tests/fixtures/tf_models), or with --shapes tutorial on the
tutorial CNN's two convolutions (bench/conv_net.py), through tensorweave's
two paths: im2col + matrix product, and oneDNN's convolution primitives
(runtime/kernels/conv_onednn.h, conv_backprop_onednn.h), chosen per run by
TW_CONV2D_PATH.

The two paths run interleaved (im2col, onednn, im2col, ...) in one process,
so both see the same load; each figure is the best of the repeats. Input
and filter are variables and the conv runs as a target, so a step measures
the op and not feeding or fetching.

Usage: PYTHONPATH=python python bench/conv2d.py [--repeats N] [--batches 1,8]
           [--op forward|input|filter] [--shapes models|tutorial]
"""

import argparse
import os
import sys
import time

import numpy as np
import tensorweave as tf

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
from model_constants import fill_constants, load_recipes

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tf_models")
MODELS = ["mobilenet_v2", "resnet50"]
PATHS = ["im2col", "onednn"]


def model_conv_shapes(name):
    """{(rows, cols, in_depth, filter_rows, filter_cols, out_depth, stride,
    padding): count} of the model's Conv2D nodes."""
    path = os.path.join(FIXTURES, name + ".pb")
    graph_def = tf.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    fill_constants(graph_def, load_recipes(path))
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    shapes = {}
    for op in graph.get_operations():
        if op.type != "Conv2D":
            continue
        _, rows, cols, in_depth = op.inputs[0].shape.as_list()
        filter_rows, filter_cols, _, out_depth = op.inputs[1].shape.as_list()
        stride = op.get_attr("strides")[1]
        padding = op.get_attr("padding")
        if isinstance(padding, bytes):
            padding = padding.decode()
        key = (rows, cols, in_depth, filter_rows, filter_cols, out_depth, stride, padding)
        shapes[key] = shapes.get(key, 0) + 1
    return shapes


# The tutorial CNN's convolutions (bench/conv_net.py), as model_conv_shapes.
TUTORIAL_SHAPES = {
    (28, 28, 1, 5, 5, 32, 1, "SAME"): 1,
    (14, 14, 32, 5, 5, 64, 1, "SAME"): 1,
}


def build(batch, shape, op="forward"):
    rows, cols, in_depth, filter_rows, filter_cols, out_depth, stride, padding = shape
    rng = np.random.default_rng(0)
    x = tf.Variable(rng.standard_normal([batch, rows, cols, in_depth]).astype(np.float32))
    w = tf.Variable(
        rng.standard_normal([filter_rows, filter_cols, in_depth, out_depth]).astype(np.float32)
    )
    strides = [1, stride, stride, 1]
    y = tf.nn.conv2d(x, w, strides, padding)
    if op == "forward":
        return y.op
    dy = tf.Variable(rng.standard_normal(y.shape.as_list()).astype(np.float32))
    if op == "input":
        return tf.nn.conv2d_backprop_input(x.shape.as_list(), w, dy, strides, padding).op
    return tf.nn.conv2d_backprop_filter(x, w.shape.as_list(), dy, strides, padding).op


def measure(batch, shape, repeats, op="forward"):
    """{path: best milliseconds}, the paths interleaved."""
    graph = tf.Graph()
    with graph.as_default():
        target = build(batch, shape, op)
        init = tf.global_variables_initializer()
    best = dict.fromkeys(PATHS, float("inf"))
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(repeats + 2):  # the first two rounds warm up
            for path in PATHS:
                os.environ["TW_CONV2D_PATH"] = path
                start = time.perf_counter()
                sess.run(target)
                elapsed = time.perf_counter() - start
                best[path] = min(best[path], elapsed) if _ >= 2 else best[path]
    os.environ.pop("TW_CONV2D_PATH", None)
    return {path: seconds * 1e3 for path, seconds in best.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--op", choices=["forward", "input", "filter"], default="forward")
    parser.add_argument("--shapes", choices=["models", "tutorial"], default="models")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, op {args.op}")
    print(
        f"{'model shape (HxWxC kHxkW->O /stride padding) x count':<58} {'batch':>5} "
        f"{'im2col':>9} {'onednn':>9} {'ratio':>6}"
    )
    totals = {}
    models = MODELS if args.shapes == "models" else ["tutorial"]
    for name in models:
        shapes = TUTORIAL_SHAPES if name == "tutorial" else model_conv_shapes(name)
        for shape, count in sorted(shapes.items()):
            rows, cols, depth, fr, fc, out, stride, padding = shape
            label = f"{name} {rows}x{cols}x{depth} {fr}x{fc}->{out} /{stride} {padding} x{count}"
            for batch in (int(b) for b in args.batches.split(",")):
                ms = measure(batch, shape, args.repeats, args.op)
                for path in PATHS:
                    key = (name, batch, path)
                    totals[key] = totals.get(key, 0.0) + ms[path] * count
                print(
                    f"{label:<58} {batch:>5} {ms['im2col']:8.3f}m {ms['onednn']:8.3f}m "
                    f"{ms['onednn'] / ms['im2col']:6.2f}"
                )
    for (name, batch, path), ms in sorted(totals.items()):
        print(f"total {name} n{batch} {path}: {ms:.2f} ms")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
