"""tf.py_func / tf.numpy_function: numpy functions run by PyFunc kernels on the
runtime's threads, calling back into this interpreter (expected codes and
messages checked against TensorFlow 2.21 by hand: ValueError/TypeError give
INVALID_ARGUMENT, StopIteration OUT_OF_RANGE, NotImplementedError
UNIMPLEMENTED, MemoryError RESOURCE_EXHAUSTED, anything else UNKNOWN)."""

import gc
import threading

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.ops import script_ops


@pytest.mark.parametrize(
    "dtype, value",
    [
        (tf.float32, np.array([1.5, -2.0], np.float32)),
        (tf.float64, np.array([[1.0, 2.0]], np.float64)),
        (tf.int32, np.array([1, 2, 3], np.int32)),
        (tf.int64, np.array(7, np.int64)),
        (tf.uint8, np.array([0, 255], np.uint8)),
        (tf.int8, np.array([-128, 127], np.int8)),
        (tf.bool, np.array([True, False])),
        (tf.string, np.array([b"a", b"", b"\xff\x00z"], object)),
    ],
)
def test_values_round_trip_through_numpy(dtype, value):
    seen = []

    def echo(x):
        seen.append(x)
        return x

    x = tf.constant(value, dtype=dtype)
    y = tf.py_func(echo, [x], dtype)
    with tf.Session() as sess:
        result = sess.run(y)
    np.testing.assert_array_equal(result, value)
    assert np.asarray(seen[0]).shape == value.shape
    assert y.op.type == "PyFunc" and y.dtype == dtype


def test_numpy_function_with_several_inputs_and_outputs():
    a = tf.placeholder(tf.float32, [None])
    b = tf.placeholder(tf.int64, [])

    def split(x, n):
        return x * np.float32(n), np.int32(x.size), np.array(["x"] * int(n))

    doubled, size, words = tf.numpy_function(split, [a, b], [tf.float32, tf.int32, tf.string])
    with tf.Session() as sess:
        got = sess.run([doubled, size, words], {a: [1.0, 2.0], b: 2})
    np.testing.assert_array_equal(got[0], [2.0, 4.0])
    assert got[1] == 2
    assert list(got[2]) == [b"x", b"x"]


def test_numpy_function_as_a_decorator():
    @tf.numpy_function(Tout=tf.float32)
    def halve(x):
        return x / 2

    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(halve(tf.constant([4.0]))), [2.0])


def test_results_convert_as_in_tensorflow():
    x = tf.constant(1.0)
    python_int = tf.py_func(lambda _: 3, [x], tf.int64)
    python_float = tf.py_func(lambda _: 0.5, [x], tf.float64)
    text = tf.py_func(lambda _: "héllo", [x], tf.string)
    raw = tf.py_func(lambda _: b"raw", [x], tf.string)
    texts = tf.py_func(lambda _: np.array(["a", "bcd"]), [x], tf.string)
    # A list is one output per item.
    pair = tf.py_func(lambda _: [1.0, 2.0], [x], [tf.float64, tf.float64])
    nothing = tf.py_func(lambda _: None, [x], [])
    assert isinstance(nothing, tf.Operation)
    with tf.Session() as sess:
        got = sess.run([python_int, python_float, text, raw, texts, pair, nothing])
    assert got[:4] == [3, 0.5, "héllo".encode(), b"raw"]
    assert list(got[4]) == [b"a", b"bcd"]
    assert got[5] == [1.0, 2.0] and got[6] is None


def test_stateful_and_stateless_ops():
    calls = []
    x = tf.constant([1, 2])
    stateful = tf.py_func(lambda v: calls.append(1) or v, [x], tf.int32)
    stateless = tf.py_func(lambda v: v + 1, [x], tf.int32, stateful=False)
    assert stateful.op.type == "PyFunc"
    assert stateless.op.type == "PyFuncStateless"
    assert stateful.op.get_attr("token") != stateless.op.get_attr("token")
    assert stateless.op.get_attr("Tin") == [tf.int32]
    with tf.Session() as sess:
        for _ in range(3):
            sess.run(stateful)
        np.testing.assert_array_equal(sess.run(stateless), [2, 3])
    assert len(calls) == 3  # a stateful function runs on every step


