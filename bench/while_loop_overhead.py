"""Per-iteration cost of a TF 1.x while loop: the recorded counter loop
(tests/fixtures/tf_control_flow/while_counter.pb: i += 1, acc += i*i while
i < n) run for n = 100,000 iterations, imported from its GraphDef.

Prints tensorweave's figure, and real TensorFlow's on the same GraphDef when
it is importable (run this script with TensorFlow's Python for that side).
Usage: PYTHONPATH=python python bench/while_loop_overhead.py [--iterations N]
"""

import argparse
import os
import time

import numpy as np

GRAPH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "tests",
    "fixtures",
    "tf_control_flow",
    "while_counter.pb",
)


def bench(tf, graph_def_class, iterations, repeats):
    with open(GRAPH, "rb") as f:
        graph_def = graph_def_class.FromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    best = float("inf")
    with tf.compat.v1.Session(graph=graph) as sess:
        feeds = {"n:0": np.array(iterations, np.int32)}
        count = sess.run("count:0", feed_dict=feeds)  # warm up, and check
        assert count == iterations, count
        for _ in range(repeats):
            start = time.perf_counter()
            sess.run("count:0", feed_dict=feeds)
            best = min(best, time.perf_counter() - start)
    return best / iterations * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=100000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    try:
        import tensorweave as tw

        us = bench(tw, tw.GraphDef, args.iterations, args.repeats)
        print(f"tensorweave while loop                {us:8.3f} us per iteration")
    except ImportError:
        print("tensorweave while loop                not importable")
    try:
        import tensorflow as tf

        tf.compat.v1.disable_eager_execution()
        us = bench(tf, tf.compat.v1.GraphDef, args.iterations, args.repeats)
        print(f"tensorflow while loop                 {us:8.3f} us per iteration")
    except ImportError:
        print("tensorflow while loop                 not installed")


if __name__ == "__main__":
    main()
