"""The GraphDef-based API: TF_NewDeprecatedSession, TF_ExtendGraph, TF_Run
(which takes ownership of its inputs), closing, deleting, devices, counters."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT


def affine_graph_def(api):
    """y = x * 2 + 1, x a [?, 4] float placeholder, as a GraphDef message."""
    graph = api.lib.TF_NewGraph()
    try:
        x = api.placeholder(graph, "x", shape=[-1, 4])
        twice = api.binary(graph, "Mul", "twice", x, api.const(graph, "two", np.float32(2)))
        api.binary(graph, "AddV2", "y", twice, api.const(graph, "one", np.float32(1)))
        return api.graph_def(graph)
    finally:
        api.lib.TF_DeleteGraph(graph)


def extend(api, session, graph_def):
    data = graph_def if isinstance(graph_def, bytes) else graph_def.SerializeToString()
    status = api.lib.TF_NewStatus()
    api.lib.TF_ExtendGraph(session, data, len(data), status)
    result = api.code(status), api.message(status)
    api.lib.TF_DeleteStatus(status)
    return result


def run(api, session, feeds=(), fetches=(), targets=()):
    """TF_Run by names; feeds are (name, numpy array). Returns
    (code, message, [numpy results])."""
    ffi, lib = api.ffi, api.lib
    keep = [ffi.new("char[]", n.encode()) for n, _ in feeds]
    keep += [ffi.new("char[]", n.encode()) for n in list(fetches) + list(targets)]
    names = ffi.new("const char*[]", keep) if keep else ffi.NULL
    inputs = ffi.new("TF_Tensor*[]", [api.tensor(v) for _, v in feeds]) if feeds else ffi.NULL
    outputs = ffi.new("TF_Tensor*[]", max(len(fetches), 1))
    status = lib.TF_NewStatus()
    lib.TF_Run(
        session,
        ffi.NULL,
        names,
        inputs,
        len(feeds),
        names + len(feeds),
        outputs,
        len(fetches),
        names + len(feeds) + len(fetches),
        len(targets),
        ffi.NULL,
        status,
    )
    code, message = api.code(status), api.message(status)
    lib.TF_DeleteStatus(status)
    for i in range(len(feeds)):  # the inputs stay the caller's
        lib.TF_DeleteTensor(inputs[i])
    if code != CODES["OK"]:
        assert all(outputs[i] == ffi.NULL for i in range(len(fetches)))
        return code, message, None
    return code, message, [api.take(outputs[i]) for i in range(len(fetches))]


@pytest.fixture
def deprecated(api, lib):
    opts = lib.TF_NewSessionOptions()
    session = api.call(lib.TF_NewDeprecatedSession, opts)
    lib.TF_DeleteSessionOptions(opts)
    yield session
    status = lib.TF_NewStatus()
    lib.TF_DeleteDeprecatedSession(session, status)
    lib.TF_DeleteStatus(status)


def test_TF_NewDeprecatedSession_needs_options(api, lib, status):
    assert lib.TF_NewDeprecatedSession(api.ffi.NULL, status) == api.ffi.NULL
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_NewDeprecatedSession_unknown_target(api, lib, status):
    opts = lib.TF_NewSessionOptions()
    lib.TF_SetTarget(opts, b"nowhere://x")
    assert lib.TF_NewDeprecatedSession(opts, status) == api.ffi.NULL
    assert api.code(status) == CODES["NOT_FOUND"]
    lib.TF_DeleteSessionOptions(opts)


def test_TF_ExtendGraph_then_TF_Run(api, deprecated):
    assert extend(api, deprecated, affine_graph_def(api))[0] == CODES["OK"]
    feed = np.arange(4, dtype=np.float32).reshape(1, 4)
    code, message, (result,) = run(api, deprecated, [("x:0", feed)], ["y:0"])
    assert code == CODES["OK"], message
    np.testing.assert_array_equal(result, feed * 2 + 1)


def test_TF_ExtendGraph_garbage_bytes(api, deprecated):
    assert extend(api, deprecated, b"\x0a\x10\x0a")[0] == CODES["INVALID_ARGUMENT"]


def test_TF_ExtendGraph_adds_nodes_reading_earlier_ones(api, deprecated):
    extend(api, deprecated, affine_graph_def(api))
    more = api.pb.GraphDef()
    node = more.node.add(name="z", op="Identity", input=["y"])
    node.attr["T"].type = TF_FLOAT
    assert extend(api, deprecated, more) == (CODES["OK"], "")
    code, _, (result,) = run(api, deprecated, [("x", np.zeros((1, 4), np.float32))], ["z"])
    assert code == CODES["OK"] and result.tolist() == [[1, 1, 1, 1]]


def test_TF_ExtendGraph_duplicate_node_changes_nothing(api, deprecated):
    extend(api, deprecated, affine_graph_def(api))
    code, _ = extend(api, deprecated, affine_graph_def(api))
    assert code == CODES["INVALID_ARGUMENT"]
    code, _, _ = run(api, deprecated, [("x", np.zeros((1, 4), np.float32))], ["y"])
    assert code == CODES["OK"]


def test_TF_Run_leaves_the_inputs_to_the_caller(api, lib, deprecated):
    extend(api, deprecated, affine_graph_def(api))
    released = []

    @api.ffi.callback("void(void*, size_t, void*)")
    def deallocate(data, length, arg):
        released.append(length)

    block = api.ffi.new("float[]", 16 + 16)
    data = block + (-int(api.ffi.cast("uintptr_t", block)) % 64) // 4
    feed = lib.TF_NewTensor(
        TF_FLOAT, api.ffi.new("int64_t[]", [1, 4]), 2, data, 16, deallocate, api.ffi.NULL
    )
    names = [api.ffi.new("char[]", b"x"), api.ffi.new("char[]", b"y")]
    outputs = api.ffi.new("TF_Tensor*[]", 1)
    status = lib.TF_NewStatus()
    lib.TF_Run(
        deprecated,
        api.ffi.NULL,
        api.ffi.new("const char*[]", [names[0]]),
        api.ffi.new("TF_Tensor*[]", [feed]),
        1,
        api.ffi.new("const char*[]", [names[1]]),
        outputs,
        1,
        api.ffi.NULL,
        0,
        api.ffi.NULL,
        status,
    )
    api.check(status)
    lib.TF_DeleteTensor(outputs[0])
    # The fed tensor is still the caller's (TensorFlow 1.15 and 2.x): a
    # TF_Run that deleted it made TensorFlow programs free it twice.
    assert released == []
    lib.TF_DeleteTensor(feed)
    assert released == [16]
    lib.TF_DeleteStatus(status)


def test_TF_Run_unknown_name_and_failure_outputs(api, deprecated):
    extend(api, deprecated, affine_graph_def(api))
    code, message, _ = run(api, deprecated, [("x", np.zeros((1, 4), np.float32))], ["nope:0"])
    assert code == CODES["NOT_FOUND"] and "nope" in message
    code, _, _ = run(api, deprecated, [], [])
    assert code == CODES["INVALID_ARGUMENT"]
    code, _, _ = run(api, deprecated, [("x", np.zeros((1, 4), np.int32))], ["y"])
    assert code == CODES["INVALID_ARGUMENT"]


def test_TF_Run_targets(api, deprecated):
    graph_def = affine_graph_def(api)
    graph_def.node.add(name="done", op="NoOp", input=["^y"])
    extend(api, deprecated, graph_def)
    code, message, results = run(
        api, deprecated, [("x", np.zeros((1, 4), np.float32))], [], ["done"]
    )
    assert code == CODES["OK"], message
    assert results == []


def test_TF_CloseDeprecatedSession(api, lib, deprecated, status):
    extend(api, deprecated, affine_graph_def(api))
    lib.TF_CloseDeprecatedSession(deprecated, status)
    api.check(status)
    code, _, _ = run(api, deprecated, [("x", np.zeros((1, 4), np.float32))], ["y"])
    assert code == CODES["CANCELLED"]


def test_TF_DeleteDeprecatedSession_accepts_null(api, lib, status):
    lib.TF_DeleteDeprecatedSession(api.ffi.NULL, status)
    api.check(status)


def test_TF_DeprecatedSessionListDevices(api, lib, deprecated, status):
    devices = lib.TF_DeprecatedSessionListDevices(deprecated, status)
    api.check(status)
    assert lib.TF_DeviceListCount(devices) == 1
    assert api.ffi.string(lib.TF_DeviceListType(devices, 0, status)) == b"CPU"
    lib.TF_DeleteDeviceList(devices)


def test_TW_DeprecatedSessionGetStats(api, lib, deprecated):
    extend(api, deprecated, affine_graph_def(api))
    for _ in range(3):
        run(api, deprecated, [("x:0", np.zeros((1, 4), np.float32))], ["y:0"])
    stats = api.ffi.new("TW_SessionStats*")
    lib.TW_DeprecatedSessionGetStats(deprecated, stats)
    assert (stats.runs, stats.executors_built, stats.cache_hits) == (3, 1, 2)
