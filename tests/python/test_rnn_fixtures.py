"""RNN programs recorded from real TensorFlow (tests/fixtures/tf_rnn, written
by tests/fixtures/record_rnn.py from tests/fixtures/rnn_programs.py):

- the frozen GraphDefs (v1 while loops, TensorArrays, ReverseSequence,
  ReverseV2, per-step conds) import and reproduce TensorFlow's outputs;
- the same programs built with tensorweave's tf.nn.rnn_cell and
  tf.nn.dynamic_rnn & co. get exactly TensorFlow's variable names and shapes
  (the keys of TensorFlow's checkpoint), and with the checkpoint's values
  loaded compute TensorFlow's outputs.
"""

import json
import os
import sys

import numpy as np
import pytest
import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
RECORDED = os.path.join(FIXTURES, "tf_rnn")
sys.path.insert(0, FIXTURES)
import rnn_programs

NAMES = sorted(rnn_programs.PROGRAMS)


def _recorded(name):
    arrays = np.load(os.path.join(RECORDED, name + ".npz"))
    feeds = {k[len("feed__") :]: arrays[k] for k in arrays.files if k.startswith("feed__")}
    fetches = {k[len("fetch__") :]: arrays[k] for k in arrays.files if k.startswith("fetch__")}
    with open(os.path.join(RECORDED, name + "_variables.json")) as f:
        variables = json.load(f)
    values = {v["name"]: arrays[f"var{i}"] for i, v in enumerate(variables)}
    return feeds, fetches, variables, values


def test_every_program_is_recorded():
    for name in NAMES:
        for suffix in (".pb", ".npz", "_variables.json"):
            assert os.path.exists(os.path.join(RECORDED, name + suffix)), name + suffix


@pytest.mark.parametrize("name", NAMES)
def test_frozen_graph_reproduces_tensorflow(name):
    feeds, expected, _, _ = _recorded(name)
    with open(os.path.join(RECORDED, name + ".pb"), "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    keys = sorted(expected)
    with tf.Session(graph=graph) as sess:
        for _ in range(2):  # fresh TensorArrays and frames every run
            results = sess.run(
                [f"fetch__{k}:0" for k in keys], {f"{k}:0": v for k, v in feeds.items()}
            )
            for key, result in zip(keys, results):
                np.testing.assert_allclose(result, expected[key], rtol=1e-5, atol=1e-6, err_msg=key)


def _build_with_tensorweave(name):
    return rnn_programs.PROGRAMS[name](tf, tf.nn.rnn_cell, tf.nn)


@pytest.mark.parametrize("name", NAMES)
def test_our_program_has_tensorflows_variable_names_and_shapes(name):
    _, _, variables, _ = _recorded(name)
    _build_with_tensorweave(name)
    ours = sorted((v.op.name, v.shape.as_list()) for v in tf.global_variables())
    assert ours == [(v["name"], v["shape"]) for v in variables]
    assert len(tf.trainable_variables()) == len(variables)


@pytest.mark.parametrize("name", NAMES)
def test_our_program_with_tensorflows_weights_gives_tensorflows_outputs(name):
    feeds, expected, _, values = _recorded(name)
    _, _, fetches = _build_with_tensorweave(name)
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for variable in tf.global_variables():
            variable.load(values[variable.op.name], sess)
        feed_dict = {graph.get_tensor_by_name(f"{k}:0"): v for k, v in feeds.items()}
        keys = sorted(expected)
        results = sess.run([fetches[k] for k in keys], feed_dict)
    for key, result in zip(keys, results):
        np.testing.assert_allclose(result, expected[key], rtol=1e-5, atol=1e-5, err_msg=key)


# The ops whose names say where a program's work happens (scopes such as
# rnn/while/rnn/multi_rnn_cell/cell_0/lstm_cell/ or bidirectional_rnn/fw/fw/while/).
_NAMED_KINDS = {
    "MatMul",
    "BiasAdd",
    "Sigmoid",
    "Tanh",
    "Select",
    "ReverseSequence",
    "ReverseV2",
    "TensorArrayV3",
    "Enter",
    "Merge",
    "Switch",
    "Exit",
    "NextIteration",
    "Transpose",
}


@pytest.mark.parametrize("name", NAMES)
def test_our_program_names_its_ops_as_tensorflow_does(name):
    with open(os.path.join(RECORDED, name + ".pb"), "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    theirs = {node.name: node.op for node in graph_def.node if node.op in _NAMED_KINDS}
    assert len(theirs) > 20
    _build_with_tensorweave(name)
    ours = {op.name: op.type for op in tf.get_default_graph().get_operations()}
    missing = sorted(n for n, kind in theirs.items() if ours.get(n) != kind)
    assert not missing, missing
