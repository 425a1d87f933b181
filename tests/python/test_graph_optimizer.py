"""The graph optimizer keeps every recorded graph's values: each GraphDef
recorded from TensorFlow (tests/fixtures/tf_*/, the models included) runs
with the optimizer on (the default) and off (opt_level L0), and the two
agree exactly, or for float outputs to float rounding (folding a batch norm
into a filter, or (x + c1) + c2 into x + (c1 + c2), rounds differently).
An error raised with the optimizer off is raised with it on too, as the
same class. Also: the Python spelling of TensorFlow's options, and a
randomized check over chains of Add/Sub/Mul with constants.
"""

import glob
import os
import re
import sys

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import fixture_name, imported, load_cases, load_graph_def

FIXTURES_ROOT = os.path.join(os.path.dirname(__file__), "..", "fixtures")
sys.path.insert(0, FIXTURES_ROOT)
from model_constants import fill_constants, load_recipes


def _has_cases(path):
    """Whether NAME.npz holds recorded_graphs' feed<k>__/fetch<k>__ cases
    (tf_graphs/ keeps an older layout that its own test reads)."""
    if not os.path.exists(path[:-3] + ".npz"):
        return False
    with np.load(path[:-3] + ".npz") as recorded:
        return all(re.fullmatch(r"(feed|fetch)\d+__.+", key) for key in recorded.files)


RECORDED = sorted(
    path for path in glob.glob(os.path.join(FIXTURES_ROOT, "tf_*", "*.pb")) if _has_cases(path)
)

OFF = tf.ConfigProto(
    graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)
    )
)


def _graph_def(path):
    graph_def = load_graph_def(path)
    recipes = path[:-3] + ".constants.json"
    if os.path.exists(recipes):
        fill_constants(graph_def, load_recipes(path))
    return graph_def


def _run_cases(graph, cases, config):
    """Per case: the fetched values, or the error's class."""
    results = []
    with tf.Session(graph=graph, config=config) as sess:
        for feeds, fetches in cases:
            try:
                results.append(sess.run(list(fetches), feed_dict=feeds))
            except tf.errors.OpError as error:
                results.append(type(error))
    return results


def _assert_same(on, off, rtol):
    assert len(on) == len(off)
    for case_on, case_off in zip(on, off):
        if isinstance(case_off, type):
            assert case_on is case_off
            continue
        assert not isinstance(case_on, type), f"{case_on} raised only with the optimizer on"
        for value_on, value_off in zip(case_on, case_off):
            value_on, value_off = np.asarray(value_on), np.asarray(value_off)
            assert value_on.dtype == value_off.dtype
            assert value_on.shape == value_off.shape
            if value_off.dtype.kind in "fc" and rtol:
                finite = np.abs(value_off[np.isfinite(value_off)])
                scale = float(np.max(finite)) if finite.size else 1.0
                np.testing.assert_allclose(value_on, value_off, rtol=rtol, atol=rtol * scale)
            else:
                np.testing.assert_array_equal(value_on, value_off)


@pytest.mark.parametrize("path", RECORDED, ids=fixture_name)
def test_recorded_graph_gives_the_same_values_with_the_optimizer(path):
    try:
        graph = imported(_graph_def(path))
    except ValueError as error:  # an op tensorweave does not have yet
        pytest.skip(f"does not import: {error}")
    cases = load_cases(path)
    on = _run_cases(graph, cases, None)
    off = _run_cases(graph, cases, OFF)
    _assert_same(on, off, rtol=1e-5)


def test_the_recorded_fixtures_are_there():
    names = {fixture_name(path) for path in RECORDED}
    assert {"mobilenet_v2", "resnet50", "efficientnet_b0"} <= names


