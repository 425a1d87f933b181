"""Operation._set_attr / _clear_attr (TF_SetAttr / TF_ClearAttr), as
TensorFlow's Python and libraries built on it edit ops already in a graph;
and the devices' incarnation numbers from Session.list_devices."""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import attr_value_pb2, types_pb2


def test_set_attr_changes_what_the_session_runs():
    with tf.Graph().as_default():
        x = tf.constant(np.int32(7))
        cast = tf.cast(x, tf.float32)
        cast.op._set_attr("DstT", attr_value_pb2.AttrValue(type=types_pb2.DT_INT64))
        assert cast.op.get_attr("DstT") == tf.int64
        with tf.Session() as sess:
            value = sess.run(cast.op.outputs[0])
        assert value == 7 and value.dtype == np.int64


def test_set_attr_refuses_an_edit_the_edges_do_not_allow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, name="x")
        y = tf.identity(x, name="y")
        with pytest.raises(tf.errors.InvalidArgumentError, match="'y'"):
            y.op._set_attr("T", attr_value_pb2.AttrValue(type=types_pb2.DT_INT32))
        assert y.op.get_attr("T") == tf.float32


def test_private_attrs_come_and_go():
    with tf.Graph().as_default():
        y = tf.identity(tf.constant(1.0), name="y")
        y.op._set_attr("_hint", attr_value_pb2.AttrValue(s=b"fast"))
        assert y.op.get_attr("_hint") == b"fast"
        assert y.op.node_def.attr["_hint"].s == b"fast"
        y.op._clear_attr("_hint")
        with pytest.raises(ValueError):
            y.op.get_attr("_hint")


def test_list_devices_gives_each_device_an_incarnation():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default(), tf.Session(config=config) as sess:
        devices = sess.list_devices()
        again = sess.list_devices()
    incarnations = [d.incarnation for d in devices]
    assert len(set(incarnations)) == 2 and 0 not in incarnations
    assert [d.incarnation for d in again] == incarnations
