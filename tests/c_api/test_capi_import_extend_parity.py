"""TF_GraphImportGraphDef (into a fresh TF_Graph) and TF_ExtendGraph (into a
fresh TF_NewDeprecatedSession) accept and reject exactly the same GraphDefs
with the same error code: both go through the runtime's ImportGraphDef and
ShapeRefiner, so a shape function's complaint rejects a graph either way.

Each case states the code it expects, so the two paths agreeing on a wrong
answer fails too."""

import pathlib

import pytest
from capi_helpers import CODES
from google.protobuf import text_format

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tf_graphs"


def placeholder(name, dims=None, dtype="DT_FLOAT"):
    shape = (
        " unknown_rank: true" if dims is None else "".join(f" dim {{ size: {d} }}" for d in dims)
    )
    return (
        f'node {{ name: "{name}" op: "Placeholder" attr {{ key: "dtype" value {{ type: {dtype} }} }}'
        f' attr {{ key: "shape" value {{ shape {{{shape} }} }} }} }}'
    )


def node(name, op, inputs=(), dtype="DT_FLOAT", extra=""):
    written = "".join(f' input: "{i}"' for i in inputs)
    type_attr = f' attr {{ key: "T" value {{ type: {dtype} }} }}' if dtype else ""
    return f'node {{ name: "{name}" op: "{op}"{written}{type_attr}{extra} }}'


def int_const(name, values):
    content = " ".join(f"int_val: {v}" for v in values)
    return (
        f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}'
        f' attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32'
        f" tensor_shape {{ dim {{ size: {len(values)} }} }} {content} }} }} }} }}"
    )


def matmul(a_dims, b_dims, extra=""):
    return "\n".join(
        [
            placeholder("a", a_dims),
            placeholder("b", b_dims),
            node("product", "MatMul", ["a", "b"], extra=extra),
        ]
    )


TRANSPOSE_A = ' attr { key: "transpose_a" value { b: true } }'

# (case id, GraphDef text or bytes, expected code name)
CORPUS = [
    # Accepted.
    ("empty", "", "OK"),
    ("matmul", matmul([2, 3], [3, 5]), "OK"),
    ("matmul_unknown_dims", matmul([-1, 3], [-1, -1]), "OK"),
    ("matmul_unknown_rank", matmul(None, [3, 5]), "OK"),
    ("matmul_transposed", matmul([3, 2], [3, 5], TRANSPOSE_A), "OK"),
    (
        "reshape_by_const",
        "\n".join(
            [placeholder("x", [6]), int_const("dims", [3, 2]), node("r", "Reshape", ["x", "dims"])]
        ),
        "OK",
    ),
    (
        "broadcast_add",
        "\n".join(
            [placeholder("x", [2, 3]), placeholder("y", [3]), node("sum", "AddV2", ["x", "y"])]
        ),
        "OK",
    ),
    (
        "control_chain",
        "\n".join(
            [node("first", "NoOp", dtype=None), node("second", "NoOp", ["^first"], dtype=None)]
        ),
        "OK",
    ),
    (
        "consumer_before_producer",
        "\n".join(
            [
                node("product", "MatMul", ["a", "b"]),
                placeholder("a", [2, 3]),
                placeholder("b", [3, 5]),
            ]
        ),
        "OK",
    ),
    # Rejected by a shape function.
    ("matmul_inner_dims", matmul([2, 3], [4, 5]), "INVALID_ARGUMENT"),
    (
        "matmul_inner_dims_reversed_order",
        "\n".join(
            [
                node("product", "MatMul", ["a", "b"]),
                placeholder("a", [2, 3]),
                placeholder("b", [4, 5]),
            ]
        ),
        "INVALID_ARGUMENT",
    ),
    ("matmul_transposed_inner_dims", matmul([2, 3], [3, 5], TRANSPOSE_A), "INVALID_ARGUMENT"),
    ("matmul_rank", matmul([3], [3, 5]), "INVALID_ARGUMENT"),
    (
        "matmul_after_matmul",
        "\n".join(
            [
                matmul([2, 3], [3, 5]),
                placeholder("c", [4, 1]),
                node("again", "MatMul", ["product", "c"]),
            ]
        ),
        "INVALID_ARGUMENT",
    ),
    (
        "broadcast_mismatch",
        "\n".join(
            [placeholder("x", [2, 3]), placeholder("y", [4]), node("sum", "AddV2", ["x", "y"])]
        ),
        "INVALID_ARGUMENT",
    ),
    (
        "reshape_wrong_size",
        "\n".join(
            [placeholder("x", [6]), int_const("dims", [4, 2]), node("r", "Reshape", ["x", "dims"])]
        ),
        "INVALID_ARGUMENT",
    ),
    # Rejected by validation.
    (
        "dtype_mismatch",
        "\n".join(
            [
                placeholder("a", [2, 3], "DT_INT32"),
                placeholder("b", [3, 5]),
                node("product", "MatMul", ["a", "b"]),
            ]
        ),
        "INVALID_ARGUMENT",
    ),
    ("unknown_op", node("x", "NoSuchOp"), "NOT_FOUND"),
    ("missing_input", node("product", "MatMul", ["ghost", "ghost"]), "INVALID_ARGUMENT"),
    (
        "missing_output",
        "\n".join([placeholder("a", [2, 3]), node("id", "Identity", ["a:1"])]),
        "INVALID_ARGUMENT",
    ),
    (
        "too_many_inputs",
        "\n".join([placeholder("a", [2, 3]), node("id", "Identity", ["a", "a"])]),
        "INVALID_ARGUMENT",
    ),
    (
        "cycle",
        "\n".join([node("x", "Identity", ["y"]), node("y", "Identity", ["x"])]),
        "INVALID_ARGUMENT",
    ),
    (
        "control_cycle",
        "\n".join([node("x", "NoOp", ["^y"], dtype=None), node("y", "NoOp", ["^x"], dtype=None)]),
        "INVALID_ARGUMENT",
    ),
    (
        "disallowed_type_attr",
        "\n".join(
            [
                placeholder("a", [2, 3], "DT_STRING"),
                placeholder("b", [3, 5], "DT_STRING"),
                node("product", "MatMul", ["a", "b"], "DT_STRING"),
            ]
        ),
        "INVALID_ARGUMENT",
    ),
    ("missing_attr", 'node { name: "p" op: "Placeholder" }', "INVALID_ARGUMENT"),
    (
        "duplicate_name",
        "\n".join([placeholder("a", [1]), placeholder("a", [1])]),
        "INVALID_ARGUMENT",
    ),
    (
        "internal_op",
        'node { name: "r" op: "_Retval" input: "a" '
        'attr { key: "T" value { type: DT_FLOAT } } attr { key: "index" value { i: 0 } } }\n'
        + placeholder("a", [1]),
        "INVALID_ARGUMENT",
    ),
    ("invalid_name", placeholder("_hidden", [1]), "INVALID_ARGUMENT"),
    ("empty_name", placeholder("", [1]), "INVALID_ARGUMENT"),
    # A function whose body uses an op nobody registered.
    (
        "function_library_unknown_op",
        'library { function { signature { name: "f" } node_def { name: "n" op: "NoSuchOp" } } }',
        "INVALID_ARGUMENT",
    ),
    ("unparseable", b"\xff\xff\xff", "INVALID_ARGUMENT"),
]
CORPUS += [(f"fixture_{p.stem}", p.read_bytes(), "OK") for p in sorted(FIXTURES.glob("*.pb"))]


