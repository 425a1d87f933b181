"""tf.gradients through tf.while_loop (TensorFlow 1.x's backprop loops with
stacks): against central differences, against the same computation unrolled
without a loop, nested loops, conds in loops and loops in conds, zero
iterations, parallel_iterations, maximum_iterations, nested loop variables,
captured tensors, stop_gradient, TensorArrays in loops, optimizers, long
loops, and repeated runs."""

import collections
import time

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

Pair = collections.namedtuple("Pair", ["first", "second"])


def run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def power(x, n, parallel_iterations=10):
    """x**n by a loop of n multiplications."""
    _, y = tf.while_loop(
        lambda i, v: i < n,
        lambda i, v: (i + 1, v * x),
        [tf.constant(0), tf.ones_like(x)],
        parallel_iterations=parallel_iterations,
    )
    return y


# --- scalars and tensors ---------------------------------------------------------


def test_power_gradient_for_several_iteration_counts():
    x = tf.placeholder(tf.float32, [])
    n = tf.placeholder(tf.int32, [])
    y = power(x, n)
    (dx,) = tf.gradients(y, [x])
    for count in (1, 2, 5, 9):
        value, grad = run([y, dx], {x: 1.5, n: count})
        assert value == pytest.approx(1.5**count, rel=1e-5)
        assert grad == pytest.approx(count * 1.5 ** (count - 1), rel=1e-5)


def test_zero_iterations_give_the_gradient_of_the_initial_value():
    x = tf.placeholder(tf.float32, [])
    n = tf.placeholder(tf.int32, [])
    # The loop variable starts at x itself: with no iteration y = x.
    _, y = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * x), [0, x])
    (dx,) = tf.gradients(y, [x])
    assert run([y, dx], {x: 3.0, n: 0}) == [3.0, 1.0]
    assert run([y, dx], {x: 3.0, n: 2}) == pytest.approx([27.0, 27.0])
    # x**0 = 1 does not depend on x.
    (dz,) = tf.gradients(power(x, n), [x])
    assert run(dz, {x: 3.0, n: 0}) == 0.0


def test_scalar_loop_against_central_differences():
    def build(x):
        _, y = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, tf.tanh(v) * x + v), [0, x])
        return y

    check_gradients(build, [np.array(0.7)])


def test_tensor_loop_with_captured_weight_against_central_differences():
    rng = np.random.RandomState(1)

    def build(h0, w):
        _, h = tf.while_loop(
            lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w))), [0, h0]
        )
        return h

    check_gradients(build, [rng.randn(2, 3) * 0.5, rng.randn(3, 3) * 0.5])


def test_tensor_loop_matches_the_unrolled_graph():
    rng = np.random.RandomState(2)
    h0_value, w_value = rng.randn(2, 4).astype(np.float32), rng.randn(4, 4).astype(np.float32)
    h0 = tf.placeholder(tf.float32, [2, 4])
    w = tf.placeholder(tf.float32, [4, 4])

    def step(h):
        return tf.tanh(tf.matmul(h, w) + 0.1)

    _, looped = tf.while_loop(lambda i, h: i < 5, lambda i, h: (i + 1, step(h)), [0, h0])
    unrolled = h0
    for _ in range(5):
        unrolled = step(unrolled)
    loss_looped = tf.reduce_sum(looped * looped)
    loss_unrolled = tf.reduce_sum(unrolled * unrolled)
    grads_looped = tf.gradients(loss_looped, [h0, w])
    grads_unrolled = tf.gradients(loss_unrolled, [h0, w])
    feed = {h0: h0_value, w: w_value}
    got, expected = run([grads_looped, grads_unrolled], feed)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_gradient_with_respect_to_a_captured_tensor_sums_over_iterations():
    x = tf.placeholder(tf.float32, [])
    w = tf.placeholder(tf.float32, [])
    # v_{k+1} = v_k + w * k: dv/dw = 0 + 1 + 2 + 3 = 6.
    _, y = tf.while_loop(
        lambda i, v: i < 4, lambda i, v: (i + 1, v + w * tf.cast(i, tf.float32)), [0, x]
    )
    dx, dw = tf.gradients(y, [x, w])
    assert run([dx, dw], {x: 1.0, w: 2.0}) == [1.0, 6.0]


