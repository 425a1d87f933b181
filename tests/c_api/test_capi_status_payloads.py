"""TensorFlow's tf_status.h extras: payloads and TF_SetStatusFromIOError."""

import errno

from capi_helpers import CODES

# errno -> TF_Code from TensorFlow 2.21's own TF_SetStatusFromIOError, for
# errno 0..133 (read by a C program linked against libtensorflow_cc.so.2).
TENSORFLOW_ERRNO_CODES = (
    "0:0,1:7,2:5,3:5,4:14,5:2,6:5,7:3,8:2,9:9,10:9,11:14,12:8,13:7,14:3,15:9,16:9,17:6,18:12,"
    "19:5,20:9,21:9,22:3,23:8,24:8,25:3,26:9,27:11,28:8,29:3,30:7,31:8,32:9,33:3,34:11,35:10,"
    "36:3,37:14,38:12,39:9,40:2,41:2,42:2,43:2,44:2,45:2,46:2,47:2,48:2,49:2,50:2,51:2,52:2,"
    "53:2,54:2,55:2,56:2,57:2,58:2,59:2,60:3,61:8,62:4,63:8,64:14,65:2,66:2,67:14,68:2,69:2,"
    "70:2,71:2,72:2,73:2,74:2,75:11,76:2,77:2,78:2,79:2,80:2,81:2,82:2,83:2,84:3,85:2,86:2,"
    "87:8,88:3,89:3,90:2,91:3,92:3,93:12,94:12,95:12,96:12,97:12,98:9,99:6,100:14,101:14,"
    "102:14,103:14,104:14,105:8,106:9,107:9,108:9,109:2,110:4,111:14,112:14,113:14,114:6,"
    "115:2,116:10,117:2,118:2,119:2,120:2,121:2,122:8,123:2,124:2,125:1,126:2,127:2,128:2,"
    "129:2,130:2,131:2,132:2,133:2"
)


def payloads(api, status):
    seen = []

    @api.ffi.callback("void(const char*, const char*, void*)")
    def visit(key, value, capture):
        seen.append((api.ffi.string(key).decode(), api.ffi.string(value).decode()))

    api.lib.TF_ForEachPayload(status, visit, api.ffi.NULL)
    return seen


def test_TF_SetPayload_and_TF_ForEachPayload(api, lib, status):
    lib.TF_SetStatus(status, CODES["INTERNAL"], b"broken")
    lib.TF_SetPayload(status, b"a", b"1")
    lib.TF_SetPayload(status, b"c", b"2")
    lib.TF_SetPayload(status, b"a", b"3")  # replaced, and moved last (as TensorFlow)
    assert payloads(api, status) == [("c", "2"), ("a", "3")]
    assert api.message(status) == "broken"


def test_TF_SetPayload_is_ignored_on_an_ok_status(api, lib, status):
    lib.TF_SetStatus(status, CODES["OK"], b"")
    lib.TF_SetPayload(status, b"a", b"1")
    assert payloads(api, status) == []


def test_TF_ForEachPayload_sees_none_after_the_status_changes(api, lib, status):
    lib.TF_SetStatus(status, CODES["INTERNAL"], b"x")
    lib.TF_SetPayload(status, b"a", b"1")
    lib.TF_SetStatus(status, CODES["INTERNAL"], b"y")
    assert payloads(api, status) == []
    lib.TF_SetPayload(status, b"a", b"1")
    # A call that reports into the status replaces it too.
    lib.TF_GraphImportGraphDef(
        api.ffi.NULL, api.ffi.NULL, api.ffi.NULL, status
    )  # INVALID_ARGUMENT: no graph
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert payloads(api, status) == []


def test_TF_SetStatusFromIOError_codes_match_tensorflow(api, lib, status):
    for pair in TENSORFLOW_ERRNO_CODES.split(","):
        number, code = map(int, pair.split(":"))
        lib.TF_SetStatusFromIOError(status, number, b"ctx")
        assert api.code(status) == code, (number, errno.errorcode.get(number))


def test_TF_SetStatusFromIOError_message(api, lib, status):
    lib.TF_SetStatusFromIOError(status, errno.ENOENT, b"open /x")
    assert api.code(status) == CODES["NOT_FOUND"]
    assert api.message(status) == "open /x; No such file or directory"
    lib.TF_SetStatusFromIOError(status, 0, b"fine")
    assert api.code(status) == CODES["OK"]
