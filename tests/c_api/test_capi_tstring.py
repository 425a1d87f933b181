"""TF_TString (tf_tstring.h) and TF_STRING tensors holding TF_TStrings, as in
TensorFlow 2.x: each function's effect on the 24 bytes, the forms SMALL,
LARGE, OFFSET and VIEW, string tensors fed to and fetched from a session,
attrs, and malformed elements refused with INVALID_ARGUMENT."""

import struct

import pytest
from capi_helpers import CODES, TF_STRING

SMALL, LARGE, OFFSET, VIEW = 0, 1, 2, 3


def raw(api, tstr):
    return api.ffi.buffer(tstr, 24)[:]


def address(api, pointer):
    return int(api.ffi.cast("uintptr_t", pointer))


def text(api, lib, tstr):
    return api.ffi.buffer(lib.TF_StringGetDataPointer(tstr), lib.TF_StringGetSize(tstr))[:]


@pytest.fixture
def tstr(api, lib):
    """One TF_TString on the test's heap, deallocated after."""
    value = api.ffi.new("TF_TString*")
    lib.TF_StringInit(value)
    yield value
    lib.TF_StringDealloc(value)


def test_tstring_struct_is_24_bytes_aligned_as_size_t(api):
    assert api.ffi.sizeof("TF_TString") == 24
    assert api.ffi.alignof("TF_TString") == 8


def test_TF_StringInit_makes_the_empty_small_string(api, lib):
    value = api.ffi.new("TF_TString*")
    api.ffi.memmove(value, b"\xff" * 24, 24)
    lib.TF_StringInit(value)
    assert raw(api, value) == bytes(24)
    assert lib.TF_StringGetType(value) == SMALL
    assert lib.TF_StringGetSize(value) == 0


def test_TF_StringCopy_small_is_inline_with_size_shifted(api, lib, tstr):
    lib.TF_StringCopy(tstr, b"hello", 5)
    assert raw(api, tstr) == bytes([5 << 2]) + b"hello" + bytes(18)
    assert lib.TF_StringGetType(tstr) == SMALL
    assert text(api, lib, tstr) == b"hello"


def test_TF_StringCopy_22_bytes_is_the_largest_small(api, lib, tstr):
    lib.TF_StringCopy(tstr, b"a" * 22, 22)
    assert lib.TF_StringGetType(tstr) == SMALL
    assert raw(api, tstr) == bytes([22 << 2]) + b"a" * 22 + b"\0"
    lib.TF_StringCopy(tstr, b"b" * 23, 23)
    assert lib.TF_StringGetType(tstr) == LARGE
    assert text(api, lib, tstr) == b"b" * 23


@pytest.mark.parametrize("size,capacity", [(23, 31), (31, 31), (32, 47), (100, 111)])
def test_TF_StringCopy_large_capacity_rounds_as_tensorflow(api, lib, tstr, size, capacity):
    lib.TF_StringCopy(tstr, b"z" * size, size)
    stored_size, stored_capacity, pointer = struct.unpack("<QQQ", raw(api, tstr))
    assert stored_size == size << 2 | LARGE
    assert stored_capacity == capacity
    assert pointer == address(api, lib.TF_StringGetDataPointer(tstr))
    assert api.ffi.buffer(lib.TF_StringGetDataPointer(tstr), size + 1)[:] == b"z" * size + b"\0"


def test_TF_StringCopy_reuses_or_shrinks_a_large_buffer(api, lib, tstr):
    lib.TF_StringCopy(tstr, b"x" * 100, 100)
    first = address(api, lib.TF_StringGetDataPointer(tstr))
    lib.TF_StringCopy(tstr, b"y" * 60, 60)  # over half of 111: kept
    assert lib.TF_StringGetCapacity(tstr) == 111
    assert address(api, lib.TF_StringGetDataPointer(tstr)) == first
    lib.TF_StringCopy(tstr, b"w" * 30, 30)  # under half of 111: halved
    assert lib.TF_StringGetCapacity(tstr) == 63
    assert text(api, lib, tstr) == b"w" * 30
    lib.TF_StringCopy(tstr, b"v", 1)  # back inline, the buffer freed
    assert lib.TF_StringGetType(tstr) == SMALL
    assert text(api, lib, tstr) == b"v"


