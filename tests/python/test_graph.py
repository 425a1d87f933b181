"""Graph building: names, scopes, control dependencies, devices, GraphDef
round trips, finalize, lookup and collections."""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import graph_pb2


def test_unique_names_follow_tensorflow():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    first = a + b
    second = a + b
    third = tf.add(a, b, name="add")
    assert [a.op.name, b.op.name] == ["Const", "Const_1"]
    assert [first.op.name, second.op.name, third.op.name] == ["add", "add_1", "add_2"]
    assert first.name == "add:0"
    assert (a * 2.0).op.name == "mul" and tf.get_default_graph().get_operation_by_name("mul/y")


def test_explicit_names_are_uniquified():
    x = tf.placeholder(tf.float32, name="x")
    x1 = tf.placeholder(tf.float32, name="x")
    assert (x.op.name, x1.op.name) == ("x", "x_1")
    assert tf.identity(x, name="x_2").op.name == "x_2"
    assert tf.placeholder(tf.float32, name="x").op.name == "x_3"


def test_name_scopes_nest_reenter_and_reset():
    with tf.name_scope("outer") as outer:
        assert outer == "outer/"
        with tf.name_scope("inner") as inner:
            c = tf.constant(1.0, name="c")
        with tf.name_scope("inner") as inner_again:
            pass
        with tf.name_scope(inner):
            d = tf.constant(1.0, name="d")
        with tf.name_scope(None):
            top = tf.constant(1.0, name="top")
    with tf.name_scope("outer") as outer_again:
        pass
    assert inner == "outer/inner/" and inner_again == "outer/inner_1/"
    assert (c.op.name, d.op.name, top.op.name) == ("outer/inner/c", "outer/inner/d", "top")
    assert outer_again == "outer_1/"
    with tf.name_scope("layer", "default") as scope:
        assert scope == "layer/"
    with tf.name_scope(None, "default") as scope:
        assert scope == "default/"


def test_name_scope_enters_the_graph_of_its_values_and_leaves_it_on_errors():
    other = tf.Graph()
    with other.as_default():
        value = tf.constant(1.0)
    outer = tf.get_default_graph()
    with tf.name_scope("s", values=[value]) as scope:
        assert scope == "s/" and tf.get_default_graph() is other
        inside = tf.constant(2.0, name="c")
    assert inside.graph is other and inside.op.name == "s/c"
    assert tf.get_default_graph() is outer and other.get_name_scope() == ""
    with (
        pytest.raises(ValueError, match="not a valid scope name"),
        tf.name_scope("bad name", values=[value]),
    ):
        pass
    assert tf.get_default_graph() is outer
    with pytest.raises(KeyError), tf.name_scope("failing", values=[value]):
        raise KeyError("body")
    assert tf.get_default_graph() is outer and other.get_name_scope() == ""
    with other.name_scope("again") as scope:
        assert scope == "again/" and other.get_name_scope() == "again"
    assert other.get_name_scope() == ""


def test_scoped_ops_keep_tensorflow_names():
    with tf.name_scope("dense"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, tf.ones([3, 2]))
    assert y.op.name == "dense/MatMul"
    assert y.op.inputs[1].op.name == "dense/ones"


def test_control_dependencies_are_added_and_cleared():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a, b.op]):
        c = tf.identity(a, name="c")
        d = tf.constant(3.0, name="d")
        e = tf.identity(d, name="e")  # d already waits for a and b: no extra edges
        with tf.control_dependencies(None):
            free = tf.constant(4.0, name="free")
    assert c.op.control_inputs == [b.op]  # a is already a data input
    assert d.op.control_inputs == [a.op, b.op]
    assert e.op.control_inputs == []
    assert free.op.control_inputs == []
    with pytest.raises(TypeError):
        tf.control_dependencies([42])


def test_device_scopes_nest_and_canonicalize():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0)
        with tf.device("/job:localhost"):
            b = tf.constant(1.0)
        with tf.device(None):
            c = tf.constant(1.0)
    with tf.device(lambda op: "/cpu:0" if op.type == "Const" else ""):
        d = tf.constant(1.0)
    assert a.op.device == "/device:CPU:1"
    assert b.op.device == "/job:localhost/device:CPU:1"
    assert c.op.device == ""
    assert d.op.device == "/device:CPU:0"
    assert tf.constant(1.0).device == ""


def test_graph_def_round_trip():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device("/cpu:0"):
        y = tf.nn.relu(tf.matmul(x, tf.ones([4, 2])) + 1.0, name="y")
    graph_def = tf.get_default_graph().as_graph_def()
    assert isinstance(graph_def, graph_pb2.GraphDef)
    names = [node.name for node in graph_def.node]
    assert names == [op.name for op in tf.get_default_graph().get_operations()]
    by_name = {node.name: node for node in graph_def.node}
    assert list(by_name["MatMul"].input) == ["x", "ones"]
    assert by_name["y"].device == "/device:CPU:0"
    assert by_name["x"].attr["dtype"].type == tf.float32.as_datatype_enum

    copy = tf.Graph()
    with copy.as_default():
        tf.import_graph_def(graph_def, name="")
    assert copy.as_graph_def().SerializeToString(deterministic=True) == graph_def.SerializeToString(
        deterministic=True
    )
    with tf.Session(graph=copy) as sess:
        result = sess.run("y:0", {"x:0": np.ones((1, 4), np.float32)})
    np.testing.assert_array_equal(result, [[5.0, 5.0]])
    assert y.shape.as_list() == [None, 2]


