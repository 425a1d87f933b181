"""tf.map_fn, tf.scan, tf.foldl, tf.foldr and TensorArrays carried through
tf.while_loop, against numpy."""

import collections

import numpy as np
import pytest
import tensorweave as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_a_tensor_array_written_in_a_while_loop():
    n = 5

    def body(i, ta):
        return i + 1, ta.write(i, tf.cast(i, tf.float32) * 2.0)

    _, ta = tf.while_loop(
        lambda i, _: i < n, body, [tf.constant(0), tf.TensorArray(tf.float32, size=n)]
    )
    assert isinstance(ta, tf.TensorArray)
    np.testing.assert_array_equal(run(ta.stack()), np.arange(n) * 2.0)


def test_a_dynamic_tensor_array_grows_in_a_loop():
    limit = tf.placeholder(tf.int32, [])
    _, ta = tf.while_loop(
        lambda i, _: i < limit,
        lambda i, ta: (i + 1, ta.write(i, [i, i * i])),
        [tf.constant(0), tf.TensorArray(tf.int32, size=0, dynamic_size=True)],
    )
    out = run(ta.stack(), {limit: 4})
    np.testing.assert_array_equal(out, [[0, 0], [1, 1], [2, 4], [3, 9]])


def test_map_fn_matches_numpy():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(run(tf.map_fn(lambda row: row * row + 1.0, x)), x * x + 1)


def test_map_fn_with_nested_elems_and_another_dtype():
    a = np.arange(4, dtype=np.float32)
    b = np.arange(4, dtype=np.float32) * 10
    result = tf.map_fn(lambda pair: tf.cast(pair[0] + pair[1], tf.int32), (a, b), dtype=tf.int32)
    np.testing.assert_array_equal(run(result), (a + b).astype(np.int32))


def test_scan_forward_reverse_and_with_initializer():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    np.testing.assert_allclose(run(tf.scan(lambda acc, v: acc + v, x)), np.cumsum(x))
    np.testing.assert_allclose(
        run(tf.scan(lambda acc, v: acc + v, x, reverse=True)), np.cumsum(x[::-1])[::-1]
    )
    np.testing.assert_allclose(
        run(tf.scan(lambda acc, v: acc * v, x, initializer=np.float32(2.0))), 2.0 * np.cumprod(x)
    )


def test_scan_with_a_structured_accumulator():
    State = collections.namedtuple("State", ["total", "count"])
    x = np.array([1.0, 5.0, 2.0], np.float32)
    result = tf.scan(
        lambda s, v: State(s.total + v, s.count + 1.0),
        x,
        initializer=State(np.float32(0), np.float32(0)),
    )
    totals, counts = run([result.total, result.count])
    np.testing.assert_allclose(totals, np.cumsum(x))
    np.testing.assert_allclose(counts, [1, 2, 3])


def test_foldl_and_foldr():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert run(tf.foldl(lambda acc, v: acc - v, x)) == pytest.approx(1 - 2 - 3)
    assert run(tf.foldr(lambda acc, v: acc - v, x)) == pytest.approx(3 - 2 - 1)
    assert run(tf.foldl(lambda acc, v: acc * 10 + v, x, initializer=np.float32(0))) == 123
    assert run(tf.foldr(lambda acc, v: acc * 10 + v, x, initializer=np.float32(0))) == 321


def test_map_fn_of_a_scalar_is_an_error():
    with pytest.raises(ValueError, match="not scalars"):
        tf.map_fn(lambda v: v, tf.constant(1.0))


def test_a_tensor_array_through_cond():
    p = tf.placeholder(tf.bool, [])
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, [1.0, 2.0])
    ta = tf.cond(p, lambda: ta.write(1, [3.0, 4.0]), lambda: ta.write(1, [5.0, 6.0]))
    assert isinstance(ta, tf.TensorArray)
    stacked = ta.stack()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(stacked, {p: True}), [[1, 2], [3, 4]])
        np.testing.assert_array_equal(sess.run(stacked, {p: False}), [[1, 2], [5, 6]])


def test_map_fn_gradient_matches_the_analytic_one():
    x = tf.placeholder(tf.float32, [4])
    y = tf.reduce_sum(tf.map_fn(lambda v: v * v * v, x))
    (grad,) = tf.gradients(y, [x])
    value = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(run(grad, {x: value}), 3 * value * value, rtol=1e-6)