def test_stop_gradient_in_the_body():
    x = tf.placeholder(tf.float32, [])
    # v_{k+1} = v_k * stop(v_k) + x: only the unstopped factor carries a gradient.
    _, y = tf.while_loop(
        lambda i, v: i < 2, lambda i, v: (i + 1, v * tf.stop_gradient(v) + x), [0, x]
    )
    (dx,) = tf.gradients(y, [x])
    # v1 = x^2 + x; v2 = v1*v1 + x; d/dx with v1 stopped in its second factor:
    # dv1 = v0 * 1 + 1 (v0 stopped) = x + 1; dv2 = v1 * dv1 + 1.
    xv = 1.5
    v1 = xv * xv + xv
    assert run(dx, {x: xv}) == pytest.approx(v1 * (xv + 1) + 1, rel=1e-5)


def test_loop_variable_that_does_not_depend_on_xs():
    x = tf.placeholder(tf.float32, [])
    c = tf.placeholder(tf.float32, [])
    _, a, b = tf.while_loop(
        lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x, b + 1.0), [0, x, c]
    )
    # b never depends on x: no gradient (None), as in TensorFlow.
    assert tf.gradients(b, [x]) == [None]
    dx, dc = tf.gradients(a + b, [x, c])
    assert run([dx, dc], {x: 2.0, c: 5.0}) == [4 * 2.0**3, 1.0]


def test_unused_exit_that_feeds_a_used_one():
    x1 = tf.placeholder(tf.float32, [])
    x2 = tf.placeholder(tf.float32, [])
    # v1 gets x2 each iteration; only v1's result is differentiated.
    v1, _ = tf.while_loop(lambda a, b: a < 100.0, lambda a, b: (a + b, b * 2.0), [x1, x2])
    d1, d2 = tf.gradients(v1, [x1, x2])
    # x1=1, x2=10: a = 1, 11, 31, 71, 151 (four iterations): a = x1 + 15 x2.
    assert run([v1, d1, d2], {x1: 1.0, x2: 10.0}) == [151.0, 1.0, 15.0]


def test_back_prop_false_gives_no_gradient_as_tensorflow():
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x], back_prop=False)
    assert tf.gradients(y, [x]) == [None]


# --- structure of the loop -------------------------------------------------------------


def test_nested_loops_against_central_differences():
    def build(x):
        def outer_body(i, v):
            _, inner = tf.while_loop(
                lambda j, u: j < i + 1, lambda j, u: (j + 1, tf.tanh(u) + u * x), [0, v]
            )
            return i + 1, inner

        _, y = tf.while_loop(lambda i, v: i < 3, outer_body, [0, x])
        return y

    check_gradients(build, [np.array(0.4)])


def test_nested_loops_power():
    x = tf.placeholder(tf.float32, [])

    def outer_body(i, v):
        return i + 1, v * power(x, 3)

    _, y = tf.while_loop(lambda i, v: i < 2, outer_body, [0, tf.constant(1.0)])
    (dx,) = tf.gradients(y, [x])
    assert run([y, dx], {x: 1.2}) == pytest.approx([1.2**6, 6 * 1.2**5], rel=1e-5)


def test_cond_in_loop_against_central_differences():
    def build(x):
        def body(i, v):
            v = tf.cond(v < 2.0, lambda: v * x + 0.5, lambda: tf.tanh(v) + x)
            return i + 1, v

        _, y = tf.while_loop(lambda i, v: i < 5, body, [0, x])
        return y

    # Both branches run in some iterations: v grows past 2 then shrinks.
    for value in (0.9, 1.3):
        check_gradients(build, [np.array(value)])


