"""Memory of a training step and of an inference run, tensorweave next to
TensorFlow (tf.compat.v1) in one run (issue 12, "Memory"):

- "MLP train": train_step.py's Adam step of a 784-256-256-10 ReLU MLP, batch 128;
- "CNN train": conv_net.py's tutorial CNN Adam step, batch 128;
- "ResNet50 infer": model_inference.py's ResNet50 (64x64) at batch 8.

Each (library, workload) runs in a fresh process, so its peak RSS is its own.
Per step, after warming up: wall time, processor time (all threads, user +
system; under load it varies much less than wall time) and its system part,
and minor page faults (memory mapped afresh and touched: what the buffer
cache saves, paid in system time), each the least over rounds of 5 steps, and from one FULL_TRACE step the bytes its kernels allocated and
how many kernels wrote into an input's buffer instead of a new one (an
output whose address is an input's; pass-through ops such as Identity and
Reshape left out). Then the
allocator's peak bytes in use since the process started (tensorweave:
tf.contrib.memory_stats.MaxBytesInUse; TensorFlow:
tf.config.experimental.get_memory_info("CPU:0")["peak"]) and the process's
peak RSS. tensorweave also runs with its buffer cache off
(TENSORWEAVE_CPU_BUFFER_CACHE_MB=0), the "before" of the cache.

TensorFlow runs under $TENSORFLOW_PYTHON (default /work/tfvenv/bin/python).
Usage: PYTHONPATH=python python bench/memory.py [--steps N] [--workloads a,b]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tensorflow_side

STEPS_PER_ROUND = 5
WORKLOADS = ["MLP train", "CNN train", "ResNet50 infer"]
# Ops whose output is their input by design: sharing a buffer is no forwarding.
PASS_THROUGH = {"Identity", "Reshape", "Squeeze", "ExpandDims", "Snapshot", "StopGradient"}


def mlp_train(tf):
    import train_step

    rng = np.random.RandomState(0)
    weights = train_step.initial_weights(rng)
    batch = (
        rng.standard_normal((train_step.BATCH, train_step.SIZES[0])).astype(np.float32),
        rng.randint(0, train_step.SIZES[-1], train_step.BATCH).astype(np.int64),
    )
    session, x, labels, _, train_op, _, _ = train_step.build_graph(tf, weights)
    return session, train_op, {x: batch[0], labels: batch[1]}


def cnn_train(tf):
    from conv_net import _conv_block, _weights

    rng = np.random.default_rng(1)
    batch = 128
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, 28, 28, 1])
        y = tf.placeholder(tf.int64, [batch])
        h = _conv_block(tf, x, _weights(rng, [5, 5, 1, 32]), np.full(32, 0.1, np.float32))
        h = _conv_block(tf, h, _weights(rng, [5, 5, 32, 64]), np.full(64, 0.1, np.float32))
        flat = tf.reshape(h, [batch, 7 * 7 * 64])
        dense = tf.nn.relu(
            tf.matmul(flat, tf.Variable(_weights(rng, [7 * 7 * 64, 1024])))
            + tf.Variable(np.full(1024, 0.1, np.float32))
        )
        logits = tf.matmul(dense, tf.Variable(_weights(rng, [1024, 10]))) + tf.Variable(
            np.full(10, 0.1, np.float32)
        )
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        init = tf.global_variables_initializer()
    session = tf.Session(graph=graph)
    session.run(init)
    feed = {
        x: rng.random([batch, 28, 28, 1], dtype=np.float32),
        y: rng.integers(0, 10, batch).astype(np.int64),
    }
    return session, train, feed


def resnet50_infer(tf):
    from model_inference import _graph_def

    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(_graph_def(tf, "resnet50"), name="")
    x = graph.get_tensor_by_name("x:0")
    images = np.random.default_rng(8).uniform(-1, 1, [8, int(x.shape[1]), int(x.shape[1]), 3])
    session = tf.Session(graph=graph)
    return session, graph.get_tensor_by_name("Identity:0"), {x: images.astype(np.float32)}


BUILDERS = {"MLP train": mlp_train, "CNN train": cnn_train, "ResNet50 infer": resnet50_infer}


def traced_step(tf, session, fetch, feed):
    """(bytes the step's kernels allocated, kernels that forwarded an input)."""
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    session.run(fetch, feed, options=options, run_metadata=metadata)
    nodes = [node for device in metadata.step_stats.dev_stats for node in device.node_stats]
    addresses = {
        node.node_name: {o.tensor_description.allocation_description.ptr for o in node.output}
        for node in nodes
    }
    allocated = sum(m.total_bytes for node in nodes for m in node.memory)
    forwarded = 0
    for node in nodes:
        try:
            op = session.graph.get_operation_by_name(node.node_name)
        except (KeyError, ValueError):
            continue  # _SOURCE, _arg_*, _retval_*: the runtime's own nodes
        if op.type in PASS_THROUGH:
            continue
        mine = addresses[node.node_name] - {0}
        theirs = set()
        for tensor in op.inputs:
            theirs |= addresses.get(tensor.op.name, set())
        forwarded += bool(mine & theirs)
    return allocated, forwarded


def allocator_peak(tf, session):
    if hasattr(tf, "contrib"):  # tensorweave
        with session.graph.as_default():
            peak = tf.contrib.memory_stats.MaxBytesInUse()
        return int(session.run(peak))
    import tensorflow

    return int(tensorflow.config.experimental.get_memory_info("CPU:0")["peak"])


def measure(tf, workload, steps):
    """The figures of one workload; time and faults are each the least of
    rounds of STEPS_PER_ROUND steps (the machine is shared: the least
    disturbed round is the one to compare)."""
    session, fetch, feed = BUILDERS[workload](tf)
    for _ in range(3):
        session.run(fetch, feed)
    best = {"ms": float("inf"), "cpu_ms": float("inf"), "sys_ms": float("inf")}
    best["faults"] = float("inf")
    for _ in range(max(1, steps // STEPS_PER_ROUND)):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        for _ in range(STEPS_PER_ROUND):
            session.run(fetch, feed)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        system = after.ru_stime - usage.ru_stime
        per_step = {
            "ms": wall * 1e3,
            "cpu_ms": (after.ru_utime - usage.ru_utime + system) * 1e3,
            "sys_ms": system * 1e3,
            "faults": after.ru_minflt - usage.ru_minflt,
        }
        for key, value in per_step.items():
            best[key] = min(best[key], value / STEPS_PER_ROUND)
    allocated, forwarded = traced_step(tf, session, fetch, feed)
    figures = {
        **best,
        "allocated": allocated,
        "forwarded": forwarded,
        "peak": allocator_peak(tf, session),
        "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    session.close()
    return figures


def child(library, workload, steps, environment=None):
    """The figures of one fresh process, or None when it fails."""
    if library == "tensorflow":
        python = os.environ.get("TENSORFLOW_PYTHON", tensorflow_side.DEFAULT_TENSORFLOW_PYTHON)
    else:
        python = sys.executable
    command = [python, __file__, "--child", library, "--workloads", workload]
    command += ["--steps", str(steps)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, **(environment or {})},
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--child", choices=["tensorweave", "tensorflow"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "tensorflow":
        print(json.dumps(measure(tensorflow_side.tensorflow_v1(), args.workloads, args.steps)))
        return
    if args.child == "tensorweave":
        import tensorweave

        print(json.dumps(measure(tensorweave, args.workloads, args.steps)))
        return

    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f}")
    print(
        f"{'workload':<15} {'side':<22} {'ms/step':>8} {'cpu ms':>8} {'sys ms':>7}"
        f" {'faults/step':>11} {'alloc MB':>9}"
        f" {'forwarded':>9} {'peak MB':>8} {'RSS MB':>7}"
    )
    sides = [
        ("tensorweave", "tensorweave", None),
        ("tensorweave cache off", "tensorweave", {"TENSORWEAVE_CPU_BUFFER_CACHE_MB": "0"}),
        ("tensorflow", "tensorflow", None),
    ]
    for workload in args.workloads.split(","):
        for label, library, environment in sides:
            figures = child(library, workload, args.steps, environment)
            if figures is None:
                print(f"{workload:<15} {label:<22} failed (stderr above)")
                continue
            print(
                f"{workload:<15} {label:<22} {figures['ms']:8.2f} {figures['cpu_ms']:8.2f}"
                f" {figures['sys_ms']:7.2f} {figures['faults']:11.0f}"
                f" {figures['allocated'] / 2**20:9.1f} {figures['forwarded']:9d}"
                f" {figures['peak'] / 2**20:8.1f} {figures['rss'] / 2**20:7.0f}"
            )
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
