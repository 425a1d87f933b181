"""TF_GraphGetOpDef, TF_GraphVersions, TF_TryEvaluateConstant,
TF_ExtendSession, TF_ColocateWith, TF_SetAttrPlaceholder,
TF_SetAttrFuncName and the *Locked operation builders."""

import numpy as np
from capi_helpers import CODES, TF_FLOAT, TF_INT64


def buffer_bytes(api, buffer):
    return api.ffi.buffer(buffer.data, buffer.length)[:]


def test_TF_GraphGetOpDef(api, lib, pb, graph, status):
    buffer = lib.TF_NewBuffer()
    lib.TF_GraphGetOpDef(graph, b"MatMul", buffer, status)
    api.check(status)
    op_def = pb.OpDef.FromString(buffer_bytes(api, buffer))
    assert op_def.name == "MatMul"
    assert [a.name for a in op_def.input_arg] == ["a", "b"]
    assert {a.name for a in op_def.attr} >= {"transpose_a", "transpose_b", "T"}
    lib.TF_DeleteBuffer(buffer)
    buffer = lib.TF_NewBuffer()
    lib.TF_GraphGetOpDef(graph, b"NoSuchOp", buffer, status)
    assert api.code(status) == CODES["NOT_FOUND"]
    lib.TF_DeleteBuffer(buffer)


def test_TF_GraphVersions(api, lib, pb, graph, status):
    graph_def = pb.GraphDef()
    graph_def.versions.producer = 27
    graph_def.versions.min_consumer = 12
    assert api.import_graph_def(graph, graph_def)[0] == CODES["OK"]
    buffer = lib.TF_NewBuffer()
    lib.TF_GraphVersions(graph, buffer, status)
    api.check(status)
    versions = pb.VersionDef.FromString(buffer_bytes(api, buffer))
    assert api.graph_def(graph).versions == versions
    lib.TF_DeleteBuffer(buffer)


def test_TF_TryEvaluateConstant(api, lib, graph, status):
    a = api.const(graph, "a", np.array([1.0, 2.0], np.float32))
    b = api.const(graph, "b", np.array([10.0, 20.0], np.float32))
    total = api.binary(graph, "AddV2", "total", a, b)
    result = api.ffi.new("TF_Tensor**")
    assert lib.TF_TryEvaluateConstant(graph, api.output(total), result, status) == 1
    api.check(status)
    assert api.take(result[0]).tolist() == [11.0, 22.0]
    # A placeholder among the ancestors: not constant, and no error.
    x = api.placeholder(graph, "x", shape=[2])
    fed = api.binary(graph, "AddV2", "fed", a, x)
    assert lib.TF_TryEvaluateConstant(graph, api.output(fed), result, status) == 0
    api.check(status)
    assert result[0] == api.ffi.NULL
    # A stateful op (random) is not constant either.
    shape = api.const(graph, "shape", np.array([2], np.int32))
    noise = api.op(
        graph, "RandomUniform", "noise", inputs=[(shape, 0)], attrs={"dtype": ("type", TF_FLOAT)}
    )
    assert lib.TF_TryEvaluateConstant(graph, api.output(noise), result, status) == 0
    # An evaluation that fails reports its error.
    zero = api.const(graph, "zero", np.int32(0))
    one = api.const(graph, "one", np.int32(1))
    bad = api.binary(graph, "FloorDiv", "bad", one, zero)
    assert lib.TF_TryEvaluateConstant(graph, api.output(bad), result, status) == 0
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert "zero" in api.message(status).lower()


def evaluate(api, lib, graph, oper, status):
    result = api.ffi.new("TF_Tensor**")
    done = lib.TF_TryEvaluateConstant(graph, api.output(oper), result, status)
    api.check(status)
    return api.take(result[0]) if done else None


