"""TF_Function through the C API: made from a graph's operations with
TF_GraphToFunction(WithControlOutputs), written and read as FunctionDef bytes,
given attrs, copied into a graph (with a gradient) and called there by name or
through PartitionedCall in a session; every error TensorFlow reports comes
back as INVALID_ARGUMENT (or OUT_OF_RANGE for a missing output) without a
crash."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, CApiError


def function_def_class(api):
    return type(api.pb.GraphDef().library.function.add())


def make_function(api, body, name, opers=None, inputs=(), outputs=(), **options):
    """TF_GraphToFunction; `opers` None means every operation (-1)."""
    ffi, lib = api.ffi, api.lib
    output_names = options.get("output_names")
    names = [ffi.new("char[]", n.encode()) for n in output_names or []]
    return api.call(
        lib.TF_GraphToFunction,
        body,
        name.encode(),
        options.get("append_hash", 0),
        -1 if opers is None else len(opers),
        ffi.new("TF_Operation*[]", opers) if opers else ffi.NULL,
        len(inputs),
        api.outputs(inputs) if inputs else ffi.NULL,
        len(outputs),
        api.outputs(outputs) if outputs else ffi.NULL,
        ffi.new("char*[]", names) if output_names is not None else ffi.NULL,
        ffi.NULL,
        options["description"].encode() if "description" in options else ffi.NULL,
    )


def to_function_def(api, func):
    buffer = api.lib.TF_NewBuffer()
    try:
        api.call(api.lib.TF_FunctionToFunctionDef, func, buffer)
        return function_def_class(api).FromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    finally:
        api.lib.TF_DeleteBuffer(buffer)


def import_function(api, data):
    return api.call(api.lib.TF_FunctionImportFunctionDef, data, len(data))


@pytest.fixture
def body(api, lib):
    """A graph computing y = x * 3 + 1 for a float x: (graph, x, mul, y)."""
    g = lib.TF_NewGraph()
    x = api.placeholder(g, "X")
    three = api.const(g, "three", np.float32(3))
    one = api.const(g, "one", np.float32(1))
    mul = api.binary(g, "Mul", "mul", x, three)
    y = api.binary(g, "AddV2", "y", mul, one)
    yield g, x, mul, y
    lib.TF_DeleteGraph(g)


@pytest.fixture
def times_three_plus_one(api, body):
    g, x, _, y = body
    func = make_function(api, g, "times_three_plus_one", inputs=[(x, 0)], outputs=[(y, 0)])
    yield func
    api.lib.TF_DeleteFunction(func)


def run_one(api, graph, fetch, feeds=()):
    session = api.new_session(graph)
    try:
        return api.run(session, feeds=feeds, fetches=[fetch])[0]
    finally:
        status = api.lib.TF_NewStatus()
        api.lib.TF_DeleteSession(session, status)
        api.lib.TF_DeleteStatus(status)


@pytest.mark.covers("TF_FunctionName", "TF_FunctionToFunctionDef", "TF_DeleteFunction")
def test_TF_GraphToFunction_writes_the_body_as_TensorFlow_does(api, times_three_plus_one):
    assert api.ffi.string(api.lib.TF_FunctionName(times_three_plus_one)) == b"times_three_plus_one"
    fdef = to_function_def(api, times_three_plus_one)
    assert [(a.name, a.type) for a in fdef.signature.input_arg] == [("x", TF_FLOAT)]
    assert [(a.name, a.type) for a in fdef.signature.output_arg] == [("y", TF_FLOAT)]
    nodes = {n.name: n for n in fdef.node_def}
    # The output arg took "y", so the node of that name became "y_0".
    assert sorted(nodes) == ["mul", "one", "three", "y_0"]
    assert list(nodes["mul"].input) == ["x", "three:output:0"]
    assert list(nodes["y_0"].input) == ["mul:z:0", "one:output:0"]
    assert dict(fdef.ret) == {"y": "y_0:z:0"}
    assert not fdef.signature.is_stateful


@pytest.mark.covers("TF_GraphCopyFunction", "TF_GraphNumFunctions")
def test_TF_GraphToFunction_result_runs_when_called_by_name(api, graph, times_three_plus_one):
    api.call(api.lib.TF_GraphCopyFunction, graph, times_three_plus_one, api.ffi.NULL)
    assert api.lib.TF_GraphNumFunctions(graph) == 1
    feed = api.placeholder(graph, "feed")
    call = api.op(graph, "times_three_plus_one", "call", [(feed, 0)])
    assert api.lib.TF_OperationNumOutputs(call) == 1
    got = run_one(api, graph, (call, 0), feeds=[((feed, 0), np.float32([1, 2]))])
    np.testing.assert_allclose(got, [4, 7])
    written = api.graph_def(graph)
    assert [f.signature.name for f in written.library.function] == ["times_three_plus_one"]


@pytest.mark.covers("TF_GraphCopyFunction")
def test_TF_GraphToFunction_result_runs_through_PartitionedCall(api, graph, times_three_plus_one):
    api.call(api.lib.TF_GraphCopyFunction, graph, times_three_plus_one, api.ffi.NULL)
    feed = api.const(graph, "feed", np.float32([2, 5]))
    desc = api.lib.TF_NewOperation(graph, b"PartitionedCall", b"pcall")
    api.lib.TF_AddInputList(desc, api.outputs([(feed, 0)]), 1)
    api.lib.TF_SetAttrTypeList(desc, b"Tin", api.ffi.new("TF_DataType[]", [TF_FLOAT]), 1)
    api.lib.TF_SetAttrTypeList(desc, b"Tout", api.ffi.new("TF_DataType[]", [TF_FLOAT]), 1)
    f = api.pb.AttrValue()
    f.func.name = "times_three_plus_one"
    data = f.SerializeToString()
    api.call(api.lib.TF_SetAttrValueProto, desc, b"f", data, len(data))
    call = api.call(api.lib.TF_FinishOperation, desc)
    np.testing.assert_allclose(run_one(api, graph, (call, 0)), [7, 16])


def test_TF_GraphToFunction_with_explicit_body_and_output_names(api, body):
    g, x, mul, _y = body
    three = api.lib.TF_GraphOperationByName(g, b"three")
    func = make_function(
        api, g, "scaled", opers=[three, mul], inputs=[(x, 0)], outputs=[(mul, 0), (x, 0)],
        output_names=["product", "passed"], description="x*3 and x",
    )  # fmt: skip
    try:
        fdef = to_function_def(api, func)
        assert [a.name for a in fdef.signature.output_arg] == ["product", "passed"]
        assert dict(fdef.ret) == {"product": "mul:z:0", "passed": "x"}
        assert fdef.signature.description == "x*3 and x"
        assert sorted(n.name for n in fdef.node_def) == ["mul", "three"]
    finally:
        api.lib.TF_DeleteFunction(func)


def test_TF_GraphToFunction_names_arguments_as_identifiers(api, lib):
    g = lib.TF_NewGraph()
    try:
        a = api.placeholder(g, "Feed/A-1")
        b = api.placeholder(g, "9feed_a_1")
        total = api.binary(g, "AddV2", "Total", a, b)
        func = make_function(api, g, "f", inputs=[(a, 0), (b, 0)], outputs=[(total, 0)])
        fdef = to_function_def(api, func)
        lib.TF_DeleteFunction(func)
        assert [a.name for a in fdef.signature.input_arg] == ["feed_a_1", "feed_a_1_0"]
        assert [a.name for a in fdef.signature.output_arg] == ["total"]
    finally:
        lib.TF_DeleteGraph(g)


def test_TF_GraphToFunction_appends_a_hash_of_the_body(api, body, lib):
    g, x, mul, y = body
    first = make_function(api, g, "f", inputs=[(x, 0)], outputs=[(y, 0)], append_hash=1)
    same = make_function(api, g, "f", inputs=[(x, 0)], outputs=[(y, 0)], append_hash=1)
    other = make_function(api, g, "f", inputs=[(x, 0)], outputs=[(mul, 0)], append_hash=1)
    try:
        names = [api.ffi.string(lib.TF_FunctionName(f)).decode() for f in (first, same, other)]
        assert names[0] == names[1] != names[2]
        assert names[0].startswith("f_") and names[0][2:].isalnum()
    finally:
        for f in (first, same, other):
            lib.TF_DeleteFunction(f)


def error_of(api, function, *args):
    with pytest.raises(CApiError) as caught:
        api.call(function, *args)
    return caught.value.code, caught.value.message


def test_TF_GraphToFunction_rejects_an_open_body(api, body):
    g, x, mul, y = body
    # `one` is neither in the body nor an input.
    three = api.lib.TF_GraphOperationByName(g, b"three")
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", opers=[three, mul, y], inputs=[(x, 0)], outputs=[(y, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "Input 1, 'one:0', of node 'y' in function 'f' is not available" in caught.value.message


def test_TF_GraphToFunction_rejects_a_control_input_from_outside(api, lib):
    g = lib.TF_NewGraph()
    try:
        x = api.placeholder(g, "x")
        outside = api.op(g, "NoOp", "outside")
        y = api.op(g, "Identity", "y", [(x, 0)], control=[outside])
        with pytest.raises(CApiError) as caught:
            make_function(api, g, "f", opers=[y], inputs=[(x, 0)], outputs=[(y, 0)])
        assert caught.value.code == CODES["INVALID_ARGUMENT"]
        assert "The source of control edge outside -> y is not in the body" in caught.value.message
    finally:
        lib.TF_DeleteGraph(g)


def test_TF_GraphToFunction_rejects_an_output_outside_the_body(api, body):
    g, x, mul, y = body
    three = api.lib.TF_GraphOperationByName(g, b"three")
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", opers=[three, mul], inputs=[(x, 0)], outputs=[(y, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "TF_Output y:0 is neither in the function body nor among function inputs" in (
        caught.value.message
    )


def test_TF_GraphToFunction_rejects_duplicate_output_names(api, body):
    g, x, mul, y = body
    with pytest.raises(CApiError) as caught:
        make_function(
            api, g, "f", inputs=[(x, 0)], outputs=[(y, 0), (mul, 0)], output_names=["a", "a"]
        )
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "Cannot have duplicate output names. Name 'a' appears more than once" in (
        caught.value.message
    )


def test_TF_GraphToFunction_rejects_bad_inputs_and_outputs(api, body, graph):
    g, x, _mul, y = body
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", inputs=[(x, 0), (x, 0)], outputs=[(y, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "TF_Output X:0 appears more than once in the input list" in caught.value.message
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", inputs=[(x, 1)], outputs=[(y, 0)])
    assert caught.value.code == CODES["OUT_OF_RANGE"]
    assert "does not have output 1" in caught.value.message
    stranger = api.placeholder(graph, "stranger")
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", inputs=[(stranger, 0)], outputs=[(y, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    with pytest.raises(CApiError) as caught:
        make_function(api, g, "f", opers=[stranger], inputs=[(x, 0)], outputs=[(x, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    code, _ = error_of(
        api, api.lib.TF_GraphToFunction, api.ffi.NULL, b"f", 0, -1, api.ffi.NULL, 0,
        api.ffi.NULL, 0, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL,
    )  # fmt: skip
    assert code == CODES["INVALID_ARGUMENT"]
    code, _ = error_of(
        api, api.lib.TF_GraphToFunction, g, api.ffi.NULL, 0, -1, api.ffi.NULL, 0,
        api.ffi.NULL, 0, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL,
    )  # fmt: skip
    assert code == CODES["INVALID_ARGUMENT"]
    code, _ = error_of(
        api, api.lib.TF_GraphToFunction, g, b"f", 0, -2, api.ffi.NULL, 0,
        api.ffi.NULL, 0, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL, api.ffi.NULL,
    )  # fmt: skip
    assert code == CODES["INVALID_ARGUMENT"]


def test_TF_GraphToFunction_with_all_nodes_needs_single_output_inputs(api, lib):
    g = lib.TF_NewGraph()
    try:
        value = api.const(g, "value", np.float32([1, 2]))
        axis = api.const(g, "axis", np.int32(0))
        split = api.op(g, "Split", "split", [(axis, 0), (value, 0)], {"num_split": ("int", 2)})
        with pytest.raises(CApiError) as caught:
            make_function(api, g, "f", inputs=[(split, 0)], outputs=[(split, 0)])
        assert caught.value.code == CODES["INVALID_ARGUMENT"]
        assert "Node split has 2 outputs" in caught.value.message
    finally:
        lib.TF_DeleteGraph(g)


def test_TF_GraphToFunctionWithControlOutputs_keeps_them(api, lib, graph):
    g = lib.TF_NewGraph()
    try:
        x = api.placeholder(g, "x")
        y = api.op(g, "Identity", "y", [(x, 0)])
        side = api.op(g, "NoOp", "side", control=[y])
        func = api.call(
            lib.TF_GraphToFunctionWithControlOutputs, g, b"f", 0, -1, api.ffi.NULL,
            1, api.outputs([(x, 0)]), 1, api.outputs([(y, 0)]), api.ffi.NULL,
            1, api.ffi.new("TF_Operation*[]", [side]),
            api.ffi.new("char*[]", [api.ffi.new("char[]", b"must_run")]), api.ffi.NULL,
            api.ffi.NULL,
        )  # fmt: skip
        fdef = to_function_def(api, func)
        assert dict(fdef.control_ret) == {"must_run": "side"}
        api.call(lib.TF_GraphCopyFunction, graph, func, api.ffi.NULL)
        lib.TF_DeleteFunction(func)
        feed = api.const(graph, "feed", np.float32(5))
        call = api.op(graph, "f", "call", [(feed, 0)])
        assert run_one(api, graph, (call, 0)) == 5
        # A control output that is not a body operation.
        with pytest.raises(CApiError) as caught:
            api.call(
                lib.TF_GraphToFunctionWithControlOutputs, g, b"f", 0, 1,
                api.ffi.new("TF_Operation*[]", [y]), 1, api.outputs([(x, 0)]), 1,
                api.outputs([(y, 0)]), api.ffi.NULL, 1, api.ffi.new("TF_Operation*[]", [side]),
                api.ffi.NULL, api.ffi.NULL, api.ffi.NULL,
            )  # fmt: skip
        assert caught.value.code == CODES["INVALID_ARGUMENT"]
    finally:
        lib.TF_DeleteGraph(g)


def test_TF_FunctionImportFunctionDef_round_trips_and_rejects_bad_bytes(
    api, graph, times_three_plus_one
):
    data = to_function_def(api, times_three_plus_one).SerializeToString()
    copy = import_function(api, data)
    try:
        assert to_function_def(api, copy).SerializeToString() == data
        api.call(api.lib.TF_GraphCopyFunction, graph, copy, api.ffi.NULL)
        call = api.op(
            graph, "times_three_plus_one", "call", [(api.const(graph, "c", np.float32(2)), 0)]
        )
        assert run_one(api, graph, (call, 0)) == 7
    finally:
        api.lib.TF_DeleteFunction(copy)
    with pytest.raises(CApiError) as caught:
        import_function(api, b"\xff\xff\xff")
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "Invalid FunctionDef given to TF_FunctionImportFunctionDef" in caught.value.message


@pytest.mark.covers("TF_FunctionGetAttrValueProto")
def test_TF_FunctionSetAttrValueProto_and_get(api, times_three_plus_one):
    lib, ffi = api.lib, api.ffi
    value = api.pb.AttrValue(b=True).SerializeToString()
    api.call(
        lib.TF_FunctionSetAttrValueProto, times_three_plus_one, b"_noinline", value, len(value)
    )
    buffer = lib.TF_NewBuffer()
    try:
        api.call(lib.TF_FunctionGetAttrValueProto, times_three_plus_one, b"_noinline", buffer)
        assert api.pb.AttrValue.FromString(ffi.buffer(buffer.data, buffer.length)[:]).b
    finally:
        lib.TF_DeleteBuffer(buffer)
    assert to_function_def(api, times_three_plus_one).attr["_noinline"].b
    code, message = error_of(
        api, lib.TF_FunctionSetAttrValueProto, times_three_plus_one, b"a", b"\xff", 1
    )
    assert code == CODES["INVALID_ARGUMENT"] and "Unparseable AttrValue proto" in message
    buffer = lib.TF_NewBuffer()
    try:
        code, message = error_of(
            api, lib.TF_FunctionGetAttrValueProto, times_three_plus_one, b"missing", buffer
        )
    finally:
        lib.TF_DeleteBuffer(buffer)
    assert code == CODES["INVALID_ARGUMENT"]
    assert message == "Function 'times_three_plus_one' has no attr named 'missing'."


def test_TF_GraphCopyFunction_errors(api, graph, body, times_three_plus_one):
    lib, ffi = api.lib, api.ffi
    code, message = error_of(api, lib.TF_GraphCopyFunction, graph, ffi.NULL, ffi.NULL)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "'func' argument to TF_GraphCopyFunction cannot be null" in message
    api.call(lib.TF_GraphCopyFunction, graph, times_three_plus_one, ffi.NULL)
    # The same function again is fine; another body under its name is not.
    api.call(lib.TF_GraphCopyFunction, graph, times_three_plus_one, ffi.NULL)
    g, x, mul, _ = body
    other = make_function(api, g, "times_three_plus_one", inputs=[(x, 0)], outputs=[(mul, 0)])
    try:
        code, message = error_of(api, lib.TF_GraphCopyFunction, graph, other, ffi.NULL)
    finally:
        lib.TF_DeleteFunction(other)
    assert code == CODES["INVALID_ARGUMENT"] and "times_three_plus_one" in message
    assert lib.TF_GraphNumFunctions(graph) == 1
    # A body of an unknown op is rejected when copied, adding nothing.
    fdef = to_function_def(api, times_three_plus_one)
    fdef.signature.name = "broken"
    fdef.node_def[0].op = "NoSuchOp"
    broken = import_function(api, fdef.SerializeToString())
    try:
        code, message = error_of(api, lib.TF_GraphCopyFunction, graph, broken, ffi.NULL)
    finally:
        lib.TF_DeleteFunction(broken)
    assert code == CODES["INVALID_ARGUMENT"]
    assert lib.TF_GraphNumFunctions(graph) == 1


def test_TF_GraphCopyFunction_with_a_gradient(api, graph, body, times_three_plus_one):
    g, x, mul, _ = body
    gradient = make_function(api, g, "times_three_grad", inputs=[(x, 0)], outputs=[(mul, 0)])
    try:
        api.call(api.lib.TF_GraphCopyFunction, graph, times_three_plus_one, gradient)
    finally:
        api.lib.TF_DeleteFunction(gradient)
    library = api.graph_def(graph).library
    assert sorted(f.signature.name for f in library.function) == [
        "times_three_grad",
        "times_three_plus_one",
    ]
    assert [(d.function_name, d.gradient_func) for d in library.gradient] == [
        ("times_three_plus_one", "times_three_grad")
    ]


def test_TF_GraphGetFunctions(api, graph, body, times_three_plus_one):
    lib, ffi = api.lib, api.ffi
    g, x, mul, _ = body
    second = make_function(api, g, "second", inputs=[(x, 0)], outputs=[(mul, 0)])
    api.call(lib.TF_GraphCopyFunction, graph, times_three_plus_one, ffi.NULL)
    api.call(lib.TF_GraphCopyFunction, graph, second, ffi.NULL)
    lib.TF_DeleteFunction(second)
    assert lib.TF_GraphNumFunctions(graph) == 2
    funcs = ffi.new("TF_Function*[]", 3)
    assert api.call(lib.TF_GraphGetFunctions, graph, funcs, 3) == 2
    names = [ffi.string(lib.TF_FunctionName(funcs[i])) for i in range(2)]
    for i in range(2):
        lib.TF_DeleteFunction(funcs[i])
    assert names == [b"times_three_plus_one", b"second"]
    assert api.call(lib.TF_GraphGetFunctions, graph, funcs, 1) == 1
    lib.TF_DeleteFunction(funcs[0])
    code, _ = error_of(api, lib.TF_GraphGetFunctions, graph, ffi.NULL, 2)
    assert code == CODES["INVALID_ARGUMENT"]
    assert lib.TF_GraphNumFunctions(ffi.NULL) == 0


def test_TF_DeleteFunction_accepts_NULL(api):
    api.lib.TF_DeleteFunction(api.ffi.NULL)
    assert api.lib.TF_FunctionName(api.ffi.NULL) == api.ffi.NULL


def test_TF_GraphCopyFunction_rejects_nameless_and_op_named_functions(api, graph, body):
    lib, ffi = api.lib, api.ffi
    empty = import_function(api, b"")
    try:
        assert ffi.string(lib.TF_FunctionName(empty)) == b""
        code, message = error_of(api, lib.TF_GraphCopyFunction, graph, empty, ffi.NULL)
    finally:
        lib.TF_DeleteFunction(empty)
    assert code == CODES["INVALID_ARGUMENT"] and "no name" in message
    g, x, _, y = body
    shadowing = make_function(api, g, "AddV2", inputs=[(x, 0)], outputs=[(y, 0)])
    try:
        code, message = error_of(api, lib.TF_GraphCopyFunction, graph, shadowing, ffi.NULL)
    finally:
        lib.TF_DeleteFunction(shadowing)
    assert code == CODES["INVALID_ARGUMENT"] and "AddV2" in message
    assert lib.TF_GraphNumFunctions(graph) == 0


@pytest.mark.covers(
    "TF_FunctionToFunctionDef",
    "TF_FunctionSetAttrValueProto",
    "TF_FunctionGetAttrValueProto",
    "TF_GraphGetFunctions",
)
def test_function_calls_with_NULL_arguments_are_errors(api, times_three_plus_one):
    lib, ffi = api.lib, api.ffi
    buffer = lib.TF_NewBuffer()
    try:
        for function, args in [
            (lib.TF_FunctionToFunctionDef, (ffi.NULL, buffer)),
            (lib.TF_FunctionToFunctionDef, (times_three_plus_one, ffi.NULL)),
            (lib.TF_FunctionSetAttrValueProto, (ffi.NULL, b"a", b"", 0)),
            (lib.TF_FunctionSetAttrValueProto, (times_three_plus_one, ffi.NULL, b"", 0)),
            (lib.TF_FunctionGetAttrValueProto, (times_three_plus_one, ffi.NULL, buffer)),
            (lib.TF_GraphGetFunctions, (ffi.NULL, ffi.NULL, 0)),
            (lib.TF_GraphCopyFunction, (ffi.NULL, times_three_plus_one, ffi.NULL)),
        ]:
            code, _ = error_of(api, function, *args)
            assert code == CODES["INVALID_ARGUMENT"], function
        # A buffer that already holds data is not overwritten.
        api.call(lib.TF_FunctionToFunctionDef, times_three_plus_one, buffer)
        code, _ = error_of(api, lib.TF_FunctionToFunctionDef, times_three_plus_one, buffer)
        assert code == CODES["INVALID_ARGUMENT"]
    finally:
        lib.TF_DeleteBuffer(buffer)
