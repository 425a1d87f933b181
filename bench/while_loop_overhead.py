"""Per-iteration cost of a TF 1.x while loop: a scalar counter loop
(i += 1, acc += i*i while i < n, the program of
tests/fixtures/tf_control_flow/while_counter.pb) built with tf.while_loop
and run for n = 100,000 iterations, by tensorweave and by TensorFlow in the
same run.

TensorFlow is never a project dependency: its side runs this script again
under the Python named by $TENSORFLOW_PYTHON (default /work/tfvenv/bin/python,
a separate virtualenv), or in this process if tensorflow is importable here.
Each side reports its best of --repeats runs (ours half before TensorFlow's
and half after): on a machine shared with other work the best run is the
least disturbed one, so more repeats steady the ratio.
Usage: PYTHONPATH=python python bench/while_loop_overhead.py [--iterations N]
"""

import argparse
import time

import numpy as np
import tensorflow_side


def build_counter_loop(tf):
    """The while_counter program, in the TensorFlow 1.x API `tf`."""
    n = tf.placeholder(tf.int32, [], name="n")
    i, acc = tf.while_loop(
        lambda i, acc: i < n, lambda i, acc: (i + 1, acc + i * i), [tf.constant(0), tf.constant(0)]
    )
    tf.identity(i, name="count")
    tf.identity(acc, name="sum_squares")


def bench(tf, iterations, repeats):
    """Best microseconds per iteration over `repeats` runs."""
    graph = tf.Graph()
    with graph.as_default():
        build_counter_loop(tf)
    best = float("inf")
    with tf.Session(graph=graph) as sess:
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
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only == "tensorflow":
        print(
            bench(
                tensorflow_side.tensorflow_v1(control_flow_v2=False), args.iterations, args.repeats
            )
        )
        return
    import tensorweave as tw

    # Half of our runs before TensorFlow's and half after, so that a spell
    # of load from other work on the machine weighs on both sides alike.
    ours = bench(tw, args.iterations, (args.repeats + 1) // 2)
    theirs = tensorflow_side.figures(
        __file__,
        ["--iterations", str(args.iterations), "--repeats", str(args.repeats)],
        lambda: bench(
            tensorflow_side.tensorflow_v1(control_flow_v2=False), args.iterations, args.repeats
        ),
        timeout=600,
    )
    ours = min(ours, bench(tw, args.iterations, max(1, args.repeats // 2)))
    print(f"tensorweave while loop                {ours:8.3f} us per iteration")
    if theirs is None:
        print("tensorflow while loop                 not available")
        return
    print(f"tensorflow while loop                 {theirs:8.3f} us per iteration")
    print(f"tensorweave / tensorflow              {ours / theirs:8.2f}x (target <= 0.5x)")


if __name__ == "__main__":
    main()
