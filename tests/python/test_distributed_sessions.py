"""Sessions against a tensorweave server in its own process: the shared
token is checked on every call, and creating and closing many sessions
leaves the server no bigger. The server is stopped by pid; every wait is
bounded."""

import os
import signal
import time

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports, read_until
from test_distributed_training import start_task

DEADLINE_SECONDS = 60


@pytest.fixture
def server_processes():
    started = []
    yield started
    for process in started:
        process.kill()
        process.wait(timeout=10)


def start_server(server_processes, env=None):
    (port,) = free_ports(1)
    process = start_task({"localhost": [f"localhost:{port}"]}, "localhost", 0, env=env)
    server_processes.append(process)
    read_until(process, "READY", time.monotonic() + DEADLINE_SECONDS)
    return process, f"grpc://localhost:{port}"


def run_once(target):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 4])
        y = x * 2 + 1
        with tf.Session(target) as session:
            return session.run(y, {x: np.arange(4, dtype=np.float32).reshape(1, 4)})


def test_a_token_server_accepts_only_calls_carrying_its_token(server_processes, monkeypatch):
    monkeypatch.delenv("TENSORWEAVE_GRPC_TOKEN", raising=False)
    _, target = start_server(server_processes, env={"TENSORWEAVE_GRPC_TOKEN": "s3cret"})
    with pytest.raises(tf.errors.UnauthenticatedError):
        run_once(target)
    monkeypatch.setenv("TENSORWEAVE_GRPC_TOKEN", "wrong")
    with pytest.raises(tf.errors.PermissionDeniedError):
        run_once(target)
    monkeypatch.setenv("TENSORWEAVE_GRPC_TOKEN", "s3cret")
    np.testing.assert_array_equal(run_once(target), [[1, 3, 5, 7]])


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS line")


def test_many_sessions_leave_the_server_no_bigger(server_processes):
    process, target = start_server(server_processes)
    for _ in range(50):  # warm up: pools, channels, allocator arenas
        run_once(target)
    before = resident_kib(process.pid)
    for _ in range(200):
        run_once(target)
    after = resident_kib(process.pid)
    # A leaked session, graph or executor per cycle would add megabytes
    # over 200 cycles; allocator noise stays well below.
    print(f"server resident memory: {before} KiB after 50 sessions, {after} KiB after 250")
    assert after - before < 8 * 1024, (before, after)
    os.kill(process.pid, signal.SIGTERM)


def test_tensors_of_every_kind_cross_a_remote_session_intact(server_processes):
    # Feeds and fetches of each kind the tensor codec lays out differently:
    # large contents (their own slices), small ones, strings, bools, empty
    # tensors, through RunStep and RunCallable, equal to a local session.
    _, target = start_server(server_processes)
    rng = np.random.default_rng(7)
    values = {
        tf.float32: rng.standard_normal((3, 100000)).astype(np.float32),
        tf.int64: np.arange(-5, 5, dtype=np.int64).reshape(2, 5),
        tf.bool: rng.integers(0, 2, (70000,)).astype(bool),
        tf.string: np.array([b"", b"a\x00b", b"x" * 5000], dtype=object),
        tf.int32: np.zeros((0, 3), np.int32),
    }
    with tf.Graph().as_default():
        feeds, fetches = [], []
        for dtype, value in values.items():
            placeholder = tf.placeholder(dtype, value.shape)
            feeds.append(placeholder)
            fetches.append(tf.identity(placeholder))
        feed_dict = dict(zip(feeds, values.values()))
        with tf.Session() as local:
            expected = local.run(fetches, feed_dict)
        with tf.Session(target) as remote:
            for _ in range(2):  # the second run reuses the registered graphs
                got = remote.run(fetches, feed_dict)
                for want, have in zip(expected, got):
                    assert want.dtype == have.dtype
                    np.testing.assert_array_equal(want, have)
            callable_fn = remote.make_callable(fetches, feed_list=feeds)
            got = callable_fn(*values.values())
            for want, have in zip(expected, got):
                np.testing.assert_array_equal(want, have)
