"""MatMul at the shapes of an LSTM step and an MLP layer (each forward
product and the two of its gradient) and at 2048^3, tensorweave and
TensorFlow side by side from one run.

Each figure is the best of --repeats batches of Session.run of the MatMul
alone (inputs are variables, the output is not fetched), so the session's
per-run overhead is included: it is most of the figure for the LSTM's
~75 us products. bench/gemm_shapes.cc times the products without it.

Usage: PYTHONPATH=python python bench/matmul_shapes.py [--repeats N]
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow_side

# label: (m, k, n, transpose_a, transpose_b); op(a) is m x k, op(b) k x n.
SHAPES = {
    "lstm forward 32x256x512": (32, 256, 512, False, False),
    "lstm d[x,h] 32x512x256 b^T": (32, 512, 256, False, True),
    "lstm dW 256x32x512 a^T": (256, 32, 512, True, False),
    "mlp forward 128x784x256": (128, 784, 256, False, False),
    "mlp dx 128x256x784 b^T": (128, 256, 784, False, True),
    "mlp dW 784x128x256 a^T": (784, 128, 256, True, False),
    "square 2048": (2048, 2048, 2048, False, False),
}


def _best_ms(function, repeats, runs):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            function()
        best = min(best, (time.perf_counter() - start) / runs)
    return best * 1e3


def bench(tf, repeats):
    """{label: ms per MatMul} for tensorweave or TensorFlow's tf.compat.v1."""
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        products = {}
        for label, (m, k, n, ta, tb) in SHAPES.items():
            a = tf.Variable(rng.uniform(-1, 1, (k, m) if ta else (m, k)).astype(np.float32))
            b = tf.Variable(rng.uniform(-1, 1, (n, k) if tb else (k, n)).astype(np.float32))
            products[label] = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results = {}
            for label, product in products.items():
                m, k, n = SHAPES[label][:3]
                runs = max(2, min(200, int(2e8 / (m * k * n))))
                sess.run(product.op)
                results[label] = _best_ms(lambda op=product.op: sess.run(op), repeats, runs)
    return results


if __name__ == "__main__":
    heading = f"ms per MatMul (Session.run of it alone); load {os.getloadavg()[0]:.2f}"
    tensorflow_side.compare_main(__file__, bench, heading, 5)
