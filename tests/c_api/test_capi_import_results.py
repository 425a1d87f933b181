"""TF_GraphImportGraphDefWithResults and the options it reads: return
operations, default device, uniquified names and prefixes, and the input
mappings an import did not use."""

import numpy as np
import pytest
from capi_helpers import CODES
from test_capi_import import affine_graph_def


@pytest.fixture
def options(lib):
    opts = lib.TF_NewImportGraphDefOptions()
    yield opts
    lib.TF_DeleteImportGraphDefOptions(opts)


def import_with_results(api, graph, graph_def, options):
    """(code, message, results or NULL); the caller deletes the results."""
    data = graph_def.SerializeToString()
    buffer = api.lib.TF_NewBufferFromString(data, len(data))
    status = api.lib.TF_NewStatus()
    results = api.lib.TF_GraphImportGraphDefWithResults(graph, buffer, options, status)
    outcome = api.code(status), api.message(status), results
    api.lib.TF_DeleteStatus(status)
    api.lib.TF_DeleteBuffer(buffer)
    return outcome


def name(api, oper):
    return api.ffi.string(api.lib.TF_OperationName(oper)).decode()


@pytest.mark.covers(
    "TF_ImportGraphDefResultsReturnOutputs",
    "TF_ImportGraphDefResultsReturnOperations",
    "TF_ImportGraphDefOptionsAddReturnOperation",
    "TF_ImportGraphDefOptionsNumReturnOperations",
    "TF_DeleteImportGraphDefResults",
)
def test_TF_GraphImportGraphDefWithResults(api, lib, graph, options):
    ffi = api.ffi
    lib.TF_ImportGraphDefOptionsSetPrefix(options, b"imported")
    lib.TF_ImportGraphDefOptionsAddReturnOutput(options, b"y", 0)
    lib.TF_ImportGraphDefOptionsAddReturnOperation(options, b"two")
    lib.TF_ImportGraphDefOptionsAddReturnOperation(options, b"x")
    assert lib.TF_ImportGraphDefOptionsNumReturnOperations(options) == 2
    code, message, results = import_with_results(api, graph, affine_graph_def(api), options)
    assert code == CODES["OK"], message
    count, outputs = ffi.new("int*"), ffi.new("TF_Output**")
    lib.TF_ImportGraphDefResultsReturnOutputs(results, count, outputs)
    assert count[0] == 1 and name(api, outputs[0][0].oper) == "imported/y"
    opers = ffi.new("TF_Operation***")
    lib.TF_ImportGraphDefResultsReturnOperations(results, count, opers)
    assert [name(api, opers[0][i]) for i in range(count[0])] == ["imported/two", "imported/x"]
    lib.TF_DeleteImportGraphDefResults(results)


def test_TF_GraphImportGraphDefWithResults_unknown_return_operation(api, lib, graph, options):
    lib.TF_ImportGraphDefOptionsAddReturnOperation(options, b"nope")
    code, message, results = import_with_results(api, graph, affine_graph_def(api), options)
    assert code == CODES["INVALID_ARGUMENT"] and "nope" in message
    assert results == api.ffi.NULL and api.operation_names(graph) == []


def test_TF_ImportGraphDefResultsMissingUnusedInputMappings(api, lib, graph, options):
    ffi = api.ffi
    feed = api.placeholder(graph, "feed", shape=[-1, 2])
    lib.TF_ImportGraphDefOptionsSetPrefix(options, b"m")
    lib.TF_ImportGraphDefOptionsAddInputMapping(options, b"x", 0, api.output(feed))  # used
    lib.TF_ImportGraphDefOptionsAddInputMapping(options, b"ghost", 3, api.output(feed))
    lib.TF_ImportGraphDefOptionsAddInputMapping(options, b"y", 0, api.output(feed))  # no reader
    code, message, results = import_with_results(api, graph, affine_graph_def(api), options)
    assert code == CODES["OK"], message
    count, names, indexes = ffi.new("int*"), ffi.new("const char***"), ffi.new("int**")
    lib.TF_ImportGraphDefResultsMissingUnusedInputMappings(results, count, names, indexes)
    missing = [(ffi.string(names[0][i]).decode(), indexes[0][i]) for i in range(count[0])]
    assert missing == [("ghost", 3), ("y", 0)]
    lib.TF_DeleteImportGraphDefResults(results)


