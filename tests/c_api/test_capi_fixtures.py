"""Every GraphDef recorded from TensorFlow (tests/fixtures/tf_graphs) imports
through the C API and reproduces the recorded outputs, both through a
TF_Graph + TF_SessionRun and through TF_ExtendGraph + TF_Run."""

import pathlib

import numpy as np
import pytest
from capi_helpers import CODES, TF_TYPES

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tf_graphs"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.pb"))


def recorded(name):
    """(GraphDef bytes, {feed name: array}, {fetch name: array})."""
    data = np.load(FIXTURES / f"{name}.npz")
    feeds = {k[len("feed__") :]: data[k] for k in data.files if k.startswith("feed__")}
    fetches = {k[len("fetch__") :]: data[k] for k in data.files if k.startswith("fetch__")}
    return (FIXTURES / f"{name}.pb").read_bytes(), feeds, fetches


def split(tensor_name):
    node, _, index = tensor_name.partition(":")
    return node, int(index or 0)


def check_close(name, results, expected):
    for (tensor, want), got in zip(expected.items(), results):
        assert got.dtype == want.dtype, f"{name} {tensor}"
        assert got.shape == want.shape, f"{name} {tensor}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} {tensor}")


def test_fixtures_are_present():
    assert NAMES == ["affine", "mlp_frozen", "reductions_f64"]


@pytest.mark.parametrize("name", NAMES)
def test_fixture_through_graph_import_and_session_run(api, lib, graph, name):
    graph_def, feeds, fetches = recorded(name)
    buffer = lib.TF_NewBufferFromString(graph_def, len(graph_def))
    api.call(lib.TF_GraphImportGraphDef, graph, buffer, api.ffi.NULL)
    lib.TF_DeleteBuffer(buffer)

    def output(tensor):
        node, index = split(tensor)
        oper = lib.TF_GraphOperationByName(graph, node.encode())
        assert oper != api.ffi.NULL, tensor
        return oper, index

    for tensor, value in feeds.items():  # recorded feeds match the placeholders' types
        assert lib.TF_OperationOutputType(api.output(*output(tensor))) == TF_TYPES[value.dtype]
    session = api.new_session(graph)
    try:
        feed_list = [(output(t), v) for t, v in feeds.items()]
        fetch_list = [output(t) for t in fetches]
        check_close(name, api.run(session, feeds=feed_list, fetches=fetch_list), fetches)
        # A second run with the same signature reuses the compiled executors.
        check_close(name, api.run(session, feeds=feed_list, fetches=fetch_list), fetches)
        assert api.stats(session)[1:] == (1, 1)
    finally:
        status = lib.TF_NewStatus()
        lib.TF_DeleteSession(session, status)
        lib.TF_DeleteStatus(status)


@pytest.mark.parametrize("name", NAMES)
def test_fixture_through_extend_graph_and_run(api, lib, name):
    ffi = api.ffi
    graph_def, feeds, fetches = recorded(name)
    opts = lib.TF_NewSessionOptions()
    session = api.call(lib.TF_NewDeprecatedSession, opts)
    lib.TF_DeleteSessionOptions(opts)
    status = lib.TF_NewStatus()
    try:
        lib.TF_ExtendGraph(session, graph_def, len(graph_def), status)
        api.check(status)
        keep = [ffi.new("char[]", n.encode()) for n in list(feeds) + list(fetches)]
        names = ffi.new("const char*[]", keep)
        inputs = ffi.new("TF_Tensor*[]", [api.tensor(v) for v in feeds.values()])
        outputs = ffi.new("TF_Tensor*[]", len(fetches))
        lib.TF_Run(
            session,
            ffi.NULL,
            names,
            inputs,
            len(feeds),
            names + len(feeds),
            outputs,
            len(fetches),
            ffi.NULL,
            0,
            ffi.NULL,
            status,
        )
        for i in range(len(feeds)):  # the inputs stay the caller's
            lib.TF_DeleteTensor(inputs[i])
        assert api.code(status) == CODES["OK"], api.message(status)
        check_close(name, [api.take(outputs[i]) for i in range(len(fetches))], fetches)
    finally:
        lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)
