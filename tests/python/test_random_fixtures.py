"""Random values against TensorFlow 2.21's, recorded by
tests/fixtures/record_random.py into tests/fixtures/tf_random: the raw
stateful and stateless kernels from a GraphDef (runs 1-3 of one session,
each kernel advancing its generator as TensorFlow's does), and the programs
of tests/fixtures/random_programs.py built by our Python API (seed
derivation, initializers, tf.layers.dense with one SGD step,
tf.random.stateless_*). Every drawn value must be identical, bit for bit
(the loss and the values after the SGD step within float rounding of their sums): the
float Box-Muller transform uses the same libm functions (logf, sincosf) as
TensorFlow's kernels on this platform, the double one and the Gamma and
Poisson samplers glibc's log, log1p, pow and lgamma_r. Measured against
TensorFlow 2.21 on 100.7M RandomStandardNormal/TruncatedNormal values
(float32 and float64, 4M per op, runs 1 and 2): no value differs in any bit.
On 8M RandomGamma and 8M RandomPoissonV2 draws: 2 Gamma float64 draws
differ (alpha 0.01, results near 4e-308, within a factor 2 of the smallest
normal double, which TensorFlow's pow under flush-to-zero gives as 0)."""

import os
import sys

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import assert_reproduces, imported, load_cases, load_graph_def

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
RECORDED = os.path.join(FIXTURES, "tf_random")
sys.path.insert(0, FIXTURES)
import random_programs

KERNELS = os.path.join(RECORDED, "kernels.pb")
PROGRAMS = np.load(os.path.join(RECORDED, "programs.npz"))


def assert_identical(result, expected, what):
    assert result.dtype == expected.dtype, what
    assert result.shape == expected.shape, what
    np.testing.assert_array_equal(result, expected, err_msg=what)
    # Compares the bits (NaN-safe, and -0.0 differs from 0.0).
    np.testing.assert_array_equal(
        np.asarray(result).reshape(-1).view(np.uint8),
        np.asarray(expected).reshape(-1).view(np.uint8),
        err_msg=what,
    )


def test_kernels_give_tensorflows_values_run_after_run():
    with tf.Session(graph=imported(load_graph_def(KERNELS))) as sess:
        assert_reproduces(sess, KERNELS)


def test_kernel_values_do_not_depend_on_the_thread_count():
    # One intra-op thread fills the chunks in order, the default pool in
    # parallel: the first run's values are TensorFlow's either way.
    (_, fetches), *_ = load_cases(KERNELS)
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.Session(graph=imported(load_graph_def(KERNELS)), config=config) as sess:
        results = sess.run(list(fetches))
    for name, result in zip(fetches, results):
        assert_identical(result, fetches[name], name)


def run_program(name):
    """{key: value} as record_random.py stores them, from our run."""
    values = {}
    with tf.Graph().as_default() as graph:
        program = random_programs.PROGRAMS[name](tf)
    feeds = {f"{key}:0": value for key, value in program.get("feeds", {}).items()}
    with tf.Session(graph=graph) as sess:
        if "init" in program:
            sess.run(program["init"])
        for run in (1, 2, 3):
            for fetch, value in sess.run(program["fetches"], feeds).items():
                values[f"{name}/{run}/{fetch}"] = np.asarray(value)
        if "train" in program:
            sess.run(program["train"], feeds)
            for fetch, value in sess.run(program["after"], feeds).items():
                values[f"{name}/after/{fetch}"] = np.asarray(value)
    return values


@pytest.mark.parametrize("name", sorted(random_programs.PROGRAMS))
def test_programs_give_tensorflows_values(name):
    values = run_program(name)
    expected = {key for key in PROGRAMS.files if key.startswith(name + "/")}
    assert set(values) == expected
    for key in sorted(expected):
        if "/after/" in key or key.endswith("/loss"):
            # After the SGD step, and the loss (a mean over the batch): sums
            # may add in another order than TensorFlow's, with the vector
            # width the CPU gives (not a question of random numbers).
            assert values[key].dtype == PROGRAMS[key].dtype, key
            np.testing.assert_allclose(
                values[key], PROGRAMS[key], rtol=1e-5, atol=1e-7, err_msg=key
            )
        else:
            assert_identical(values[key], PROGRAMS[key], key)


def test_the_recorded_program_exercises_every_run_and_the_train_step():
    # The stateful draws differ from run to run, the stateless ones do not,
    # and the SGD step moved every variable.
    for fetch in ("uniform", "normal", "truncated", "shuffle"):
        first = PROGRAMS[f"tf1_dense_sgd/1/{fetch}"]
        assert not np.array_equal(first, PROGRAMS[f"tf1_dense_sgd/2/{fetch}"])
    np.testing.assert_array_equal(PROGRAMS["stateless/1/normal"], PROGRAMS["stateless/3/normal"])
    for variable in ("hidden/kernel", "out/kernel", "out/bias"):
        initial = PROGRAMS[f"tf1_dense_sgd/1/initial/{variable}"]
        assert not np.array_equal(initial, PROGRAMS[f"tf1_dense_sgd/after/trained/{variable}"])