def test_loop_in_cond():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: power(x, 3), lambda: x * 2.0)
    (dx,) = tf.gradients(r, [x])
    assert run(dx, {x: 2.0, p: True}) == pytest.approx(12.0)
    assert run(dx, {x: 2.0, p: False}) == pytest.approx(2.0)


def test_loop_in_cond_against_central_differences():
    def build(x):
        return tf.cond(
            tf.reduce_sum(x) > 0.0,
            lambda: tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])[1],
            lambda: x,
        )

    check_gradients(build, [np.array([0.5, 1.5])])


def test_maximum_iterations():
    x = tf.placeholder(tf.float32, [])
    y = tf.while_loop(lambda v: v < 1000.0, lambda v: v * x, [x], maximum_iterations=3)
    (dx,) = tf.gradients(y, [x])
    assert run([y, dx], {x: 2.0}) == [16.0, 32.0]


def test_nested_structure_loop_variables():
    x = tf.placeholder(tf.float32, [])
    state = {"count": tf.constant(0), "pair": Pair(x, tf.constant(1.0))}

    def body(s):
        first, second = s["pair"]
        return ({"count": s["count"] + 1, "pair": Pair(first * x, second + first)},)

    result = tf.while_loop(lambda s: s["count"] < 3, body, [state])
    y = result[0]["pair"].second
    (dx,) = tf.gradients(y, [x])
    # second = 1 + x + x^2 + x^3.
    assert run(dx, {x: 2.0}) == pytest.approx(1 + 2 * 2.0 + 3 * 4.0)


def test_parallel_iterations_one_and_ten_agree():
    rng = np.random.RandomState(3)
    w_value = rng.randn(3, 3).astype(np.float32) * 0.5
    results = []
    for parallel in (1, 10):
        with tf.Graph().as_default():
            w = tf.placeholder(tf.float32, [3, 3])

            def body(i, h, w=w):
                return i + 1, tf.tanh(tf.matmul(h, w)) + h

            _, h = tf.while_loop(
                lambda i, h: i < 6,
                body,
                [0, tf.ones([2, 3])],
                parallel_iterations=parallel,
            )
            (dw,) = tf.gradients(tf.reduce_sum(h), [w])
            results.append(run(dw, {w: w_value}))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_second_run_gives_the_same_values():
    x = tf.placeholder(tf.float32, [3])
    _, y = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, tf.tanh(v) * v), [0, x])
    (dx,) = tf.gradients(tf.reduce_sum(y), [x])
    with tf.Session() as sess:
        feed = {x: [0.3, 0.6, 0.9]}
        first = sess.run(dx, feed)
        second = sess.run(dx, feed)
    np.testing.assert_array_equal(first, second)


def test_two_gradient_calls_on_one_loop():
    x = tf.placeholder(tf.float32, [])
    y = power(x, 3)
    (d1,) = tf.gradients(y, [x])
    (d2,) = tf.gradients(y * 2.0, [x])
    assert run([d1, d2], {x: 2.0}) == [12.0, 24.0]


# --- TensorArrays, optimizers, long loops -----------------------------------------------


def test_rnn_like_scan_with_tensor_arrays_against_central_differences():
    rng = np.random.RandomState(4)

    def build(inputs, w, u):
        steps = 4
        input_ta = tf.TensorArray(tf.float64, size=steps).unstack(inputs)
        output_ta = tf.TensorArray(tf.float64, size=steps)

        def body(t, h, out):
            x_t = input_ta.read(t)
            h = tf.tanh(tf.matmul(x_t, w) + tf.matmul(h, u))
            return t + 1, h, out.write(t, h)

        _, _, out = tf.while_loop(
            lambda t, h, out: t < steps, body, [0, tf.zeros([2, 3], tf.float64), output_ta]
        )
        return out.stack()

    check_gradients(build, [rng.randn(4, 2, 3) * 0.5, rng.randn(3, 3) * 0.5, rng.randn(3, 3) * 0.5])


