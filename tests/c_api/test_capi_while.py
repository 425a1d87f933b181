"""TF_NewWhile / TF_FinishWhile / TF_AbortWhile: TensorFlow 1.x while loops
whose condition and body the caller builds in graphs of their own, copied into
the parent graph as Enter/Merge/Switch/LoopCond/NextIteration/Exit under the
loop's name, and run in a session. Every mistake in the params is
INVALID_ARGUMENT and leaves the parent graph as it was."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT32, CApiError


def new_while(api, graph, inputs):
    return api.call(api.lib.TF_NewWhile, graph, api.outputs(inputs), len(inputs))


def finish(api, params, ninputs):
    """TF_FinishWhile; returns the loop's outputs as (oper, index) pairs."""
    outputs = api.ffi.new("TF_Output[]", ninputs)
    api.call(lambda status: api.lib.TF_FinishWhile(api.ffi.addressof(params), status, outputs))
    return [(outputs[i].oper, outputs[i].index) for i in range(ninputs)]


def finish_error(api, params, ninputs):
    with pytest.raises(CApiError) as caught:
        finish(api, params, ninputs)
    return caught.value.code, caught.value.message


def cond_less(api, params, limit, dtype=np.int32):
    """cond: input 0 < limit."""
    g = params.cond_graph
    bound = api.const(g, "limit", np.asarray(limit, dtype))
    less = api.op(g, "Less", "less", [(params.cond_inputs[0].oper, 0), (bound, 0)])
    params.cond_output = api.output(less, 0)


def body_add_one(api, params, index=0):
    g = params.body_graph
    one = api.const(g, "one", np.int32(1))
    add = api.op(g, "AddV2", f"add_{index}", [(params.body_inputs[index].oper, 0), (one, 0)])
    params.body_outputs[index] = api.output(add, 0)


def run(api, graph, fetches, feeds=()):
    session = api.new_session(graph)
    try:
        return api.run(session, feeds=feeds, fetches=fetches)
    finally:
        status = api.lib.TF_NewStatus()
        api.lib.TF_DeleteSession(session, status)
        api.lib.TF_DeleteStatus(status)


@pytest.mark.covers("TF_FinishWhile")
def test_TF_NewWhile_counts_to_a_limit(api, graph):
    start = api.const(graph, "start", np.int32(0))
    params = new_while(api, graph, [(start, 0)])
    assert params.ninputs == 1
    assert api.ffi.string(params.name) == b"while"
    cond_less(api, params, 10)
    body_add_one(api, params)
    (result,) = finish(api, params, 1)
    assert api.ffi.string(api.lib.TF_OperationName(result[0])) == b"while/Exit"
    names = set(api.operation_names(graph))
    assert {
        "while/Enter",
        "while/Merge",
        "while/cond/limit",
        "while/cond/less",
        "while/LoopCond",
        "while/Switch",
        "while/Identity",
        "while/body/one",
        "while/body/add_0",
        "while/NextIteration",
        "while/Exit",
    } <= names
    assert run(api, graph, [result]) == [10]


def test_TF_NewWhile_with_two_variables_and_a_fed_start(api, graph):
    """i, total = start, 0; while i < 5: total += i; i += 1."""
    start = api.placeholder(graph, "start", dtype=TF_INT32)
    zero = api.const(graph, "zero", np.float32(0))
    params = new_while(api, graph, [(start, 0), (zero, 0)])
    cond_less(api, params, 5)
    body_add_one(api, params)
    g = params.body_graph
    as_float = api.op(
        g, "Cast", "as_float", [(params.body_inputs[0].oper, 0)], {"DstT": ("type", TF_FLOAT)}
    )
    total = api.op(g, "AddV2", "total", [(params.body_inputs[1].oper, 0), (as_float, 0)])
    params.body_outputs[1] = api.output(total, 0)
    name = api.ffi.new("char[]", b"sum_loop")
    params.name = name
    outputs = finish(api, params, 2)
    assert api.ffi.string(api.lib.TF_OperationName(outputs[1][0])) == b"sum_loop/Exit_1"
    for first, want in [(0, 10.0), (3, 7.0), (7, 0.0)]:
        i, got = run(api, graph, outputs, feeds=[((start, 0), np.int32(first))])
        assert i == max(first, 5) and got == want


