"""TF_Status, TF_Version and TF_DataTypeSize."""

from capi_helpers import CODES


def test_TF_NewStatus_starts_ok(api, lib):
    s = lib.TF_NewStatus()
    assert s != api.ffi.NULL
    assert lib.TF_GetCode(s) == CODES["OK"]
    assert api.message(s) == ""
    lib.TF_DeleteStatus(s)


def test_TF_DeleteStatus_accepts_null(api, lib):
    lib.TF_DeleteStatus(api.ffi.NULL)


def test_TF_SetStatus_sets_code_and_copies_message(api, lib, status):
    message = api.ffi.new("char[]", b"bad thing")
    lib.TF_SetStatus(status, CODES["INVALID_ARGUMENT"], message)
    message[0] = b"X"  # the status holds its own copy
    assert lib.TF_GetCode(status) == CODES["INVALID_ARGUMENT"]
    assert api.message(status) == "bad thing"


def test_TF_SetStatus_ok_clears_message(api, lib, status):
    lib.TF_SetStatus(status, CODES["INTERNAL"], b"broken")
    lib.TF_SetStatus(status, CODES["OK"], b"ignored")
    assert lib.TF_GetCode(status) == CODES["OK"]
    assert api.message(status) == ""


def test_TF_SetStatus_null_message_reads_as_empty(api, lib, status):
    lib.TF_SetStatus(status, CODES["ABORTED"], api.ffi.NULL)
    assert lib.TF_GetCode(status) == CODES["ABORTED"]
    assert api.message(status) == ""


def test_TF_GetCode_round_trips_every_code(lib, status):
    for code in CODES.values():
        lib.TF_SetStatus(status, code, b"m")
        assert lib.TF_GetCode(status) == code


def test_TF_Message_belongs_to_status_until_rewritten(api, lib, status):
    lib.TF_SetStatus(status, CODES["NOT_FOUND"], b"first")
    assert api.message(status) == "first"
    lib.TF_SetStatus(status, CODES["NOT_FOUND"], b"second")
    assert api.message(status) == "second"


def test_TF_Version_is_a_dotted_version(api, lib):
    version = api.ffi.string(lib.TF_Version()).decode()
    assert version.count(".") == 2 and version.split(".")[0].isdigit()


def test_TF_DataTypeSize_matches_tensorflow(lib):
    # 14 is TF_BFLOAT16 and 19 TF_HALF.
    expected = {1: 4, 2: 8, 3: 4, 4: 1, 5: 2, 6: 1, 9: 8, 10: 1, 14: 2, 17: 2, 19: 2, 22: 4, 23: 8}
    for dtype, size in expected.items():
        assert lib.TF_DataTypeSize(dtype) == size
    assert lib.TF_DataTypeSize(7) == 0  # TF_STRING: variable length
    assert lib.TF_DataTypeSize(20) == 0  # TF_RESOURCE
    assert lib.TF_DataTypeSize(21) == 0  # TF_VARIANT


def test_TF_DataTypeSize_of_types_the_runtime_cannot_compute_with(lib):
    # TensorFlow 2.21's values (its C API, checked directly): complex,
    # quantized, 8-bit floats and 4/2-bit integers have sizes there too; this
    # returned 0 for them before.
    expected = {8: 8, 11: 1, 12: 1, 13: 4, 15: 2, 16: 2, 18: 16}
    expected.update({number: 1 for number in range(24, 34)})
    for dtype, size in expected.items():
        assert lib.TF_DataTypeSize(dtype) == size, dtype
    for outside in (0, 34, -1, 101, 2147483647):
        assert lib.TF_DataTypeSize(outside) == 0


def test_TF_SetStatus_code_outside_the_enum_reads_as_unknown(lib, status):
    for code in (17, 99, -1, 2147483647):
        lib.TF_SetStatus(status, code, b"odd")
        assert lib.TF_GetCode(status) == CODES["UNKNOWN"]
