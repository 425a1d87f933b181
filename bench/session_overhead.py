"""The fixed costs around a graph, tensorweave and TensorFlow side by side:

- Session.run of y = x * 2 + 1 on a 1x4 float32 feed, microseconds per
  steady-state call (and through Session.make_callable; numpy doing the
  same arithmetic as a floor);
- building a graph from Python: microseconds per op created while a chain
  of 5,000 `y = y + 1.0` is built (each step makes a Const and an add);
- the first Session.run of that chain, fed from a placeholder: milliseconds
  for pruning, optimizing, placing, partitioning and making the executor,
  then running it once (the graph already reached the session).

Each figure is the best of --rounds rounds. TensorFlow's side (tf.compat.v1
in graph mode) runs this script again under TensorFlow's Python
(bench/tensorflow_side.py) and the load average is printed beside the
figures, since the machine is shared.

Usage: PYTHONPATH=python python bench/session_overhead.py [--runs N] [--rounds R]
"""

import argparse
import json
import os
import time

import numpy as np
import tensorflow_side

CHAIN_LENGTH = 5000


def _best_of(function, runs, repeats=5):
    """Best mean over `repeats` batches of `runs` calls: the least disturbed one."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            function()
        best = min(best, (time.perf_counter() - start) / runs)
    return best * 1e6


def bench_session_run(tf, runs, prepared=False):
    """Microseconds per Session.run, or (prepared) per make_callable call."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = x * 2.0 + 1.0
    feed = np.ones((1, 4), np.float32)
    with tf.Session(graph=graph) as session:
        if not np.array_equal(session.run(y, {x: feed}), feed * 2 + 1):
            raise SystemExit("wrong result")
        if prepared:
            step = session.make_callable(y, [x])
            call = lambda: step(feed)
        else:
            call = lambda: session.run(y, {x: feed})
        for _ in range(1000):  # warm up caches and the allocator
            call()
        return _best_of(call, runs)


def bench_chain(tf):
    """(microseconds per op built, first-run milliseconds) for one chain."""
    graph = tf.Graph()
    with graph.as_default():
        start = time.perf_counter()
        x = tf.placeholder(tf.float32, [], name="x")
        y = x
        for _ in range(CHAIN_LENGTH):
            y = y + 1.0
        built = time.perf_counter() - start
        ops = len(graph.get_operations())
    with tf.Session(graph=graph) as session:
        session.run(x, {x: 1.0})  # the graph reaches the session; nothing of the chain runs
        start = time.perf_counter()
        value = session.run(y, {x: 1.0})
        first = time.perf_counter() - start
    if value != CHAIN_LENGTH + 1.0:
        raise SystemExit(f"chain: {value} != {CHAIN_LENGTH + 1.0}")
    return built / ops * 1e6, first * 1e3


def bench(tf, runs, rounds):
    """{label: best figure} over `rounds` rounds."""
    best = {}
    for _ in range(rounds):
        per_op, first = bench_chain(tf)
        figures = {
            "Session.run y = x*2+1 (us)": bench_session_run(tf, runs),
            "make_callable y = x*2+1 (us)": bench_session_run(tf, runs, prepared=True),
            "graph build per op (us)": per_op,
            f"first run, chain of {CHAIN_LENGTH} (ms)": first,
        }
        for label, value in figures.items():
            best[label] = min(best.get(label, value), value)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    # TensorFlow's Session.run is ~30x slower per call: fewer calls, same accuracy.
    their_runs = max(args.runs // 20, 500)
    if args.only == "tensorflow":
        print(json.dumps(bench(tensorflow_side.tensorflow_v1(), their_runs, args.rounds)))
        return
    import tensorweave

    load_before = os.getloadavg()[0]
    ours = bench(tensorweave, args.runs, args.rounds)
    feed = np.ones((1, 4), np.float32)
    floor = _best_of(lambda: feed * 2 + 1, args.runs)
    theirs = (
        tensorflow_side.figures(
            __file__,
            ["--runs", str(args.runs), "--rounds", str(args.rounds)],
            lambda: bench(tensorflow_side.tensorflow_v1(), their_runs, args.rounds),
        )
        or {}
    )
    load_after = os.getloadavg()[0]
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    print(f"best of {args.rounds} rounds")
    for label, value in ours.items():
        line = f"  {label:34s} tensorweave {value:10.2f}"
        other = theirs.get(label)
        if other is None:
            line += "   tensorflow not available"
        else:
            line += f"   tensorflow {other:10.2f}   ratio {value / other:6.3f}x"
        print(line)
    print(f"  {'numpy x * 2 + 1 (us)':34s} numpy       {floor:10.2f}")


if __name__ == "__main__":
    main()