def test_TF_StringCopy_from_its_own_bytes(api, lib, tstr):
    lib.TF_StringCopy(tstr, b"0123456789" * 5, 50)
    lib.TF_StringCopy(tstr, lib.TF_StringGetDataPointer(tstr) + 10, 30)
    assert text(api, lib, tstr) == (b"0123456789" * 5)[10:40]
    lib.TF_StringCopy(tstr, lib.TF_StringGetDataPointer(tstr) + 2, 5)
    assert text(api, lib, tstr) == b"23456"


def test_TF_StringAssignView_points_at_the_callers_bytes(api, lib, tstr):
    source = api.ffi.new("char[]", b"viewed bytes")
    lib.TF_StringCopy(tstr, b"q" * 40, 40)  # the LARGE buffer is released
    lib.TF_StringAssignView(tstr, source, 6)
    assert lib.TF_StringGetType(tstr) == VIEW
    size, pointer = struct.unpack("<QQ", raw(api, tstr)[:16])
    assert size == 6 << 2 | VIEW
    assert pointer == address(api, source)
    assert text(api, lib, tstr) == b"viewed"
    assert lib.TF_StringGetCapacity(tstr) == 0


def test_TF_StringGetDataPointer_of_each_form(api, lib):
    array = api.ffi.new("TF_TString[2]")
    lib.TF_StringCopy(array + 0, b"small", 5)
    assert address(api, lib.TF_StringGetDataPointer(array + 0)) == address(api, array) + 1
    # OFFSET: bytes 24 further on, after the element itself.
    offset_form = struct.pack("<III", 4 << 2 | OFFSET, 24, 1) + bytes(12)
    api.ffi.memmove(array + 0, offset_form, 24)
    api.ffi.memmove(array + 1, b"data" + bytes(20), 24)
    assert address(api, lib.TF_StringGetDataPointer(array + 0)) == address(api, array + 1)
    assert text(api, lib, array + 0) == b"data"


@pytest.mark.parametrize(
    "form,first_byte", [(SMALL, 0x10), (LARGE, 0x11), (OFFSET, 0x12), (VIEW, 0x13)]
)
def test_TF_StringGetType_reads_the_low_two_bits(api, lib, form, first_byte):
    value = api.ffi.new("TF_TString*")
    api.ffi.memmove(value, bytes([first_byte]) + bytes(23), 24)
    assert lib.TF_StringGetType(value) == form


def test_TF_StringGetSize_of_each_form(api, lib):
    value = api.ffi.new("TF_TString*")
    for data, size in [
        (bytes([7 << 2]) + bytes(23), 7),
        (struct.pack("<QQQ", 1000 << 2 | LARGE, 1007, 0), 1000),
        (struct.pack("<III", 9 << 2 | OFFSET, 24, 0) + bytes(12), 9),
        (struct.pack("<QQ", 5 << 2 | VIEW, 0) + bytes(8), 5),
    ]:
        api.ffi.memmove(value, data, 24)
        assert lib.TF_StringGetSize(value) == size


def test_TF_StringGetCapacity_of_each_form(api, lib, tstr):
    assert lib.TF_StringGetCapacity(tstr) == 22
    lib.TF_StringCopy(tstr, b"k" * 50, 50)
    assert lib.TF_StringGetCapacity(tstr) == 63
    offset_form = api.ffi.new("TF_TString*")
    api.ffi.memmove(offset_form, struct.pack("<III", OFFSET, 24, 0) + bytes(12), 24)
    assert lib.TF_StringGetCapacity(offset_form) == 0


def test_TF_StringDealloc_frees_large_and_leaves_others(api, lib):
    value = api.ffi.new("TF_TString*")
    lib.TF_StringInit(value)
    lib.TF_StringCopy(value, b"L" * 64, 64)
    lib.TF_StringDealloc(value)
    assert raw(api, value) == bytes(24)
    lib.TF_StringDealloc(value)  # twice is harmless
    lib.TF_StringCopy(value, b"kept", 4)
    lib.TF_StringDealloc(value)
    assert text(api, lib, value) == b"kept"
    lib.TF_StringDealloc(api.ffi.NULL)


# ---- TF_STRING tensors ----