def test_TF_NewWhile_loops_get_unique_prefixes(api, graph):
    start = api.const(graph, "start", np.int32(0))
    results = []
    for limit in (3, 4):
        params = new_while(api, graph, [(start, 0)])
        cond_less(api, params, limit)
        body_add_one(api, params)
        results += finish(api, params, 1)
    names = [api.ffi.string(api.lib.TF_OperationName(r[0])) for r in results]
    assert names == [b"while/Exit", b"while_1/Exit"]
    assert run(api, graph, results) == [3, 4]


def test_TF_NewWhile_passes_an_input_straight_through(api, graph):
    """A body output may be the body's input itself, a cond output its input."""
    flag = api.const(graph, "flag", np.bool_(False))
    params = new_while(api, graph, [(flag, 0)])
    params.cond_output = params.cond_inputs[0]
    params.body_outputs[0] = params.body_inputs[0]
    (result,) = finish(api, params, 1)
    assert run(api, graph, [result]) == [False]


def test_TF_NewWhile_rejects_no_inputs_and_foreign_inputs(api, graph, lib):
    with pytest.raises(CApiError) as caught:
        api.call(lib.TF_NewWhile, graph, api.ffi.NULL, 0)
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    assert "TF_WhileParams must have at least one input" in caught.value.message
    other = lib.TF_NewGraph()
    try:
        stranger = api.const(other, "stranger", np.int32(1))
        with pytest.raises(CApiError) as caught:
            new_while(api, graph, [(stranger, 0)])
        assert caught.value.code == CODES["INVALID_ARGUMENT"]
        start = api.const(graph, "start", np.int32(0))
        with pytest.raises(CApiError) as caught:
            new_while(api, graph, [(start, 1)])
        assert caught.value.code == CODES["OUT_OF_RANGE"]
    finally:
        lib.TF_DeleteGraph(other)


def loop_params(api, graph):
    """Params for a loop over the int32 constant "start" (made once)."""
    start = api.lib.TF_GraphOperationByName(graph, b"start")
    if start == api.ffi.NULL:
        start = api.const(graph, "start", np.int32(0))
    return new_while(api, graph, [(start, 0)])


def test_TF_FinishWhile_rejects_a_condition_that_is_not_bool(api, graph):
    params = loop_params(api, graph)
    before = api.operation_names(graph)
    params.cond_output = params.cond_inputs[0]
    body_add_one(api, params)
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "'cond' argument must return a boolean output, got int32" in message
    assert api.operation_names(graph) == before


def test_TF_FinishWhile_rejects_a_condition_that_is_not_a_scalar(api, graph):
    params = loop_params(api, graph)
    flags = api.const(params.cond_graph, "flags", np.array([True, False]))
    params.cond_output = api.output(flags, 0)
    body_add_one(api, params)
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"] and "must be a scalar" in message
    assert api.operation_names(graph) == ["start"]


def test_TF_FinishWhile_rejects_unset_fields(api, graph):
    params = loop_params(api, graph)
    body_add_one(api, params)
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "TF_WhileParams `cond_output` field isn't set" in message
    params = loop_params(api, graph)
    cond_less(api, params, 3)
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "TF_WhileParams `body_outputs[0]` field isn't set" in message
    params = loop_params(api, graph)
    cond_less(api, params, 3)
    body_add_one(api, params)
    params.name = api.ffi.NULL
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"] and "`name` field is null" in message
    assert api.operation_names(graph) == ["start"]


def test_TF_FinishWhile_rejects_a_body_output_of_another_dtype(api, graph):
    params = loop_params(api, graph)
    cond_less(api, params, 3)
    other = api.const(params.body_graph, "other", np.float32(1))
    params.body_outputs[0] = api.output(other, 0)
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "has type float but loop variable 0 has type int32" in message


def test_TF_FinishWhile_rejects_outputs_of_other_graphs(api, graph):
    params = loop_params(api, graph)
    body_add_one(api, params)
    # The condition's output taken from the body graph.
    params.cond_output = params.body_inputs[0]
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"] and "cond_graph" in message
    params = loop_params(api, graph)
    cond_less(api, params, 3)
    params.body_outputs[0] = params.cond_inputs[0]
    code, message = finish_error(api, params, 1)
    assert code == CODES["INVALID_ARGUMENT"] and "body_graph" in message
    assert api.operation_names(graph) == ["start"]


