"""TF1-style training graphs on resource variables recorded from
TensorFlow 2.21 (tests/fixtures/tf_resource_variables, written by
tests/fixtures/record_resource_variables.py) import with
tf.import_graph_def and train along TensorFlow's trajectory: after op
"init", each recorded case is one training step (ResourceApply* for
GradientDescent, Momentum, Adam, Adagrad and RMSProp, ResourceGather with
its sparse updates (ResourceScatterAdd, ResourceSparseApply* for
Momentum, Adagrad and RMSProp, rows repeated), AssignAdd/Sub/AssignVariableOp,
VariableShape; TF1 tf.layers programs with batch normalization; a
tf.function taking handles as resource arguments), replayed
in order in one session.
"""

import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import (
    assert_fixtures_present,
    fixture_graphs,
    fixture_name,
    imported,
    load_cases,
    load_graph_def,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_resource_variables")
GRAPHS = fixture_graphs(FIXTURES)
EXPECTED = {
    "sgd",
    "momentum",
    "adam",
    "adam_float64",
    "adagrad",
    "rmsprop",
    "embedding_sgd",
    "embedding_momentum",
    "embedding_adagrad",
    "embedding_rmsprop",
    "embedding_centered_rmsprop",
    "sparse_apply_raw",
    "assign",
    "layers_mlp_momentum",
    "function_assign",
    "layers_cnn_adam",
}
# Matmul and reduction orders differ from TensorFlow's: values agree to
# float rounding, relative to each tensor's own scale.
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def test_every_resource_variable_fixture_is_present():
    assert_fixtures_present(GRAPHS, EXPECTED)


def _assert_close(name, result, expected):
    assert result.dtype == expected.dtype, name
    assert result.shape == expected.shape, name
    if expected.dtype.kind != "f":
        np.testing.assert_array_equal(result, expected, err_msg=name)
        return
    rtol = RTOL[expected.dtype]
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * scale, err_msg=name)


@pytest.mark.parametrize("path", GRAPHS, ids=fixture_name)
def test_training_steps_follow_tensorflow(path):
    graph_def = load_graph_def(path)
    assert any(node.op == "VarHandleOp" for node in graph_def.node)
    assert not any(node.op in ("VariableV2", "Assign") for node in graph_def.node)
    with tf.Session(graph=imported(graph_def)) as sess:
        sess.run("init")
        for step, (feeds, fetches) in enumerate(load_cases(path)):
            results = sess.run(list(fetches), feed_dict=feeds)
            for name, result, expected in zip(fetches, results, fetches.values()):
                _assert_close(f"{name} at step {step}", np.asarray(result), expected)


def test_steps_change_the_variables():
    """The recorded trajectory moves: a graph whose update did nothing
    would fail the comparison above, not pass it."""
    for path in GRAPHS:
        cases = load_cases(path)
        first, last = cases[0][1], cases[-1][1]
        after = [name for name in first if name.startswith("after_") and "step" not in name]
        assert after, fixture_name(path)
        assert any(not np.array_equal(first[n], last[n]) for n in after), fixture_name(path)
