"""Session lifecycle, executor reuse, pruning, devices, threads and cancellation."""

import gc
import threading
import time
import weakref

import numpy as np
import pytest
import tensorweave as tf
from tensorweave import pywrap_tensorweave

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def affine():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    return x, x * 2.0 + 1.0


def test_create_run_extend_rerun_close():
    x, y = affine()
    sess = tf.Session()
    feed = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(sess.run(y, {x: feed}), feed * 2 + 1)
    z = tf.square(y, name="z")  # added after the first run: extended on the next one
    np.testing.assert_array_equal(sess.run(z, {x: feed}), (feed * 2 + 1) ** 2)
    np.testing.assert_array_equal(sess.run(y, {x: feed}), feed * 2 + 1)
    sess.close()
    sess.close()  # closing twice is fine
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(y, {x: feed})


def test_context_manager_installs_defaults_and_closes():
    affine()
    graph = tf.Graph()
    with tf.Session(graph=graph) as sess:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is graph
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError):
        sess.run([])


def test_eval_and_run_use_the_default_session():
    x, y = affine()
    v = tf.Variable(3.0)
    with tf.Session():
        tf.global_variables_initializer().run()
        np.testing.assert_array_equal(y.eval({x: np.ones((1, 4))}), [[3, 3, 3, 3]])
        assert v.eval() == 3.0
    with pytest.raises(ValueError, match="default session"):
        y.eval({x: np.ones((1, 4))})


def test_interactive_session_becomes_default():
    c = tf.constant(5.0) * 2.0
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert c.eval() == 10.0
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_compat_v1_alias():
    assert tf.compat.v1 is tf
    with tf.compat.v1.Session() as sess:
        assert sess.run(tf.compat.v1.constant(1.0)) == 1.0


def test_garbage_collection_deletes_the_backend_session(monkeypatch):
    deleted = []
    real_delete = pywrap_tensorweave.TF_DeleteSession
    monkeypatch.setattr(
        pywrap_tensorweave,
        "TF_DeleteSession",
        lambda session: (deleted.append(session), real_delete(session)),
    )
    x, y = affine()
    sess = tf.Session()
    sess.run(y, {x: np.ones((1, 4))})
    backend = int(sess._session)
    alive = weakref.ref(sess)
    del sess
    gc.collect()
    assert alive() is None
    assert [int(session) for session in deleted].count(backend) == 1


def test_repeated_signature_reuses_executors():
    x, y = affine()
    z = y + x
    with tf.Session() as sess:
        feed = np.ones((2, 4), np.float32)
        for _ in range(3):
            sess.run(y, {x: feed})
        stats = sess._stats()
        assert (stats["runs"], stats["executors_built"], stats["cache_hits"]) == (3, 1, 2)
        sess.run([y, z], {x: feed})
        sess.run([y, z], {"x:0": feed})
        stats = sess._stats()
        assert (stats["executors_built"], stats["cache_hits"]) == (2, 3)


def test_pruning_ignores_unfed_placeholders_outside_the_fetch():
    unfed = tf.placeholder(tf.float32, name="unfed")
    _ = unfed + 1.0
    c = tf.constant(2.0) * 3.0
    with tf.Session() as sess:
        assert sess.run(c) == 6.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(_)


def test_two_cpu_devices_give_the_same_results():
    def build(second_device, first_device):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.device(second_device):
            h = tf.matmul(x, tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2)))
            h = tf.nn.relu(h - 4.0)
        with tf.device(first_device):
            out = tf.reduce_sum(h * h, axis=1) + tf.reduce_max(h)
        return x, out

    feed = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    single = tf.Graph()
    with single.as_default():
        x, out = build(None, None)
    with tf.Session(graph=single) as sess:
        expected = sess.run(out, {x: feed})

    double = tf.Graph()
    with double.as_default():
        x2, out2 = build("/cpu:1", "/cpu:0")
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(graph=double, config=config) as sess:
        assert len(sess.list_devices()) == 2
        np.testing.assert_allclose(sess.run(out2, {x2: feed}), expected, rtol=1e-6)


def test_eight_threads_share_one_session():
    x, y = affine()
    failures = []
    with tf.Session() as sess:
        sess.run(y, {x: np.zeros((1, 4))})

        def worker(seed):
            rng = np.random.RandomState(seed)
            for _ in range(200):
                feed = rng.randn(rng.randint(1, 5), 4).astype(np.float32)
                result = sess.run(y, {x: feed})
                if not np.array_equal(result, feed * 2 + 1):
                    failures.append(seed)

        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def blocking_recv():
    """A step that runs for minutes unless cancelled: a chain of 2,000
    products of 1024x1024 matrices (~60 ms each). User graphs may not hold
    the runtime's _Recv, the only op that waits; the executor checks for
    cancellation and deadlines between nodes, so this ends as promptly."""
    value = tf.fill([1024, 1024], 0.0)
    for _ in range(2000):
        value = tf.matmul(value, value)
    return value


def test_a_user_graph_may_not_hold_a_recv():
    with pytest.raises(ValueError, match="'_Recv', which only the runtime"):
        tf.get_default_graph().create_op(
            "_Recv",
            [],
            attrs={
                "tensor_type": tf.float32,
                "tensor_name": "never_sent",
                "send_device": CPU0,
                "send_device_incarnation": 1,
                "recv_device": CPU0,
                "client_terminated": True,
            },
            name="blocking_recv",
        )


def test_close_from_another_thread_cancels_a_blocked_step():
    blocked = blocking_recv()
    sess = tf.Session()
    outcome = []

    def run():
        try:
            sess.run(blocked)
            outcome.append("finished")
        except tf.errors.CancelledError as error:
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()  # the GIL is released while the step waits
    sess.close()
    thread.join(10)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], tf.errors.CancelledError)


def test_operation_timeout_ends_a_blocked_step():
    blocked = blocking_recv()
    config = tf.ConfigProto(operation_timeout_in_ms=200)
    with tf.Session(config=config) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(blocked)
        assert time.monotonic() - start < 5
        assert sess.run(tf.constant(1.0)) == 1.0  # the session still works


def test_run_options_timeout_ends_a_blocked_step():
    blocked = blocking_recv()
    with tf.Session() as sess, pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(blocked, options=tf.RunOptions(timeout_in_ms=200))


def test_unknown_target_is_not_found():
    with pytest.raises(tf.errors.NotFoundError):
        tf.Session("carrier-pigeon://localhost:1")


def test_config_must_be_a_config_proto():
    with pytest.raises(TypeError):
        tf.Session(config={"device_count": {"CPU": 2}})


def test_a_fed_placeholders_control_dependents_wait_for_the_feed():
    # As in TensorFlow: the placeholder itself never runs when fed.
    x = tf.placeholder(tf.float32)
    with tf.control_dependencies([x]):
        c = tf.constant(1.0) + 1.0
    with tf.Session() as sess:
        assert sess.run(c, {x: 1.0}) == 2.0
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(c)
