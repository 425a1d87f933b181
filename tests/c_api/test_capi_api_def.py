"""ApiDef maps (TF_NewApiDefMap, TF_ApiDefMapPut, TF_ApiDefMapGet,
TF_DeleteApiDefMap): the ops' client-language view, first from their OpDefs,
then with ApiDefs text merged in as TensorFlow merges it."""

import pytest
from capi_helpers import CODES

VISIBLE, HIDDEN = 1, 3


@pytest.fixture
def api_def_map(api, lib, status):
    ops = lib.TF_GetAllOpList()
    api_map = lib.TF_NewApiDefMap(ops, status)
    lib.TF_DeleteBuffer(ops)
    api.check(status)
    yield api_map
    lib.TF_DeleteApiDefMap(api_map)


def put(api, lib, api_map, text, status):
    data = text.encode()
    lib.TF_ApiDefMapPut(api_map, data, len(data), status)
    return api.code(status), api.message(status)


def get(api, lib, api_map, name, status):
    buffer = lib.TF_ApiDefMapGet(api_map, name.encode(), len(name), status)
    if buffer == api.ffi.NULL:
        return None
    try:
        return api.pb.ApiDef.FromString(api.ffi.buffer(buffer.data, buffer.length)[:])
    finally:
        lib.TF_DeleteBuffer(buffer)


def test_TF_NewApiDefMap_starts_from_the_opdefs(api, lib, api_def_map, status):
    api_def = get(api, lib, api_def_map, "AddV2", status)
    api.check(status)
    assert api_def.graph_op_name == "AddV2"
    assert api_def.visibility == VISIBLE
    assert [e.name for e in api_def.endpoint] == ["AddV2"]
    assert [(a.name, a.rename_to) for a in api_def.in_arg] == [("x", "x"), ("y", "y")]
    assert [(a.name, a.rename_to) for a in api_def.out_arg] == [("z", "z")]
    assert list(api_def.arg_order) == ["x", "y"]
    assert [a.name for a in api_def.attr] == ["T"]
    # Attr defaults come over from the OpDef (Conv2D's data_format).
    conv = get(api, lib, api_def_map, "Conv2D", status)
    data_format = next(a for a in conv.attr if a.name == "data_format")
    assert data_format.default_value.s == b"NHWC"


def test_TF_NewApiDefMap_refuses_a_buffer_that_is_no_oplist(api, lib, status):
    junk = b"\xff\xff\xff"
    buffer = lib.TF_NewBufferFromString(junk, len(junk))
    assert lib.TF_NewApiDefMap(buffer, status) == api.ffi.NULL
    lib.TF_DeleteBuffer(buffer)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert "Unparseable OpList" in api.message(status)


def test_TF_ApiDefMapPut_merges_overrides_and_renames_in_docs(api, lib, api_def_map, status):
    text = r"""
op {
  graph_op_name: "AddV2"
  visibility: HIDDEN
  endpoint { name: "Add" }
  endpoint { name: "math.add" }
  in_arg { name: "x" rename_to: "left" description: "The `x` operand." }
  arg_order: "y"
  arg_order: "x"
  summary: "Adds `x` and `y`."
  description: <<END
Element-wise, with "broadcasting";
`x` and `y` have one type \ kind.
END
  description_suffix: "See also `AddN`."
}
op { graph_op_name: "NoSuchOpAnywhere" summary: "skipped" }
"""
    assert put(api, lib, api_def_map, text, status) == (CODES["OK"], "")
    api_def = get(api, lib, api_def_map, "AddV2", status)
    api.check(status)
    assert api_def.visibility == HIDDEN
    assert [e.name for e in api_def.endpoint] == ["Add", "math.add"]
    assert [(a.name, a.rename_to) for a in api_def.in_arg] == [("x", "left"), ("y", "y")]
    assert list(api_def.arg_order) == ["y", "x"]
    # The first Get renames backticked names: the op to its first endpoint,
    # the argument to its new name.
    assert api_def.in_arg[0].description == "The `left` operand."
    assert api_def.summary == "Adds `left` and `y`."
    assert api_def.description == (
        'Element-wise, with "broadcasting";\n`left` and `y` have one type \\ kind.\n'
        "See also `AddN`."
    )


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        (
            'op { graph_op_name: "AddV2" in_arg { name: "w" rename_to: "v" } }',
            "FAILED_PRECONDITION",
            "Argument w not defined in base api for AddV2",
        ),
        (
            'op { graph_op_name: "AddV2" attr { name: "Q" rename_to: "q" } }',
            "FAILED_PRECONDITION",
            "Attribute Q not defined in base api for AddV2",
        ),
        (
            'op { graph_op_name: "AddV2" arg_order: "x" }',
            "FAILED_PRECONDITION",
            "Invalid number of arguments 1 for AddV2. Expected: 2",
        ),
        (
            'op { graph_op_name: "AddV2" arg_order: "x" arg_order: "x" }',
            "FAILED_PRECONDITION",
            "Invalid arg_order: x, x for AddV2",
        ),
        ("op { graph_op_name: ", "INVALID_ARGUMENT", "does not parse"),
    ],
)
def test_TF_ApiDefMapPut_refuses_what_tensorflow_refuses(
    api, lib, api_def_map, status, text, code, message
):
    got_code, got_message = put(api, lib, api_def_map, text, status)
    assert got_code == CODES[code]
    assert message in got_message


def test_TF_ApiDefMapPut_after_get_is_a_failed_precondition(api, lib, api_def_map, status):
    get(api, lib, api_def_map, "AddV2", status)
    api.check(status)
    code, message = put(api, lib, api_def_map, 'op { graph_op_name: "AddV2" }', status)
    assert code == CODES["FAILED_PRECONDITION"]
    assert "cannot be called after TF_ApiDefMapGet" in message


def test_TF_ApiDefMapGet_of_an_unknown_op_is_null_and_not_found(api, lib, api_def_map, status):
    assert get(api, lib, api_def_map, "NoSuchOpAnywhere", status) is None
    assert api.code(status) == CODES["NOT_FOUND"]


def test_TF_DeleteApiDefMap_of_null_is_a_no_op(api, lib):
    lib.TF_DeleteApiDefMap(api.ffi.NULL)
