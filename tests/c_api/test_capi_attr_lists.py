"""List attr getters, attr names, input/output list lengths and
TF_OperationAllInputs, read back from operations built through the C API."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT32, TF_INT64


@pytest.fixture
def listy(api, lib, graph, status):
    """A NoOp carrying one private attr of each list kind, plus empty lists."""
    ffi = api.ffi
    desc = lib.TF_NewOperation(graph, b"NoOp", b"listy")
    words = [ffi.new("char[]", b"ab"), ffi.new("char[]", b""), ffi.new("char[]", b"cde")]
    lib.TF_SetAttrStringList(
        desc, b"_s", ffi.new("const void*[]", words), ffi.new("size_t[]", [2, 0, 3]), 3
    )
    lib.TF_SetAttrIntList(desc, b"_i", ffi.new("int64_t[]", [7, -1, 2**40]), 3)
    lib.TF_SetAttrFloatList(desc, b"_f", ffi.new("float[]", [0.5, -2.0]), 2)
    lib.TF_SetAttrBoolList(desc, b"_b", ffi.new("unsigned char[]", [1, 0, 1]), 3)
    lib.TF_SetAttrTypeList(desc, b"_t", ffi.new("TF_DataType[]", [TF_FLOAT, TF_INT64]), 2)
    dims = [ffi.new("int64_t[]", [2, -1]), ffi.NULL, ffi.new("int64_t[]", [5])]
    lib.TF_SetAttrShapeList(
        desc, b"_shapes", ffi.new("const int64_t*[]", dims), ffi.new("int[]", [2, -1, 1]), 3
    )
    tensors = [api.tensor(np.array([1, 2], np.int32)), api.tensor(np.float32(3.5))]
    lib.TF_SetAttrTensorList(desc, b"_tensors", ffi.new("TF_Tensor*[]", tensors), 2, status)
    api.check(status)
    for t in tensors:
        lib.TF_DeleteTensor(t)
    lib.TF_SetAttrIntList(desc, b"_empty", ffi.NULL, 0)
    lib.TF_SetAttrInt(desc, b"_scalar", 3)
    return api.call(lib.TF_FinishOperation, desc)


def test_TF_OperationGetAttrStringList(api, lib, listy, status):
    ffi = api.ffi
    values, lengths = ffi.new("void*[]", 3), ffi.new("size_t[]", 3)
    storage = ffi.new("char[]", 5)
    lib.TF_OperationGetAttrStringList(listy, b"_s", values, lengths, 3, storage, 5, status)
    api.check(status)
    got = [ffi.buffer(ffi.cast("char*", values[i]), lengths[i])[:] for i in range(3)]
    assert got == [b"ab", b"", b"cde"]
    # Too little storage for what was asked: TensorFlow's error.
    lib.TF_OperationGetAttrStringList(listy, b"_s", values, lengths, 3, storage, 4, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert "Not enough storage" in api.message(status)
    # max_values smaller than the list: only that many.
    lib.TF_OperationGetAttrStringList(listy, b"_s", values, lengths, 1, storage, 2, status)
    api.check(status)
    assert lengths[0] == 2


def test_TF_OperationGetAttrIntList(api, lib, listy, status):
    values = api.ffi.new("int64_t[]", [0, 0, 0, 99])
    lib.TF_OperationGetAttrIntList(listy, b"_i", values, 4, status)
    api.check(status)
    assert list(values) == [7, -1, 2**40, 99]
    lib.TF_OperationGetAttrIntList(listy, b"_f", values, 4, status)  # a float list
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_OperationGetAttrIntList(listy, b"_scalar", values, 4, status)  # not a list
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_OperationGetAttrIntList(listy, b"_empty", values, 4, status)  # empty: any kind
    api.check(status)


def test_TF_OperationGetAttrFloatList(api, lib, listy, status):
    values = api.ffi.new("float[]", 2)
    lib.TF_OperationGetAttrFloatList(listy, b"_f", values, 2, status)
    api.check(status)
    assert list(values) == [0.5, -2.0]


def test_TF_OperationGetAttrBoolList(api, lib, listy, status):
    values = api.ffi.new("unsigned char[]", 3)
    lib.TF_OperationGetAttrBoolList(listy, b"_b", values, 3, status)
    api.check(status)
    assert list(values) == [1, 0, 1]


def test_TF_OperationGetAttrTypeList(api, lib, listy, status):
    values = api.ffi.new("TF_DataType[]", 2)
    lib.TF_OperationGetAttrTypeList(listy, b"_t", values, 2, status)
    api.check(status)
    assert list(values) == [TF_FLOAT, TF_INT64]


def test_TF_OperationGetAttrShapeList(api, lib, listy, status):
    ffi = api.ffi
    metadata = lib.TF_OperationGetAttrMetadata(listy, b"_shapes", status)
    assert (metadata.list_size, metadata.total_size) == (3, 3)
    dims, num_dims = ffi.new("int64_t*[]", 3), ffi.new("int[]", 3)
    storage = ffi.new("int64_t[]", metadata.total_size)
    lib.TF_OperationGetAttrShapeList(listy, b"_shapes", dims, num_dims, 3, storage, 3, status)
    api.check(status)
    assert list(num_dims) == [2, -1, 1]
    assert [dims[0][0], dims[0][1]] == [2, -1] and dims[1] == ffi.NULL and dims[2][0] == 5
    lib.TF_OperationGetAttrShapeList(listy, b"_shapes", dims, num_dims, 3, storage, 2, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]


def test_TF_OperationGetAttrTensorList(api, lib, listy, status):
    values = api.ffi.new("TF_Tensor*[]", 2)
    lib.TF_OperationGetAttrTensorList(listy, b"_tensors", values, 2, status)
    api.check(status)
    assert api.take(values[0]).tolist() == [1, 2]
    assert api.take(values[1]).tolist() == 3.5


def test_TF_OperationGetAttrTensorShapeProtoList(api, lib, pb, listy, status):
    values = api.ffi.new("TF_Buffer*[]", 3)
    lib.TF_OperationGetAttrTensorShapeProtoList(listy, b"_shapes", values, 3, status)
    api.check(status)
    shapes = []
    for i in range(3):
        shape = pb.TensorShapeProto.FromString(api.ffi.buffer(values[i].data, values[i].length)[:])
        shapes.append(None if shape.unknown_rank else [d.size for d in shape.dim])
        lib.TF_DeleteBuffer(values[i])
    assert shapes == [[2, -1], None, [5]]


def test_TF_OperationGetAttrTensorShapeProto(api, lib, pb, graph, status):
    x = api.placeholder(graph, "x", shape=[3, -1])
    buffer = lib.TF_NewBuffer()
    lib.TF_OperationGetAttrTensorShapeProto(x, b"shape", buffer, status)
    api.check(status)
    shape = pb.TensorShapeProto.FromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    assert [d.size for d in shape.dim] == [3, -1]
    lib.TF_DeleteBuffer(buffer)
    buffer = lib.TF_NewBuffer()
    lib.TF_OperationGetAttrTensorShapeProto(x, b"dtype", buffer, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_DeleteBuffer(buffer)


@pytest.mark.covers("TF_OperationGetAttrNameLength", "TF_OperationGetAttrName")
def test_TF_OperationGetNumAttrs(api, lib, graph, status):
    x = api.placeholder(graph, "x", shape=[2])
    count = lib.TF_OperationGetNumAttrs(x)
    names = []
    for i in range(count):
        length = lib.TF_OperationGetAttrNameLength(x, i)
        out = api.ffi.new("char[]", length)
        lib.TF_OperationGetAttrName(x, i, out, status)
        api.check(status)
        names.append(api.ffi.buffer(out, length)[:].decode())
    assert sorted(names) == ["dtype", "shape"] and count == 2
    assert lib.TF_OperationGetAttrNameLength(x, count) == -1
    lib.TF_OperationGetAttrName(x, count, api.ffi.new("char[]", 8), status)
    assert api.code(status) == CODES["OUT_OF_RANGE"]


@pytest.mark.covers("TF_OperationOutputListLength", "TF_OperationAllInputs")
def test_TF_OperationInputListLength(api, lib, graph, status):
    a = api.const(graph, "a", np.array([1, 2], np.int32))
    b = api.const(graph, "b", np.array([3], np.int32))
    axis = api.const(graph, "axis", np.int32(0))
    concat = api.op(graph, "ConcatV2", "concat", inputs=[[(a, 0), (b, 0), (a, 0)], (axis, 0)])
    assert lib.TF_OperationInputListLength(concat, b"values", status) == 3
    api.check(status)
    assert lib.TF_OperationInputListLength(concat, b"axis", status) == 1
    assert lib.TF_OperationInputListLength(concat, b"nope", status) == -1
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    split = api.op(
        graph, "Split", "split", inputs=[(axis, 0), (concat, 0)], attrs={"num_split": ("int", 5)}
    )
    assert lib.TF_OperationOutputListLength(split, b"output", status) == 5
    api.check(status)
    inputs = api.ffi.new("TF_Output[]", 4)
    lib.TF_OperationAllInputs(concat, inputs, 4)
    assert [(inputs[i].oper, inputs[i].index) for i in range(4)] == [
        (a, 0),
        (b, 0),
        (a, 0),
        (axis, 0),
    ]
    assert TF_INT32 == lib.TF_OperationOutputType(api.output(split, 1))