def run_identity(api, lib, graph, session, feed):
    """Feeds `feed` to a string placeholder, fetches its Identity; returns
    (status code, message, fetched tensor or NULL)."""
    x = api.placeholder(graph, "s", dtype=TF_STRING)
    y = api.op(graph, "Identity", "copy", inputs=[(x, 0)])
    results = api.ffi.new("TF_Tensor*[]", 1)
    status = lib.TF_NewStatus()
    lib.TF_SessionRun(
        session,
        api.ffi.NULL,
        api.outputs([(x, 0)]),
        api.ffi.new("TF_Tensor*[]", [feed]),
        1,
        api.outputs([(y, 0)]),
        results,
        1,
        api.ffi.NULL,
        0,
        api.ffi.NULL,
        status,
    )
    code, message = api.code(status), api.message(status)
    lib.TF_DeleteStatus(status)
    return code, message, results[0]


@pytest.mark.covers("TF_AllocateTensor", "TF_StringCopy")
def test_string_tensor_memory_starts_as_empty_strings(api, lib):
    dims = api.ffi.new("int64_t[]", [3])
    t = lib.TF_AllocateTensor(TF_STRING, dims, 1, 3 * 24)
    assert api.ffi.buffer(lib.TF_TensorData(t), 72)[:] == bytes(72)
    elements = api.ffi.cast("TF_TString*", lib.TF_TensorData(t))
    lib.TF_StringCopy(elements + 1, b"m" * 500, 500)  # freed by TF_DeleteTensor
    assert api.strings(t) == [b"", b"m" * 500, b""]
    lib.TF_DeleteTensor(t)


@pytest.mark.covers("TF_SessionRun", "TF_StringAssignView")
def test_fed_strings_of_every_form_come_back_as_small_or_large(api, lib, graph, session):
    dims = api.ffi.new("int64_t[]", [4])
    t = lib.TF_AllocateTensor(TF_STRING, dims, 1, 4 * 24 + 8)
    elements = api.ffi.cast("TF_TString*", lib.TF_TensorData(t))
    view_source = api.ffi.new("char[]", b"a view of my bytes")
    lib.TF_StringCopy(elements + 0, b"short", 5)
    lib.TF_StringCopy(elements + 1, b"long " * 20, 100)
    lib.TF_StringAssignView(elements + 2, view_source, 18)
    # OFFSET: the 8 bytes after the last element, 3 * 24 + 24 = 96 away.
    api.ffi.memmove(elements + 3, struct.pack("<III", 8 << 2 | OFFSET, 24, 1) + bytes(12), 24)
    api.ffi.memmove(api.ffi.cast("char*", elements) + 96, b"trailing", 8)
    code, message, fetched = run_identity(api, lib, graph, session, t)
    assert code == 0, message
    lib.TF_DeleteTensor(t)
    assert lib.TF_TensorByteSize(fetched) == 4 * 24
    out = api.ffi.cast("TF_TString*", lib.TF_TensorData(fetched))
    assert [lib.TF_StringGetType(out + i) for i in range(4)] == [SMALL, LARGE, SMALL, SMALL]
    assert api.strings(fetched) == [b"short", b"long " * 20, b"a view of my bytes", b"trailing"]
    lib.TF_DeleteTensor(fetched)


def malformed_elements():
    # (24 element bytes, words the error names)
    return [
        (bytes([23 << 2]) + bytes(23), "SMALL with size 23"),
        (struct.pack("<QQQ", 40 << 2 | LARGE, 31, 0x1000), "over its capacity"),
        (struct.pack("<QQQ", 5 << 2 | LARGE, 15, 0), "impossible address"),
        (struct.pack("<QQQ", (1 << 60) << 2 | LARGE, (1 << 61), 0x1000), "impossible address"),
        (struct.pack("<QQ", 3 << 2 | VIEW, 0) + bytes(8), "impossible address"),
        (struct.pack("<III", 4 << 2 | OFFSET, 24, 0) + bytes(12), "reaching outside"),
        (struct.pack("<III", 1 << 2 | OFFSET, 0xFFFFFFFF, 0) + bytes(12), "reaching outside"),
    ]


