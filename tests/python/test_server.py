"""tf.train.Server (lifecycle, target, TensorFlow's argument checks), the
`python -m tensorweave.server` command, and Session.reset / list_devices.

Servers listen on loopback at free ports (localhost:0) and each test stops its
own; the command runs as a subprocess stopped by pid. Every wait is bounded."""

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import tensorweave as tf
from loopback_tasks import free_ports
from tensorweave.proto import config_pb2, tensorflow_server_pb2
from tensorweave.server import parse_cluster_spec

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def port_of(target):
    return int(target.rsplit(":", 1)[1])


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def free_port():
    return free_ports(1)[0]


@pytest.fixture
def servers():
    """Collects servers a test makes and stops them after it."""
    made = []
    yield made
    for server in made:
        server.stop()


def test_create_local_server_serves_on_localhost_at_a_free_port(servers):
    server = tf.train.Server.create_local_server()
    servers.append(server)
    assert server.target.startswith("grpc://localhost:")
    assert listening(port_of(server.target))
    assert server.server_def.job_name == "localhost"
    assert server.server_def.protocol == "grpc"


def test_a_server_knows_its_port_before_it_starts_and_listens_once_started(servers):
    server = tf.train.Server.create_local_server(start=False)
    servers.append(server)
    target = server.target
    assert target.startswith("grpc://localhost:")
    assert not listening(port_of(target))
    server.start()
    assert server.target == target
    assert listening(port_of(target))
    with pytest.raises(tf.errors.FailedPreconditionError):
        server.start()


def test_stop_really_stops_and_a_stopped_server_does_not_restart(servers):
    server = tf.train.Server.create_local_server()
    port = port_of(server.target)
    server.stop()
    assert not listening(port)
    server.stop()  # twice is fine
    with pytest.raises(tf.errors.FailedPreconditionError):
        server.start()


def test_join_returns_once_another_thread_stops_the_server():
    server = tf.train.Server.create_local_server()
    joiner = threading.Thread(target=server.join, daemon=True)
    joiner.start()
    joiner.join(0.3)
    assert joiner.is_alive()  # serving: join waits
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    joiner.join(10)
    stopper.join(10)
    assert not joiner.is_alive()


def test_join_on_a_server_never_started_returns_at_once():
    server = tf.train.Server.create_local_server(start=False)
    started = time.monotonic()
    server.join()
    assert time.monotonic() - started < 5
    with pytest.raises(tf.errors.FailedPreconditionError):
        server.start()


def test_a_cluster_task_listens_on_its_own_address(servers):
    port = free_port()
    cluster = tf.train.ClusterSpec({"ps": [f"localhost:{port}"], "worker": ["localhost:0"]})
    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    servers.append(server)
    assert server.target == f"grpc://localhost:{port}"
    assert listening(port)
    assert server.server_def.cluster == cluster.as_cluster_def()


def test_a_port_in_use_is_unavailable(servers):
    first = tf.train.Server.create_local_server()
    servers.append(first)
    with pytest.raises(tf.errors.UnavailableError):
        tf.train.Server({"a": [f"localhost:{port_of(first.target)}"]})