def serialized(api, graph_def):
    if isinstance(graph_def, bytes):
        return graph_def
    return text_format.Parse(graph_def, api.pb.GraphDef()).SerializeToString()


def import_into_fresh_graph(api, data):
    lib = api.lib
    graph, status = lib.TF_NewGraph(), lib.TF_NewStatus()
    buffer = lib.TF_NewBufferFromString(data, len(data))
    try:
        lib.TF_GraphImportGraphDef(graph, buffer, api.ffi.NULL, status)
        code = api.code(status)
        if code != CODES["OK"]:
            assert api.operation_names(graph) == [], "a rejected import adds nothing"
        return code, api.message(status)
    finally:
        lib.TF_DeleteBuffer(buffer)
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteGraph(graph)


def extend_fresh_session(api, data):
    lib = api.lib
    options = lib.TF_NewSessionOptions()
    session = api.call(lib.TF_NewDeprecatedSession, options)
    lib.TF_DeleteSessionOptions(options)
    status = lib.TF_NewStatus()
    try:
        lib.TF_ExtendGraph(session, data, len(data), status)
        result = api.code(status), api.message(status)
        if result[0] != CODES["OK"]:
            # Nothing was added: the good graph still goes in afterwards.
            good = serialized(api, matmul([2, 3], [3, 5]))
            lib.TF_ExtendGraph(session, good, len(good), status)
            assert api.code(status) == CODES["OK"], api.message(status)
        return result
    finally:
        lib.TF_CloseDeprecatedSession(session, status)
        lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)


@pytest.mark.parametrize(
    "graph_def,expected", [(g, e) for _, g, e in CORPUS], ids=[name for name, _, _ in CORPUS]
)
def test_import_and_extend_agree(api, graph_def, expected):
    data = serialized(api, graph_def)
    imported = import_into_fresh_graph(api, data)
    extended = extend_fresh_session(api, data)
    assert imported[0] == CODES[expected], imported
    assert extended[0] == CODES[expected], extended
    assert imported[0] == extended[0]


def test_shape_errors_name_the_node_either_way(api):
    data = serialized(api, matmul([2, 3], [4, 5]))
    for code, message in (import_into_fresh_graph(api, data), extend_fresh_session(api, data)):
        assert code == CODES["INVALID_ARGUMENT"]
        assert "'product'" in message and "MatMul" in message, message