@pytest.mark.covers("TF_SessionRun")
@pytest.mark.parametrize("element,why", malformed_elements())
def test_malformed_element_is_invalid_argument(api, lib, graph, session, element, why):
    t = lib.TF_AllocateTensor(TF_STRING, api.ffi.NULL, 0, 24)
    api.ffi.memmove(lib.TF_TensorData(t), element, 24)
    code, message, fetched = run_identity(api, lib, graph, session, t)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "Malformed TF_STRING tensor: element 0" in message and why in message
    assert fetched == api.ffi.NULL
    api.ffi.memmove(lib.TF_TensorData(t), bytes(24), 24)  # nothing for TF_DeleteTensor to free
    lib.TF_DeleteTensor(t)


@pytest.mark.covers("TF_SessionRun", "TF_StringEncode")
def test_tensorflow_1_offset_layout_too_short_is_refused(api, lib, graph, session, status):
    """An old program's buffer (8-byte offsets, varint-prefixed strings) is
    smaller than its TF_TStrings: refused, naming the 2.x layout."""
    encoded = api.ffi.new("char[]", 16)
    written = lib.TF_StringEncode(b"abc", 3, encoded, 16, status)
    api.check(status)
    data = struct.pack("<QQ", 0, written) + api.ffi.buffer(encoded, written)[:] * 2
    dims = api.ffi.new("int64_t[]", [2])
    # 24 bytes: TF_DeleteTensor reads one element, the zero offset, an empty
    # SMALL string, so deleting this 1.x buffer frees nothing it should not.
    t = lib.TF_AllocateTensor(TF_STRING, dims, 1, len(data))
    assert t != api.ffi.NULL  # TensorFlow 2.x takes any length here too
    api.ffi.memmove(lib.TF_TensorData(t), data, len(data))
    code, message, fetched = run_identity(api, lib, graph, session, t)
    assert code == CODES["INVALID_ARGUMENT"]
    assert "TensorFlow 2.x's layout" in message and fetched == api.ffi.NULL
    lib.TF_DeleteTensor(t)


@pytest.mark.covers("TF_NewTensor")
def test_new_tensor_over_callers_tstrings_calls_its_deallocator(api, lib, graph, session):
    array = api.ffi.new("TF_TString[2]")
    lib.TF_StringCopy(array + 0, b"first", 5)
    lib.TF_StringCopy(array + 1, b"second " * 10, 70)
    calls = []

    @api.ffi.callback("void(void*, size_t, void*)")
    def deallocator(data, length, arg):
        calls.append((address(api, data), length))

    dims = api.ffi.new("int64_t[]", [2])
    t = lib.TF_NewTensor(TF_STRING, dims, 1, array, 48, deallocator, api.ffi.NULL)
    code, message, fetched = run_identity(api, lib, graph, session, t)
    assert code == 0, message
    assert api.strings(fetched) == [b"first", b"second " * 10]
    lib.TF_DeleteTensor(fetched)
    lib.TF_DeleteTensor(t)
    assert calls == [(address(api, array), 48)]
    # The elements are the caller's: still intact, freed by the caller.
    assert text(api, lib, array + 1) == b"second " * 10
    lib.TF_StringDealloc(array + 1)


@pytest.mark.covers("TF_SetAttrTensor")
def test_string_const_attr_from_tstrings(api, lib, graph, session):
    value = api.string_tensor([b"x", b"y" * 40], shape=[2])
    const = api.op(
        graph, "Const", "c", attrs={"value": ("tensor", value), "dtype": ("type", TF_STRING)}
    )
    lib.TF_DeleteTensor(value)
    (fetched,) = api.run(session, fetches=[(const, 0)])
    assert fetched == [b"x", b"y" * 40]


@pytest.mark.covers("TF_SetAttrTensor")
def test_malformed_string_attr_is_invalid_argument(api, lib, graph, status):
    value = lib.TF_AllocateTensor(TF_STRING, api.ffi.NULL, 0, 24)
    api.ffi.memmove(lib.TF_TensorData(value), bytes([30 << 2]) + bytes(23), 24)
    desc = lib.TF_NewOperation(graph, b"Const", b"c")
    lib.TF_SetAttrTensor(desc, b"value", value, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    lib.TF_SetAttrType(desc, b"dtype", TF_STRING)
    lib.TF_FinishOperation(desc, status)  # frees the description; its error was reported
    api.ffi.memmove(lib.TF_TensorData(value), bytes(24), 24)
    lib.TF_DeleteTensor(value)
