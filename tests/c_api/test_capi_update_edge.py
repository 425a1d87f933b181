"""TF_UpdateEdge: rewiring an input of an operation already in the graph, the
way a while loop's Merge gets its NextIteration back edge."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_BOOL, TF_FLOAT, TF_INT32, CApiError


def update_edge(api, graph, src, src_index, dst, dst_index):
    new_src = api.ffi.new("TF_Output*", {"oper": src, "index": src_index})[0]
    dst_input = api.ffi.new("TF_Input*", {"oper": dst, "index": dst_index})[0]
    api.call(api.lib.TF_UpdateEdge, graph, new_src, dst_input)


def input_of(api, oper, index):
    """The (operation name, output index) input `index` of `oper` reads."""
    source = api.lib.TF_OperationInput(api.ffi.new("TF_Input*", {"oper": oper, "index": index})[0])
    return api.ffi.string(api.lib.TF_OperationName(source.oper)).decode(), source.index


def shape_of(api, graph, oper, index=0):
    output = api.output(oper, index)
    rank = api.call(api.lib.TF_GraphGetTensorNumDims, graph, output)
    if rank < 0:
        return None
    dims = api.ffi.new("int64_t[]", max(rank, 1))
    api.call(api.lib.TF_GraphGetTensorShape, graph, output, dims, rank)
    return [dims[i] for i in range(rank)]


def counter_loop(api, graph, limit, start_shape=()):
    """i = start; while i < limit: i += 1, built as tf.while_loop builds it:
    the Merge first takes its Enter twice, then TF_UpdateEdge gives it the
    NextIteration. Returns (merge, exit)."""
    int_attr = {"T": ("type", TF_INT32)}
    frame = {
        "frame_name": ("string", b"while/while_context"),
        "is_constant": ("bool", False),
        "parallel_iterations": ("int", 10),
        "T": ("type", TF_INT32),
    }
    start = api.const(graph, "start", np.zeros(start_shape, np.int32))
    enter = api.op(graph, "Enter", "while/Enter", [(start, 0)], frame)
    merge = api.op(graph, "Merge", "while/Merge", [[(enter, 0), (enter, 0)]], int_attr)
    bound = api.const(graph, "while/limit", np.int32(limit))
    constant = dict(frame, is_constant=("bool", True))
    bound_enter = api.op(graph, "Enter", "while/limit_enter", [(bound, 0)], constant)
    less = api.op(graph, "Less", "while/Less", [(merge, 0), (bound_enter, 0)], int_attr)
    loop_cond = api.op(graph, "LoopCond", "while/LoopCond", [(less, 0)])
    switch = api.op(graph, "Switch", "while/Switch", [(merge, 0), (loop_cond, 0)], int_attr)
    one = api.op(
        graph,
        "Const",
        "while/one",
        attrs={"value": ("tensor", np.int32(1)), "dtype": ("type", TF_INT32)},
        control=[api.op(graph, "Identity", "while/Identity", [(switch, 1)], int_attr)],
    )
    add = api.op(graph, "Add", "while/add", [(switch, 1), (one, 0)], int_attr)
    next_iteration = api.op(graph, "NextIteration", "while/NextIteration", [(add, 0)], int_attr)
    exit_op = api.op(graph, "Exit", "while/Exit", [(switch, 0)], int_attr)
    update_edge(api, graph, next_iteration, 0, merge, 1)
    return merge, exit_op


def test_TF_UpdateEdge_closes_a_loop_that_a_session_runs(api, graph, session):
    merge, exit_op = counter_loop(api, graph, limit=10000)
    assert input_of(api, merge, 1) == ("while/NextIteration", 0)
    assert input_of(api, merge, 0) == ("while/Enter", 0)
    (result,) = api.run(session, fetches=[(exit_op, 0)])
    assert result == 10000


def test_TF_UpdateEdge_back_edge_survives_export_and_import(api, lib, graph):
    counter_loop(api, graph, limit=7)
    graph_def = api.graph_def(graph)
    merge_def = next(n for n in graph_def.node if n.name == "while/Merge")
    assert list(merge_def.input) == ["while/Enter", "while/NextIteration"]
    copy = lib.TF_NewGraph()
    try:
        code, message = api.import_graph_def(copy, graph_def)
        assert code == CODES["OK"], message
        session = api.new_session(copy)
        try:
            exit_op = lib.TF_GraphOperationByName(copy, b"while/Exit")
            (result,) = api.run(session, fetches=[(exit_op, 0)])
            assert result == 7
        finally:
            api.call(lib.TF_DeleteSession, session)
    finally:
        lib.TF_DeleteGraph(copy)


def test_TF_UpdateEdge_reinfers_the_shapes_of_the_operation(api, graph):
    x = api.placeholder(graph, "x", shape=[2, 3])
    y = api.placeholder(graph, "y", shape=[2, 5])
    merge = api.op(graph, "Merge", "merge", [[(x, 0), (x, 0)]], {"T": ("type", TF_FLOAT)})
    assert shape_of(api, graph, merge) == [2, 3]
    # [2, 5] is not compatible with [2, 3]: rejected, nothing changes.
    with pytest.raises(CApiError) as error:
        update_edge(api, graph, y, 0, merge, 1)
    assert error.value.code == CODES["INVALID_ARGUMENT"]
    assert "incompatible shapes" in error.value.message
    assert input_of(api, merge, 1) == ("x", 0)
    # A less specific source is compatible; the Merge relaxes to what both share.
    z = api.placeholder(graph, "z", shape=[2, -1])
    update_edge(api, graph, z, 0, merge, 1)
    assert input_of(api, merge, 1) == ("z", 0)
    assert shape_of(api, graph, merge) == [2, -1]


def test_TF_UpdateEdge_rejects_another_dtype(api, graph):
    x = api.placeholder(graph, "x")
    flag = api.placeholder(graph, "flag", dtype=TF_BOOL)
    identity = api.op(graph, "Identity", "identity", [(x, 0)], {"T": ("type", TF_FLOAT)})
    with pytest.raises(CApiError) as error:
        update_edge(api, graph, flag, 0, identity, 0)
    assert error.value.code == CODES["INVALID_ARGUMENT"]
    assert "bool" in error.value.message and "float" in error.value.message
    assert input_of(api, identity, 0) == ("x", 0)


def test_TF_UpdateEdge_rejects_indices_out_of_range(api, graph):
    x = api.placeholder(graph, "x")
    identity = api.op(graph, "Identity", "identity", [(x, 0)], {"T": ("type", TF_FLOAT)})
    for src_index, dst_index in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        with pytest.raises(CApiError) as error:
            update_edge(api, graph, x, src_index, identity, dst_index)
        assert error.value.code == CODES["OUT_OF_RANGE"]
        assert "Cannot update edge" in error.value.message
    assert input_of(api, identity, 0) == ("x", 0)


def test_TF_UpdateEdge_rejects_null_operations(api, lib, graph):
    x = api.placeholder(graph, "x")
    with pytest.raises(CApiError) as error:
        update_edge(api, graph, api.ffi.NULL, 0, x, 0)
    assert error.value.code == CODES["INVALID_ARGUMENT"]


def test_TF_UpdateEdge_rejects_operations_of_another_graph(api, lib, graph):
    x = api.placeholder(graph, "x")
    identity = api.op(graph, "Identity", "identity", [(x, 0)], {"T": ("type", TF_FLOAT)})
    other = lib.TF_NewGraph()
    try:
        y = api.placeholder(other, "y")
        other_identity = api.op(other, "Identity", "other", [(y, 0)], {"T": ("type", TF_FLOAT)})
        for src, dst in ((y, identity), (x, other_identity)):
            with pytest.raises(CApiError) as error:
                update_edge(api, graph, src, 0, dst, 0)
            assert error.value.code == CODES["INVALID_ARGUMENT"]
            assert "is not an operation of this graph" in error.value.message
        assert input_of(api, identity, 0) == ("x", 0)
        assert input_of(api, other_identity, 0) == ("y", 0)
    finally:
        lib.TF_DeleteGraph(other)
