"""The two paths of a _FusedConv2D with a constant filter (what the
remapper makes of Conv2D -> BiasAdd -> Relu with Const weights, marked
_filter_is_const) on every convolution shape of model_inference.py's
models, at batch 1 and 8: oneDNN's primitive (filter reordered once, bias
and Relu as post-ops) against im2col + GEMM then one pass for the epilogue,
chosen per call by TW_CONV2D_PATH. Prints the best microseconds of each
path over --repeats alternating runs and the ratio oneDNN / im2col, and
which path the default policy (conv_onednn.cc) takes.

Usage: PYTHONPATH=python python bench/fused_conv_paths.py [--repeats N] [--models a,b]
"""

import argparse
import os
import time

import numpy as np
import tensorweave as tf

# (rows, cols, in_depth, window, stride, out_depth, padding) of each model's
# Conv2D nodes, from the recorded GraphDefs in tests/fixtures/tf_models.
SHAPES = {
    "mobilenet_v2": [
        (96, 96, 3, 3, 2, 16, "SAME"),
        (48, 48, 16, 1, 1, 8, "SAME"),
        (48, 48, 8, 1, 1, 48, "SAME"),
        (24, 24, 48, 1, 1, 8, "SAME"),
        (24, 24, 8, 1, 1, 48, "SAME"),
        (12, 12, 16, 1, 1, 96, "SAME"),
        (12, 12, 96, 1, 1, 16, "SAME"),
        (6, 6, 24, 1, 1, 144, "SAME"),
        (6, 6, 144, 1, 1, 24, "SAME"),
        (6, 6, 32, 1, 1, 192, "SAME"),
        (6, 6, 192, 1, 1, 32, "SAME"),
        (3, 3, 56, 1, 1, 336, "SAME"),
        (3, 3, 336, 1, 1, 56, "SAME"),
        (3, 3, 112, 1, 1, 1280, "VALID"),
    ],
    "resnet50": [
        (70, 70, 3, 7, 2, 64, "VALID"),
        (16, 16, 64, 1, 1, 256, "VALID"),
        (16, 16, 64, 1, 1, 64, "VALID"),
        (16, 16, 64, 3, 1, 64, "SAME"),
        (16, 16, 256, 1, 1, 64, "VALID"),
        (16, 16, 256, 1, 2, 512, "VALID"),
        (8, 8, 128, 3, 1, 128, "SAME"),
        (8, 8, 128, 1, 1, 512, "VALID"),
        (8, 8, 512, 1, 1, 128, "VALID"),
        (8, 8, 512, 1, 2, 1024, "VALID"),
        (4, 4, 256, 3, 1, 256, "SAME"),
        (4, 4, 256, 1, 1, 1024, "VALID"),
        (4, 4, 1024, 1, 1, 256, "VALID"),
        (4, 4, 1024, 1, 2, 2048, "VALID"),
        (2, 2, 512, 3, 1, 512, "SAME"),
        (2, 2, 512, 1, 1, 2048, "VALID"),
        (2, 2, 2048, 1, 1, 512, "VALID"),
    ],
}


def time_paths(shape, batch, repeats):
    """{path: best seconds} for one shape and batch."""
    rows, cols, depth, window, stride, out_depth, padding = shape
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, rows, cols, depth])
        w = rng.standard_normal([window, window, depth, out_depth]).astype(np.float32)
        b = rng.standard_normal([out_depth]).astype(np.float32)
        conv = tf.nn.conv2d(x, w, [1, stride, stride, 1], padding)
        y = tf.nn.relu(tf.nn.bias_add(conv, b))
    feeds = {x: rng.standard_normal([batch, rows, cols, depth]).astype(np.float32)}
    paths = ("onednn", "im2col")
    best = dict.fromkeys(paths, float("inf"))
    with tf.Session(graph=graph) as sess:
        for _ in range(repeats):
            for path in paths:
                os.environ["TW_CONV2D_PATH"] = path
                sess.run(y, feeds)  # the first run of a path creates its primitive
                start = time.perf_counter()
                for _ in range(5):
                    sess.run(y, feeds)
                best[path] = min(best[path], (time.perf_counter() - start) / 5)
    os.environ.pop("TW_CONV2D_PATH", None)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--models", default="mobilenet_v2,resnet50")
    args = parser.parse_args()
    print(f"load average (1 min) {os.getloadavg()[0]:.2f}")
    print(
        f"{'shape (rows x cols x in, window /stride -> out)':<48} {'batch':>5}"
        f" {'oneDNN us':>10} {'im2col us':>10} {'ratio':>7}"
    )
    for model in args.models.split(","):
        for shape in SHAPES[model]:
            rows, cols, depth, window, stride, out_depth, _ = shape
            label = f"{model} {rows}x{cols}x{depth} {window}x{window}/{stride} -> {out_depth}"
            for batch in (1, 8):
                best = time_paths(shape, batch, args.repeats)
                ratio = best["onednn"] / best["im2col"]
                print(
                    f"{label:<48} {batch:>5} {best['onednn'] * 1e6:10.1f}"
                    f" {best['im2col'] * 1e6:10.1f} {ratio:6.2f}x"
                )


if __name__ == "__main__":
    main()
