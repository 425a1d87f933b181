"""tf.gradients through TensorLists: the gradient of every list op, taken by
tf.gradients through the variant tensors, matches central differences of
the same graph and of the equivalent dense graph (gather, concat, slices)
built without lists. Also: which list tensors carry gradients (a list of
integers does not), ZerosLike of a list output nothing used, and AddN of the
gradients of a list with two consumers."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients, compute_gradients
from tensorweave.framework import dtypes
from tensorweave.ops import gradients_impl, list_ops

RNG = np.random.RandomState(7)
X = RNG.standard_normal((3, 2))
V = RNG.standard_normal(2)
S = RNG.standard_normal((2, 2))
FLAT = RNG.standard_normal(5)


def _from(x):
    return list_ops.tensor_list_from_tensor(x, element_shape=[2])


def _stack(handle, dtype=tf.float64):
    return list_ops.tensor_list_stack(handle, dtype, element_shape=[2])


def _row(x, i):
    return tf.reshape(tf.slice(x, [i, 0], [1, 2]), [2])


def _stack_and_item(handle):
    return [
        _stack(handle) * tf.constant([[1.0, 2.0]], tf.float64),
        list_ops.tensor_list_get_item(handle, 1, tf.float64, [2]),
    ]


def _stack_popped(popped):
    return [_stack(popped[0]), popped[1]]


def _list_cond(x, take_true):
    handle = _from(x)
    return tf.cond(
        tf.constant(take_true),
        lambda: list_ops.tensor_list_set_item(
            handle, 0, tf.fill([2], tf.constant(5.0, tf.float64))
        ),
        lambda: list_ops.tensor_list_push_back(handle, _row(x, 1) * 2.0),
    )


def _check_against_dense(list_fn, dense_fn, inputs):
    """tf.gradients of `list_fn` matches central differences of `list_fn`
    and of `dense_fn`, the same function built without lists."""
    list_results = check_gradients(list_fn, inputs)
    dense_results = compute_gradients(dense_fn, inputs)
    assert len(list_results) == len(dense_results)
    for (list_analytic, _), (_, dense_numeric) in zip(list_results, dense_results):
        np.testing.assert_allclose(list_analytic, dense_numeric, rtol=1e-5, atol=1e-6)


CASES = {
    "from_tensor_stack": (
        lambda x: _stack(_from(x)) * 2.0,
        lambda x: x * 2.0,
        [X],
    ),
    "get_item": (
        lambda x: list_ops.tensor_list_get_item(_from(x), 2, tf.float64, [2]),
        lambda x: _row(x, 2),
        [X],
    ),
    "set_item": (
        lambda x, v: _stack(list_ops.tensor_list_set_item(_from(x), 1, v)),
        lambda x, v: tf.concat([x[:1], tf.reshape(v, [1, 2]), x[2:]], 0),
        [X, V],
    ),
    "set_item_that_resizes": (
        lambda x, v: _stack(
            list_ops.tensor_list_set_item(_from(x), 4, v, resize_if_index_out_of_bounds=True)
        ),
        lambda x, v: tf.concat([x, tf.zeros([1, 2], tf.float64), tf.reshape(v, [1, 2])], 0),
        [X, V],
    ),
    "push_back": (
        lambda x, v: _stack(list_ops.tensor_list_push_back(_from(x), v)),
        lambda x, v: tf.concat([x, tf.reshape(v, [1, 2])], 0),
        [X, V],
    ),
    "pop_back_both_outputs": (
        lambda x: _stack_popped(list_ops.tensor_list_pop_back(_from(x), tf.float64, [2])),
        lambda x: [x[:2], _row(x, 2)],
        [X],
    ),
    "pop_back_element_only_list_gets_zeros_like": (
        lambda x: list_ops.tensor_list_pop_back(_from(x), tf.float64, [2])[1] * 3.0,
        lambda x: _row(x, 2) * 3.0,
        [X],
    ),
    "gather": (
        lambda x: list_ops.tensor_list_gather(_from(x), [2, 0], tf.float64, [2]),
        lambda x: tf.gather(x, [2, 0]),
        [X],
    ),
    "scatter_into_existing_list": (
        lambda x, s: _stack(list_ops.tensor_list_scatter_into_existing_list(_from(x), s, [2, 0])),
        lambda x, s: tf.concat([s[1:], x[1:2], s[:1]], 0),
        [X, S],
    ),
    "scatter_into_reserved_list": (
        lambda s: _stack(
            list_ops.tensor_list_scatter_into_existing_list(
                list_ops.tensor_list_reserve([2], 3, tf.float64), s, [2, 0]
            )
        ),
        lambda s: tf.concat([s[1:], tf.zeros([1, 2], tf.float64), s[:1]], 0),
        [S],
    ),
    "split_concat": (
        lambda f: (
            list_ops.tensor_list_concat_v2(
                list_ops.tensor_list_split(f, [-1], [2, 0, 3]), tf.float64, [-1], []
            )[0]
            * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0], tf.float64)
        ),
        lambda f: f * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0], tf.float64),
        [FLAT],
    ),
    "split_get_item": (
        lambda f: list_ops.tensor_list_get_item(
            list_ops.tensor_list_split(f, [-1], [2, 3]), 1, tf.float64, [3]
        ),
        lambda f: f[2:],
        [FLAT],
    ),
    "concat_of_matrices": (
        lambda x: list_ops.tensor_list_concat_v2(
            list_ops.tensor_list_from_tensor(tf.reshape(x, [3, 1, 2]), [1, 2]),
            tf.float64,
            [-1, 2],
            [],
        )[0],
        lambda x: tf.identity(x),
        [X],
    ),
    "resize_shrinks": (
        lambda x: _stack(list_ops.tensor_list_resize(_from(x), 2)),
        lambda x: x[:2],
        [X],
    ),
    "resize_grows": (
        lambda x: _stack(list_ops.tensor_list_resize(_from(x), 5)),
        lambda x: tf.concat([x, tf.zeros([2, 2], tf.float64)], 0),
        [X],
    ),
    "reserve_set_items": (
        lambda a, b: _stack(
            list_ops.tensor_list_set_item(
                list_ops.tensor_list_set_item(
                    list_ops.tensor_list_reserve([2], 3, tf.float64), 0, a
                ),
                2,
                b,
            )
        ),
        lambda a, b: tf.stack([a, tf.zeros([2], tf.float64), b]),
        [V, V[::-1].copy()],
    ),
    "empty_list_push_backs": (
        lambda a, b: _stack(
            list_ops.tensor_list_push_back(
                list_ops.tensor_list_push_back(list_ops.empty_tensor_list([2], tf.float64), a), b
            )
        ),
        lambda a, b: tf.stack([a, b]),
        [V, V[::-1].copy()],
    ),
    # A list through a tf.cond: the gradient of the branch that ran, and a
    # ZerosLike of the list for the Switch output of the other.
    "cond_true_branch": (
        lambda x: _stack(_list_cond(x, True)),
        lambda x: tf.concat([tf.fill([1, 2], tf.constant(5.0, tf.float64)), x[1:]], 0),
        [X],
    ),
    "cond_false_branch": (
        lambda x: _stack(_list_cond(x, False)),
        lambda x: tf.concat([x, tf.reshape(_row(x, 1) * 2.0, [1, 2])], 0),
        [X],
    ),
    # One list, two consumers: the two list gradients are summed by AddN.
    "list_with_two_consumers": (
        lambda x: _stack_and_item(_from(x)),
        lambda x: [x * tf.constant([[1.0, 2.0]], tf.float64), _row(x, 1)],
        [X],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_list_op_gradient_matches_the_dense_graph(case):
    list_fn, dense_fn, inputs = CASES[case]
    _check_against_dense(list_fn, dense_fn, inputs)


def test_one_list_read_twice_sums_its_gradients_with_add_n_of_variants():
    # The same handle (one op) feeds a Stack and a GetItem: tf.gradients
    # sums the two list gradients with one AddN of T=variant.
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3, 2])
        handle = list_ops.tensor_list_from_tensor(x, [2])
        stacked = list_ops.tensor_list_stack(handle, tf.float32, element_shape=[2])
        item = list_ops.tensor_list_get_item(handle, 0, tf.float32, [2])
        y = tf.reduce_sum(stacked) + tf.reduce_sum(item * 10.0)
        (dx,) = tf.gradients(y, [x])
        sums = [op for op in graph.get_operations() if op.type == "AddN"]
        assert [op.get_attr("T") for op in sums] == [dtypes.variant]
        with tf.Session() as sess:
            result = sess.run(dx, {x: np.ones([3, 2], np.float32)})
    np.testing.assert_allclose(result, [[11, 11], [1, 1], [1, 1]])


def test_which_list_tensors_carry_gradients():
    # As TensorFlow's backprop_util.IsTrainable: a list of floats does, a
    # list of integers does not (its element dtype is known), through the
    # ops that pass a list on; a variant of unknown contents does.
    with tf.Graph().as_default():
        floats = list_ops.tensor_list_reserve([2], 3, tf.float32)
        ints = list_ops.empty_tensor_list([], tf.int32)
        pushed = list_ops.tensor_list_push_back(ints, tf.constant(1))
        passed_on = tf.identity(tf.identity(pushed))
        unknown = tf.placeholder(dtypes.variant, [])
        resource = tf.placeholder(dtypes.resource, [])
        assert gradients_impl._is_differentiable(floats)
        assert not gradients_impl._is_differentiable(ints)
        assert not gradients_impl._is_differentiable(passed_on)
        assert gradients_impl._is_differentiable(unknown)
        assert gradients_impl._is_differentiable(resource)
        assert not gradients_impl._is_differentiable(tf.constant(1))


def test_no_gradient_flows_through_a_list_of_integers():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        as_ints = list_ops.tensor_list_from_tensor(tf.cast(x, tf.int32), [])
        y = tf.reduce_sum(
            tf.cast(list_ops.tensor_list_stack(as_ints, tf.int32, element_shape=[]), tf.float32)
        )
        assert tf.gradients(y, [x]) == [None]


def test_gradient_of_a_list_y_with_a_list_grad_y():
    # The gradient seeds may themselves be lists (grad_ys of dtype variant).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        handle = list_ops.tensor_list_from_tensor(x, [2])
        seed = list_ops.tensor_list_from_tensor(
            tf.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2)), [2]
        )
        (dx,) = tf.gradients(handle, [x], grad_ys=[seed])
        with tf.Session() as sess:
            result = sess.run(dx, {x: np.zeros([3, 2], np.float32)})
    np.testing.assert_allclose(result, np.arange(6.0).reshape(3, 2))


def test_a_list_output_nothing_used_gets_zeros_like_of_the_list():
    # Only the popped element reaches y: the gradient of the popped list is
    # ZerosLike of it (T=variant), a list of zeros as long as the list.
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [3, 2])
        _, last = list_ops.tensor_list_pop_back(
            list_ops.tensor_list_from_tensor(x, [2]), tf.float32
        )
        (dx,) = tf.gradients(last * 3.0, [x])
        zeros = [op for op in graph.get_operations() if op.type == "ZerosLike"]
        assert [op.get_attr("T") for op in zeros] == [dtypes.variant]
        with tf.Session() as sess:
            result = sess.run(dx, {x: np.ones([3, 2], np.float32)})
    np.testing.assert_allclose(result, [[0, 0], [0, 0], [3, 3]])


def test_a_list_y_without_grad_ys_is_a_type_error():
    # There are no default ones for a list (TensorFlow raises TypeError too).
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        handle = list_ops.tensor_list_from_tensor(x, [2])
        with pytest.raises(TypeError, match="needs its grad_ys"):
            tf.gradients(handle, [x])
