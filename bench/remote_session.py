"""Microseconds per remote Session.run of y = x * 2 + 1 on a [1, N] float32 feed
(N = 4, a tiny run, and 262144, 1 MiB each way, by default; see --sizes),
over gRPC on loopback: the median of --runs runs (after a warm-up) of

  - tensorweave's client (tf.Session("grpc://...")) and
  - TensorFlow's client (tf.compat.v1.Session("grpc://...")),

both against one TensorFlow server (tf.distribute.Server), and, with
--tensorweave-server, both against a tensorweave server
(`python -m tensorweave.server`) too. TensorFlow runs in its own Python
(INTEROP_PYTHON, default build/interop-venv/bin/python; `make test-interop`
makes that virtualenv), as subprocesses stopped by pid at the end.

Usage: PYTHONPATH=python python bench/remote_session.py [--runs N] [--tensorweave-server]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
STARTUP_SECONDS = 120

# TensorFlow's client, run in the interop Python: prints the median in µs.
TF_CLIENT = """
import os, sys, time, statistics
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
v1.disable_v2_behavior()
target, runs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
x = v1.placeholder(tf.float32, [1, size], name="x")
y = x * 2.0 + 1.0
feed = np.ones((1, size), np.float32)
with v1.Session(target) as sess:
    for _ in range(20):
        sess.run(y, {x: feed})
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sess.run(y, {x: feed})
        times.append(time.perf_counter() - start)
print(statistics.median(times) * 1e6, flush=True)
"""


def interop_python():
    python = os.environ.get("INTEROP_PYTHON") or str(REPO / "build/interop-venv/bin/python")
    if not pathlib.Path(python).exists():
        sys.exit(f"no TensorFlow Python at {python}: set INTEROP_PYTHON or run make test-interop")
    return python


def start_server(argv, env=None):
    """(process, target) of a server that prints its target first."""
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    deadline = time.monotonic() + STARTUP_SECONDS
    line = ""
    while not line.startswith("grpc://"):
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            sys.exit(f"{argv} did not start")
        line = process.stdout.readline().strip()
    return process, line


def tensorweave_median(target, runs, size):
    sys.path.insert(0, str(REPO / "python"))
    import tensorweave as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [1, size], name="x")
        y = x * 2.0 + 1.0
    feed = np.ones((1, size), np.float32)
    with tf.Session(target, graph=graph) as sess:
        for _ in range(20):
            sess.run(y, {x: feed})
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            sess.run(y, {x: feed})
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


def throughput(size, micros):
    """Bytes each way per second, as MB/s."""
    return f" ({size * 4 / micros:7.1f} MB/s each way)" if size > 4 else ""


def measure(server_name, python, target, runs, size):
    ours = tensorweave_median(target, runs, size)
    theirs, error = tensorflow_median(python, target, runs, size)
    print(f"{server_name} server at {target}, [1, {size}] float32, median of {runs} runs:")
    print(f"  tensorweave client: {ours:8.1f} us{throughput(size, ours)}")
    if theirs is None:
        print(f"  TensorFlow client:  failed ({error})")
    else:
        print(f"  TensorFlow client:  {theirs:8.1f} us{throughput(size, theirs)}")
        print(f"  tensorweave / TensorFlow: {ours / theirs:.2f}x the time")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument(
        "--sizes",
        default="4,262144",
        help="feed sizes in float32 elements, comma-separated (262144 is 1 MiB)",
    )
    parser.add_argument("--tensorweave-server", action="store_true")
    args = parser.parse_args()
    python = interop_python()

    servers = [("TensorFlow", [python, str(REPO / "tests/interop/tf_server.py")], None)]
    if args.tensorweave_server:
        env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
        argv = [
            sys.executable,
            "-m",
            "tensorweave.server",
            "--cluster_spec=localhost=localhost:0",
            "--job_name=localhost",
        ]
        servers.append(("tensorweave", argv, env))
    for name, argv, env in servers:
        process, target = start_server(argv, env)
        try:
            for size in (int(text) for text in args.sizes.split(",")):
                measure(name, python, target, args.runs, size)
        except Exception as error:  # noqa: BLE001 - report and go on with the next server
            print(f"{name} server at {target}: failed ({type(error).__name__}: {error})")
        finally:
            process.kill()
            process.wait(timeout=15)


if __name__ == "__main__":
    main()
