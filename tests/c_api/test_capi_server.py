"""TF_Server (TF_NewServer, TF_ServerStart, TF_ServerStop, TF_ServerJoin,
TF_ServerTarget, TF_DeleteServer) and TF_Reset.

Servers listen on loopback at a free port (the ServerDef says localhost:0)
and each test stops and deletes its own. Whether a server listens is checked
with a plain TCP connection; every wait is bounded."""

import pathlib
import socket
import subprocess
import threading
import time

import numpy as np
import pytest
from capi_helpers import CODES, CApiError
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ServerDef(tmp_path_factory):
    """The ServerDef message class, from runtime/proto in a private pool."""
    descriptor_set = tmp_path_factory.mktemp("server_protos") / "server.desc"
    subprocess.run(
        [
            "protoc",
            "-Itensorweave/proto=runtime/proto",
            "--include_imports",
            f"--descriptor_set_out={descriptor_set}",
            "runtime/proto/tensorflow_server.proto",
        ],
        cwd=REPO,
        check=True,
    )
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in files.file:
        pool.Add(file_proto)
    classes = message_factory.GetMessageClassesForFiles([f.name for f in files.file], pool)
    return classes["tensorweave.ServerDef"]


def server_def_bytes(ServerDef, address="localhost:0", job="worker", task=0, protocol="grpc"):
    """A one-task cluster {job: [address]}, and task `task` of `job` in it."""
    server_def = ServerDef(job_name=job, task_index=task, protocol=protocol)
    server_def.cluster.job.add(name="worker").tasks[0] = address
    return server_def.SerializeToString()


@pytest.fixture
def new_server(api, lib, ServerDef):
    """Makes servers from ServerDef fields; stops and deletes them after."""
    made = []

    def make(**fields):
        data = server_def_bytes(ServerDef, **fields)
        server = api.call(lib.TF_NewServer, data, len(data))
        made.append(server)
        return server

    yield make
    for server in made:
        lib.TF_DeleteServer(server)


def target_of(api, lib, server):
    return api.ffi.string(lib.TF_ServerTarget(server)).decode()


def port_of(api, lib, server):
    return int(target_of(api, lib, server).rsplit(":", 1)[1])


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def test_TF_NewServer_picks_the_port_but_does_not_listen_yet(api, lib, new_server):
    server = new_server()  # localhost:0
    assert server != api.ffi.NULL
    target = target_of(api, lib, server)
    assert target.startswith("grpc://localhost:")
    port = port_of(api, lib, server)
    assert port > 0
    assert not listening(port)
    api.call(lib.TF_ServerStart, server)
    assert target_of(api, lib, server) == target  # the port picked at creation
    assert listening(port)


@pytest.mark.parametrize(
    "fields, code, words",
    [
        ({"task": 3}, "INVALID_ARGUMENT", "Task 3 was not defined in job"),
        ({"address": "localhost"}, "INVALID_ARGUMENT", "Could not parse port"),
        ({"address": "localhost:99999"}, "INVALID_ARGUMENT", "Could not parse port"),
        ({"protocol": "grpc+verbs"}, "NOT_FOUND", "No server factory"),
        ({"job": "ps"}, "INTERNAL", "was not defined in cluster"),
    ],
)
def test_TF_NewServer_refuses_a_bad_ServerDef(api, lib, ServerDef, status, fields, code, words):
    data = server_def_bytes(ServerDef, **fields)
    assert lib.TF_NewServer(data, len(data), status) == api.ffi.NULL
    assert api.code(status) == CODES[code]
    assert words in api.message(status)


def test_TF_NewServer_refuses_bytes_that_do_not_parse(api, lib, status):
    assert lib.TF_NewServer(b"\xff\xff\xff", 3, status) == api.ffi.NULL
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_ServerStart_listens_on_loopback_at_a_free_port(api, lib, new_server, status):
    server = new_server()
    api.call(lib.TF_ServerStart, server)
    port = port_of(api, lib, server)
    assert port > 0
    assert listening(port)
    lib.TF_ServerStart(server, status)
    assert api.code(status) == CODES["FAILED_PRECONDITION"]