def test_TF_ImportGraphDefOptionsSetDefaultDevice(api, lib, graph, options):
    graph_def = affine_graph_def(api)
    graph_def.node[1].device = "/device:CPU:0"  # "two" keeps its own
    lib.TF_ImportGraphDefOptionsSetDefaultDevice(options, b"/job:localhost/device:CPU:0")
    assert api.import_graph_def(graph, graph_def, options) == (CODES["OK"], "")
    devices = {
        n: api.ffi.string(lib.TF_OperationDevice(lib.TF_GraphOperationByName(graph, n.encode())))
        for n in ("x", "two", "y")
    }
    assert devices == {
        "x": b"/job:localhost/device:CPU:0",
        "two": b"/device:CPU:0",
        "y": b"/job:localhost/device:CPU:0",
    }


def test_TF_ImportGraphDefOptionsSetUniquifyNames(api, lib, graph, options, session):
    graph_def = affine_graph_def(api)
    assert api.import_graph_def(graph, graph_def) == (CODES["OK"], "")
    # Again without uniquify: the names clash.
    code, _ = api.import_graph_def(graph, graph_def, options)
    assert code == CODES["ALREADY_EXISTS"]
    lib.TF_ImportGraphDefOptionsSetUniquifyNames(options, 1)
    lib.TF_ImportGraphDefOptionsAddReturnOutput(options, b"y", 0)
    code, message, results = import_with_results(api, graph, graph_def, options)
    assert code == CODES["OK"], message
    assert api.operation_names(graph) == ["x", "two", "y", "x_1", "two_1", "y_1"]
    y_1 = lib.TF_GraphOperationByName(graph, b"y_1")
    inputs = api.ffi.new("TF_Output[]", 2)
    lib.TF_OperationAllInputs(y_1, inputs, 2)
    assert [name(api, inputs[i].oper) for i in range(2)] == ["x_1", "two_1"]
    count, outputs = api.ffi.new("int*"), api.ffi.new("TF_Output**")
    lib.TF_ImportGraphDefResultsReturnOutputs(results, count, outputs)
    assert name(api, outputs[0][0].oper) == "y_1"
    lib.TF_DeleteImportGraphDefResults(results)
    # And the renamed copy runs.
    x_1 = lib.TF_GraphOperationByName(graph, b"x_1")
    (result,) = api.run(session, [((x_1, 0), np.ones((1, 2), np.float32))], [(y_1, 0)])
    assert result.tolist() == [[2.0, 2.0]]


def test_TF_ImportGraphDefOptionsSetUniquifyPrefix(api, lib, graph, options):
    graph_def = affine_graph_def(api)
    lib.TF_ImportGraphDefOptionsSetPrefix(options, b"p")
    lib.TF_ImportGraphDefOptionsSetUniquifyPrefix(options, 1)
    for _ in range(2):
        assert api.import_graph_def(graph, graph_def, options) == (CODES["OK"], "")
    api.op(graph, "NoOp", "p_2")
    assert api.import_graph_def(graph, graph_def, options) == (CODES["OK"], "")
    assert api.operation_names(graph)[3:] == ["p_1/x", "p_1/two", "p_1/y", "p_2", "p_3/x"] + [
        "p_3/two",
        "p_3/y",
    ]


def test_TF_GraphImportGraphDefWithResultsNoSerialization_rejects_null(api, lib, graph, status):
    buffer = lib.TF_NewBuffer()  # data NULL: no GraphDef object
    results = lib.TF_GraphImportGraphDefWithResultsNoSerialization(
        graph, buffer, api.ffi.NULL, status
    )
    assert results == api.ffi.NULL and api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteBuffer(buffer)
