"""Microseconds per remote partial run (partial_run_setup, then a call
feeding a and b and fetching r1 = a + b, then one feeding c and fetching
r2 = r1 * c, on [N] float32 values) over gRPC on loopback: the median of
--runs runs (after a warm-up) of

  - tensorweave's client (tf.Session("grpc://...")) and
  - TensorFlow's client (tf.compat.v1.Session("grpc://...")),

against one TensorFlow server and one tensorweave server, each started as a
subprocess and stopped by pid at the end (servers and TensorFlow's Python
as in bench/remote_session.py).

Usage: PYTHONPATH=python python bench/remote_partial_run.py [--runs N] [--size N]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np
from remote_session import interop_python, start_server

REPO = pathlib.Path(__file__).resolve().parents[1]

# TensorFlow's client, run in the interop Python: prints the median in µs.
TF_CLIENT = """
import os, sys, time, statistics
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
v1.disable_v2_behavior()
target, runs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a, b, c = (v1.placeholder(tf.float32, [size]) for _ in range(3))
r1 = a + b
r2 = r1 * c
value = np.ones(size, np.float32)
def once(sess):
    h = sess.partial_run_setup([r1, r2], [a, b, c])
    first = sess.partial_run(h, r1, {a: value, b: value})
    return sess.partial_run(h, r2, {c: first})
with v1.Session(target) as sess:
    for _ in range(20):
        once(sess)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        once(sess)
        times.append(time.perf_counter() - start)
print(statistics.median(times) * 1e6, flush=True)
"""


def tensorweave_median(target, runs, size):
    sys.path.insert(0, str(REPO / "python"))
    import tensorweave as tf

    graph = tf.Graph()
    with graph.as_default():
        a, b, c = (tf.placeholder(tf.float32, [size]) for _ in range(3))
        r1 = a + b
        r2 = r1 * c
    value = np.ones(size, np.float32)

    def once(sess):
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        first = sess.partial_run(h, r1, {a: value, b: value})
        result = sess.partial_run(h, r2, {c: first})
        np.testing.assert_array_equal(result, 4 * value)  # the bench checks what it times
        return result

    with tf.Session(target, graph=graph) as sess:
        for _ in range(20):
            once(sess)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            once(sess)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def tensorflow_median(python, target, runs, size):
    result = subprocess.run(
        [python, "-c", TF_CLIENT, target, str(runs), str(size)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    if result.returncode != 0:
        return None, result.stderr.strip().splitlines()[-1:]
    return float(result.stdout.strip().splitlines()[-1]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--size", type=int, default=4)
    args = parser.parse_args()
    python = interop_python()
    tensorweave_server = [
        sys.executable,
        "-m",
        "tensorweave.server",
        "--cluster_spec=localhost=localhost:0",
        "--job_name=localhost",
    ]
    servers = [
        ("TensorFlow", [python, str(REPO / "tests/interop/tf_server.py")], None),
        ("tensorweave", tensorweave_server, dict(os.environ, PYTHONPATH=str(REPO / "python"))),
    ]
    for name, argv, env in servers:
        process, target = start_server(argv, env)
        try:
            ours = tensorweave_median(target, args.runs, args.size)
            theirs, error = tensorflow_median(python, target, args.runs, args.size)
            print(f"{name} server, [{args.size}] float32, median of {args.runs} partial runs:")
            print(f"  tensorweave client: {ours:8.1f} us")
            if theirs is None:
                print(f"  TensorFlow client:  failed ({error})")
            else:
                print(f"  TensorFlow client:  {theirs:8.1f} us")
                print(f"  tensorweave / TensorFlow: {ours / theirs:.2f}x the time")
        finally:
            process.kill()
            process.wait(timeout=15)


if __name__ == "__main__":
    main()
