"""Partial runs through the C API: TF_SessionPRunSetup, TF_SessionPRun and
TF_DeletePRunHandle, and the deprecated TF_PRunSetup / TF_PRun, with
TensorFlow's error codes and messages."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_OK, CApiError


@pytest.fixture
def abc(api, graph):
    """r1 = a + b, r2 = r1 * c on scalar placeholders: (a, b, c, r1, r2)."""
    a, b, c = (api.placeholder(graph, name, shape=[]) for name in "abc")
    r1 = api.binary(graph, "AddV2", "r1", a, b)
    r2 = api.binary(graph, "Mul", "r2", r1, c)
    return a, b, c, r1, r2


def setup(api, session, feeds, fetches, targets=()):
    ffi, lib = api.ffi, api.lib
    handle = ffi.new("char**")
    status = lib.TF_NewStatus()
    try:
        lib.TF_SessionPRunSetup(
            session,
            api.outputs([(op, 0) for op in feeds]),
            len(feeds),
            api.outputs([(op, 0) for op in fetches]),
            len(fetches),
            ffi.new("TF_Operation*[]", list(targets)) if targets else ffi.NULL,
            len(targets),
            handle,
            status,
        )
        api.check(status)
        return handle[0]
    finally:
        lib.TF_DeleteStatus(status)


def prun(api, session, handle, feeds=(), fetches=()):
    """(values, code, message) of one TF_SessionPRun."""
    ffi, lib = api.ffi, api.lib
    tensors = [api.tensor(np.float32(value)) for _, value in feeds]
    results = ffi.new("TF_Tensor*[]", [ffi.cast("TF_Tensor*", 1)] * max(len(fetches), 1))
    status = lib.TF_NewStatus()
    try:
        lib.TF_SessionPRun(
            session,
            handle,
            api.outputs([(op, 0) for op, _ in feeds]) if feeds else ffi.NULL,
            ffi.new("TF_Tensor*[]", tensors) if tensors else ffi.NULL,
            len(feeds),
            api.outputs([(op, 0) for op in fetches]) if fetches else ffi.NULL,
            results,
            len(fetches),
            ffi.NULL,
            0,
            status,
        )
        code, message = api.code(status), api.message(status)
        if code != TF_OK:
            assert all(results[i] == ffi.NULL for i in range(len(fetches)))
            return [], code, message
        return [api.take(results[i]) for i in range(len(fetches))], code, message
    finally:
        lib.TF_DeleteStatus(status)
        for t in tensors:
            lib.TF_DeleteTensor(t)  # the caller keeps its inputs


def test_TF_SessionPRun_feeds_and_fetches_over_calls(api, lib, session, abc):
    a, b, c, r1, r2 = abc
    handle = setup(api, session, [a, b, c], [r1, r2])
    try:
        values, code, message = prun(api, session, handle, [(a, 1), (b, 2)], [r1])
        assert code == TF_OK, message
        assert values == [3]
        values, code, message = prun(api, session, handle, [(c, 17)], [r2])
        assert code == TF_OK, message
        assert values == [51]
        # Every feed and fetch was used: the run is over.
        _, code, message = prun(api, session, handle, [], [r2])
        assert code == CODES["INVALID_ARGUMENT"]
        assert message == "Must run 'setup' before performing partial runs!"
    finally:
        lib.TF_DeletePRunHandle(handle)


def test_TF_SessionPRun_on_a_grpc_target(api, lib, pb, graph, abc):
    a, b, c, r1, r2 = abc
    server_def = pb.ServerDef(job_name="worker", task_index=0, protocol="grpc")
    server_def.cluster.job.add(name="worker").tasks[0] = "localhost:0"  # a free loopback port
    data = server_def.SerializeToString()
    server = api.call(lib.TF_NewServer, data, len(data))
    status = lib.TF_NewStatus()
    try:
        api.call(lib.TF_ServerStart, server)
        target = api.ffi.string(lib.TF_ServerTarget(server)).decode()
        opts = api.options(pb.ConfigProto(operation_timeout_in_ms=30000), target=target)
        session = api.call(lib.TF_NewSession, graph, opts)
        lib.TF_DeleteSessionOptions(opts)
        handle = setup(api, session, [a, b, c], [r1, r2])
        try:
            values, code, message = prun(api, session, handle, [(a, 1), (b, 2)], [r1])
            assert code == TF_OK and values == [3], message
            _, code, message = prun(api, session, handle, [(a, 1)], [])
            assert code == CODES["INVALID_ARGUMENT"]
            assert message == "The feed a:0 has already been fed."
            values, code, message = prun(api, session, handle, [(c, 17)], [r2])
            assert code == TF_OK and values == [51], message
        finally:
            lib.TF_DeletePRunHandle(handle)
        lib.TF_DeleteSession(session, status)
        api.check(status)
    finally:
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteServer(server)


def test_TF_SessionPRun_errors(api, lib, session, abc):
    a, b, c, r1, r2 = abc
    handle = setup(api, session, [a, b], [r1])
    try:

        def error(feeds, fetches):
            _, code, message = prun(api, session, handle, feeds, fetches)
            assert code == CODES["INVALID_ARGUMENT"]
            return message

        assert error([(c, 1)], []) == "The feed c:0 was not specified in partial_run_setup."
        assert error([], [r2]) == "The fetch r2:0 was not specified in partial_run_setup."
        assert error([(a, 1)], [r1]) == (
            "Fetch b:0 can't be computed from the feeds that have been fed so far."
        )
        assert prun(api, session, handle, [(a, 1)], [])[1] == TF_OK
        assert error([(a, 1)], []) == "The feed a:0 has already been fed."
        values, code, _ = prun(api, session, handle, [(b, 5)], [r1])
        assert code == TF_OK and values == [6]
    finally:
        lib.TF_DeletePRunHandle(handle)


def test_TF_SessionPRunSetup_errors(api, lib, session, abc):
    a, b, c, r1, r2 = abc

    with pytest.raises(CApiError) as raised:
        setup(api, session, [a, a], [r1])
    assert raised.value.code == CODES["INVALID_ARGUMENT"]
    with pytest.raises(CApiError) as raised:
        setup(api, session, [r1], [r1])  # fed and fetched
    assert raised.value.code == CODES["INVALID_ARGUMENT"]
    with pytest.raises(CApiError) as raised:
        setup(api, session, [a], [])
    assert raised.value.code == CODES["INVALID_ARGUMENT"]
    # A target runs once the run's feeds are all given.
    handle = setup(api, session, [a, b, c], [], targets=[r2])
    values, code, message = prun(api, session, handle, [(a, 1), (b, 1), (c, 1)], [])
    assert code == TF_OK and values == [], message
    lib.TF_DeletePRunHandle(handle)


@pytest.mark.covers("TF_PRun", "TF_DeletePRunHandle")
def test_TF_PRunSetup_and_TF_PRun_by_names(api, lib, graph, abc):
    ffi = api.ffi
    graph_def = api.graph_def(graph).SerializeToString()
    opts = api.options()
    session = api.call(lib.TF_NewDeprecatedSession, opts)
    lib.TF_DeleteSessionOptions(opts)
    status = lib.TF_NewStatus()
    handle = ffi.new("char**")
    keep = []

    def names(*strings):
        array = [ffi.new("char[]", s.encode()) for s in strings]
        keep.extend(array)
        return ffi.new("char*[]", array)

    try:
        lib.TF_ExtendGraph(session, graph_def, len(graph_def), status)
        api.check(status)
        lib.TF_PRunSetup(
            session,
            names("a:0", "b:0", "c:0"),
            3,
            names("r1:0", "r2:0"),
            2,
            ffi.NULL,
            0,
            handle,
            status,
        )
        api.check(status)
        feeds = [api.tensor(np.float32(2)), api.tensor(np.float32(3))]
        out = ffi.new("TF_Tensor*[]", 1)
        lib.TF_PRun(
            session,
            handle[0],
            names("a:0", "b:0"),
            ffi.new("TF_Tensor*[]", feeds),
            2,
            names("r1:0"),
            out,
            1,
            ffi.NULL,
            0,
            status,
        )
        api.check(status)
        assert api.take(out[0]) == 5
        lib.TF_PRun(
            session,
            handle[0],
            names("r2:0"),
            ffi.new("TF_Tensor*[]", feeds[:1]),
            1,
            names("r2:0"),
            out,
            1,
            ffi.NULL,
            0,
            status,
        )
        assert api.code(status) == CODES["INVALID_ARGUMENT"] and out[0] == ffi.NULL
        for t in feeds:
            lib.TF_DeleteTensor(t)  # still the caller's
    finally:
        lib.TF_DeletePRunHandle(handle[0])
        lib.TF_CloseDeprecatedSession(session, status)
        lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)
