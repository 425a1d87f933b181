"""Microseconds per Adam training step of a 784-256-256-10 ReLU MLP at batch 128.

One step = feed a float32 batch and int64 labels, forward, sparse softmax cross
entropy (mean), backward, Adam update of the six variables. Prints
tensorweave's figure next to a numpy implementation of the same step in the
same process, and TensorFlow's tf.compat.v1 (in this process when it
imports, else re-run under $TENSORFLOW_PYTHON, see tensorflow_side.py). Before timing,
both implementations start from the same weights and must agree on the loss
and the updated weights after a few steps, so the figures compare equal work.
Each row gives the best wall time per step and the mean CPU time per step
(all threads): on a shared machine the second is the steadier comparison.
Usage: PYTHONPATH=python python bench/train_step.py [--steps N]
"""

import argparse
import itertools
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorflow_side

SIZES = (784, 256, 256, 10)
BATCH = 128
LEARNING_RATE, BETA1, BETA2, EPSILON = 1e-3, 0.9, 0.999, 1e-8


def _best_of(function, steps, repeats=5):
    """Best mean over `repeats` batches of `steps` calls: the least disturbed one."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            function()
        best = min(best, (time.perf_counter() - start) / steps)
    return best * 1e6


def _cpu_per_step(function, steps):
    """Mean CPU time (all of the process's threads) of one call, in microseconds:
    steadier than wall time on a shared machine, where other people's work
    takes cores away, and it counts threads that spin instead of working."""
    start = time.process_time()
    for _ in range(steps):
        function()
    return (time.process_time() - start) / steps * 1e6


def initial_weights(rng):
    """Glorot-uniform kernels and zero biases, float32, as tf.layers.dense makes them."""
    weights = []
    for fan_in, fan_out in itertools.pairwise(SIZES):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        weights.append(np.zeros(fan_out, np.float32))
    return weights


class NumpyMLP:
    """The same step in numpy, updating arrays in place like the Apply* kernels."""

    def __init__(self, weights):
        self.params = [w.copy() for w in weights]
        self.m = [np.zeros_like(w) for w in weights]
        self.v = [np.zeros_like(w) for w in weights]
        self.t = 0

    def step(self, x, labels):
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = x @ w1
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w2
        h2 += b2
        np.maximum(h2, 0, out=h2)
        logits = h2 @ w3
        logits += b3
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        rows = np.arange(len(labels))
        loss = -np.mean(np.log(probabilities[rows, labels]))
        # d(mean cross entropy)/d(logits) = (softmax - onehot) / batch
        grad_logits = probabilities
        grad_logits[rows, labels] -= 1.0
        grad_logits /= len(labels)
        grad_h2 = grad_logits @ w3.T
        grad_h2 *= h2 > 0
        grad_h1 = grad_h2 @ w2.T
        grad_h1 *= h1 > 0
        grads = [
            x.T @ grad_h1,
            grad_h1.sum(axis=0),
            h1.T @ grad_h2,
            grad_h2.sum(axis=0),
            h2.T @ grad_logits,
            grad_logits.sum(axis=0),
        ]
        self.t += 1
        rate = LEARNING_RATE * np.sqrt(1 - BETA2**self.t) / (1 - BETA1**self.t)
        for param, m, v, grad in zip(self.params, self.m, self.v, grads):
            m *= BETA1
            m += (1 - BETA1) * grad
            v *= BETA2
            v += (1 - BETA2) * np.square(grad)
            param -= rate * m / (np.sqrt(v) + EPSILON)
        return loss


def bench_numpy(weights, data, steps):
    """numpy's better figure of its BLAS's default threads and one thread: on a busy
    machine, spinning BLAS threads can make the default many times slower."""
    model = NumpyMLP(weights)

    def measure():
        for _ in range(20):
            model.step(*data)
        return _best_of(lambda: model.step(*data), steps)

    figure = measure()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return figure
    with threadpool_limits(limits=1, user_api="blas"):
        return min(figure, measure())


def _dense(tf, name, inputs, units, relu):
    """What tf.layers.dense builds, spelled out: TensorFlow 2.x's compat.v1.layers
    needs Keras 2, so both libraries get the same hand-written program."""
    with tf.compat.v1.variable_scope(name):
        kernel = tf.compat.v1.get_variable("kernel", [inputs.shape[-1], units])
        bias = tf.compat.v1.get_variable(
            "bias", [units], initializer=tf.compat.v1.zeros_initializer()
        )
        outputs = tf.nn.bias_add(tf.matmul(inputs, kernel), bias)
        return tf.nn.relu(outputs) if relu else outputs


def build_graph(tf, weights):
    """The tf.compat.v1 program of the step, identical for tensorweave and TensorFlow."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, SIZES[0]], name="x")
        labels = tf.compat.v1.placeholder(tf.int64, [None], name="labels")
        hidden = x
        for layer, units in enumerate(SIZES[1:]):
            hidden = _dense(tf, f"dense_{layer}", hidden, units, layer < len(SIZES) - 2)
        logits = hidden
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        optimizer = tf.compat.v1.train.AdamOptimizer(LEARNING_RATE, BETA1, BETA2, EPSILON)
        # minimize() in two halves, so --breakdown can run the gradients alone.
        grads_and_vars = optimizer.compute_gradients(loss)
        train_op = optimizer.apply_gradients(grads_and_vars)
        gradients = tf.group(*[grad for grad, _ in grads_and_vars])
        nothing = tf.no_op()
        variables = tf.compat.v1.trainable_variables()
        init = tf.compat.v1.global_variables_initializer()
    session = tf.compat.v1.Session(graph=graph)
    session.run(init)
    for variable, value in zip(variables, weights):
        variable.load(value, session)
    return (
        session,
        x,
        labels,
        loss,
        train_op,
        variables,
        {"gradients": gradients, "nothing": nothing},
    )


def bench_graph(tf, weights, data, steps, breakdown=False):
    session, x, labels, loss, train_op, variables, parts = build_graph(tf, weights)
    feed = {x: data[0], labels: data[1]}
    with session:
        # Same start, same batch: the losses and weights must track numpy's.
        reference = NumpyMLP(weights)
        for step in range(3):
            expected = reference.step(*data)
            got, _ = session.run([loss, train_op], feed)
            if not np.isclose(got, expected, rtol=1e-4, atol=1e-5):
                raise SystemExit(f"step {step}: loss {got} differs from numpy's {expected}")
        # Adam moves a weight by about the learning rate whatever its gradient's
        # size, so rounding flips a few tiny gradients' signs: compare on average.
        for got, expected in zip(session.run(variables), reference.params):
            if np.abs(got - expected).mean() > 1e-5:
                raise SystemExit(
                    f"weights differ from numpy's by {np.abs(got - expected).mean():.2e} on average"
                )
        for _ in range(50):  # warm up caches, thread pools and the allocator
            session.run(train_op, feed)
        step = _best_of(lambda: session.run(train_op, feed), steps)
        if breakdown:
            nothing = _best_of(lambda: session.run(parts["nothing"]), steps)
            forward = _best_of(lambda: session.run(loss.op, feed), steps)
            backward = _best_of(lambda: session.run(parts["gradients"], feed), steps)
            print(
                f"{tf.__name__}: Session.run of nothing {nothing:.1f} us, forward (loss) "
                f"{forward:.1f} us, + backward (gradients) {backward - forward:.1f} us, "
                f"+ Adam updates {step - backward:.1f} us = step {step:.1f} us"
            )
        return [step, _cpu_per_step(lambda: session.run(train_op, feed), steps)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also time an empty run, the forward pass and the gradients",
    )
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()

    rng = np.random.RandomState(0)
    weights = initial_weights(rng)
    data = (
        rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
        rng.randint(0, SIZES[-1], BATCH).astype(np.int64),
    )

    def tensorflow_step():
        return bench_graph(
            tensorflow_side.tensorflow_v1(), weights, data, args.steps, args.breakdown
        )

    if args.only == "tensorflow":  # the re-run under TensorFlow's Python
        print(json.dumps(tensorflow_step()))
        return

    import tensorweave

    ours = bench_graph(tensorweave, weights, data, args.steps, args.breakdown)
    rows = [
        ("tensorweave Session.run(train_op)", ours),
        ("numpy step", [bench_numpy(weights, data, args.steps), None]),
    ]
    # TensorFlow here when it imports, else in its own virtualenv.
    arguments = ["--steps", str(args.steps)] + (["--breakdown"] if args.breakdown else [])
    rows.append(
        ("tensorflow tf.compat.v1", tensorflow_side.figures(__file__, arguments, tensorflow_step))
    )
    print(f"Adam step, MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32")
    print(f"{'':36s} best wall time per step            mean CPU time per step")
    for label, figures in rows:
        if figures is None:
            print(f"{label:36s} not available (pip install tensorflow, or set TENSORFLOW_PYTHON)")
            continue
        wall, cpu = figures
        line = f"{label:36s} {wall:9.1f} us ({wall / ours[0]:.2f}x tensorweave)"
        if cpu is not None:
            line += f"   {cpu:9.1f} us ({cpu / ours[1]:.2f}x tensorweave)"
        print(line)


if __name__ == "__main__":
    main()
