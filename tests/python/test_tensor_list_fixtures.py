"""GraphDefs with TensorFlow's TensorList ops recorded from real TensorFlow
2.21 (tests/fixtures/tf_tensor_list, written by
tests/fixtures/record_tensor_lists.py): TF1-style graphs of tf.raw_ops list
ops, and a Keras LSTM and GRU frozen with their function library (While
loops whose bodies set list items). Each imports with tf.import_graph_def
and reproduces every recorded case; hostile edits (an index out of range, an
item of the wrong dtype or shape) fail with INVALID_ARGUMENT naming the node.

NAME.pb is a binary GraphDef; NAME.npz holds, for each case k,
feed<k>__<tensor> inputs and fetch<k>__<tensor> expected outputs.
"""

import glob
import os

import numpy as np
import pytest
import tensorweave as tf
from recorded_graphs import imported, load_cases, load_graph_def
from tensorweave.framework import dtypes
from tensorweave.framework.tensor_util import make_tensor_proto

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_tensor_list")
GRAPHS = sorted(glob.glob(os.path.join(FIXTURES, "*.pb")))
EXPECTED = {
    "list_reserve_set_stack",
    "list_from_tensor",
    "list_scatter_split",
    "keras_lstm",
    "keras_gru",
}
LIST_OPS = {
    "EmptyTensorList",
    "TensorListReserve",
    "TensorListFromTensor",
    "TensorListGetItem",
    "TensorListSetItem",
    "TensorListStack",
    "TensorListLength",
    "TensorListElementShape",
    "TensorListPushBack",
    "TensorListPopBack",
    "TensorListConcatV2",
    "TensorListGather",
    "TensorListScatterIntoExistingList",
    "TensorListSplit",
    "TensorListResize",
}


def _graph_def(name):
    return load_graph_def(os.path.join(FIXTURES, name + ".pb"))


def _ops(graph_def):
    ops = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        ops |= {node.op for node in function.node_def}
    return ops


def _nodes(graph_def):
    """Every NodeDef: the main graph's and each function body's."""
    yield from graph_def.node
    for function in graph_def.library.function:
        yield from function.node_def


def test_every_fixture_is_present_and_together_they_use_every_list_op():
    names = {os.path.basename(p)[:-3] for p in GRAPHS}
    assert EXPECTED <= names, f"missing under {FIXTURES}: {EXPECTED - names}"
    used = set()
    for name in EXPECTED:
        used |= _ops(_graph_def(name))
    assert LIST_OPS <= used, LIST_OPS - used


def test_keras_graphs_keep_their_function_library_while_and_lists():
    for name in ("keras_lstm", "keras_gru"):
        graph_def = _graph_def(name)
        assert len(graph_def.library.function) == 2
        ops = _ops(graph_def)
        assert "While" in ops
        assert {"TensorListReserve", "TensorListFromTensor", "TensorListSetItem"} <= ops
        assert {"TensorListGetItem", "TensorListStack"} <= ops


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: os.path.basename(p)[:-3])
def test_fixture_reproduces_tensorflow(path):
    graph = imported(_graph_def(os.path.basename(path)[:-3]))
    with tf.Session(graph=graph) as sess:
        for feeds, fetches in load_cases(path):
            results = sess.run(list(fetches), feed_dict=feeds)
            for name, result, expected in zip(fetches, results, fetches.values()):
                assert result.dtype == expected.dtype, name
                assert result.shape == expected.shape, name
                np.testing.assert_allclose(
                    result, expected, rtol=1e-5, atol=1e-6, err_msg=f"{name} for {feeds}"
                )


def test_a_keras_lstm_runs_again_with_a_new_batch_size():
    # The recorded cases have batches 2 and 1; each run makes new lists.
    path = os.path.join(FIXTURES, "keras_lstm.pb")
    graph = imported(_graph_def("keras_lstm"))
    feeds, fetches = load_cases(path)[0]
    (feed_name,) = feeds
    (fetch_name,) = fetches
    with tf.Session(graph=graph) as sess:
        first = sess.run(fetch_name, {feed_name: feeds[feed_name]})
        for _ in range(3):
            again = sess.run(fetch_name, {feed_name: feeds[feed_name]})
            np.testing.assert_array_equal(first, again)
        tripled = np.concatenate([feeds[feed_name]] * 3)
        result = sess.run(fetch_name, {feed_name: tripled})
    assert result.shape == (tripled.shape[0],) + first.shape[1:]
    np.testing.assert_allclose(result[: first.shape[0]], first, rtol=1e-6)


def _edited(name, node_name, edit):
    graph_def = _graph_def(name)
    (node,) = [n for n in _nodes(graph_def) if n.name == node_name]
    edit(node)
    return graph_def


def _constant(graph_def, name):
    (node,) = [n for n in graph_def.node if n.name == name]
    return node


def _run_first_case(graph_def, name):
    feeds, fetches = load_cases(os.path.join(FIXTURES, name + ".pb"))[0]
    graph = imported(graph_def)
    with tf.Session(graph=graph) as sess:
        return sess.run(list(fetches), feed_dict=feeds)