def test_TF_ServerStart_fails_on_a_port_in_use(api, lib, new_server, status):
    first = new_server()
    api.call(lib.TF_ServerStart, first)
    second = new_server(address=f"localhost:{port_of(api, lib, first)}")
    lib.TF_ServerStart(second, status)
    assert api.code(status) == CODES["UNAVAILABLE"]


def test_TF_ServerStop_really_stops(api, lib, new_server, status):
    server = new_server()
    api.call(lib.TF_ServerStart, server)
    port = port_of(api, lib, server)
    api.call(lib.TF_ServerStop, server)
    assert not listening(port)
    api.call(lib.TF_ServerStop, server)  # twice is a no-op
    lib.TF_ServerStart(server, status)  # a stopped server does not restart
    assert api.code(status) == CODES["FAILED_PRECONDITION"]


def test_TF_ServerJoin_returns_once_another_thread_stops_the_server(api, lib, new_server):
    server = new_server()
    api.call(lib.TF_ServerStart, server)
    joined = threading.Event()

    def join():
        api.call(lib.TF_ServerJoin, server)
        joined.set()

    thread = threading.Thread(target=join, daemon=True)
    thread.start()
    assert not joined.wait(0.3)  # still serving
    api.call(lib.TF_ServerStop, server)
    assert joined.wait(10)
    thread.join(10)


def test_TF_ServerJoin_of_an_unstarted_server_returns_and_prevents_starting(
    api, lib, new_server, status
):
    server = new_server()
    started = time.monotonic()
    api.call(lib.TF_ServerJoin, server)
    assert time.monotonic() - started < 5
    lib.TF_ServerStart(server, status)
    assert api.code(status) == CODES["FAILED_PRECONDITION"]


def test_TF_ServerTarget_names_localhost_and_the_bound_port(api, lib, new_server):
    server = new_server()
    api.call(lib.TF_ServerStart, server)
    target = target_of(api, lib, server)
    assert target.startswith("grpc://localhost:")
    assert listening(int(target.rsplit(":", 1)[1]))
    assert lib.TF_ServerTarget(api.ffi.NULL) == api.ffi.NULL


def test_TF_DeleteServer_stops_a_running_server_and_accepts_NULL(api, lib, ServerDef):
    data = server_def_bytes(ServerDef)
    server = api.call(lib.TF_NewServer, data, len(data))
    api.call(lib.TF_ServerStart, server)
    port = port_of(api, lib, server)
    lib.TF_DeleteServer(server)
    assert not listening(port)
    lib.TF_DeleteServer(api.ffi.NULL)


def test_TF_Reset_clears_the_variables_of_in_process_sessions(api, lib, graph, session):
    variable = api.op(
        graph, "VariableV2", "v", attrs={"dtype": ("type", 1), "shape": ("shape", [])}
    )
    one = api.const(graph, "one", np.float32(1))
    assign = api.op(graph, "Assign", "assign", inputs=[(variable, 0), (one, 0)])
    api.run(session, targets=[assign])
    assert api.run(session, fetches=[(variable, 0)])[0] == 1

    opts = api.options()
    try:
        api.call(lib.TF_Reset, opts, api.ffi.NULL, 0)
    finally:
        lib.TF_DeleteSessionOptions(opts)
    with pytest.raises(CApiError) as error:
        api.run(session, fetches=[(variable, 0)])
    assert error.value.code == CODES["FAILED_PRECONDITION"]


def test_TF_Reset_of_an_unreachable_master_is_unavailable(api, lib, status):
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    opts = api.options(target=f"grpc://localhost:{port}")
    container = api.ffi.new("char[]", b"c1")  # kept alive while the array points at it
    containers = api.ffi.new("const char*[]", [container])
    started = time.monotonic()
    lib.TF_Reset(opts, containers, 1, status)
    lib.TF_DeleteSessionOptions(opts)
    assert api.code(status) == CODES["UNAVAILABLE"]
    assert time.monotonic() - started < 5


def test_TF_Reset_checks_its_arguments(api, lib, status):
    lib.TF_Reset(api.ffi.NULL, api.ffi.NULL, 0, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    opts = api.options(target="grpc://no-port")
    lib.TF_Reset(opts, api.ffi.NULL, 0, status)
    lib.TF_DeleteSessionOptions(opts)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
