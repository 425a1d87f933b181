"""tf.gradients through tf.cond: the taken branch's gradient, zeros for the
other; checked against central differences. Gradients through
tf.while_loop work (test_while_grad.py has the loop cases)."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients
from tensorweave.ops import control_flow_ops

X = np.array([0.7, -1.3, 2.1])
Y = np.array([1.5, 0.4, -0.8])


@pytest.mark.parametrize("taken", [True, False])
def test_gradient_of_each_branch_matches_central_differences(taken):
    check_gradients(
        lambda x, y, p: tf.cond(p, lambda: x * y + tf.exp(x), lambda: tf.square(y) - 3.0 * x),
        [X, Y, np.array(taken)],
    )


@pytest.mark.parametrize("p_value, q_value", [(True, True), (True, False), (False, True)])
def test_gradient_through_nested_conds(p_value, q_value):
    def build(x, p, q):
        return tf.cond(
            p,
            lambda: tf.cond(q, lambda: tf.exp(x) * x, lambda: x * x * x),
            lambda: tf.tanh(x),
        )

    check_gradients(build, [X, np.array(p_value), np.array(q_value)])


@pytest.mark.parametrize("taken", [True, False])
def test_gradient_through_nested_structure_outputs(taken):
    def build(x, y, p):
        result = tf.cond(
            p,
            lambda: {"a": x * 2.0, "b": (y * x, tf.reduce_sum(x))},
            lambda: {"a": y - x, "b": (tf.square(x), tf.reduce_sum(y))},
        )
        return [result["a"], result["b"][0], result["b"][1]]

    check_gradients(build, [X, Y, np.array(taken)])


def test_the_branch_not_taken_gives_zeros():
    x = tf.placeholder(tf.float32, [3])
    y = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    # x is used only by the true branch, y only by the false one.
    r = tf.cond(p, lambda: x * 5.0, lambda: y * 7.0)
    dx, dy = tf.gradients(r, [x, y])
    with tf.Session() as sess:
        feed = {x: X, y: Y}
        taken = sess.run([dx, dy], {**feed, p: True})
        not_taken = sess.run([dx, dy], {**feed, p: False})
    np.testing.assert_array_equal(taken[0], [5.0] * 3)
    np.testing.assert_array_equal(taken[1], [0.0] * 3)
    np.testing.assert_array_equal(not_taken[0], [0.0] * 3)
    np.testing.assert_array_equal(not_taken[1], [7.0] * 3)


def test_gradient_of_a_value_both_branches_and_the_outside_use():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: x * x, lambda: x * 3.0) + x
    (dx,) = tf.gradients(r, [x])
    with tf.Session() as sess:
        assert sess.run(dx, {x: 2.0, p: True}) == pytest.approx(5.0)
        assert sess.run(dx, {x: 2.0, p: False}) == pytest.approx(4.0)


def test_gradient_reaches_a_variable_read_in_a_branch():
    v = tf.Variable(3.0)
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: v * v, lambda: tf.constant(1.0))
    (dv,) = tf.gradients(r, [v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(dv, {p: True}) == pytest.approx(6.0)
        assert sess.run(dv, {p: False}) == pytest.approx(0.0)


def test_gradient_graph_uses_switch_and_merge_on_the_predicate():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: x * 2.0, lambda: x * 4.0)
    tf.gradients(r, [x])
    graph = tf.get_default_graph()
    merge_grad = graph.get_operation_by_name("gradients/cond/Merge_grad/cond_grad")
    assert merge_grad.type == "Switch"
    assert merge_grad.inputs[1].name == "cond/pred_id:0"
    switch_grads = [
        op for op in graph.get_operations() if op.name.endswith("Switch_grad/cond_grad")
    ]
    assert switch_grads and all(op.type == "Merge" for op in switch_grads)


def test_gradient_through_a_hand_built_switch_and_merge():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    false_side, true_side = control_flow_ops.switch(x, p)
    merged, _ = control_flow_ops.merge([false_side * 3.0, true_side * 5.0])
    (dx,) = tf.gradients(merged, [x])
    with tf.Session() as sess:
        assert sess.run(dx, {x: 1.0, p: True}) == pytest.approx(5.0)
        assert sess.run(dx, {x: 1.0, p: False}) == pytest.approx(3.0)


def test_gradient_through_a_while_loop():
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])
    (dx,) = tf.gradients(y, [x])
    with tf.Session() as sess:
        assert sess.run(dx, {x: 2.0}) == pytest.approx(4 * 2.0**3)


def test_gradient_through_a_loop_inside_a_cond():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(
        p,
        lambda: tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])[1],
        lambda: x,
    )
    (dx,) = tf.gradients(r, [x])
    with tf.Session() as sess:
        assert sess.run(dx, {x: 2.0, p: True}) == pytest.approx(4 * 2.0**3)
        assert sess.run(dx, {x: 2.0, p: False}) == pytest.approx(1.0)


def test_an_optimizer_minimizes_the_branch_taken():
    w = tf.Variable(2.0)
    p = tf.placeholder(tf.bool, [])
    loss = tf.cond(p, lambda: tf.square(w - 5.0), lambda: tf.square(w + 1.0))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
            sess.run(train, {p: True})
        assert sess.run(w) == pytest.approx(5.0, abs=1e-4)
        for _ in range(100):
            sess.run(train, {p: False})
        assert sess.run(w) == pytest.approx(-1.0, abs=1e-4)