def _set_int_const(node, value):
    node.attr["value"].tensor.CopyFrom(make_tensor_proto(np.array(value, np.int32)))


def test_a_get_item_out_of_range_is_invalid_argument_naming_the_node():
    graph_def = _graph_def("list_reserve_set_stack")
    get_item = next(n for n in graph_def.node if n.op == "TensorListGetItem")
    index = _constant(graph_def, get_item.input[1])
    _set_int_const(index, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="element 4 in a list with 4") as e:
        _run_first_case(graph_def, "list_reserve_set_stack")
    assert get_item.name in str(e.value)


def test_a_set_item_out_of_range_is_invalid_argument():
    graph_def = _graph_def("list_reserve_set_stack")
    set_item = [n for n in graph_def.node if n.op == "TensorListSetItem"][-1]
    _set_int_const(_constant(graph_def, set_item.input[1]), -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="modify element -1") as e:
        _run_first_case(graph_def, "list_reserve_set_stack")
    assert set_item.name in str(e.value)


def test_a_set_item_of_the_wrong_shape_is_invalid_argument():
    # The last SetItem stores tf.ones([2]); make it ones([3]) in a list of [2]s.
    graph_def = _graph_def("list_reserve_set_stack")
    set_item = [n for n in graph_def.node if n.op == "TensorListSetItem"][-1]
    item = _constant(graph_def, set_item.input[2])
    item.attr["value"].tensor.CopyFrom(make_tensor_proto(np.ones([3], np.float32)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible shape"):
        _run_first_case(graph_def, "list_reserve_set_stack")


def test_a_set_item_of_the_wrong_dtype_is_invalid_argument():
    # The SetItem says int32 elements; the list holds floats.
    graph_def = _graph_def("list_reserve_set_stack")
    set_item = [n for n in graph_def.node if n.op == "TensorListSetItem"][-1]
    item = _constant(graph_def, set_item.input[2])
    item.attr["value"].tensor.CopyFrom(make_tensor_proto(np.ones([2], np.int32)))
    item.attr["dtype"].type = tf.int32.as_datatype_enum
    set_item.attr["element_dtype"].type = tf.int32.as_datatype_enum
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid data types"):
        _run_first_case(graph_def, "list_reserve_set_stack")


def test_a_stack_of_the_wrong_length_is_invalid_argument():
    graph_def = _graph_def("list_reserve_set_stack")
    stack = next(n for n in graph_def.node if n.op == "TensorListStack")
    stack.attr["num_elements"].i = 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected a list with 5 elements"):
        _run_first_case(graph_def, "list_reserve_set_stack")


def test_a_keras_lstm_whose_output_list_is_too_short_is_invalid_argument():
    # The output list is reserved with 3 elements instead of 5: the While
    # body (a library function) sets element 3 and fails there.
    graph_def = _graph_def("keras_lstm")
    reserve = next(n for n in graph_def.node if n.op == "TensorListReserve")
    _set_int_const(_constant(graph_def, reserve.input[1]), 3)
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="modify element 3 in a list with 3 elements"
    ) as e:
        _run_first_case(graph_def, "keras_lstm")
    assert "TensorListSetItem" in str(e.value)


def test_a_keras_gru_body_reading_its_list_as_int32_is_invalid_argument():
    # Inside the While body the input list of floats is read as int32; the
    # graph is then ill-typed where the item meets a float MatMul, refused
    # when the body is instantiated.
    graph_def = _graph_def("keras_gru")
    body = next(f for f in graph_def.library.function if "body" in f.signature.name)
    (get_item,) = [n for n in body.node_def if n.op == "TensorListGetItem"]
    get_item.attr["element_dtype"].type = tf.int32.as_datatype_enum
    with pytest.raises(tf.errors.InvalidArgumentError, match="is int32"):
        _run_first_case(graph_def, "keras_gru")


def test_split_lengths_that_do_not_add_up_are_invalid_argument():
    graph_def = _graph_def("list_scatter_split")
    split = next(n for n in graph_def.node if n.op == "TensorListSplit")
    lengths = _constant(graph_def, split.input[2])
    lengths.attr["value"].tensor.CopyFrom(make_tensor_proto(np.array([3, 0, 6], np.int64)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unused values in tensor"):
        _run_first_case(graph_def, "list_scatter_split")


def test_a_variant_tensor_cannot_be_fetched_or_fed():
    graph = imported(_graph_def("list_reserve_set_stack"))
    handle = next(op for op in graph.get_operations() if op.type == "TensorListSetItem").outputs[0]
    assert handle.dtype == dtypes.variant
    x = np.zeros([3, 2], np.float32)
    with tf.Session(graph=graph) as sess:
        with pytest.raises(tf.errors.UnimplementedError, match="Unsupported dtype variant"):
            sess.run(handle, {"x:0": x})
        # The session still works afterwards.
        assert sess.run("length:0", {"x:0": x}) == 4
