"""GraphDefs with the FusedBatchNorm family recorded from TensorFlow 2.21
(tests/fixtures/tf_batch_norm, written by tests/fixtures/record_batch_norm.py)
import with tf.import_graph_def and reproduce every recorded case: frozen
conv + batch norm models (TF1 layers; a Keras model with its learning-phase
cond), TF1 training programs (gradients and moving-average
updates, NHWC and NCHW, training as a bool and as a tensor), 5-D layouts,
the raw V1/V2 ops and second derivatives.

Graphs with variables have an op "init", run before each case.
"""

import glob
import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import imported, load_cases, load_graph_def

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_batch_norm")
GRAPHS = sorted(glob.glob(os.path.join(FIXTURES, "*.pb")))
EXPECTED = {
    "frozen_conv_bn",
    "keras_frozen",
    "tf1_training_nhwc",
    "tf1_training_bn_nhwc",
    "tf1_training_nchw_tensor",
    "tf1_unfused",
    "fused_ndhwc_training",
    "fused_ncdhw_inference",
    "raw_v1_v2",
    "second_order",
}
# Our kernels sum in double where TensorFlow's sum in float, so results
# agree to float rounding, relative to each tensor's own scale.
RTOL = 1e-5


def _name(path):
    return os.path.basename(path)[:-3]


def test_every_batch_norm_fixture_is_present():
    names = {_name(p) for p in GRAPHS}
    assert EXPECTED <= names, f"missing under {FIXTURES}: {EXPECTED - names}"


def _scale(value):
    return float(np.max(np.abs(value))) if value.size else 0.0


def _assert_close(name, result, expected, case_scale=0.0):
    """Within RTOL of the tensor's own scale, or of `case_scale` (the largest
    float fetch of the case) when that is larger: a value that is zero in
    exact arithmetic but summed from terms of the case's size (the bias
    gradient of a conv that training-mode batch norm cancels) carries
    rounding noise of that size on both sides."""
    assert result.dtype == expected.dtype, name
    assert result.shape == expected.shape, name
    scale = max(_scale(expected), case_scale)
    np.testing.assert_allclose(result, expected, rtol=RTOL, atol=RTOL * scale, err_msg=name)


@pytest.mark.parametrize("path", GRAPHS, ids=_name)
def test_fixture_reproduces_every_recorded_case(path):
    graph_def = load_graph_def(path)
    graph = imported(graph_def)
    has_init = any(node.name == "init" for node in graph_def.node)
    cases = load_cases(path)
    assert cases
    with tf.Session(graph=graph) as sess:
        for feeds, fetches in cases:
            if has_init:
                sess.run("init")
            results = sess.run(list(fetches), feed_dict=feeds)
            floats = [value for value in fetches.values() if value.dtype.kind == "f"]
            case_scale = max((_scale(value) for value in floats), default=0.0)
            for (name, expected), result in zip(fetches.items(), results):
                _assert_close(name, result, expected, case_scale)


def test_fixtures_hold_the_ops_they_cover():
    ops = {_name(p): {n.op for n in load_graph_def(p).node} for p in GRAPHS}
    assert "FusedBatchNormV3" in ops["frozen_conv_bn"]
    assert {"FusedBatchNormV3", "Switch", "Merge"} <= ops["keras_frozen"]
    assert {"FusedBatchNormV3", "FusedBatchNormGradV3", "AssignSub"} <= ops["tf1_training_nhwc"]
    assert {"FusedBatchNorm", "FusedBatchNormGrad", "FusedBatchNormV2"} <= ops["raw_v1_v2"]
    assert "FusedBatchNormGradV2" in ops["raw_v1_v2"]
    formats = {
        n.attr["data_format"].s.decode()
        for p in GRAPHS
        for n in load_graph_def(p).node
        if n.op.startswith("FusedBatchNorm")
    }
    assert {"NHWC", "NCHW", "NDHWC", "NCDHW"} <= formats


def test_frozen_model_runs_with_any_batch_size():
    path = os.path.join(FIXTURES, "frozen_conv_bn.pb")
    graph = imported(load_graph_def(path))
    feeds, fetches = load_cases(path)[1]
    x = feeds["x:0"]
    with tf.Session(graph=graph) as sess:
        whole = sess.run("y:0", {"x:0": x})
        rows = [sess.run("y:0", {"x:0": x[i : i + 1]}) for i in range(len(x))]
    # Inference normalizes each example alone: batching changes nothing.
    np.testing.assert_allclose(np.concatenate(rows), whole, rtol=1e-6, atol=1e-6)
    _assert_close("y:0", whole, fetches["y:0"])