def test_gradient_descent_trains_a_loss_from_a_loop():
    w = tf.Variable(1.5)
    # loss = (w^3 - 8)^2: w goes to 2.
    cube = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), [0, tf.constant(1.0)])[1]
    loss = tf.square(cube - 8.0)
    train = tf.train.GradientDescentOptimizer(0.002).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(300):
            sess.run(train)
        assert sess.run(w) == pytest.approx(2.0, abs=1e-3)


def _long_loop_gradient_seconds(iterations):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        _, y = tf.while_loop(
            lambda i, v: i < iterations, lambda i, v: (i + 1, v * 0.999 + x), [0, x]
        )
        (dx,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            sess.run(dx, {x: 1.0})  # warm up
            elapsed = float("inf")
            for _ in range(3):  # the best of three: other processes share the cores
                start = time.perf_counter()
                value = sess.run(dx, {x: 1.0})
                elapsed = min(elapsed, time.perf_counter() - start)
    # y = 0.999^n x + sum_{k<n} 0.999^k x.
    expected = 0.999**iterations + sum(0.999**k for k in range(iterations))
    assert value == pytest.approx(expected, rel=1e-3)
    return elapsed


def test_thousand_iterations_grow_linearly():
    short = _long_loop_gradient_seconds(1000)
    long = _long_loop_gradient_seconds(4000)
    # Four times the iterations: about four times the time, far from sixteen.
    assert long < 10 * max(short, 1e-3)


# --- unknown shapes and deeper nesting -------------------------------------------------


def _unknown_shape(value):
    """`value` with every dimension unknown to the graph."""
    return tf.placeholder_with_default(value, [None] * value.shape.ndims)


def _any_vector():
    return [tf.TensorShape([]), tf.TensorShape([None])]


def test_unknown_shapes_with_captured_weight_and_bias():
    rng = np.random.RandomState(5)

    def build(h0, w, b):
        h0, b = _unknown_shape(h0), _unknown_shape(b)
        _, h = tf.while_loop(
            lambda i, h: i < 3,
            lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + b)),
            [0, h0],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])],
        )
        return h

    check_gradients(build, [rng.randn(2, 3) * 0.5, rng.randn(3, 3) * 0.5, rng.randn(2, 3) * 0.5])


def test_cond_in_loop_with_unknown_shapes():
    def build(x):
        x = _unknown_shape(x)

        def body(i, v):
            v = tf.cond(tf.reduce_sum(v) < 2.0, lambda: v * x + 0.5, lambda: tf.tanh(v) + x)
            return i + 1, v

        return tf.while_loop(lambda i, v: i < 5, body, [0, x], shape_invariants=_any_vector())[1]

    check_gradients(build, [np.array([0.3, 0.5])])


def test_nested_loops_with_unknown_shapes_reading_outer_values():
    def build(x, w):
        x = _unknown_shape(x)

        def outer(i, v):
            s = v * 0.5
            _, inner = tf.while_loop(
                lambda j, u: j < 2,
                lambda j, u: (j + 1, tf.tanh(u * w + s)),
                [0, v],
                shape_invariants=_any_vector(),
            )
            return i + 1, inner

        return tf.while_loop(lambda i, v: i < 3, outer, [0, x], shape_invariants=_any_vector())[1]

    check_gradients(build, [np.array([0.3, -0.5]), np.array(0.7)])


def test_unused_exit_with_unknown_shape():
    def build(x1, x2):
        x1, x2 = _unknown_shape(x1), _unknown_shape(x2)
        a, _ = tf.while_loop(
            lambda a, b: tf.reduce_sum(a) < 10.0,
            lambda a, b: (a + b, b * 1.5),
            [x1, x2],
            shape_invariants=[tf.TensorShape([None]), tf.TensorShape([None])],
        )
        return a

    check_gradients(build, [np.array([0.3, 0.5]), np.array([1.0, 2.0])])


