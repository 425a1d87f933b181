"""Failures in a cluster surface fast and nothing hangs: a worker killed
mid-step, a worker that restarts, a master that stops answering, a worker
that never starts. Each test starts its own server processes on loopback,
stops them by pid, and bounds every wait."""

import os
import signal
import threading
import time

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports, read_until
from test_distributed_training import start_task

DEADLINE_SECONDS = 60


@pytest.fixture
def processes():
    started = []
    yield started
    for process in started:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
        process.wait(timeout=10)


def start_ready(processes, cluster, job, task):
    process = start_task(cluster, job, task)
    processes.append(process)
    read_until(process, "READY", time.monotonic() + DEADLINE_SECONDS)
    return process


def slow_graph(device, size=1200, depth=400):
    """A chain of matmuls on `device` that takes many seconds (each ~3.5
    GFLOP; a fast machine does dozens per second), so a step is still
    running when a test kills or freezes a process under it."""
    with tf.device(device):
        x = tf.random_uniform([size, size], seed=1)
        for _ in range(depth):
            x = tf.matmul(x, x) / float(size)
        return tf.reduce_sum(x)


def after(seconds, action):
    """Runs `action` on another thread in `seconds`; returns the timer and
    a list that then holds the time the action was done."""
    done_at = []

    def run():
        action()
        done_at.append(time.monotonic())

    timer = threading.Timer(seconds, run)
    timer.start()
    return timer, done_at


def run_and_time(session, fetch, **kwargs):
    start = time.monotonic()
    with pytest.raises(tf.errors.OpError) as caught:
        session.run(fetch, **kwargs)
    return caught.value, time.monotonic() - start


def test_worker_killed_mid_step_fails_fast_then_restart_aborts_old_session(processes):
    master_port, worker_port = free_ports(2)
    cluster = {
        "master": [f"localhost:{master_port}"],
        "worker": [f"localhost:{worker_port}"],
    }
    start_ready(processes, cluster, "master", 0)
    worker = start_ready(processes, cluster, "worker", 0)
    target = f"grpc://localhost:{master_port}"
    with tf.Graph().as_default():
        total = slow_graph("/job:worker/task:0")
        with tf.device("/job:worker/task:0"):
            small = tf.constant(1.0) + 1.0
        session = tf.Session(target)
        assert session.run(small) == 2.0

        killer, killed_at = after(1.0, worker.kill)
        error, _ = run_and_time(session, total)
        failed_at = time.monotonic()
        killer.join()
        assert isinstance(error, tf.errors.UnavailableError), error
        assert killed_at, "the step ended before the worker was killed"
        assert failed_at - killed_at[0] < 1.0, "the step failed within 1 s of the kill"

        error, elapsed = run_and_time(session, small)
        assert isinstance(error, tf.errors.UnavailableError), error
        assert elapsed < 1.0, "further steps fail fast"

        worker.wait(timeout=10)
        start_ready(processes, cluster, "worker", 0)
        # Once the master's channel has reconnected (within ~1 s), the old
        # session learns that the worker forgot it.
        reconnect_deadline = time.monotonic() + 3.0
        error, _ = run_and_time(session, small)
        while (
            isinstance(error, tf.errors.UnavailableError) and time.monotonic() < reconnect_deadline
        ):
            time.sleep(0.1)
            error, _ = run_and_time(session, small)
        assert isinstance(error, tf.errors.AbortedError), error
        session.close()
        with tf.Session(target) as fresh:
            assert fresh.run(small) == 2.0


def test_master_that_stops_answering_is_noticed_without_a_timeout(processes):
    (port,) = free_ports(1)
    master = start_ready(processes, {"localhost": [f"localhost:{port}"]}, "localhost", 0)
    with tf.Graph().as_default():
        total = slow_graph("/job:localhost/task:0")
        session = tf.Session(f"grpc://localhost:{port}")
        freezer, frozen_at = after(1.0, lambda: os.kill(master.pid, signal.SIGSTOP))
        error, _ = run_and_time(session, total)
        failed_at = time.monotonic()
        freezer.join()
        assert isinstance(error, tf.errors.UnavailableError), error
        assert frozen_at, "the step ended before the master froze"
        assert failed_at - frozen_at[0] < 10.0, "keepalive noticed within 10 s"
        # Closing cannot reach the frozen master either, and says so.
        with pytest.raises(tf.errors.UnavailableError):
            session.close()


def test_worker_that_never_starts_is_a_deadline_naming_the_task(processes):
    master_port, missing_port = free_ports(2)
    cluster = {
        "master": [f"localhost:{master_port}"],
        "worker": [f"localhost:{missing_port}"],
    }
    start_ready(processes, cluster, "master", 0)
    config = tf.ConfigProto(operation_timeout_in_ms=2000)
    with tf.Graph().as_default():
        value = tf.constant(np.float32(3.0))
        start = time.monotonic()
        session = tf.Session(f"grpc://localhost:{master_port}", config=config)
        with pytest.raises(tf.errors.DeadlineExceededError) as caught:
            session.run(value)
        session.close()
        elapsed = time.monotonic() - start
    assert "/job:worker/replica:0/task:0" in str(caught.value)
    assert 1.5 < elapsed < 10.0
