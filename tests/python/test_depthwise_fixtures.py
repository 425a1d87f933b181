"""GraphDefs with depthwise convolutions recorded from real TensorFlow 2.21
(tests/fixtures/tf_depthwise, written by tests/fixtures/record_depthwise.py):
TF1-style graphs of the tf.nn depthwise functions (two with tf.gradients,
so both backprop ops), a TF1 block with FusedBatchNormV3, and MobileNet-style
Keras blocks frozen with batch norm and with it folded. Each imports with
tf.import_graph_def and reproduces every recorded case to 1e-5 relative;
hostile edits fail with INVALID_ARGUMENT naming the node.

NAME.pb is a binary GraphDef; NAME.npz holds, for each case k,
feed<k>__<tensor> inputs and fetch<k>__<tensor> expected outputs.
"""

import glob
import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import imported, load_cases, load_graph_def
from tensorweave import pywrap_tensorweave
from tensorweave.proto import op_def_pb2

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_depthwise")
GRAPHS = sorted(glob.glob(os.path.join(FIXTURES, "*.pb")))
EXPECTED = {
    "tf1_native",
    "tf1_float64",
    "tf1_separable",
    "tf1_same_grad",
    "tf1_valid_grad",
    "tf1_fused_batch_norm_block",
    *(
        f"keras_{block}_{variant}"
        for block in ("s1_same_m1", "s2_same_m2", "s2_valid_m1")
        for variant in ("bn", "folded")
    ),
}
DEPTHWISE_OPS = {
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
}
# Ops a fixture may need that another piece of issue 10 adds; a fixture
# needing one of them is skipped until the runtime registers it.
OPS_FROM_OTHER_PIECES = {"FusedBatchNormV3"}


def _graph_def(name):
    return load_graph_def(os.path.join(FIXTURES, name + ".pb"))


def _registered_ops():
    op_list = op_def_pb2.OpList.FromString(pywrap_tensorweave.TF_GetAllOpList())
    return {op.name for op in op_list.op}


def test_every_fixture_is_present_and_together_they_use_every_depthwise_op():
    names = {os.path.basename(p)[:-3] for p in GRAPHS}
    assert names == EXPECTED, names ^ EXPECTED
    used = set()
    for name in EXPECTED:
        used |= {node.op for node in _graph_def(name).node}
    assert DEPTHWISE_OPS <= used, DEPTHWISE_OPS - used


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: os.path.basename(p)[:-3])
def test_fixture_reproduces_tensorflow(path):
    graph_def = _graph_def(os.path.basename(path)[:-3])
    missing = {node.op for node in graph_def.node} - _registered_ops()
    assert missing <= OPS_FROM_OTHER_PIECES, f"ops missing from the runtime: {missing}"
    if missing:
        pytest.skip(f"needs {sorted(missing)}, which the runtime does not register yet")
    with tf.Session(graph=imported(graph_def)) as sess:
        for feeds, fetches in load_cases(path):
            results = sess.run(list(fetches), feed_dict=feeds)
            for name, result, expected in zip(fetches, results, fetches.values()):
                assert result.dtype == expected.dtype, name
                assert result.shape == expected.shape, name
                # Relative 1e-5, with an absolute floor for sums that cancel to ~0.
                scale = float(np.max(np.abs(expected))) if expected.size else 1.0
                np.testing.assert_allclose(
                    result, expected, rtol=1e-5, atol=1e-6 * scale, err_msg=f"{name}"
                )


def test_folded_and_batch_norm_blocks_agree():
    for block in ("s1_same_m1", "s2_same_m2", "s2_valid_m1"):
        outputs = []
        for variant in ("bn", "folded"):
            path = os.path.join(FIXTURES, f"keras_{block}_{variant}.pb")
            feeds, fetches = load_cases(path)[0]
            with tf.Session(graph=imported(load_graph_def(path))) as sess:
                (fetch,) = fetches
                outputs.append(sess.run(fetch, feeds))
        np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-4)


def _depthwise_node(graph_def, name):
    (node,) = [n for n in graph_def.node if n.name == name]
    assert node.op == "DepthwiseConv2dNative"
    return node


def test_hostile_attrs_fail_at_import_naming_the_node():
    graph_def = _graph_def("tf1_native")
    node = _depthwise_node(graph_def, "same_s2")
    node.attr["strides"].list.i[:] = [1, 2, 2]
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="same_s2"):
        imported(graph_def)
    graph_def = _graph_def("tf1_native")
    node = _depthwise_node(graph_def, "explicit_s2")
    node.attr["explicit_paddings"].list.i[:] = [0, 0, 1, 2, 0, 1, 0, -4]
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="explicit_s2"):
        imported(graph_def)


def test_a_mismatched_filter_fails_at_import_naming_the_node():
    graph_def = _graph_def("tf1_native")
    # same_s1 reads filter_multiplier2 [3, 3, 4, 2]; give it a 3-channel filter.
    node = _depthwise_node(graph_def, "same_s1")
    (filter_node,) = [n for n in graph_def.node if n.name == "filter_multiplier2"]
    replacement = graph_def.node.add()
    replacement.CopyFrom(filter_node)
    replacement.name = "three_channel_filter"
    replacement.attr["value"].tensor.tensor_shape.dim[2].size = 3
    replacement.attr["value"].tensor.tensor_content = np.zeros([3, 3, 3, 2], np.float32).tobytes()
    node.input[1] = "three_channel_filter"
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="same_s1"):
        imported(graph_def)