def test_three_nested_loops():
    def build(x):
        def level3(v):
            return tf.while_loop(
                lambda k, u: k < 2, lambda k, u: (k + 1, tf.tanh(u) * x + u), [0, v]
            )[1]

        def level2(v):
            return tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, level3(u) * 0.9), [0, v])[
                1
            ]

        return tf.while_loop(lambda i, u: i < 2, lambda i, u: (i + 1, level2(u)), [0, x])[1]

    check_gradients(build, [np.array(0.3)])


@pytest.mark.parametrize("taken_until", [0, 1, 3])
def test_loop_in_cond_in_loop_when_the_branch_is_not_always_taken(taken_until):
    # Iterations i < taken_until run an inner loop (v * x * x); the others add x.
    # The inner backprop loop of an iteration whose branch was not taken is
    # dead: the outer backprop loop must go on (TensorFlow gives 3.92 at 1).
    x = tf.placeholder(tf.float32, [])

    def body(i, v):
        inner = lambda: tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * x), [0, v])[1]
        return i + 1, tf.cond(i < taken_until, inner, lambda: v + x)

    y = tf.while_loop(lambda i, v: i < 3, body, [0, x])[1]
    (dx,) = tf.gradients(y, [x])
    value, grad = run([y, dx], {x: 0.8})
    power_count = 1 + 2 * taken_until
    additions = 3 - taken_until
    assert value == pytest.approx(0.8**power_count + additions * 0.8, rel=1e-5)
    assert grad == pytest.approx(power_count * 0.8 ** (power_count - 1) + additions, rel=1e-5)


# --- the functional ops over while loops --------------------------------------------------


def test_map_fn_gradient():
    check_gradients(lambda x: tf.map_fn(lambda row: tf.tanh(row) * row, x), [np.ones((3, 2)) * 0.4])


def test_scan_gradient_with_captured_weight():
    rng = np.random.RandomState(6)

    def build(elems, w):
        return tf.scan(
            lambda acc, e: tf.tanh(acc * w + e), elems, initializer=tf.zeros([2], tf.float64)
        )

    check_gradients(build, [rng.randn(4, 2) * 0.5, rng.randn(2) * 0.5])


def test_foldl_gradient():
    check_gradients(
        lambda x: tf.foldl(lambda acc, e: acc * e + 1.0, x), [np.array([0.5, 1.5, -0.7, 0.9])]
    )


def test_dynamic_size_tensor_array_written_in_a_loop():
    def build(x):
        ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)

        def body(i, v, ta):
            v = tf.tanh(v * 1.5)
            return i + 1, v, ta.write(i, v)

        _, _, ta = tf.while_loop(lambda i, v, ta: i < 3, body, [0, x, ta])
        return ta.stack()

    check_gradients(build, [np.array([0.2, -0.4])])


def test_second_order_gradient_through_a_loop_is_refused_as_tensorflow():
    x = tf.placeholder(tf.float32, [])
    (dx,) = tf.gradients(power(x, 3), [x])
    with pytest.raises(TypeError, match="Second-order gradient for while loops not supported"):
        tf.gradients(dx, [x])


def test_gradients_taken_inside_a_loop_body():
    x = tf.placeholder(tf.float32, [])

    def body(i, v):
        (g,) = tf.gradients(v * v * x, [v])  # 2 v x, within one iteration
        return i + 1, v + 0.1 * g

    _, z = tf.while_loop(lambda i, v: i < 2, body, [0, x])
    # v: 2 -> 2 + 0.8 = 2.8 -> 2.8 + 1.12 = 3.92.
    assert run(z, {x: 2.0}) == pytest.approx(3.92)


