"""tf.gradients through TensorFlow 1.x while loops (tf.while_loop, v1
control flow) that carry TensorLists: lists pushed onto or set in the body
and stacked after the loop, lists read as loop constants (the backprop loop
sums their per-iteration gradients with AddN of lists), lists popped in the
body, lists in a tf.cond inside the loop, nested loops, an unused list exit,
and a dynamic_rnn-style loop that reads its inputs from one list and writes
its outputs into another. Each is checked against central differences and
against the same computation unrolled without lists or loops.

TensorFlow 2.21's own v1 loops fail (TypeError) on the loop-constant list,
the unused list exit and the list in a cond: its zeros for a variant are
`constant(0, dtype=variant)`. Here the zeros of a list are a list of its
length with unset elements (control_flow_state.zeros_from_shape_parts)."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients, compute_gradients
from tensorweave.ops import list_ops

RNG = np.random.RandomState(11)
X = RNG.standard_normal((3, 2))
W = RNG.standard_normal((3, 2))
F64 = tf.float64


def _stack(handle, width=2):
    return list_ops.tensor_list_stack(handle, F64, element_shape=[width])


def _row(x, i):
    return tf.reshape(tf.slice(x, [i, 0], [1, -1]), [-1])


def _as_float(i):
    return tf.cast(i, F64)


def _check_against_unrolled(loop_fn, unrolled_fn, inputs):
    loop_results = check_gradients(loop_fn, inputs)
    unrolled_results = compute_gradients(unrolled_fn, inputs)
    for (loop_analytic, _), (_, unrolled_numeric) in zip(loop_results, unrolled_results):
        np.testing.assert_allclose(loop_analytic, unrolled_numeric, rtol=1e-5, atol=1e-6)


def _push_back_then_stack(x):
    # The brief's case: push_back in the body, stack after the loop.
    def body(i, v, h):
        v = v * (1.5 + _as_float(i))
        return i + 1, v, list_ops.tensor_list_push_back(h, v)

    start = [tf.constant(0), _row(x, 0), list_ops.empty_tensor_list([2], F64)]
    _, _, h = tf.while_loop(lambda i, v, h: i < 3, body, start)
    return _stack(h) * W


def _push_back_unrolled(x):
    v, rows = _row(x, 0), []
    for i in range(3):
        v = v * (1.5 + i)
        rows.append(v)
    return tf.stack(rows) * W


def _reserve_set_item(x):
    def body(i, h):
        item = tf.gather(x, i) * tf.gather(x, 2 - i)
        return i + 1, list_ops.tensor_list_set_item(h, i, item)

    start = [tf.constant(0), list_ops.tensor_list_reserve([2], 4, F64)]
    _, h = tf.while_loop(lambda i, h: i < 3, body, start)
    return _stack(h)


def _reserve_set_item_unrolled(x):
    rows = [_row(x, i) * _row(x, 2 - i) for i in range(3)]
    return tf.stack(rows + [tf.zeros([2], F64)])


def _loop_constant_list(x):
    # The list is read, never changed, in the body: its gradient is summed
    # over the iterations (an AddN of lists in the backprop loop).
    inputs = list_ops.tensor_list_from_tensor(x, [2])

    def body(i, acc):
        item = list_ops.tensor_list_get_item(inputs, i, F64, [2])
        return i + 1, acc * item + item

    _, acc = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.ones([2], F64)])
    return acc


def _loop_constant_list_unrolled(x):
    acc = tf.ones([2], F64)
    for i in range(3):
        acc = acc * _row(x, i) + _row(x, i)
    return acc


def _pop_back_in_body(x):
    def body(i, h, acc):
        h, item = list_ops.tensor_list_pop_back(h, F64, [2])
        return i + 1, h, acc + item * (1.0 + _as_float(i))

    start = [tf.constant(0), list_ops.tensor_list_from_tensor(x, [2]), tf.zeros([2], F64)]
    _, h, acc = tf.while_loop(lambda i, h, a: i < 2, body, start)
    return [acc, _stack(h)]


def _pop_back_unrolled(x):
    return [_row(x, 2) * 1.0 + _row(x, 1) * 2.0, x[:1]]


def _unused_list_exit(x):
    # Only the other loop variable reaches y: the list's exit gets zeros.
    def body(i, v, h):
        v = v * _row(x, 1)
        return i + 1, v, list_ops.tensor_list_push_back(h, v)

    start = [tf.constant(0), _row(x, 0), list_ops.empty_tensor_list([2], F64)]
    _, v, _ = tf.while_loop(lambda i, v, h: i < 3, body, start)
    return v


def _unused_list_exit_unrolled(x):
    return _row(x, 0) * _row(x, 1) * _row(x, 1) * _row(x, 1)


def _list_in_a_cond(x):
    def body(i, h):
        item = tf.gather(x, i)
        h = tf.cond(
            tf.equal(i % 2, 0),
            lambda: list_ops.tensor_list_push_back(h, item * item),
            lambda: list_ops.tensor_list_push_back(h, item * 3.0),
        )
        return i + 1, h

    start = [tf.constant(0), list_ops.empty_tensor_list([2], F64)]
    _, h = tf.while_loop(lambda i, h: i < 3, body, start)
    return _stack(h) * W


def _list_in_a_cond_unrolled(x):
    rows = [_row(x, 0) * _row(x, 0), _row(x, 1) * 3.0, _row(x, 2) * _row(x, 2)]
    return tf.stack(rows) * W


def _nested_loops(x):
    # The inner loop pushes onto the list the outer loop carries, and reads
    # a list that is a constant of the inner loop.
    inputs = list_ops.tensor_list_from_tensor(x, [2])

    def outer(i, h):
        def inner(j, h):
            item = list_ops.tensor_list_get_item(inputs, i, F64, [2])
            return j + 1, list_ops.tensor_list_push_back(h, item * (1.0 + _as_float(j)))

        _, h = tf.while_loop(lambda j, h: j < 2, inner, [tf.constant(0), h])
        return i + 1, h

    start = [tf.constant(0), list_ops.empty_tensor_list([2], F64)]
    _, h = tf.while_loop(lambda i, h: i < 3, outer, start)
    return _stack(h) * tf.constant(np.arange(12.0).reshape(6, 2))


def _nested_loops_unrolled(x):
    rows = [_row(x, i) * (1.0 + j) for i in range(3) for j in range(2)]
    return tf.stack(rows) * tf.constant(np.arange(12.0).reshape(6, 2))


def _rnn(x, kernel, state):
    # dynamic_rnn's shape with lists: inputs read from one list, outputs
    # set into another, the state a loop variable; stacked after the loop.
    inputs = list_ops.tensor_list_from_tensor(x, [2])
    outputs = list_ops.tensor_list_reserve([2], 3, F64)

    def body(t, h, outputs):
        x_t = list_ops.tensor_list_get_item(inputs, t, F64, [2])
        h = tf.tanh(tf.reshape(tf.matmul(tf.reshape(x_t + h, [1, 2]), kernel), [2]))
        return t + 1, h, list_ops.tensor_list_set_item(outputs, t, h)

    _, h, outputs = tf.while_loop(lambda t, h, o: t < 3, body, [tf.constant(0), state, outputs])
    return [_stack(outputs), h]


def _rnn_unrolled(x, kernel, state):
    h, rows = state, []
    for t in range(3):
        h = tf.tanh(tf.reshape(tf.matmul(tf.reshape(_row(x, t) + h, [1, 2]), kernel), [2]))
        rows.append(h)
    return [tf.stack(rows), h]


CASES = {
    "push_back_then_stack": (_push_back_then_stack, _push_back_unrolled, [X]),
    "reserve_set_item": (_reserve_set_item, _reserve_set_item_unrolled, [X]),
    "loop_constant_list": (_loop_constant_list, _loop_constant_list_unrolled, [X]),
    "pop_back_in_body": (_pop_back_in_body, _pop_back_unrolled, [X]),
    "unused_list_exit": (_unused_list_exit, _unused_list_exit_unrolled, [X]),
    "list_in_a_cond": (_list_in_a_cond, _list_in_a_cond_unrolled, [X]),
    "nested_loops": (_nested_loops, _nested_loops_unrolled, [X]),
    "rnn": (_rnn, _rnn_unrolled, [X, RNG.standard_normal((2, 2)) * 0.5, RNG.standard_normal(2)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_through_a_while_loop_carrying_a_list(case):
    loop_fn, unrolled_fn, inputs = CASES[case]
    _check_against_unrolled(loop_fn, unrolled_fn, inputs)


def test_the_backprop_loop_sums_a_loop_constant_lists_gradients_with_add_n():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(F64, [3, 2])
        y = _loop_constant_list(x)
        (dx,) = tf.gradients(y, [x])
        sums = [op for op in graph.get_operations() if op.type == "AddN"]
        assert any(op.get_attr("T").name == "variant" for op in sums)
        with tf.Session() as sess:
            assert sess.run(dx, {x: X}).shape == (3, 2)


def test_reading_a_list_the_loop_changes():
    def loop_fn(x):
        def body(i, h, acc):
            item = list_ops.tensor_list_get_item(h, i, F64, [2])
            return i + 1, list_ops.tensor_list_set_item(h, i, item * 2.0), acc + item

        start = [tf.constant(0), list_ops.tensor_list_from_tensor(x, [2]), tf.zeros([2], F64)]
        _, h, acc = tf.while_loop(lambda i, h, a: i < 3, body, start)
        return [_stack(h), acc]

    check_gradients(loop_fn, [X])
