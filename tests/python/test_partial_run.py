"""Session.partial_run_setup / partial_run, after TensorFlow's session_test
partial-run cases: values, errors and their messages as TensorFlow 2.21's
tf.compat.v1.Session gives them."""

import threading

import numpy as np
import pytest
import tensorweave as tf


def three_inputs():
    a = tf.placeholder(tf.float32, shape=[])
    b = tf.placeholder(tf.float32, shape=[])
    c = tf.placeholder(tf.float32, shape=[])
    r1 = tf.add(a, b)
    r2 = tf.multiply(r1, c)
    return a, b, c, r1, r2


def test_partial_run_feeds_and_fetches_over_calls():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b, c, r1, r2 = three_inputs()
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        assert res == 3
        res = sess.partial_run(h, r2, feed_dict={c: res * 17})
        assert res == 153


def test_partial_run_incomplete_handle_is_harmless():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b, c, r1, r2 = three_inputs()
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
    # Closing the session ends the step still waiting for c.


def test_concurrent_and_many_partial_runs():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b, c, r1, r2 = three_inputs()
        h1 = sess.partial_run_setup([r1], [a, b, c])
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h1, r1, feed_dict={a: 1, b: 2}) == 3
        assert sess.partial_run(h2, r1, feed_dict={a: 1, b: 2}) == 3
        assert sess.partial_run(h2, r2, feed_dict={c: 7}) == 21

        results = {}

        def worker(index):
            for step in range(20):
                h = sess.partial_run_setup([r1, r2], [a, b, c])
                first = sess.partial_run(h, r1, feed_dict={a: index, b: step})
                results[index, step] = (first, sess.partial_run(h, r2, feed_dict={c: 2}))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert len(results) == 80
        for (index, step), (first, second) in results.items():
            assert first == index + step and second == 2 * (index + step)


def test_partial_run_agrees_with_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, shape=[])
        b = tf.placeholder(tf.float32, shape=[])
        c = tf.placeholder(tf.float32, shape=[])
        r1 = tf.add(a, b)
        r2 = tf.multiply(r1, c)
        r3 = tf.identity(r2)
        h = sess.partial_run_setup([r1, r2, r3], [a, b, c])
        partial = [
            sess.partial_run(h, r1, feed_dict={a: 1, b: 2}),
            sess.partial_run(h, r2, feed_dict={c: 3}),
            sess.partial_run(h, r3),
        ]
        assert partial == sess.run([r1, r2, r3], feed_dict={a: 1, b: 2, c: 3})


def test_partial_run_with_structures_targets_and_no_feeds():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, shape=[2])
        v = tf.Variable([0.0, 0.0])
        update = tf.assign(v, x)
        doubled = x * 2
        sess.run(v.initializer)
        h = sess.partial_run_setup({"d": doubled, "op": update}, [x])
        out = sess.partial_run(h, {"d": doubled}, feed_dict={x: [1.0, 2.0]})
        np.testing.assert_array_equal(out["d"], [2.0, 4.0])
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])  # the target ran

        const = tf.constant(5.0) * 2
        h = sess.partial_run_setup([const])
        assert sess.partial_run(h, const) == 10


def test_partial_run_errors_as_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b, c, r1, r2 = three_inputs()

        def error(h, fetches, feed_dict=None):
            with pytest.raises(tf.errors.InvalidArgumentError) as raised:
                sess.partial_run(h, fetches, feed_dict=feed_dict)
            return raised.value.message

        h = sess.partial_run_setup([r1], [a, b])
        message = error(h, r1, {a: 1, b: 2, c: 3})
        assert message == f"The feed {c.name} was not specified in partial_run_setup."
        h = sess.partial_run_setup([r1], [a, b])
        assert error(h, r2, {a: 1, b: 2}) == (
            f"The fetch {r2.name} was not specified in partial_run_setup."
        )
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
        assert error(h, r2, {a: 1, c: 2}) == f"The feed {a.name} has already been fed."
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
        assert error(h, r1, {c: 2}) == f"The fetch {r1.name} has already been fetched."
        assert error("bogus", r2) == "Must run 'setup' before performing partial runs!"
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        # TensorFlow names the missing feed (c, reached first from Mul).
        assert error(h, r2, {a: 1}) == (
            f"Fetch {c.name} can't be computed from the feeds that have been fed so far."
        )
        # The refused call changed nothing: the run goes on.
        assert sess.partial_run(h, r2, feed_dict={a: 1, b: 1, c: 5}) == 10


def test_partial_run_setup_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b, _, r1, _ = three_inputs()
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.partial_run_setup([r1], [a, a])
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.partial_run_setup([r1], [r1])  # fed and fetched
        h = sess.partial_run_setup([r1], [a, b])
        with pytest.raises(ValueError):
            sess.partial_run(h, r1, feed_dict={a: np.ones(3), b: 1})  # static shape
    sess.close()
    with pytest.raises(RuntimeError):
        sess.partial_run_setup([r1], [a, b])


def test_partial_run_kernel_error_ends_the_run():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, shape=[None])
        reshaped = tf.reshape(x, [3])
        h = sess.partial_run_setup([reshaped], [x])
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.partial_run(h, reshaped, feed_dict={x: [1.0, 2.0]})
        assert raised.value.op is not None and raised.value.op.type == "Reshape"
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
            sess.partial_run(h, reshaped, feed_dict={x: [1.0, 2.0, 3.0]})
