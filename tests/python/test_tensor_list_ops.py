"""The TensorList op wrappers (tensorweave.ops.list_ops) run on the runtime
as TensorFlow's do, lists are values (changing one never changes another
that shares it), errors are INVALID_ARGUMENT, and the gradients registered
for the list ops agree with the ones worked out by hand."""

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.framework import gradient_registry
from tensorweave.ops import list_ops

X = np.arange(6, dtype=np.float32).reshape(3, 2) - 1.5


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_reserve_set_get_stack_and_unset_elements_read_as_zeros():
    with tf.Graph().as_default():
        handle = list_ops.tensor_list_reserve([2], 3, tf.float32)
        handle = list_ops.tensor_list_set_item(handle, 1, tf.constant([1.0, 2.0]))
        item = list_ops.tensor_list_get_item(handle, 1, tf.float32, element_shape=[2])
        unset = list_ops.tensor_list_get_item(handle, 0, tf.float32, element_shape=[2])
        stacked = list_ops.tensor_list_stack(handle, tf.float32, element_shape=[2])
        assert stacked.shape.as_list() == [None, 2]
        length = list_ops.tensor_list_length(handle)
        shape = list_ops.tensor_list_element_shape(handle, tf.int64)
        results = _run([item, unset, stacked, length, shape])
    np.testing.assert_array_equal(results[0], [1, 2])
    np.testing.assert_array_equal(results[1], [0, 0])
    np.testing.assert_array_equal(results[2], [[0, 0], [1, 2], [0, 0]])
    assert results[3] == 3
    assert results[4].dtype == np.int64 and results[4].tolist() == [2]


def test_a_list_is_a_value_setting_an_item_leaves_the_input_list_as_it_was():
    with tf.Graph().as_default():
        original = list_ops.tensor_list_from_tensor(tf.constant(X), [2])
        changed = list_ops.tensor_list_set_item(original, 0, tf.constant([9.0, 9.0]))
        pushed = list_ops.tensor_list_push_back(original, tf.constant([7.0, 7.0]))
        popped, last = list_ops.tensor_list_pop_back(original, tf.float32, [2])
        before = list_ops.tensor_list_stack(original, tf.float32, element_shape=[2])
        after = list_ops.tensor_list_stack(changed, tf.float32, element_shape=[2])
        results = _run(
            [
                before,
                after,
                list_ops.tensor_list_length(pushed),
                list_ops.tensor_list_length(popped),
                last,
            ]
        )
    np.testing.assert_array_equal(results[0], X)
    np.testing.assert_array_equal(results[1], np.concatenate([[[9, 9]], X[1:]]))
    assert results[2] == 4 and results[3] == 2
    np.testing.assert_array_equal(results[4], X[2])


def test_empty_list_push_limit_and_pop_from_empty_are_invalid_argument():
    with tf.Graph().as_default():
        empty = list_ops.empty_tensor_list([2], tf.float32, max_num_elements=1)
        one = list_ops.tensor_list_push_back(empty, tf.constant([1.0, 2.0]))
        two = list_ops.tensor_list_push_back(one, tf.constant([3.0, 4.0]))
        _, from_empty = list_ops.tensor_list_pop_back(empty, tf.float32, [2])
        with tf.Session() as sess:
            assert sess.run(list_ops.tensor_list_length(one)) == 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="full list"):
                sess.run(list_ops.tensor_list_length(two))
            with pytest.raises(tf.errors.InvalidArgumentError, match="pop from an empty list"):
                sess.run(from_empty)


