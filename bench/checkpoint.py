"""Milliseconds to save and to restore the variables of a 784-256-256-10 MLP.

Saves with tf.train.Saver (write, fsync, rename, directory fsync and the state
file) and restores into the same session (read, verify checksums, check
shapes, assign), with and without Adam's two slots per weight. Prints the
median of several runs next to the bare cost of numpy writing the same bytes
with np.savez and an fsync, in the same process.
Usage: PYTHONPATH=python python bench/checkpoint.py [--runs N] [--dir DIR]
"""

import argparse
import glob
import itertools
import os
import statistics
import tempfile
import time

import numpy as np
import tensorweave as tf

LAYERS = [784, 256, 256, 10]


def build(with_slots):
    """The MLP's weights and biases (and, when asked, two same-shaped slots each)."""
    rng = np.random.default_rng(0)
    variables = []
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(LAYERS)):
        shapes = ((f"dense_{i}/kernel", (fan_in, fan_out)), (f"dense_{i}/bias", (fan_out,)))
        for name, shape in shapes:
            value = rng.standard_normal(shape).astype(np.float32)
            variables.append(tf.Variable(value, name=name))
            if with_slots:
                variables.append(tf.Variable(value, name=name + "/Adam"))
                variables.append(tf.Variable(value, name=name + "/Adam_1"))
    return variables


def median_ms(function, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def bench(directory, runs, with_slots):
    graph = tf.Graph()
    with graph.as_default():
        variables = build(with_slots)
        saver = tf.train.Saver(max_to_keep=2)
        init = tf.global_variables_initializer()
    prefix = os.path.join(directory, "slots" if with_slots else "mlp")
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        expected = sess.run(variables)
        saver.save(sess, prefix, write_meta_graph=False)  # warm up the executors
        saver.restore(sess, prefix)
        save = median_ms(lambda: saver.save(sess, prefix, write_meta_graph=False), runs)
        restore = median_ms(lambda: saver.restore(sess, prefix), runs)
        for want, got in zip(expected, sess.run(variables)):
            if not np.array_equal(want, got):
                raise SystemExit("restore returned different values")
    # TensorFlow's V2 layout: the index plus the data shards.
    files = [prefix + ".index", *glob.glob(glob.escape(prefix) + ".data-*")]
    megabytes = sum(os.path.getsize(f) for f in files) / 1e6

    arrays = {f"v{i}": value for i, value in enumerate(expected)}

    def numpy_save():
        path = os.path.join(directory, "numpy.npz")
        with open(path, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())

    numpy_ms = median_ms(numpy_save, runs)
    return len(expected), megabytes, save, restore, numpy_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        for with_slots in (False, True):
            count, megabytes, save, restore, numpy_ms = bench(directory, args.runs, with_slots)
            label = "MLP + Adam slots" if with_slots else "MLP"
            print(
                f"{label:17s} {count:2d} variables {megabytes:5.2f} MB: save {save:6.2f} ms, "
                f"restore {restore:6.2f} ms (numpy savez + fsync: {numpy_ms:6.2f} ms)"
            )


if __name__ == "__main__":
    main()