def test_options_spell_as_in_tensorflow():
    config = tf.ConfigProto(
        graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(
                do_constant_folding=True, opt_level=tf.OptimizerOptions.L0
            ),
            rewrite_options=tf.RewriterConfig(
                arithmetic_optimization=tf.RewriterConfig.OFF, min_graph_nodes=-1
            ),
        )
    )
    assert tf.compat.v1.ConfigProto is tf.ConfigProto
    parsed = tf.ConfigProto.FromString(config.SerializeToString())
    assert parsed.graph_options.rewrite_options.arithmetic_optimization == tf.RewriterConfig.OFF
    graph = tf.Graph()
    with graph.as_default():
        y = tf.constant(1.0) + tf.constant(2.0)
    with tf.Session(graph=graph, config=config) as sess:
        assert sess.run(y) == 3.0


def test_tensorflow_field_numbers():
    """A ConfigProto serialized by TensorFlow parses: same field numbers."""
    fields = tf.ConfigProto.DESCRIPTOR.fields_by_name
    assert fields["graph_options"].number == 10
    graph_fields = tf.GraphOptions.DESCRIPTOR.fields_by_name
    assert graph_fields["optimizer_options"].number == 3
    assert graph_fields["rewrite_options"].number == 10
    optimizer_fields = tf.OptimizerOptions.DESCRIPTOR.fields_by_name
    assert optimizer_fields["do_common_subexpression_elimination"].number == 1
    assert optimizer_fields["do_constant_folding"].number == 2
    assert optimizer_fields["max_folded_constant_in_bytes"].number == 6
    assert optimizer_fields["opt_level"].number == 3
    assert tf.OptimizerOptions.L0 == -1 and tf.OptimizerOptions.L1 == 0
    rewriter_fields = tf.RewriterConfig.DESCRIPTOR.fields_by_name
    assert rewriter_fields["constant_folding"].number == 3
    assert rewriter_fields["arithmetic_optimization"].number == 7
    assert rewriter_fields["remapping"].number == 14
    assert rewriter_fields["common_subgraph_elimination"].number == 24
    assert rewriter_fields["min_graph_nodes"].number == 17
    assert rewriter_fields["disable_meta_optimizer"].number == 19


def _random_chain(rng, length):
    """A graph mixing fed and constant operands through Add/Sub/Mul/Identity,
    returning (graph, x, fetched tensors)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [None, 3], name="x")
        values = [x, tf.constant(rng.uniform(-2, 2, [3]))]
        for _ in range(length):
            a = values[rng.integers(len(values))]
            if rng.random() < 0.5:
                b = tf.constant(rng.uniform(-2, 2, [3] if rng.random() < 0.5 else []))
            else:
                b = values[rng.integers(len(values))]
            kind = rng.integers(5)
            if kind == 0:
                values.append(a + b)
            elif kind == 1:
                values.append(a - b)
            elif kind == 2:
                values.append(b - a)
            elif kind == 3:
                values.append(a * b)
            else:
                values.append(tf.identity(a))
        fetches = values[-3:]
    return graph, x, fetches


@pytest.mark.parametrize("seed", range(20))
def test_random_arithmetic_graphs_keep_their_values(seed):
    rng = np.random.default_rng(seed)
    graph, x, fetches = _random_chain(rng, 40)
    feed = {x: rng.uniform(-1, 1, [4, 3])}
    with tf.Session(graph=graph) as sess:
        on = sess.run(fetches, feed)
    with tf.Session(graph=graph, config=OFF) as sess:
        off = sess.run(fetches, feed)
    for value_on, value_off in zip(on, off):
        np.testing.assert_allclose(value_on, value_off, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("config", [None, OFF], ids=["optimizer on", "optimizer off"])
def test_a_remote_session_optimizes_its_signatures_too(config):
    """The master optimizes each signature's graph before partitioning it:
    the folded and pushed-down chains give the same values remotely."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        from_constant = tf.constant(0.0)
        from_x = x
        for _ in range(200):
            from_constant = from_constant + 1.0
            from_x = from_x - 0.5
    server = tf.train.Server.create_local_server()
    try:
        with tf.Session(server.target, graph=graph, config=config) as sess:
            assert sess.run([from_constant, from_x], {x: 1.0}) == [200.0, -99.0]
    finally:
        server.stop()
