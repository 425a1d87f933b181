"""TF_AddOperationControlInput, TF_RemoveAllControlInputs and
TF_SetRequestedDevice on operations already in a graph."""


def control_input_names(api, oper):
    count = api.lib.TF_OperationNumControlInputs(oper)
    found = api.ffi.new("TF_Operation*[]", max(count, 1))
    api.lib.TF_OperationGetControlInputs(oper, found, count)
    return sorted(api.ffi.string(api.lib.TF_OperationName(found[i])).decode() for i in range(count))


def test_TF_AddOperationControlInput(api, lib, graph, session):
    first = api.op(graph, "NoOp", "first")
    later = api.op(graph, "NoOp", "later")
    lib.TF_AddOperationControlInput(graph, later, first)
    lib.TF_AddOperationControlInput(graph, later, first)  # not added twice
    assert control_input_names(api, later) == ["first"]
    assert list(api.graph_def(graph).node[1].input) == ["^first"]
    api.run(session, targets=[later])  # and the session runs it


def test_TF_RemoveAllControlInputs(api, lib, graph):
    a = api.op(graph, "NoOp", "a")
    b = api.op(graph, "NoOp", "b")
    x = api.placeholder(graph, "x")
    c = api.op(graph, "Identity", "c", inputs=[(x, 0)], control=[a, b])
    assert control_input_names(api, c) == ["a", "b"]
    lib.TF_RemoveAllControlInputs(graph, c)
    assert control_input_names(api, c) == []
    assert lib.TF_OperationNumInputs(c) == 1  # the data input stays
    assert list(api.graph_def(graph).node[3].input) == ["x"]


def test_TF_SetRequestedDevice(api, lib, graph):
    x = api.placeholder(graph, "x")
    lib.TF_SetRequestedDevice(graph, x, b"/device:CPU:0")
    assert api.ffi.string(lib.TF_OperationDevice(x)) == b"/device:CPU:0"
    lib.TF_SetRequestedDevice(graph, x, b"")
    assert api.ffi.string(lib.TF_OperationDevice(x)) == b""
