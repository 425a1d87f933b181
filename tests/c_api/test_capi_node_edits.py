"""The C API functions TensorFlow's Python binding uses to edit operations
already in a graph and to carry what a resource handle holds: TF_SetAttr,
TF_ClearAttr, TF_SetFullType, TF_SetRequireShapeInferenceFns,
TF_GetHandleShapeAndType, TF_SetHandleShapeAndType, TF_AddWhileInputHack;
and TF_DeviceListIncarnation."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT32, CApiError
from test_capi_function_build import make_function

DT_FLOAT, DT_INT32, DT_RESOURCE = 1, 3, 20


def set_attr(api, graph, op, name, attr_value):
    data = attr_value.SerializeToString()
    buffer = api.lib.TF_NewBufferFromString(data, len(data))
    try:
        api.call(api.lib.TF_SetAttr, graph, op, name.encode(), buffer)
    finally:
        api.lib.TF_DeleteBuffer(buffer)


def node_def(api, graph, name):
    return next(n for n in api.graph_def(graph).node if n.name == name)


def error_code(call):
    with pytest.raises(CApiError) as raised:
        call()
    return raised.value.code


def test_TF_SetAttr(api, lib, graph):
    x = api.placeholder(graph, "x")
    y = api.op(graph, "Identity", "y", inputs=[(x, 0)])
    # A private attr, as TensorFlow's Python sets "_class" or XLA hints.
    set_attr(api, graph, y, "_hint", api.pb.AttrValue(s=b"fast"))
    assert node_def(api, graph, "y").attr["_hint"].s == b"fast"
    # Changing an attr the op reads: a Placeholder's shape.
    shape = api.pb.AttrValue()
    shape.shape.dim.add().size = 3
    set_attr(api, graph, x, "shape", shape)
    assert [d.size for d in node_def(api, graph, "x").attr["shape"].shape.dim] == [3]


def test_TF_SetAttr_refuses_what_the_op_or_the_edges_do_not_accept(api, lib, graph):
    x = api.placeholder(graph, "x")
    y = api.op(graph, "Identity", "y", inputs=[(x, 0)])
    before = node_def(api, graph, "y")
    # T must be a type: an int is rejected by the OpDef.
    assert (
        error_code(lambda: set_attr(api, graph, y, "T", api.pb.AttrValue(i=3)))
        == CODES["INVALID_ARGUMENT"]
    )
    # int32 would no longer accept the float placeholder wired into y.
    with pytest.raises(CApiError) as raised:
        set_attr(api, graph, y, "T", api.pb.AttrValue(type=DT_INT32))
    assert raised.value.code == CODES["INVALID_ARGUMENT"] and "'y'" in raised.value.message
    assert node_def(api, graph, "y") == before
    assert lib.TF_OperationOutputType(api.output(y)) == TF_FLOAT
    # Bytes that are no AttrValue.
    buffer = lib.TF_NewBufferFromString(b"\xff\xff\xff", 3)
    try:
        assert (
            error_code(lambda: api.call(lib.TF_SetAttr, graph, y, b"T", buffer))
            == CODES["INVALID_ARGUMENT"]
        )
    finally:
        lib.TF_DeleteBuffer(buffer)


def test_TF_SetAttr_changes_types_of_an_unwired_op(api, lib, graph, session):
    c = api.const(graph, "c", np.int32(7))
    cast = api.op(
        graph,
        "Cast",
        "cast",
        inputs=[(c, 0)],
        attrs={"SrcT": ("type", TF_INT32), "DstT": ("type", TF_FLOAT)},
    )
    assert lib.TF_OperationOutputType(api.output(cast)) == TF_FLOAT
    set_attr(api, graph, cast, "DstT", api.pb.AttrValue(type=DT_INT32))
    assert lib.TF_OperationOutputType(api.output(cast)) == TF_INT32
    assert api.run(session, fetches=[(cast, 0)])[0] == 7


def test_TF_ClearAttr(api, lib, graph):
    x = api.placeholder(graph, "x")
    set_attr(api, graph, x, "_hint", api.pb.AttrValue(s=b"a"))
    api.call(lib.TF_ClearAttr, graph, x, b"_hint")
    assert "_hint" not in node_def(api, graph, "x").attr
    api.call(lib.TF_ClearAttr, graph, x, b"_never_set")  # nothing to clear
    # An attr with a default goes back to it.
    y = api.op(graph, "MatMul", "y", inputs=[(x, 0), (x, 0)], attrs={"transpose_a": ("bool", True)})
    api.call(lib.TF_ClearAttr, graph, y, b"transpose_a")
    assert node_def(api, graph, "y").attr["transpose_a"].b is False
    # One without a default cannot go.
    assert (
        error_code(lambda: api.call(lib.TF_ClearAttr, graph, y, b"T")) == CODES["INVALID_ARGUMENT"]
    )
    assert node_def(api, graph, "y").attr["T"].type == DT_FLOAT


def test_TF_SetFullType(api, lib, graph):
    x = api.placeholder(graph, "x")
    full_type = api.pb.FullTypeDef(type_id=3)  # TFT_PRODUCT[TFT_TENSOR[TFT_FLOAT]]
    tensor = full_type.args.add(type_id=1000)
    tensor.args.add(type_id=210)
    data = full_type.SerializeToString()
    buffer = lib.TF_NewBufferFromString(data, len(data))
    lib.TF_SetFullType(graph, x, buffer)
    lib.TF_DeleteBuffer(buffer)
    assert node_def(api, graph, "x").experimental_type == full_type
    # Bytes that do not parse change nothing.
    buffer = lib.TF_NewBufferFromString(b"\xff\xff", 2)
    lib.TF_SetFullType(graph, x, buffer)
    lib.TF_DeleteBuffer(buffer)
    assert node_def(api, graph, "x").experimental_type == full_type


def test_TF_SetRequireShapeInferenceFns(api, lib, graph):
    # Every registered op has a shape function, so either setting accepts them.
    lib.TF_SetRequireShapeInferenceFns(graph, True)
    x = api.placeholder(graph, "x", shape=[2])
    lib.TF_SetRequireShapeInferenceFns(graph, False)
    api.op(graph, "Identity", "y", inputs=[(x, 0)])
    assert len(api.operation_names(graph)) == 2


def variable(api, graph, name, shape):
    shape_attr = ("shape", shape)
    return api.op(
        graph,
        "VarHandleOp",
        name,
        attrs={
            "dtype": ("type", TF_FLOAT),
            "shape": shape_attr,
            "shared_name": ("string", name.encode()),
        },
    )


def handle_data(api, graph, oper, index=0):
    buffer = api.lib.TF_GetHandleShapeAndType(graph, api.output(oper, index))
    try:
        raw = api.ffi.buffer(buffer.data, buffer.length)[:] if buffer.length else b""
    finally:
        api.lib.TF_DeleteBuffer(buffer)
    return raw, api.pb.CppShapeInferenceResult.HandleData.FromString(raw)


def test_TF_GetHandleShapeAndType(api, lib, graph, status):
    v = variable(api, graph, "v", [2, 3])
    _, data = handle_data(api, graph, v)
    assert data.is_set and len(data.shape_and_type) == 1
    assert data.shape_and_type[0].dtype == DT_FLOAT
    assert [d.size for d in data.shape_and_type[0].shape.dim] == [2, 3]
    # Carried through an Identity of the handle; the read takes the shape.
    ident = api.op(graph, "Identity", "ident", inputs=[(v, 0)], attrs={"T": ("type", DT_RESOURCE)})
    assert handle_data(api, graph, ident)[1] == data
    read = api.op(
        graph, "ReadVariableOp", "read", inputs=[(ident, 0)], attrs={"dtype": ("type", TF_FLOAT)}
    )
    assert lib.TF_GraphGetTensorNumDims(graph, api.output(read), status) == 2
    # Nothing known: an empty buffer.
    x = api.placeholder(graph, "x")
    assert handle_data(api, graph, x)[0] == b""
    # Reading the variable as another dtype is refused at build time.
    with pytest.raises(CApiError) as raised:
        api.op(graph, "ReadVariableOp", "bad", inputs=[(v, 0)], attrs={"dtype": ("type", TF_INT32)})
    assert raised.value.code == CODES["INVALID_ARGUMENT"] and "'bad'" in raised.value.message


def test_TF_SetHandleShapeAndType(api, lib, graph):
    handle = api.placeholder(graph, "handle", dtype=DT_RESOURCE)
    assert handle_data(api, graph, handle)[0] == b""
    data = api.pb.CppShapeInferenceResult.HandleData(is_set=True)
    entry = data.shape_and_type.add(dtype=DT_FLOAT)
    entry.shape.dim.add().size = 5
    raw = data.SerializeToString()
    api.call(lib.TF_SetHandleShapeAndType, graph, api.output(handle), raw, len(raw))
    assert handle_data(api, graph, handle)[1] == data
    read = api.op(
        graph, "ReadVariableOp", "read", inputs=[(handle, 0)], attrs={"dtype": ("type", TF_FLOAT)}
    )
    dims = api.ffi.new("int64_t[]", 1)
    api.call(lib.TF_GraphGetTensorShape, graph, api.output(read), dims, 1)
    assert dims[0] == 5
    # Bad bytes, a bad shape, a bad output index.
    assert (
        error_code(
            lambda: api.call(
                lib.TF_SetHandleShapeAndType, graph, api.output(handle), b"\xff\xff", 2
            )
        )
        == CODES["INVALID_ARGUMENT"]
    )
    entry.shape.dim[0].size = -7
    raw = data.SerializeToString()
    assert (
        error_code(
            lambda: api.call(lib.TF_SetHandleShapeAndType, graph, api.output(handle), raw, len(raw))
        )
        == CODES["INVALID_ARGUMENT"]
    )
    assert (
        error_code(
            lambda: api.call(
                lib.TF_SetHandleShapeAndType, graph, api.output(handle, 4), raw, len(raw)
            )
        )
        == CODES["OUT_OF_RANGE"]
    )
    assert handle_data(api, graph, handle, 4)[0] == b""


def loop_functions(api, lib, graph, name, extra):
    """cond(i, x, ...): i < 3; body(i, x, ...): (i + 1, x * 2, then y + x for
    the extra y when `extra`), copied into `graph`."""
    made = []
    for role in ("cond", "body"):
        g = lib.TF_NewGraph()
        i = api.placeholder(g, "i", dtype=TF_INT32)
        x = api.placeholder(g, "x")
        inputs = [(i, 0), (x, 0)]
        y = api.placeholder(g, "y") if extra else None
        if y is not None:
            inputs.append((y, 0))
        if role == "cond":
            outputs = [(api.binary(g, "Less", "less", i, api.const(g, "three", np.int32(3))), 0)]
        else:
            outputs = [
                (api.binary(g, "AddV2", "next_i", i, api.const(g, "one", np.int32(1))), 0),
                (api.binary(g, "Mul", "next_x", x, api.const(g, "two", np.float32(2))), 0),
            ]
            if y is not None:
                outputs.append((api.binary(g, "AddV2", "next_y", y, x), 0))
        func = make_function(api, g, f"{name}_{role}", inputs=inputs, outputs=outputs)
        api.call(lib.TF_GraphCopyFunction, graph, func, api.ffi.NULL)
        made.append(func)
        lib.TF_DeleteGraph(g)
    for func in made:
        lib.TF_DeleteFunction(func)
    return f"{name}_cond", f"{name}_body"


def test_TF_AddWhileInputHack(api, lib, graph):
    cond, body = loop_functions(api, lib, graph, "two", extra=False)
    i = api.const(graph, "i0", np.int32(0))
    x = api.const(graph, "x0", np.float32(1.5))
    y = api.const(graph, "y0", np.float32(10))
    types = api.pb.AttrValue()
    types.list.type.extend([DT_INT32, DT_FLOAT])
    desc = lib.TF_NewOperation(graph, b"While", b"loop")
    lib.TF_AddInputList(desc, api.outputs([(i, 0), (x, 0)]), 2)
    for attr_name, value in (
        ("T", types),
        ("cond", api.pb.AttrValue()),
        ("body", api.pb.AttrValue()),
    ):
        if attr_name != "T":
            value.func.name = cond if attr_name == "cond" else body
        data = value.SerializeToString()
        api.call(lib.TF_SetAttrValueProto, desc, attr_name.encode(), data, len(data))
    loop = api.call(lib.TF_FinishOperation, desc)

    # As TensorFlow's Python does for a gradient: grow T, swap in functions
    # that take the new loop variable, then wire it.
    cond3, body3 = loop_functions(api, lib, graph, "three", extra=True)
    types.list.type.append(DT_FLOAT)
    set_attr(api, graph, loop, "T", types)
    set_attr(api, graph, loop, "cond", api.pb.AttrValue(func={"name": cond3}))
    set_attr(api, graph, loop, "body", api.pb.AttrValue(func={"name": body3}))
    assert lib.TF_OperationNumInputs(loop) == 3 and lib.TF_OperationNumOutputs(loop) == 3
    api.call(lib.TF_AddWhileInputHack, graph, api.output(y), loop)
    assert list(node_def(api, graph, "loop").input) == ["i0", "x0", "y0"]

    session = api.new_session(graph)
    try:
        i_out, x_out, y_out = api.run(session, fetches=[(loop, 0), (loop, 1), (loop, 2)])
    finally:
        api.call(lib.TF_DeleteSession, session)
    assert i_out == 3 and x_out == np.float32(12)
    assert y_out == np.float32(10 + 1.5 + 3 + 6)

    # No free input left, and not a While.
    z = api.const(graph, "z", np.float32(0))
    assert (
        error_code(lambda: api.call(lib.TF_AddWhileInputHack, graph, api.output(z), loop))
        == (CODES["INVALID_ARGUMENT"])
    )
    assert (
        error_code(lambda: api.call(lib.TF_AddWhileInputHack, graph, api.output(z), x))
        == (CODES["INTERNAL"])
    )


def test_TF_DeviceListIncarnation(api, lib, graph, session):
    devices = api.call(lib.TF_SessionListDevices, session)
    try:
        count = lib.TF_DeviceListCount(devices)
        incarnations = [api.call(lib.TF_DeviceListIncarnation, devices, i) for i in range(count)]
        assert count >= 1 and all(value != 0 for value in incarnations)
        again = api.call(lib.TF_DeviceListIncarnation, devices, 0)
        assert again == incarnations[0]  # fixed for the device's life
        assert (
            error_code(lambda: api.call(lib.TF_DeviceListIncarnation, devices, count))
            == (CODES["INVALID_ARGUMENT"])
        )
    finally:
        lib.TF_DeleteDeviceList(devices)
