"""Reading a graph: lookup, iteration, operation fields, edges, attributes,
NodeDefs and the shape bookkeeping."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT32, TF_INT64


@pytest.fixture
def small(api, graph):
    """x (placeholder [?,2]) and w (const 2x3) feed product = MatMul(x, w);
    y = Mul(product, product); done = NoOp after y."""
    x = api.placeholder(graph, "x", shape=[-1, 2])
    w = api.const(graph, "w", np.ones((2, 3), np.float32))
    product = api.op(graph, "MatMul", "product", inputs=[(x, 0), (w, 0)], device="/device:CPU:0")
    y = api.binary(graph, "Mul", "y", product, product)
    done = api.op(graph, "NoOp", "done", control=[y])
    return {"x": x, "w": w, "product": product, "y": y, "done": done}


def test_TF_GraphOperationByName(api, lib, graph, small):
    assert lib.TF_GraphOperationByName(graph, b"product") == small["product"]
    assert lib.TF_GraphOperationByName(graph, b"missing") == api.ffi.NULL
    assert lib.TF_GraphOperationByName(graph, b"_SOURCE") == api.ffi.NULL


def test_TF_GraphNextOperation_walks_in_insertion_order(api, lib, graph, small):
    pos = api.ffi.new("size_t*", 0)
    names = []
    while True:
        oper = lib.TF_GraphNextOperation(graph, pos)
        if oper == api.ffi.NULL:
            break
        names.append(api.ffi.string(lib.TF_OperationName(oper)).decode())
    assert names == ["x", "w", "product", "y", "done"]
    assert lib.TF_GraphNextOperation(graph, pos) == api.ffi.NULL


def test_TF_GraphNextOperation_empty_graph(api, lib, graph):
    assert lib.TF_GraphNextOperation(graph, api.ffi.new("size_t*", 0)) == api.ffi.NULL


def test_TF_OperationName(api, lib, small):
    assert api.ffi.string(lib.TF_OperationName(small["y"])) == b"y"


def test_TF_OperationOpType(api, lib, small):
    assert api.ffi.string(lib.TF_OperationOpType(small["product"])) == b"MatMul"


def test_TF_OperationDevice(api, lib, small):
    assert api.ffi.string(lib.TF_OperationDevice(small["product"])) == b"/device:CPU:0"
    assert api.ffi.string(lib.TF_OperationDevice(small["y"])) == b""


def test_TF_OperationNumOutputs(lib, small):
    assert lib.TF_OperationNumOutputs(small["product"]) == 1
    assert lib.TF_OperationNumOutputs(small["done"]) == 0


def test_TF_OperationOutputType(api, lib, small):
    assert lib.TF_OperationOutputType(api.output(small["w"])) == TF_FLOAT
    assert lib.TF_OperationOutputType(api.output(small["w"], 1)) == 0
    assert lib.TF_OperationOutputType(api.output(small["w"], -1)) == 0


def test_TF_OperationNumInputs(lib, small):
    assert lib.TF_OperationNumInputs(small["product"]) == 2
    assert lib.TF_OperationNumInputs(small["x"]) == 0


def test_TF_OperationInputType(lib, small):
    assert lib.TF_OperationInputType([small["y"], 1]) == TF_FLOAT
    assert lib.TF_OperationInputType([small["y"], 2]) == 0


def test_TF_OperationInput(api, lib, small):
    source = lib.TF_OperationInput([small["product"], 1])
    assert source.oper == small["w"] and source.index == 0
    missing = lib.TF_OperationInput([small["product"], 5])
    assert missing.oper == api.ffi.NULL and missing.index == -1


def test_TF_OperationOutputNumConsumers(api, lib, small):
    assert lib.TF_OperationOutputNumConsumers(api.output(small["product"])) == 2
    assert lib.TF_OperationOutputNumConsumers(api.output(small["y"])) == 0


def test_TF_OperationOutputConsumers_reports_total_and_fills_up_to_max(api, lib, small):
    consumers = api.ffi.new("TF_Input[]", 1)
    total = lib.TF_OperationOutputConsumers(api.output(small["product"]), consumers, 1)
    assert total == 2
    assert consumers[0].oper == small["y"] and consumers[0].index in (0, 1)
    both = api.ffi.new("TF_Input[]", 4)
    assert lib.TF_OperationOutputConsumers(api.output(small["product"]), both, 4) == 2
    assert sorted(both[i].index for i in range(2)) == [0, 1]


def test_TF_OperationNumControlInputs(lib, small):
    assert lib.TF_OperationNumControlInputs(small["done"]) == 1
    assert lib.TF_OperationNumControlInputs(small["x"]) == 0  # SOURCE is not counted


def test_TF_OperationGetControlInputs(api, lib, small):
    found = api.ffi.new("TF_Operation*[]", 2)
    assert lib.TF_OperationGetControlInputs(small["done"], found, 2) == 1
    assert found[0] == small["y"]
    assert lib.TF_OperationGetControlInputs(small["done"], api.ffi.NULL, 0) == 1


def test_TF_OperationNumControlOutputs(lib, small):
    assert lib.TF_OperationNumControlOutputs(small["y"]) == 1
    assert lib.TF_OperationNumControlOutputs(small["done"]) == 0  # SINK is not counted


def test_TF_OperationGetControlOutputs(api, lib, small):
    found = api.ffi.new("TF_Operation*[]", 1)
    assert lib.TF_OperationGetControlOutputs(small["y"], found, 1) == 1
    assert found[0] == small["done"]


def test_TF_OperationGetAttrMetadata(api, lib, graph, small, status):
    meta = lib.TF_OperationGetAttrMetadata(small["x"], b"shape", status)
    api.check(status)
    assert (meta.is_list, meta.list_size, meta.type, meta.total_size) == (0, -1, 5, 2)
    meta = lib.TF_OperationGetAttrMetadata(small["product"], b"transpose_a", status)
    assert (meta.type, meta.total_size) == (3, -1)
    keep = [api.ffi.new("char[]", b"ab"), api.ffi.new("char[]", b"c")]
    values = api.ffi.new("void*[]", keep)
    desc = lib.TF_NewOperation(graph, b"NoOp", b"strings")
    lib.TF_SetAttrStringList(desc, b"_s", values, api.ffi.new("size_t[]", [2, 1]), 2)
    lib.TF_SetAttrIntList(desc, b"_empty", api.ffi.NULL, 0)
    holder = api.call(lib.TF_FinishOperation, desc)
    meta = lib.TF_OperationGetAttrMetadata(holder, b"_s", status)
    assert (meta.is_list, meta.list_size, meta.type, meta.total_size) == (1, 2, 0, 3)
    meta = lib.TF_OperationGetAttrMetadata(holder, b"_empty", status)
    assert (meta.is_list, meta.list_size) == (1, 0)


def test_TF_OperationGetAttrMetadata_missing_attr(api, lib, small, status):
    meta = lib.TF_OperationGetAttrMetadata(small["x"], b"nope", status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert "nope" in api.message(status)
    assert (meta.is_list, meta.list_size, meta.total_size) == (0, 0, 0)


def test_TF_OperationGetAttrString(api, lib, graph, status):
    desc = lib.TF_NewOperation(graph, b"NoOp", b"n")
    lib.TF_SetAttrString(desc, b"_note", b"hello", 5)
    oper = api.call(lib.TF_FinishOperation, desc)
    out = api.ffi.new("char[]", 8)
    lib.TF_OperationGetAttrString(oper, b"_note", out, 8, status)
    api.check(status)
    assert api.ffi.buffer(out, 5)[:] == b"hello"
    short = api.ffi.new("char[]", b"....")
    lib.TF_OperationGetAttrString(oper, b"_note", short, 2, status)
    assert api.ffi.buffer(short, 4)[:] == b"he.."
    lib.TF_OperationGetAttrString(oper, b"missing", out, 8, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_OperationGetAttrInt(api, lib, graph, status):
    xs = [api.placeholder(graph, f"x{i}") for i in range(2)]
    total = api.op(graph, "AddN", "total", inputs=[[(x, 0) for x in xs]])
    value = api.ffi.new("int64_t*", 99)
    lib.TF_OperationGetAttrInt(total, b"N", value, status)
    api.check(status)
    assert value[0] == 2
    lib.TF_OperationGetAttrInt(total, b"T", value, status)  # a type, not an int
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert value[0] == 2


def test_TF_OperationGetAttrFloat(api, lib, graph, status):
    desc = lib.TF_NewOperation(graph, b"NoOp", b"n")
    lib.TF_SetAttrFloat(desc, b"_scale", 0.25)
    oper = api.call(lib.TF_FinishOperation, desc)
    value = api.ffi.new("float*")
    lib.TF_OperationGetAttrFloat(oper, b"_scale", value, status)
    api.check(status)
    assert value[0] == 0.25
    lib.TF_OperationGetAttrFloat(oper, b"_missing", value, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_OperationGetAttrBool(api, lib, small, status):
    value = api.ffi.new("unsigned char*", 7)
    lib.TF_OperationGetAttrBool(small["product"], b"transpose_b", value, status)
    api.check(status)
    assert value[0] == 0
    lib.TF_OperationGetAttrBool(small["product"], b"T", value, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_OperationGetAttrType(api, lib, graph, status):
    x = api.placeholder(graph, "x", TF_INT64)
    value = api.ffi.new("TF_DataType*")
    lib.TF_OperationGetAttrType(x, b"dtype", value, status)
    api.check(status)
    assert value[0] == TF_INT64
    lib.TF_OperationGetAttrType(x, b"shape", value, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_OperationGetAttrShape(api, lib, small, status):
    dims = api.ffi.new("int64_t[]", 2)
    lib.TF_OperationGetAttrShape(small["x"], b"shape", dims, 2, status)
    api.check(status)
    assert list(dims) == [-1, 2]


def test_TF_OperationGetAttrShape_copies_the_dims_that_fit(api, lib, small, status):
    # As TensorFlow: min(num_dims, rank) dims, and OK (the rank comes from
    # TF_OperationGetAttrMetadata); this used to be INVALID_ARGUMENT.
    dims = api.ffi.new("int64_t[]", [7, 7, 7])
    lib.TF_OperationGetAttrShape(small["x"], b"shape", dims, 3, status)
    api.check(status)
    assert list(dims) == [-1, 2, 7]
    dims = api.ffi.new("int64_t[]", [7, 7])
    lib.TF_OperationGetAttrShape(small["x"], b"shape", dims, 1, status)
    api.check(status)
    assert list(dims) == [-1, 7]


def test_TF_OperationGetAttrTensor(api, lib, small, status):
    value = api.ffi.new("TF_Tensor**")
    lib.TF_OperationGetAttrTensor(small["w"], b"value", value, status)
    api.check(status)
    assert api.take(value[0]).tolist() == [[1, 1, 1], [1, 1, 1]]
    value[0] = api.ffi.NULL
    lib.TF_OperationGetAttrTensor(small["w"], b"dtype", value, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert value[0] == api.ffi.NULL


def test_TF_OperationGetAttrValueProto(api, lib, small, status):
    buffer = lib.TF_NewBuffer()
    lib.TF_OperationGetAttrValueProto(small["x"], b"dtype", buffer, status)
    api.check(status)
    value = api.pb.AttrValue()
    value.ParseFromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    assert value.type == TF_FLOAT
    lib.TF_OperationGetAttrValueProto(small["x"], b"dtype", buffer, status)  # not empty
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteBuffer(buffer)
    empty = lib.TF_NewBuffer()
    lib.TF_OperationGetAttrValueProto(small["x"], b"missing", empty, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteBuffer(empty)


def test_TF_OperationToNodeDef(api, lib, small, status):
    buffer = lib.TF_NewBuffer()
    lib.TF_OperationToNodeDef(small["product"], buffer, status)
    api.check(status)
    node = api.pb.NodeDef()
    node.ParseFromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    lib.TF_DeleteBuffer(buffer)
    assert (node.name, node.op, list(node.input)) == ("product", "MatMul", ["x", "w"])
    assert node.device == "/device:CPU:0"
    assert node.attr["transpose_a"].b is False  # defaults are written out
    buffer = lib.TF_NewBuffer()
    lib.TF_OperationToNodeDef(small["done"], buffer, status)
    node.ParseFromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    assert list(node.input) == ["^y"]
    lib.TF_OperationToNodeDef(small["done"], buffer, status)  # not empty
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteBuffer(buffer)


def test_TF_GraphGetTensorNumDims(api, lib, graph, small, status):
    assert lib.TF_GraphGetTensorNumDims(graph, api.output(small["y"]), status) == 2
    api.check(status)
    assert lib.TF_GraphGetTensorNumDims(graph, api.output(small["y"], 1), status) == -1
    assert api.code(status) == CODES["OUT_OF_RANGE"]


def test_TF_GraphGetTensorShape(api, lib, graph, small, status):
    dims = api.ffi.new("int64_t[]", [7, 7])
    lib.TF_GraphGetTensorShape(graph, api.output(small["y"]), dims, 2, status)
    api.check(status)
    assert list(dims) == [-1, 3]  # MatMul of [?,2] x [2,3], then Mul
    lib.TF_GraphGetTensorShape(graph, api.output(small["y"]), dims, 1, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_GraphGetTensorShape_unknown_rank(api, lib, graph, status):
    x = api.op(graph, "Placeholder", "x", attrs={"dtype": ("type", TF_INT32)})
    lib.TF_GraphGetTensorShape(graph, api.output(x), api.ffi.NULL, -1, status)
    api.check(status)
    lib.TF_GraphGetTensorShape(graph, api.output(x), api.ffi.new("int64_t[]", 1), 1, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_GraphSetTensorShape_narrows_and_flows_to_new_operations(api, lib, graph, status):
    x = api.placeholder(graph, "x", shape=[-1, -1])
    lib.TF_GraphSetTensorShape(graph, api.output(x), api.ffi.new("int64_t[]", [5, -1]), 2, status)
    api.check(status)
    y = api.op(graph, "Identity", "y", inputs=[(x, 0)])
    dims = api.ffi.new("int64_t[]", 2)
    api.call(lib.TF_GraphGetTensorShape, graph, api.output(y), dims, 2)
    assert list(dims) == [5, -1]


def test_TF_GraphSetTensorShape_contradiction_changes_nothing(api, lib, graph, status):
    x = api.placeholder(graph, "x", shape=[2, 3])
    lib.TF_GraphSetTensorShape(graph, api.output(x), api.ffi.new("int64_t[]", [4, 3]), 2, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_GraphSetTensorShape(graph, api.output(x), api.ffi.new("int64_t[]", [1]), 1, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    dims = api.ffi.new("int64_t[]", 2)
    api.call(lib.TF_GraphGetTensorShape, graph, api.output(x), dims, 2)
    assert list(dims) == [2, 3]
    lib.TF_GraphSetTensorShape(graph, api.output(x, 4), api.ffi.NULL, -1, status)
    assert api.code(status) == CODES["OUT_OF_RANGE"]


def test_TF_NewGraph_is_empty(api, lib):
    graph = lib.TF_NewGraph()
    assert graph != api.ffi.NULL
    assert lib.TF_GraphNextOperation(graph, api.ffi.new("size_t*", 0)) == api.ffi.NULL
    assert api.graph_def(graph).node == []
    lib.TF_DeleteGraph(graph)


def test_TF_DeleteGraph_accepts_null_and_frees_operations(api, lib):
    lib.TF_DeleteGraph(api.ffi.NULL)
    graph = lib.TF_NewGraph()
    api.const(graph, "c", np.zeros((4, 4), np.float32))
    lib.TF_DeleteGraph(graph)  # valgrind runs of tests/c check that nothing leaks
