"""Session.partial_run_setup / partial_run on remote sessions (grpc://
targets): through the in-process master, through RPC to it, and on a
3-task cluster whose partitions exchange a fed value across tasks. Values
and error messages are those of the local session (test_partial_run.py).
Every server is in this process on loopback ports; every wait is bounded
(operation_timeout_in_ms)."""

import threading

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports

TIMEOUT_MS = 30000


def config(use_rpc=False):
    conf = tf.ConfigProto(operation_timeout_in_ms=TIMEOUT_MS)
    conf.rpc_options.use_rpc_for_inprocess_master = use_rpc
    return conf


@pytest.fixture(scope="module")
def local_server():
    return tf.train.Server.create_local_server()


@pytest.fixture(scope="module")
def cluster_servers():
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"w": [f"localhost:{port}" for port in ports]})
    return [tf.train.Server(cluster, job_name="w", task_index=i) for i in range(3)]


def three_inputs():
    a = tf.placeholder(tf.float32, shape=[])
    b = tf.placeholder(tf.float32, shape=[])
    c = tf.placeholder(tf.float32, shape=[])
    r1 = tf.add(a, b)
    r2 = tf.multiply(r1, c)
    return a, b, c, r1, r2


@pytest.mark.parametrize("use_rpc", [False, True])
def test_feeds_and_fetches_over_calls(local_server, use_rpc):
    with tf.Graph().as_default(), tf.Session(local_server.target, config=config(use_rpc)) as sess:
        a, b, c, r1, r2 = three_inputs()
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        assert res == 3
        res = sess.partial_run(h, r2, feed_dict={c: res * 17})
        assert res == 153
        # The step ended with its last fetch: the handle is gone.
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
            sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
        # A second partial run of the same signature reuses its partitions.
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        assert h2 != h
        assert sess.partial_run(h2, [r1, r2], feed_dict={a: 2, b: 3, c: 4}) == [5, 20]


@pytest.mark.parametrize("use_rpc", [False, True])
def test_errors_are_the_local_sessions(local_server, use_rpc):
    with tf.Graph().as_default(), tf.Session(local_server.target, config=config(use_rpc)) as sess:
        a, b, c, r1, r2 = three_inputs()
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        with pytest.raises(tf.errors.InvalidArgumentError, match="was not specified in partial"):
            sess.partial_run(h, r1, feed_dict={a: 1, b: 2, r1: 3})
        with pytest.raises(tf.errors.InvalidArgumentError, match="can't be computed"):
            sess.partial_run(h, r2, feed_dict={a: 1, b: 2})
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="has already been fed"):
            sess.partial_run(h, r2, feed_dict={a: 1, c: 2})
        with pytest.raises(tf.errors.InvalidArgumentError, match="has already been fetched"):
            sess.partial_run(h, r1, feed_dict={c: 2})
        # The refused calls changed nothing: the step still finishes.
        assert sess.partial_run(h, r2, feed_dict={c: 5}) == 15
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
            sess.partial_run("12345", r1, feed_dict={a: 1})


def test_kernel_error_ends_the_step(local_server):
    with tf.Graph().as_default(), tf.Session(local_server.target, config=config()) as sess:
        a = tf.placeholder(tf.float32, shape=None)
        b = tf.placeholder(tf.float32, shape=None)
        r1 = tf.reshape(a, [3])
        r2 = r1 + b
        h = sess.partial_run_setup([r1, r2], [a, b])
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.partial_run(h, r1, feed_dict={a: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup'"):
            sess.partial_run(h, r2, feed_dict={b: 1.0})
        # The session goes on with new steps.
        h = sess.partial_run_setup([r1, r2], [a, b])
        np.testing.assert_array_equal(sess.partial_run(h, r1, feed_dict={a: [1, 2, 3]}), [1, 2, 3])
        np.testing.assert_array_equal(sess.partial_run(h, r2, feed_dict={b: 1}), [2, 3, 4])


def test_unfinished_partial_runs_end_with_the_session(local_server):
    with tf.Graph().as_default():
        a, b, c, r1, r2 = three_inputs()
        for _ in range(5):
            with tf.Session(local_server.target, config=config()) as sess:
                h = sess.partial_run_setup([r1, r2], [a, b, c])
                assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == 3
                sess.partial_run_setup([r1, r2], [a, b, c])  # never fed at all
        # Closing waited for the workers to end both steps; the server serves on.
        with tf.Session(local_server.target, config=config()) as sess:
            assert sess.run(r2, {a: 1, b: 1, c: 3}) == 6


def test_concurrent_partial_runs(local_server):
    with tf.Graph().as_default(), tf.Session(local_server.target, config=config()) as sess:
        a, b, c, r1, r2 = three_inputs()
        results = {}

        def worker(index):
            for step in range(10):
                h = sess.partial_run_setup([r1, r2], [a, b, c])
                first = sess.partial_run(h, r1, feed_dict={a: index, b: step})
                results[index, step] = (first, sess.partial_run(h, r2, feed_dict={c: 2}))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert results == {(i, s): (i + s, 2 * (i + s)) for i in range(4) for s in range(10)}


def test_fed_value_crosses_tasks_on_a_cluster(cluster_servers):
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, shape=[2], name="a")  # fed on task 0 (the client's)
        b = tf.placeholder(tf.float32, shape=[2], name="b")
        with tf.device("/job:w/task:1"):
            r1 = a * 3.0
        with tf.device("/job:w/task:2"):
            r2 = r1 + b
            r3 = tf.reduce_sum(r2)
        with tf.Session(cluster_servers[0].target, config=config()) as sess:
            for _ in range(3):
                h = sess.partial_run_setup([r1, r2, r3], [a, b])
                np.testing.assert_allclose(sess.partial_run(h, r1, feed_dict={a: [1, 2]}), [3, 6])
                got2, got3 = sess.partial_run(h, [r2, r3], feed_dict={b: [10, 20]})
                np.testing.assert_allclose(got2, [13, 26])
                assert got3 == 39
            # Stopped half way: closing the session ends the step on all tasks.
            h = sess.partial_run_setup([r1, r3], [a, b])
            np.testing.assert_allclose(sess.partial_run(h, r1, feed_dict={a: [1, 1]}), [3, 3])
        with tf.Session(cluster_servers[0].target, config=config()) as sess:
            assert sess.run(r3, {a: [1, 1], b: [0, 0]}) == 6