def test_reading_an_unset_element_of_unknown_shape_is_invalid_argument():
    with tf.Graph().as_default():
        handle = list_ops.tensor_list_reserve(None, 2, tf.float32)
        item = list_ops.tensor_list_get_item(handle, 0, tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not fully defined"):
            _run(item)


def test_gather_scatter_concat_split_resize():
    with tf.Graph().as_default():
        reserved = list_ops.tensor_list_reserve([2], 4, tf.float32)
        scattered = list_ops.tensor_list_scatter_into_existing_list(
            reserved, tf.constant(X), [3, 0, 1]
        )
        gathered = list_ops.tensor_list_gather(scattered, [3, 2], tf.float32, [2])
        split = list_ops.tensor_list_split(
            tf.constant(np.arange(5.0, dtype=np.float32)), [-1], [2, 0, 3]
        )
        concat, lengths = list_ops.tensor_list_concat_v2(split, tf.float32, [-1], [])
        resized = list_ops.tensor_list_resize(split, 5)
        resized_concat, _ = list_ops.tensor_list_concat_v2(
            resized, tf.float32, [-1], np.array([2, 0, 3, 1, 0], np.int64)
        )
        bad = list_ops.tensor_list_scatter_into_existing_list(reserved, tf.constant(X), [0, 4, 1])
        results = _run([gathered, concat, lengths, resized_concat])
        with pytest.raises(tf.errors.InvalidArgumentError, match="scatter at index 4"):
            _run(list_ops.tensor_list_length(bad))
    np.testing.assert_array_equal(results[0], [X[0], [0, 0]])
    np.testing.assert_array_equal(results[1], np.arange(5.0))
    assert results[2].tolist() == [2, 0, 3]
    np.testing.assert_array_equal(results[3], list(np.arange(5.0)) + [0.0])


def test_a_list_built_in_a_tf1_while_loop():
    # A list travels through Enter/Merge/Switch/NextIteration/Exit like any tensor.
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        handle = list_ops.empty_tensor_list([], tf.int32)

        def body(i, h):
            return i + 1, list_ops.tensor_list_push_back(h, i * i)

        _, handle = tf.while_loop(lambda i, h: i < n, body, [tf.constant(0), handle])
        stacked = list_ops.tensor_list_stack(handle, tf.int32, element_shape=[])
        with tf.Session() as sess:
            assert sess.run(stacked, {n: 5}).tolist() == [0, 1, 4, 9, 16]
            assert sess.run(stacked, {n: 1}).tolist() == [0]


def _backprop(op, *out_grads):
    """The input gradients op's registered gradient function builds."""
    return gradient_registry.get_gradient_function(op)(op, *out_grads)


def test_gradients_of_from_tensor_set_item_and_stack_chained_by_hand():
    # y = sum(stack(set_item(from_tensor(x), 1, v)) * w): dx = w with row 1
    # zeroed, dv = w[1]. The list gradients are chained through each op's
    # registered function (tf.gradients does not yet follow variant tensors).
    w = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        v = tf.placeholder(tf.float32, [2])
        from_tensor = list_ops.tensor_list_from_tensor(x, [2])
        set_item = list_ops.tensor_list_set_item(from_tensor, 1, v)
        stack = list_ops.tensor_list_stack(set_item, tf.float32, element_shape=[2])
        dset_item, _ = _backprop(stack.op, tf.constant(w))
        dfrom_tensor, _, dv = _backprop(set_item.op, dset_item)
        dx, _ = _backprop(from_tensor.op, dfrom_tensor)
        results = _run([dx, dv], {x: X, v: np.ones(2, np.float32)})
    expected_dx = w.copy()
    expected_dx[1] = 0.0
    np.testing.assert_allclose(results[0], expected_dx)
    np.testing.assert_allclose(results[1], w[1])


def test_gradients_of_get_item_and_gather():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        handle = list_ops.tensor_list_from_tensor(x, [2])
        item = list_ops.tensor_list_get_item(handle, 2, tf.float32, [2])
        gathered = list_ops.tensor_list_gather(handle, [2, 0], tf.float32, [2])
        ditem_list, _, _ = _backprop(item.op, tf.constant([5.0, 6.0]))
        dgather_list, _, _ = _backprop(gathered.op, tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        dx_item, _ = _backprop(handle.op, ditem_list)
        dx_gather, _ = _backprop(handle.op, dgather_list)
        results = _run([dx_item, dx_gather], {x: X})
    np.testing.assert_allclose(results[0], [[0, 0], [0, 0], [5, 6]])
    np.testing.assert_allclose(results[1], [[3, 4], [0, 0], [1, 2]])


def test_gradients_of_split_concat_push_pop_scatter_and_resize():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [5])
        split = list_ops.tensor_list_split(x, [-1], [2, 3])
        concat, lengths = list_ops.tensor_list_concat_v2(split, tf.float32, [-1], [])
        dsplit, _, _ = _backprop(concat.op, tf.range(1.0, 6.0), None)
        dx, _, _ = _backprop(split.op, dsplit)

        v = tf.placeholder(tf.float32, [2])
        base = list_ops.tensor_list_from_tensor(tf.constant(X), [2])
        pushed = list_ops.tensor_list_push_back(base, v)
        stacked = list_ops.tensor_list_stack(pushed, tf.float32, element_shape=[2])
        dpushed, _ = _backprop(
            stacked.op, tf.constant(np.arange(8.0, dtype=np.float32).reshape(4, 2))
        )
        dbase, dv = _backprop(pushed.op, dpushed)
        dbase_stacked = list_ops.tensor_list_stack(dbase, tf.float32, element_shape=[2])

        _, last = list_ops.tensor_list_pop_back(base, tf.float32, [2])
        dpop_base, _ = _backprop(last.op, None, tf.constant([1.0, -1.0]))
        dpop_stacked = list_ops.tensor_list_stack(dpop_base, tf.float32, element_shape=[2])

        s = tf.placeholder(tf.float32, [2, 2])
        reserved = list_ops.tensor_list_reserve([2], 3, tf.float32)
        scattered = list_ops.tensor_list_scatter_into_existing_list(reserved, s, [2, 0])
        dscattered = list_ops.tensor_list_from_tensor(
            tf.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2)), [2]
        )
        dreserved, ds, _ = _backprop(scattered.op, dscattered)
        dreserved_stacked = list_ops.tensor_list_stack(dreserved, tf.float32, element_shape=[2])

        resized = list_ops.tensor_list_resize(base, 5)
        dresize_in, _ = _backprop(resized.op, list_ops.tensor_list_reserve([2], 5, tf.float32))
        results = _run(
            [
                dx,
                lengths,
                dv,
                dbase_stacked,
                dpop_stacked,
                ds,
                dreserved_stacked,
                list_ops.tensor_list_length(dresize_in),
            ],
            {x: np.ones(5, np.float32), v: np.ones(2, np.float32), s: X[:2]},
        )
    np.testing.assert_allclose(results[0], np.arange(1.0, 6.0))
    assert results[1].tolist() == [2, 3]
    np.testing.assert_allclose(results[2], [6, 7])
    np.testing.assert_allclose(results[3], np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(results[4], [[1, -1]])
    np.testing.assert_allclose(results[5], [[4, 5], [0, 1]])
    # Element 1 was not scattered over: its gradient passes through.
    np.testing.assert_allclose(results[6], [[0, 0], [2, 3], [0, 0]])
    assert results[7] == 3


def test_tf_gradients_through_a_list():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        handle = list_ops.tensor_list_from_tensor(x, [2])
        y = tf.reduce_sum(list_ops.tensor_list_stack(handle, tf.float32, element_shape=[2]) * 2.0)
        (dx,) = tf.gradients(y, [x])
        assert dx is not None
        np.testing.assert_allclose(_run(dx, {x: X}), np.full([3, 2], 2.0))