def test_TF_TryEvaluateConstant_folds_shapes_the_graph_knows(api, lib, graph, status):
    x = api.placeholder(graph, "x", shape=[2, 3])
    shape = api.op(graph, "Shape", "shape", inputs=[(x, 0)])
    assert evaluate(api, lib, graph, shape, status).tolist() == [2, 3]
    size = api.op(graph, "Size", "size", inputs=[(x, 0)], attrs={"out_type": ("type", TF_INT64)})
    value = evaluate(api, lib, graph, size, status)
    assert value == 6 and value.dtype == np.int64
    # Computation over a folded shape, as a Reshape's target would be.
    doubled = api.binary(graph, "Mul", "doubled", shape, api.const(graph, "two", np.int32(2)))
    assert evaluate(api, lib, graph, doubled, status).tolist() == [4, 6]
    # A partly known shape still gives its rank, not its shape or size.
    y = api.placeholder(graph, "y", shape=[-1, 3])
    assert evaluate(api, lib, graph, api.op(graph, "Rank", "rank", inputs=[(y, 0)]), status) == 2
    assert (
        evaluate(api, lib, graph, api.op(graph, "Shape", "y_shape", inputs=[(y, 0)]), status)
        is None
    )
    z = api.placeholder(graph, "z")
    assert (
        evaluate(api, lib, graph, api.op(graph, "Rank", "z_rank", inputs=[(z, 0)]), status) is None
    )


def test_TF_ExtendSession(api, lib, graph, session, status):
    api.placeholder(graph, "x")
    lib.TF_ExtendSession(session, status)
    api.check(status)
    lib.TF_ExtendSession(api.ffi.NULL, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def attr_strings(api, oper, name):
    status = api.lib.TF_NewStatus()
    metadata = api.lib.TF_OperationGetAttrMetadata(oper, name, status)
    api.check(status)
    values = api.ffi.new("void*[]", metadata.list_size)
    lengths = api.ffi.new("size_t[]", metadata.list_size)
    storage = api.ffi.new("char[]", max(metadata.total_size, 1))
    api.lib.TF_OperationGetAttrStringList(
        oper, name, values, lengths, metadata.list_size, storage, metadata.total_size, status
    )
    api.check(status)
    api.lib.TF_DeleteStatus(status)
    return [
        api.ffi.buffer(api.ffi.cast("char*", values[i]), lengths[i])[:] for i in range(len(lengths))
    ]


def test_TF_ColocateWith(api, lib, graph, status):
    a = api.placeholder(graph, "a")
    b = api.placeholder(graph, "b")
    desc = lib.TF_NewOperation(graph, b"Identity", b"c")
    lib.TF_AddInput(desc, api.output(a))
    lib.TF_ColocateWith(desc, b)
    lib.TF_ColocateWith(desc, a)
    lib.TF_ColocateWith(desc, b)
    c = api.call(lib.TF_FinishOperation, desc)
    assert attr_strings(api, c, b"_class") == [b"loc:@a", b"loc:@b"]


def test_TF_SetAttrPlaceholder(api, lib, pb, graph, status):
    desc = lib.TF_NewOperation(graph, b"NoOp", b"n")
    lib.TF_SetAttrPlaceholder(desc, b"_p", b"T")
    n = api.call(lib.TF_FinishOperation, desc)
    assert lib.TF_OperationGetAttrMetadata(n, b"_p", status).type == 7  # TF_ATTR_PLACEHOLDER
    buffer = lib.TF_NewBuffer()
    api.call(lib.TF_OperationGetAttrValueProto, n, b"_p", buffer)
    assert pb.AttrValue.FromString(buffer_bytes(api, buffer)).placeholder == "T"
    lib.TF_DeleteBuffer(buffer)


def test_TF_SetAttrFuncName(api, lib, pb, graph):
    desc = lib.TF_NewOperation(graph, b"NoOp", b"n")
    lib.TF_SetAttrFuncName(desc, b"_f", b"my_function_and_more", 11)
    n = api.call(lib.TF_FinishOperation, desc)
    buffer = lib.TF_NewBuffer()
    api.call(lib.TF_OperationGetAttrValueProto, n, b"_f", buffer)
    assert pb.AttrValue.FromString(buffer_bytes(api, buffer)).func.name == "my_function"
    lib.TF_DeleteBuffer(buffer)


def test_TF_NewOperationLocked(api, lib, graph):
    # The caller would hold the graph's lock; from C nobody can, so this
    # checks the pair builds an operation like the unlocked pair.
    desc = lib.TF_NewOperationLocked(graph, b"Placeholder", b"p")
    lib.TF_SetAttrType(desc, b"dtype", TF_FLOAT)
    p = api.call(lib.TF_FinishOperationLocked, desc)
    assert lib.TF_GraphOperationByName(graph, b"p") == p


def test_TF_FinishOperationLocked_reports_errors(api, lib, graph, status):
    desc = lib.TF_NewOperationLocked(graph, b"NoSuchOp", b"q")
    assert lib.TF_FinishOperationLocked(desc, status) == api.ffi.NULL
    assert api.code(status) == CODES["NOT_FOUND"]
