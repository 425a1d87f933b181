"""Inference of the recorded MobileNetV2 (alpha 0.35, 96x96) and ResNet50
(64x64) from tests/fixtures/tf_models at batch 1 and 8, by tensorweave and
by TensorFlow in the same run, each importing the same frozen GraphDef
(its regenerated weights filled in) and feeding the same images.

Prints the best milliseconds per batch over the repeats and the ratio
tensorweave / TensorFlow (the issue's target is <= 0.7), and beside them
the processor time per batch (all threads, user + system, averaged over the
repeats): on a loaded machine a step waits for cores, and the processor
time it consumed varies much less than its wall time (threads that spin
waiting for work count in it too). The machine is
shared, so the two sides alternate in --rounds rounds (tensorweave,
TensorFlow, tensorweave, ...) and each figure is its side's best over all
rounds: a burst of load from other processes then falls on both sides
rather than on whichever ran during it.

TensorFlow is never a project dependency: its side runs this script again
under the Python named by $TENSORFLOW_PYTHON (default /work/tfvenv/bin/python,
a separate virtualenv), or in this process if tensorflow is importable here.
With --variable-input the images are a variable's value read by the graph
instead of a feed: a fed placeholder reaches the graph optimizer as a step
argument of unknown shape, so fusions that need shapes (the residual
blocks' conv + bias + add + relu, common_runtime/conv_fusion.h) only happen
then, as TensorFlow's remapper needs its aggressive mode to trust feeds.
Usage: PYTHONPATH=python python bench/model_inference.py [--repeats N] [--rounds R]
                                                           [--models a,b] [--variable-input]
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import tensorflow_side

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
from model_constants import fill_constants, load_recipes

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "tf_models")
MODELS = ["mobilenet_v2", "resnet50"]
BATCHES = [1, 8]


_GRAPH_DEFS = {}  # filling ResNet50's weights takes seconds: once per process


def _graph_def(tf, name):
    if (tf, name) in _GRAPH_DEFS:
        return _GRAPH_DEFS[(tf, name)]
    path = os.path.join(FIXTURES, name + ".pb")
    graph_def = tf.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    fill_constants(graph_def, load_recipes(path))
    _GRAPH_DEFS[(tf, name)] = graph_def
    return graph_def


def _time(sess, logits, feeds, repeats):
    """[best milliseconds per run, processor milliseconds per run]."""
    for _ in range(3):  # warm up
        sess.run(logits, feeds)
    best = float("inf")
    cpu_start = time.process_time()
    for _ in range(repeats):
        start = time.perf_counter()
        sess.run(logits, feeds)
        best = min(best, time.perf_counter() - start)
    cpu = (time.process_time() - cpu_start) / repeats
    return [best * 1e3, cpu * 1e3]


def _images(batch, size):
    images = np.random.default_rng(batch).uniform(-1, 1, [batch, size, size, 3])
    return images.astype(np.float32)


def bench(tf, models, repeats, variable_input=False):
    """{"model nB": [best milliseconds per batch, processor milliseconds
    per batch]}."""
    figures = {}
    for name in models:
        if variable_input:
            for batch in BATCHES:
                figures[f"{name} n{batch}"] = _bench_variable_input(tf, name, batch, repeats)
            continue
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(_graph_def(tf, name), name="")
        x = graph.get_tensor_by_name("x:0")
        (logits,) = [graph.get_tensor_by_name("Identity:0")]
        size = int(x.shape[1])
        with tf.Session(graph=graph) as sess:
            for batch in BATCHES:
                feeds = {x: _images(batch, size)}
                figures[f"{name} n{batch}"] = _time(sess, logits, feeds, repeats)
    return figures


def _bench_variable_input(tf, name, batch, repeats):
    """The model reading its images from a variable (shape known)."""
    graph_def = _graph_def(tf, name)
    (x_node,) = [node for node in graph_def.node if node.name == "x"]
    size = x_node.attr["shape"].shape.dim[1].size
    graph = tf.Graph()
    with graph.as_default():
        images = tf.Variable(_images(batch, size), name="images")
        (logits,) = tf.import_graph_def(
            graph_def,
            input_map={"x:0": tf.identity(images, name="images_read")},
            return_elements=["Identity:0"],
            name="",
        )
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return _time(sess, logits, None, repeats)


def _best(figures, more):
    """Keeps the lowest of each figure over the rounds."""
    for key, values in more.items():
        figures[key] = [min(pair) for pair in zip(figures.get(key, values), values)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--variable-input", action="store_true")
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = args.models.split(",")
    variable = args.variable_input
    if args.only == "tensorflow":
        tf = tensorflow_side.tensorflow_v1()
        print(json.dumps(bench(tf, models, args.repeats, variable)))
        return
    import tensorweave as tw

    ours, theirs, loads = {}, {}, []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        _best(ours, bench(tw, models, args.repeats, variable))
        figures = tensorflow_side.figures(
            __file__,
            ["--repeats", str(args.repeats), "--models", args.models]
            + (["--variable-input"] if variable else []),
            lambda: bench(tensorflow_side.tensorflow_v1(), models, args.repeats, variable),
        )
        _best(theirs, figures or {})
    loads.append(os.getloadavg()[0])
    print("load average (1 min) at each round: " + " ".join(f"{load:.2f}" for load in loads))
    print(
        f"{'':<16} {'wall ms per batch (best)':^36} {'processor ms per batch':^36}\n"
        f"{'model':<16} {'tensorweave':>12} {'tensorflow':>12} {'ratio':>9}"
        f" {'tensorweave':>12} {'tensorflow':>12} {'ratio':>9}"
    )
    for name, (ms, cpu) in ours.items():
        line = f"{name:<16} {ms:10.2f}ms"
        if name in theirs:
            their_ms, their_cpu = theirs[name]
            line += f" {their_ms:10.2f}ms {ms / their_ms:8.2f}x {cpu:10.2f}ms"
            line += f" {their_cpu:10.2f}ms {cpu / their_cpu:8.2f}x"
        else:
            line += f" {'n/a':>12} {'':>9} {cpu:10.2f}ms"
        print(line)


if __name__ == "__main__":
    main()
