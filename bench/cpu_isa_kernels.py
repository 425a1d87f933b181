"""Milliseconds per hot float kernel on each instruction set tensorweave
runs here (TW_CPU_ISA=baseline, avx2, avx512; runtime/kernels/cpu_dispatch.h),
with TensorFlow and numpy side by side from the same run.

Each figure is the best of --repeats batches of Session.run of the op alone
(its output is not fetched; the inputs are variables, so no optimizer folds
the op away), session overhead included: at 1M floats it is small beside
the kernel. MatMul is reported in GFLOP/s. Each tensorweave ISA runs in
its own process (the ISA is chosen once per process).

Usage: PYTHONPATH=python python bench/cpu_isa_kernels.py [--repeats N]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow_side

N = 1 << 20
ROWS, DEPTH = 1024, 1024
MATMUL = 2048


def _best_ms(function, repeats, runs):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            function()
        best = min(best, (time.perf_counter() - start) / runs)
    return best * 1e3


def bench(tf, repeats):
    """{label: ms} for tensorweave or TensorFlow's tf.compat.v1."""
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        # Variables, so that no optimizer folds the ops into constants.
        x = tf.Variable(rng.uniform(-4, 4, N).astype(np.float32))
        y = tf.Variable(rng.uniform(0.5, 4, N).astype(np.float32))
        logits = tf.Variable(rng.uniform(-10, 10, (ROWS, DEPTH)).astype(np.float32))
        a = tf.Variable(rng.uniform(-1, 1, (MATMUL, MATMUL)).astype(np.float32))
        b = tf.Variable(rng.uniform(-1, 1, (MATMUL, MATMUL)).astype(np.float32))
        params = tf.Variable(rng.uniform(-1, 1, N).astype(np.float32))
        grad = tf.Variable(rng.normal(size=N).astype(np.float32))
        labels = tf.constant(rng.randint(0, DEPTH, ROWS).astype(np.int64))
        ops = {
            "add 1M": x + y,
            "mul by scalar 1M": x * 2.5,
            "maximum 1M": tf.maximum(x, y),
            "relu 1M": tf.nn.relu(x),
            "exp 1M": tf.exp(x),
            "tanh 1M": tf.tanh(x),
            "sigmoid 1M": tf.sigmoid(x),
            "sum all 1M": tf.reduce_sum(x),
            "sum rows 1024x1024": tf.reduce_sum(logits, axis=1),
            "max rows 1024x1024": tf.reduce_max(logits, axis=1),
            "sum columns 1024x1024": tf.reduce_sum(logits, axis=0),
            "softmax 1024x1024": tf.nn.softmax(logits),
            "sparse xent 1024x1024": tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits
            ),
            # tensorweave runs this chain as one fused node.
            "relu(sqrt(relu(x))) 1M": tf.nn.relu(tf.sqrt(tf.nn.relu(x))),
            "adam step 1M params": tf.train.AdamOptimizer(1e-3).apply_gradients([(grad, params)]),
        }
        product = tf.matmul(a, b)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            results = {}
            for label, op in ops.items():
                target = op if label.startswith("adam") else op.op
                sess.run(target)
                results[label] = _best_ms(lambda target=target: sess.run(target), repeats, 20)
            sess.run(product.op)
            ms = _best_ms(lambda: sess.run(product.op), repeats, 2)
            results["matmul 2048^3 GFLOP/s"] = 2 * MATMUL**3 / (ms * 1e-3) / 1e9
    return results


def bench_numpy(repeats):
    rng = np.random.RandomState(0)
    x = rng.uniform(-4, 4, N).astype(np.float32)
    y = rng.uniform(0.5, 4, N).astype(np.float32)
    logits = rng.uniform(-10, 10, (ROWS, DEPTH)).astype(np.float32)
    a = rng.uniform(-1, 1, (MATMUL, MATMUL)).astype(np.float32)
    out = np.empty_like(x)

    def softmax():
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    jobs = {
        "add 1M": lambda: np.add(x, y, out=out),
        "mul by scalar 1M": lambda: np.multiply(x, np.float32(2.5), out=out),
        "maximum 1M": lambda: np.maximum(x, y, out=out),
        "relu 1M": lambda: np.maximum(x, np.float32(0), out=out),
        "exp 1M": lambda: np.exp(x, out=out),
        "tanh 1M": lambda: np.tanh(x, out=out),
        "sigmoid 1M": lambda: np.reciprocal(1 + np.exp(-x), out=out),
        "sum all 1M": lambda: x.sum(),
        "sum rows 1024x1024": lambda: logits.sum(axis=1),
        "max rows 1024x1024": lambda: logits.max(axis=1),
        "sum columns 1024x1024": lambda: logits.sum(axis=0),
        "softmax 1024x1024": softmax,
        "relu(sqrt(relu(x))) 1M": lambda: np.maximum(
            np.sqrt(np.maximum(x, np.float32(0), out=out), out=out), np.float32(0), out=out
        ),
    }
    results = {label: _best_ms(job, repeats, 20) for label, job in jobs.items()}
    ms = _best_ms(lambda: a @ a, repeats, 2)
    results["matmul 2048^3 GFLOP/s"] = 2 * MATMUL**3 / (ms * 1e-3) / 1e9
    return results


def _tensorweave_isa(isa, repeats):
    env = dict(os.environ, TW_CPU_ISA=isa)
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--only",
        "tensorweave",
        "--repeats",
        str(repeats),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--isas", default="baseline,avx2,avx512")
    parser.add_argument("--only", choices=["tensorflow", "tensorweave"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        print(json.dumps(bench(tensorflow_side.tensorflow_v1(), args.repeats)))
        return
    if args.only == "tensorweave":
        import tensorweave

        print(json.dumps(bench(tensorweave, args.repeats)))
        return
    isas = args.isas.split(",")
    columns = {f"tw {isa}": _tensorweave_isa(isa, args.repeats) for isa in isas}
    theirs = tensorflow_side.figures(
        __file__,
        ["--repeats", str(args.repeats)],
        lambda: bench(tensorflow_side.tensorflow_v1(), args.repeats),
    )
    if theirs:
        columns["tensorflow"] = theirs
    columns["numpy"] = bench_numpy(args.repeats)
    print(f"ms per run (MatMul: GFLOP/s), best of {args.repeats}; load: {os.getloadavg()[0]:.2f}")
    labels = list(columns[f"tw {isas[0]}"])
    width = max(map(len, labels)) + 2
    print(" " * width + "".join(f"{name:>14s}" for name in columns))
    for label in labels:
        cells = "".join(
            f"{columns[name][label]:14.3f}" if label in columns[name] else f"{'-':>14s}"
            for name in columns
        )
        print(f"{label:{width}s}{cells}")


if __name__ == "__main__":
    main()
