"""The Stack ops through their internal builders (data_flow_ops), as the
while-loop gradient will use them: last in first out, TensorFlow's errors,
and a fresh stack every run."""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.ops import data_flow_ops


def pushes_then_pops(handle, values, pops):
    """Pushes every value in order, then pops `pops` times; returns the pops."""
    last = None
    for value in values:
        with tf.control_dependencies([last] if last is not None else []):
            last = data_flow_ops.stack_push_v2(handle, value)
    popped = []
    for _ in range(pops):
        with tf.control_dependencies([last]):
            last = data_flow_ops.stack_pop_v2(handle, tf.float32)
        popped.append(last)
    return popped


def test_last_in_first_out_and_a_fresh_stack_every_run():
    handle = data_flow_ops.stack_v2(-1, tf.float32)
    popped = pushes_then_pops(handle, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], 3)
    with tf.Session() as sess:
        for _ in range(2):
            out = sess.run(popped)
            np.testing.assert_array_equal(out, [[5, 6], [3, 4], [1, 2]])


def test_popping_an_empty_stack_is_invalid_argument():
    handle = data_flow_ops.stack_v2(-1, tf.float32, stack_name="s")
    (_first, extra) = pushes_then_pops(handle, [1.0], 2)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=r"\] is empty"):
        sess.run(extra)


def test_max_size_is_honoured():
    handle = data_flow_ops.stack_v2(1, tf.float32)
    (popped,) = pushes_then_pops(handle, [1.0, 2.0], 1)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="max_size"):
        sess.run(popped)


def test_a_closed_stack_refuses_pushes():
    handle = data_flow_ops.stack_v2(-1, tf.float32)
    closed = data_flow_ops.stack_close_v2(handle)
    with tf.control_dependencies([closed]):
        pushed = data_flow_ops.stack_push_v2(handle, 1.0)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="closed"):
        sess.run(pushed)