@pytest.mark.covers("TF_AbortWhile")
def test_TF_NewWhile_body_cannot_read_the_parent_graph(api, graph, lib):
    params = loop_params(api, graph)
    outside = api.const(graph, "outside", np.int32(1))
    with pytest.raises(CApiError) as caught:
        api.op(params.body_graph, "AddV2", "add", [(params.body_inputs[0].oper, 0), (outside, 0)])
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    lib.TF_AbortWhile(api.ffi.addressof(params))
    assert api.operation_names(graph) == ["start", "outside"]


def test_TF_AbortWhile_leaves_the_graph_unchanged(api, graph):
    params = loop_params(api, graph)
    cond_less(api, params, 3)
    body_add_one(api, params)
    api.lib.TF_AbortWhile(api.ffi.addressof(params))
    api.lib.TF_AbortWhile(api.ffi.NULL)
    assert api.operation_names(graph) == ["start"]


def test_TF_FinishWhile_with_bad_params_is_an_error(api):
    empty = api.ffi.new("TF_WhileParams*")
    outputs = api.ffi.new("TF_Output[]", 1)
    with pytest.raises(CApiError) as caught:
        api.call(lambda status: api.lib.TF_FinishWhile(empty, status, outputs))
    assert caught.value.code == CODES["INVALID_ARGUMENT"]
    with pytest.raises(CApiError):
        api.call(lambda status: api.lib.TF_FinishWhile(api.ffi.NULL, status, outputs))


def test_TF_FinishWhile_loop_with_a_float_condition_graph(api, graph):
    """The cond graph may compute with its own ops (here a float compare)."""
    x = api.const(graph, "x", np.float32(1))
    params = new_while(api, graph, [(x, 0)])
    g = params.cond_graph
    hundred = api.const(g, "hundred", np.float32(100))
    params.cond_output = api.output(
        api.op(g, "Less", "less", [(params.cond_inputs[0].oper, 0), (hundred, 0)]), 0
    )
    b = params.body_graph
    two = api.const(b, "two", np.float32(2))
    params.body_outputs[0] = api.output(
        api.op(b, "Mul", "double", [(params.body_inputs[0].oper, 0), (two, 0)]), 0
    )
    (result,) = finish(api, params, 1)
    assert run(api, graph, [result]) == [128.0]


def test_TF_NewWhile_nested_in_a_body(api, graph):
    """for i in range(4): for j in range(i): total += 1  (total = 0+1+2+3).
    The inner loop is built in the outer body graph; its frame is renamed
    with its nodes, so the two frames stay distinct."""
    lib, ffi = api.lib, api.ffi
    i0 = api.const(graph, "i0", np.int32(0))
    total0 = api.const(graph, "total0", np.int32(0))
    outer = new_while(api, graph, [(i0, 0), (total0, 0)])
    cond_less(api, outer, 4)
    body = outer.body_graph
    i, total = outer.body_inputs[0].oper, outer.body_inputs[1].oper
    zero = api.const(body, "zero", np.int32(0))
    inner = new_while(api, body, [(zero, 0), (total, 0), (i, 0)])
    j_in, bound = inner.cond_inputs[0].oper, inner.cond_inputs[2].oper
    inner.cond_output = api.output(
        api.op(inner.cond_graph, "Less", "less", [(j_in, 0), (bound, 0)])
    )
    one = api.const(inner.body_graph, "one", np.int32(1))
    for k, name in [(0, "next_j"), (1, "next_total")]:
        added = api.op(inner.body_graph, "AddV2", name, [(inner.body_inputs[k].oper, 0), (one, 0)])
        inner.body_outputs[k] = api.output(added, 0)
    inner.body_outputs[2] = inner.body_inputs[2]
    inner_outputs = finish(api, inner, 3)
    body_add_one(api, outer)
    outer.body_outputs[1] = api.output(*inner_outputs[1])
    outputs = finish(api, outer, 2)
    assert run(api, graph, outputs) == [4, 6]
    frames = {
        n.attr["frame_name"].s for n in api.graph_def(graph).node if n.op == "Enter"
    }  # fmt: skip
    assert frames == {b"while", b"while/body/while"}
    assert ffi.string(lib.TF_OperationName(outputs[1][0])) == b"while/Exit_1"
