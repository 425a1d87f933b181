"""tf.colocate_with, as in TensorFlow: ops created inside carry a `_class`
attr "loc:@<op>", take that op's device, ignore the device scopes opened
outside, and run on one device with it; a variable's `read` sits with the
variable."""

import numpy as np
import pytest
import tensorweave as tf


def test_ops_inside_take_the_ops_device_and_class():
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a = tf.constant(1.0, name="a")
        with tf.device("/cpu:0"), tf.colocate_with(a):
            b = tf.identity(a, name="b")
        assert b.op.device == a.op.device == "/device:CPU:1"
        assert b.op.get_attr("_class") == [b"loc:@a"]
        assert b.op.colocation_groups() == ["loc:@a"]
        assert a.op.colocation_groups() == ["loc:@a"]


def test_nested_colocations_accumulate_unless_ignore_existing():
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
        with tf.colocate_with(a), tf.colocate_with(b):
            both = tf.add(a, b, name="both")
        with tf.colocate_with(a), tf.colocate_with(b, ignore_existing=True):
            only_b = tf.add(a, b, name="only_b")
        with tf.colocate_with(a), tf.colocate_with(None, ignore_existing=True):
            free = tf.add(a, b, name="free")
        assert both.op.colocation_groups() == ["loc:@a", "loc:@b"]
        assert only_b.op.colocation_groups() == ["loc:@b"]
        assert free.op.colocation_groups() == ["loc:@free"]
        with pytest.raises(ValueError), tf.colocate_with(None):
            pass


def test_colocated_ops_run_on_one_device():
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            a = tf.constant(np.float32(3.0), name="a")
        with tf.colocate_with(a.op):
            doubled = a * 2.0
        with tf.Session(config=config) as sess:
            assert sess.run(doubled) == 6.0


def test_a_variables_read_sits_with_the_variable():
    # The device function would send an Identity to the worker; the read
    # stays with its variable on the ps, as TensorFlow's does.
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
            v = tf.Variable(1.0, name="v")
            other = tf.identity(v, name="other")
        assert v.op.device == "/job:ps/task:0"
        assert other.op.device == "/job:worker"
        assert v.value().op.device == "/job:ps/task:0"
        assert v.value().op.colocation_groups() == ["loc:@v"]
