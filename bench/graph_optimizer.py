"""What the graph optimizer buys, side by side with TensorFlow in one run:
- a chain of 5,000 `y = y + 1.0` starting from a constant (all of it folds)
  and from a fed placeholder (constant push-down leaves x + 5000):
  microseconds per node of a run, and the first run's milliseconds (it
  builds and optimizes the graph);
- inference of the recorded MobileNetV2 and ResNet50 (bench/model_inference.py's
  graphs, batch 1 and 8): milliseconds per batch with the optimizer on
  (the default) and off (opt_level L0), and TensorFlow's.
Prints the machine's load average beside the figures; since the machine
is shared, the three sides alternate over --rounds rounds and each figure
is the best of its side. TensorFlow's side runs this script again under TensorFlow's
Python (bench/tensorflow_side.py).

Usage: PYTHONPATH=python python bench/graph_optimizer.py [--repeats N] [--rounds R]
                                                           [--models a,b]
"""

import argparse
import json
import os
import time

import model_inference
import numpy as np
import tensorflow_side

CHAIN_LENGTH = 5000


def _chain_graph(tf, from_constant):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        y = tf.constant(0.0) if from_constant else x
        for _ in range(CHAIN_LENGTH):
            y = y + 1.0
    return graph, x, y


def _session_config(tf, optimizer):
    if optimizer:
        return None
    return tf.ConfigProto(
        graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)
        )
    )


def bench_chain(tf, repeats, optimizer=True):
    """{label: [first run ms, us per node]} for both chains."""
    figures = {}
    for from_constant in (True, False):
        graph, x, y = _chain_graph(tf, from_constant)
        label = "chain from a constant" if from_constant else "chain from a placeholder"
        with tf.Session(graph=graph, config=_session_config(tf, optimizer)) as sess:
            sess.run(x, {x: 1.0})  # the graph reaches the session; nothing of the chain runs
            start = time.perf_counter()
            value = sess.run(y, {x: 1.0})
            first = time.perf_counter() - start
            expected = CHAIN_LENGTH + (0.0 if from_constant else 1.0)
            if value != expected:
                raise SystemExit(f"{label}: {value} != {expected}")
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                for _ in range(100):
                    sess.run(y, {x: 1.0})
                best = min(best, (time.perf_counter() - start) / 100)
        figures[label] = [first * 1e3, best / CHAIN_LENGTH * 1e6]
    return figures


def bench_models(tf, models, repeats, optimizer=True):
    """{"model nB": best ms per batch}."""
    figures = {}
    for name in models:
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(model_inference._graph_def(tf, name), name="")
        x = graph.get_tensor_by_name("x:0")
        logits = graph.get_tensor_by_name("Identity:0")
        size = int(x.shape[1])
        with tf.Session(graph=graph, config=_session_config(tf, optimizer)) as sess:
            for batch in model_inference.BATCHES:
                images = np.random.default_rng(batch).uniform(-1, 1, [batch, size, size, 3])
                feeds = {x: images.astype(np.float32)}
                for _ in range(3):
                    sess.run(logits, feeds)
                best = float("inf")
                for _ in range(repeats):
                    start = time.perf_counter()
                    sess.run(logits, feeds)
                    best = min(best, time.perf_counter() - start)
                figures[f"{name} n{batch}"] = best * 1e3
    return figures


def bench(tf, models, repeats):
    return {"chain": bench_chain(tf, repeats), "models": bench_models(tf, models, repeats)}


def _keep_best(best, figures):
    """Lowest figure per label (figures are numbers or lists of numbers)."""
    for label, value in figures.items():
        if label not in best:
            best[label] = value
        elif isinstance(value, list):
            best[label] = [min(pair) for pair in zip(best[label], value)]
        else:
            best[label] = min(best[label], value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=",".join(model_inference.MODELS))
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = [name for name in args.models.split(",") if name]
    if args.only == "tensorflow":
        print(json.dumps(bench(tensorflow_side.tensorflow_v1(), models, args.repeats)))
        return
    import tensorweave as tw

    # The machine is shared: the sides alternate over the rounds and each
    # figure is its side's best, so a burst of load falls on all of them.
    load_before = os.getloadavg()[0]
    chain_on, chain_off, models_on, models_off = {}, {}, {}, {}
    theirs = {"chain": {}, "models": {}}
    for _ in range(args.rounds):
        _keep_best(chain_on, bench_chain(tw, args.repeats))
        _keep_best(chain_off, bench_chain(tw, args.repeats, optimizer=False))
        _keep_best(models_on, bench_models(tw, models, args.repeats))
        _keep_best(models_off, bench_models(tw, models, args.repeats, optimizer=False))
        figures = tensorflow_side.figures(
            __file__,
            ["--repeats", str(args.repeats), "--models", args.models],
            lambda: bench(tensorflow_side.tensorflow_v1(), models, args.repeats),
        ) or {"chain": {}, "models": {}}
        _keep_best(theirs["chain"], figures["chain"])
        _keep_best(theirs["models"], figures["models"])
    load_after = os.getloadavg()[0]
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    print(f"chain of {CHAIN_LENGTH} `y = y + 1.0`: first run ms, then us per node of a run")
    for label, (first, per_node) in chain_on.items():
        off_first, off_per_node = chain_off[label]
        line = (
            f"  {label:26s} optimizer on {first:8.1f} ms {per_node:7.4f} us"
            f" | off {off_first:8.1f} ms {off_per_node:7.4f} us"
        )
        if label in theirs["chain"]:
            tf_first, tf_per_node = theirs["chain"][label]
            line += (
                f" | tensorflow {tf_first:8.1f} ms {tf_per_node:7.4f} us"
                f" | ratio on/tf {per_node / tf_per_node:5.2f}x per node,"
                f" {first / tf_first:5.2f}x first run"
            )
        print(line)
    print("model inference, best ms per batch")
    for label, on in models_on.items():
        off = models_off[label]
        line = f"  {label:18s} optimizer on {on:8.2f} | off {off:8.2f} | on/off {on / off:5.2f}x"
        if label in theirs["models"]:
            other = theirs["models"][label]
            line += f" | tensorflow {other:8.2f} | on/tf {on / other:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