def test_gate_gradients_in_a_loop():
    x = tf.placeholder(tf.float32, [])
    w = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w + x), [0, x])
    grads = tf.gradients(y, [x, w], gate_gradients=True)
    # y = x w^3 + x w^2 + x w + x.
    assert run(grads, {x: 2.0, w: 3.0}) == pytest.approx([40.0, 2.0 * (27 + 6 + 1)])


def test_lstm_like_loop_with_sequence_lengths_and_unknown_shapes():
    # What tf.nn.dynamic_rnn builds: time-major inputs of unknown shape read
    # from a TensorArray, outputs written to one, finished sequences copied
    # through with tf.where, maximum_iterations and swap_memory set.
    rng = np.random.RandomState(7)

    def build(inputs, w, b):
        inputs = tf.placeholder_with_default(inputs, [None, None, 3])
        sequence_length = tf.constant([3, 1])
        steps, batch = tf.shape(inputs)[0], tf.shape(inputs)[1]
        input_ta = tf.TensorArray(tf.float64, size=steps).unstack(inputs)
        output_ta = tf.TensorArray(tf.float64, size=steps, element_shape=tf.TensorShape([None, 2]))
        zeros = tf.zeros(tf.stack([batch, 2]), tf.float64)

        def body(t, c, h, out):
            z = tf.matmul(tf.concat([input_ta.read(t), h], 1), w) + b
            i, f, o, g = tf.split(z, 4, axis=1)
            new_c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            new_h = tf.sigmoid(o) * tf.tanh(new_c)
            done = t >= sequence_length
            new_c, new_h = tf.where(done, c, new_c), tf.where(done, h, new_h)
            return t + 1, new_c, new_h, out.write(t, tf.where(done, tf.zeros_like(new_h), new_h))

        _, _, h, out = tf.while_loop(
            lambda t, *_: t < steps,
            body,
            (0, zeros, zeros, output_ta),
            maximum_iterations=steps,
            swap_memory=True,
        )
        return [out.stack(), h]

    check_gradients(build, [rng.randn(3, 2, 3) * 0.5, rng.randn(5, 8) * 0.5, rng.randn(8) * 0.1])


@pytest.mark.parametrize("count", [0, 1, 3])
def test_loop_variable_whose_next_value_ignores_the_current_one(count):
    # v_{k+1} = 2x does not depend on v_k: after the first backprop iteration
    # the gradient flowing to v is zero (TensorFlow patches the backprop
    # Merge with zeros), so dy/dx = 2 when the loop ran, 5 when it did not.
    x = tf.placeholder(tf.float32, [])
    n = tf.placeholder(tf.int32, [])
    _, y = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, x * 2.0), [0, x * 5.0])
    _, z = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v), [0, x * 3.0])
    (dy,) = tf.gradients(y, [x])
    (dz,) = tf.gradients(z, [x])
    assert run([dy, dz], {x: 1.0, n: count}) == [5.0 if count == 0 else 2.0, 3.0]


def test_a_value_that_only_decides_the_iteration_count_has_no_gradient():
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(
        lambda i, v: tf.cast(i, tf.float32) < x,
        lambda i, v: (i + 1, v * 2.0),
        [0, tf.constant(1.0)],
    )
    assert tf.gradients(y, [x]) == [None]


def test_an_error_building_the_accumulator_reaches_the_caller(monkeypatch):
    """A failure while the backprop loop builds a loop constant's accumulator
    (here injected) surfaces as itself, not as a context-stack IndexError
    from the cleanup that exits the backprop context."""
    from tensorweave.ops import control_flow_state

    def fail(value):
        raise ValueError("injected failure")

    monkeypatch.setattr(control_flow_state, "zeros_shape_parts", fail)
    x = tf.placeholder(tf.float32, [None])
    w = tf.placeholder(tf.float32, [None])  # a loop constant of unknown shape
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), [tf.constant(0), x])
    with pytest.raises(ValueError, match="injected failure"):
        tf.gradients(tf.reduce_sum(y), [w])