def test_a_server_def_is_taken_with_overrides(servers):
    server_def = tensorflow_server_pb2.ServerDef(protocol="grpc", job_name="x", task_index=5)
    server_def.cluster.job.add(name="w").tasks[1] = "localhost:0"
    config = config_pb2.ConfigProto(device_count={"CPU": 2})
    server = tf.train.Server(server_def, job_name="w", task_index=1, config=config)
    servers.append(server)
    assert server.server_def.job_name == "w"
    assert server.server_def.task_index == 1
    assert server.server_def.default_session_config.device_count["CPU"] == 2
    assert server_def.job_name == "x"  # the caller's message is not changed
    assert listening(port_of(server.target))


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        (({"a": ["localhost:0"], "b": ["localhost:0"]},), {}, ValueError, "explicit `job_name`"),
        (({"a": ["localhost:0", "localhost:0"]},), {}, ValueError, "explicit `task_index`"),
        ((42,), {}, TypeError, "Could not convert `server_or_cluster_def`"),
        (({"a": ["localhost:0"]},), {"config": 3}, TypeError, "tf.ConfigProto"),
        (({"a": ["localhost:0"]},), {"job_name": "b"}, ValueError, "No such job"),
        (({"a": ["localhost:0"]},), {"task_index": 4}, tf.errors.InvalidArgumentError, "Task 4"),
        (({"a": ["localhost:0"]},), {"protocol": "grpc+mpi"}, tf.errors.NotFoundError, "protocol"),
        (({"a": ["localhost"]},), {}, tf.errors.InvalidArgumentError, "Could not parse port"),
    ],
)
def test_bad_arguments_fail_as_in_tensorflow(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        tf.train.Server(*args, start=False, **kwargs)


def test_session_reset_clears_in_process_variables():
    v = tf.Variable(3.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 3.0
        tf.Session.reset("")
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)
        sess.run(v.initializer)
        assert sess.run(v) == 3.0


# As TensorFlow 2.21 does (checked with tf.compat.v1 on a local server):
# reset([]) clears the default container only, reset(["foo"]) only "foo",
# and the default container is named "localhost". In-process sessions keep
# their variables only while they live (one session is held); a server
# keeps them across sessions (Reset also closes the server's sessions).
RESETS = [
    ([], [False, True]),
    (None, [False, True]),
    (["foo"], [True, False]),
    (["localhost"], [False, True]),
    (["foo", "localhost"], [False, False]),
    (["elsewhere"], [True, True]),
]


def _two_containers():
    in_default = tf.Variable(1.0, name="in_default")
    with tf.container("foo"):
        in_foo = tf.Variable(2.0, name="in_foo")
    assert in_default.op.get_attr("container") == b""
    assert in_foo.op.get_attr("container") == b"foo"
    initialized = [tf.is_variable_initialized(v) for v in (in_default, in_foo)]
    return tf.global_variables_initializer(), initialized


def test_session_reset_clears_only_the_containers_named_in_process():
    init, initialized = _two_containers()
    with tf.Session() as sess:
        for containers, expected in RESETS:
            sess.run(init)
            tf.Session.reset("", containers)
            assert sess.run(initialized) == expected, containers


def test_session_reset_clears_only_the_containers_named_on_a_server():
    server = tf.train.Server.create_local_server()
    try:
        init, initialized = _two_containers()
        for containers, expected in RESETS:
            with tf.Session(server.target) as sess:
                sess.run(init)
            tf.Session.reset(server.target, containers)
            with tf.Session(server.target) as sess:
                assert sess.run(initialized) == expected, containers
    finally:
        server.stop()


def test_session_reset_of_an_unreachable_master_is_unavailable_fast():
    started = time.monotonic()
    with pytest.raises(tf.errors.UnavailableError):
        tf.Session.reset(f"grpc://localhost:{free_port()}", ["c1"])
    assert time.monotonic() - started < 5
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.Session.reset("grpc://no-port")
    with pytest.raises(TypeError):
        tf.Session.reset("", config=3)


def test_list_devices_of_a_local_session_and_after_close():
    sess = tf.Session()
    names = [device.name for device in sess.list_devices()]
    assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    sess.close()
    with pytest.raises(RuntimeError):
        sess.list_devices()


def test_a_remote_session_to_an_unreachable_master_fails_unavailable_on_first_run():
    x = tf.placeholder(tf.float32, [1, 4])
    y = x * 2 + 1
    with tf.Session(f"grpc://localhost:{free_port()}") as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError):
            sess.run(y, {x: np.ones((1, 4), np.float32)})
        assert time.monotonic() - started < 5


# --- python -m tensorweave.server ---------------------------------------------


def test_parse_cluster_spec_reads_jobs_and_tasks():
    assert parse_cluster_spec("ps=localhost:2222,worker=localhost:2223;localhost:2224") == {
        "ps": ["localhost:2222"],
        "worker": ["localhost:2223", "localhost:2224"],
    }
    for bad in ["ps", "=localhost:1", "ps=a:1,ps=b:2", "ps=a:1;", ""]:
        with pytest.raises(ValueError):
            parse_cluster_spec(bad)


def start_command(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    return subprocess.Popen(
        [sys.executable, "-m", "tensorweave.server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def first_line(stream, timeout):
    """The first line of `stream`, or None after `timeout` seconds."""
    lines = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout).strip()
    except queue.Empty:
        return None


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_the_command_serves_until_a_signal_then_stops_cleanly(stop_signal):
    port = free_port()
    process = start_command(
        f"--cluster_spec=ps=localhost:{port},worker=localhost:1;localhost:2",
        "--job_name=ps",
        "--task_index=0",
    )
    try:
        target = first_line(process.stdout, timeout=30)
        assert target == f"grpc://localhost:{port}"
        assert listening(port)
        process.send_signal(stop_signal)
        assert process.wait(timeout=15) == 0
        assert not listening(port)
        assert "insecure" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_the_command_refuses_a_bad_cluster_spec():
    process = start_command("--cluster_spec=ps", "--job_name=ps")
    try:
        assert process.wait(timeout=30) == 2
        assert "job=host:port" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_a_remote_session_lists_the_servers_devices_with_their_incarnations(servers):
    server = tf.train.Server.create_local_server()
    servers.append(server)
    with tf.Session(server.target) as sess:
        devices = sess.list_devices()
        again = sess.list_devices()
    assert [d.device_type for d in devices] == ["CPU"]
    assert devices[0].incarnation != 0
    assert again[0].incarnation == devices[0].incarnation