def test_import_graph_def_prefix_input_map_and_return_elements():
    source = tf.Graph()
    with source.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        tf.multiply(x, 3.0, name="y")
    graph_def = source.as_graph_def()

    replacement = tf.constant([1.0, 2.0], name="replacement")
    y, y_op = tf.import_graph_def(
        graph_def, input_map={"x:0": replacement}, return_elements=["y:0", "y"]
    )
    assert y.name == "import/y:0" and y_op is y.op
    assert y.op.inputs[0] is replacement
    again = tf.import_graph_def(graph_def, return_elements=["y:0"], name="again")[0]
    third = tf.import_graph_def(graph_def, return_elements=["y:0"])[0]
    assert again.name == "again/y:0" and third.name == "import_1/y:0"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])


def test_import_graph_def_rejects_bad_graphs():
    bad = graph_pb2.GraphDef()
    node = bad.node.add(name="n", op="NoSuchOp")
    with pytest.raises(ValueError, match="NoSuchOp"):
        tf.import_graph_def(bad)
    node.op = "Identity"
    node.input.append("missing")
    with pytest.raises(ValueError):
        tf.import_graph_def(bad)
    with pytest.raises(TypeError):
        tf.import_graph_def("not a graph")
    assert tf.get_default_graph().get_operations() == []


def test_finalize_makes_the_graph_read_only():
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0)
    graph.finalize()
    assert graph.finalized
    with graph.as_default(), pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2.0)
    graph._unsafe_unfinalize()
    assert not graph.finalized
    with graph.as_default():
        tf.constant(2.0)


def test_lookup_by_name():
    x = tf.placeholder(tf.float32, name="x")
    graph = tf.get_default_graph()
    assert graph.get_operation_by_name("x") is x.op
    assert graph.get_tensor_by_name("x:0") is x
    assert graph.as_graph_element("x") is x.op
    with pytest.raises(KeyError):
        graph.get_operation_by_name("nope")
    with pytest.raises(KeyError):
        graph.get_tensor_by_name("x:1")
    with pytest.raises(ValueError):
        graph.get_tensor_by_name("x")
    with pytest.raises(ValueError):
        graph.get_operation_by_name("x:0")


def test_operation_and_tensor_properties():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.matmul(x, tf.ones([3, 5]), transpose_b=False, name="y")
    op = y.op
    assert (op.type, op.name, len(op.outputs)) == ("MatMul", "y", 1)
    assert op.inputs[0] is x and op.outputs[0] is y
    assert op.get_attr("transpose_a") is False
    assert op.get_attr("T") == tf.float32
    assert x.op.get_attr("shape").dim[1].size == 3
    assert op.node_def.op == "MatMul"
    assert y.value_index == 0 and y.graph is tf.get_default_graph()
    assert y.dtype == tf.float32 and y.shape.as_list() == [None, 5]
    assert y.get_shape() == y.shape
    assert repr(y) == "<tf.Tensor 'y:0' shape=(?, 5) dtype=float32>"
    assert x.consumers() == [op]
    with pytest.raises(ValueError):
        op.get_attr("nope")
    with pytest.raises(TypeError):
        bool(y)
    with pytest.raises(TypeError):
        iter(y)
    assert len({x: 1, y: 2}) == 2  # hashable, == is identity


def test_shape_inference_errors_are_value_errors():
    with pytest.raises(ValueError):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    with pytest.raises(ValueError):
        tf.reshape(tf.ones([2, 3]), [4])


def test_set_shape_narrows_and_rejects_contradictions():
    x = tf.placeholder(tf.float32, [None, 4])
    x.set_shape([3, None])
    assert x.shape.as_list() == [3, 4]
    assert tf.identity(x).shape.as_list() == [3, 4]
    with pytest.raises(ValueError):
        x.set_shape([2, 4])


def test_default_graph_stack():
    outer = tf.get_default_graph()
    graph = tf.Graph()
    with graph.as_default():
        assert tf.get_default_graph() is graph
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert tf.get_default_graph() is outer
    tf.reset_default_graph()
    assert tf.get_default_graph() is not outer


def test_inputs_from_another_graph_are_rejected():
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError):
        tf.add(tf.constant(1.0), foreign)


def test_collections():
    v = tf.Variable(1.0, name="v")
    frozen = tf.Variable(2.0, trainable=False, name="frozen")
    tf.add_to_collection("mine", 1)
    assert tf.get_collection("mine") == [1]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [v, frozen]
    assert tf.trainable_variables() == [v]
    assert tf.global_variables(scope="fro") == [frozen]
    tf.get_collection_ref("mine").append(2)
    assert tf.get_collection("mine") == [1, 2]