@pytest.mark.parametrize(
    "exception, error, code",
    [
        (ValueError, tf.errors.InvalidArgumentError, 3),
        (TypeError, tf.errors.InvalidArgumentError, 3),
        (StopIteration, tf.errors.OutOfRangeError, 11),
        (NotImplementedError, tf.errors.UnimplementedError, 12),
        (MemoryError, tf.errors.ResourceExhaustedError, 8),
        (KeyError, tf.errors.UnknownError, 2),
        (RuntimeError, tf.errors.UnknownError, 2),
    ],
)
def test_python_exceptions_become_tensorflow_errors(exception, error, code):
    def fails(x):
        raise exception("bad thing")

    y = tf.py_func(fails, [tf.constant(1.0)], tf.float32)
    with tf.Session() as sess, pytest.raises(error) as raised:
        sess.run(y)
    assert raised.value.error_code == code
    assert f"{exception.__name__}: " in raised.value.message
    assert "bad thing" in raised.value.message
    assert "Traceback" in raised.value.message and "in fails" in raised.value.message


def test_wrong_results_are_invalid_arguments():
    x = tf.constant([1.0, 2.0])
    wrong_type = tf.py_func(lambda v: v.astype(np.float64), [x], tf.float32)
    wrong_count = tf.py_func(lambda v: (v, v), [x], tf.float32)
    token = wrong_type.op.get_attr("token").decode()
    count_token = wrong_count.op.get_attr("token").decode()
    with tf.Session() as sess:
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=f"0-th value returned by {token} is double, but expects float",
        ):
            sess.run(wrong_type)
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=f"{count_token} returns 2 values, but expects to see 1 values.",
        ):
            sess.run(wrong_count)


def test_a_result_numpy_cannot_hold_fails_cleanly():
    y = tf.py_func(lambda _: {"a": 1}, [tf.constant(1.0)], tf.float32)
    with (
        tf.Session() as sess,
        pytest.raises(tf.errors.InternalError, match="Unsupported object returned by"),
    ):
        sess.run(y)


def test_an_unknown_token_is_an_invalid_argument():
    graph = tf.get_default_graph()
    op = graph.create_op(
        "PyFunc",
        [[tf.constant(1.0)]],
        attrs={"token": "pyfunc_no_such", "Tin": [tf.float32], "Tout": [tf.float32]},
    )
    with (
        tf.Session() as sess,
        pytest.raises(
            tf.errors.InvalidArgumentError,
            match="Could not find callback with key=pyfunc_no_such in the registry",
        ),
    ):
        sess.run(op.outputs[0])


def test_inputs_handed_to_python_are_copies():
    x = tf.constant([1.0, 2.0])

    def scribble(v):
        v[0] = 100.0
        return v

    y = tf.py_func(scribble, [x], tf.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [100.0, 2.0])
        np.testing.assert_array_equal(sess.run(x), [1.0, 2.0])


def test_the_graph_keeps_functions_alive_and_only_the_graph():
    graph = tf.Graph()
    with graph.as_default():
        y = tf.py_func(lambda v: v, [tf.constant(1)], tf.int32)
    token = y.op.get_attr("token").decode()
    gc.collect()
    assert script_ops._py_funcs.get(token) is not None
    del graph, y
    gc.collect()
    assert script_ops._py_funcs.get(token) is None


def test_py_funcs_run_concurrently_from_two_threads_without_deadlock():
    # Each thread runs its own session; the kernels take the GIL on the
    # runtime's threads while both callers wait in Session.run without it.
    errors, results = [], {}

    def worker(index):
        try:
            graph = tf.Graph()
            with graph.as_default():
                x = tf.placeholder(tf.int64, [])
                y = tf.py_func(lambda v: v * 2 + index, [x], tf.int64)
                z = tf.py_func(lambda v: v + 1, [y], tf.int64, stateful=False)
            with tf.Session(graph=graph) as sess:
                results[index] = [int(sess.run(z, {x: i})) for i in range(200)]
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "py_func deadlocked"
    assert not errors
    for index in range(2):
        assert results[index] == [i * 2 + index + 1 for i in range(200)]


def test_py_func_has_no_gradient():
    x = tf.constant(1.0)
    y = tf.py_func(lambda v: v, [x], tf.float32)
    assert tf.gradients(y, [x]) == [None]


def test_func_must_be_callable():
    with pytest.raises(ValueError, match="Expected func to be callable"):
        tf.py_func(3, [], tf.float32)


def test_a_py_func_may_run_the_session_itself_and_many_may_run_in_one_step():
    constant = tf.constant(5.0)
    sess = tf.Session()

    def nested(value):
        return (value + sess.run(constant)).astype(np.float32)

    y = tf.py_func(nested, [tf.constant(1.0)], tf.float32)
    doubled = [tf.py_func(lambda v: v * 2, [tf.constant(float(i))], tf.float32) for i in range(64)]
    try:
        assert sess.run(y) == 6.0
        assert sess.run(doubled) == [2.0 * i for i in range(64)]
    finally:
        sess.close()
