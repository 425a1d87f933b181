"""TF_Tensor construction, accessors, deallocator rules, and the TF_STRING
encoding helpers."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_BOOL, TF_DOUBLE, TF_FLOAT, TF_INT32, TF_INT64, TF_STRING


@pytest.fixture
def deallocations(api):
    """A deallocator callback and the list of calls it received."""
    calls = []

    @api.ffi.callback("void(void*, size_t, void*)")
    def deallocate(data, length, arg):
        calls.append(
            (int(api.ffi.cast("uintptr_t", data)), length, int(api.ffi.cast("uintptr_t", arg)))
        )

    return deallocate, calls


def address(api, pointer):
    return int(api.ffi.cast("uintptr_t", pointer))


def aligned_block(api, nbytes, offset=0):
    """`nbytes` bytes at a 64-byte aligned address plus `offset`."""
    raw = api.ffi.new("char[]", nbytes + 128)
    start = (-address(api, raw)) % 64 + offset
    return raw, raw + start


def test_TF_NewTensor_wraps_memory_without_copy(api, lib, deallocations):
    deallocate, calls = deallocations
    _keep, data = aligned_block(api, 24)
    api.ffi.memmove(data, np.arange(6, dtype=np.float32).tobytes(), 24)
    dims = api.ffi.new("int64_t[]", [2, 3])
    t = lib.TF_NewTensor(TF_FLOAT, dims, 2, data, 24, deallocate, api.ffi.cast("void*", 7))
    assert t != api.ffi.NULL
    assert address(api, lib.TF_TensorData(t)) == address(api, data)
    assert api.to_numpy(t).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert calls == []
    lib.TF_DeleteTensor(t)
    assert calls == [(address(api, data), 24, 7)]


def test_TF_NewTensor_byte_size_mismatch_calls_deallocator_and_returns_null(
    api, lib, deallocations
):
    deallocate, calls = deallocations
    _keep, data = aligned_block(api, 16)
    dims = api.ffi.new("int64_t[]", [3])
    t = lib.TF_NewTensor(TF_FLOAT, dims, 1, data, 16, deallocate, api.ffi.NULL)
    assert t == api.ffi.NULL
    assert calls == [(address(api, data), 16, 0)]


@pytest.mark.parametrize(
    "dtype,dims",
    [
        (20, [1]),  # TF_RESOURCE: not held by this runtime
        (0, [1]),  # no such type
        (TF_FLOAT, [-1]),  # negative dim
        (TF_FLOAT, [1 << 40, 1 << 40]),  # element count overflows
    ],
)
def test_TF_NewTensor_rejects_bad_arguments_and_still_deallocates(
    api, lib, deallocations, dtype, dims
):
    deallocate, calls = deallocations
    _keep, data = aligned_block(api, 8)
    t = lib.TF_NewTensor(
        dtype, api.ffi.new("int64_t[]", dims), len(dims), data, 4, deallocate, api.ffi.NULL
    )
    assert t == api.ffi.NULL
    assert len(calls) == 1


def test_TF_NewTensor_copies_misaligned_memory_and_deallocates_at_once(api, lib, deallocations):
    deallocate, calls = deallocations
    _keep, data = aligned_block(api, 8, offset=2)  # not a multiple of 4
    api.ffi.memmove(data, np.array([1.5, 2.5], np.float32).tobytes(), 8)
    t = lib.TF_NewTensor(
        TF_FLOAT, api.ffi.new("int64_t[]", [2]), 1, data, 8, deallocate, api.ffi.NULL
    )
    assert t != api.ffi.NULL
    assert len(calls) == 1  # the data was copied, so the caller's memory is released now
    assert address(api, lib.TF_TensorData(t)) % 4 == 0
    assert api.to_numpy(t).tolist() == [1.5, 2.5]
    lib.TF_DeleteTensor(t)
    assert len(calls) == 1


def test_TF_NewTensor_naturally_aligned_memory_is_not_copied(api, lib, deallocations):
    deallocate, calls = deallocations
    _keep, data = aligned_block(api, 8, offset=4)  # float-aligned, not 16-byte aligned
    t = lib.TF_NewTensor(
        TF_FLOAT, api.ffi.new("int64_t[]", [2]), 1, data, 8, deallocate, api.ffi.NULL
    )
    assert address(api, lib.TF_TensorData(t)) == address(api, data)
    assert calls == []
    lib.TF_DeleteTensor(t)
    assert len(calls) == 1


def test_TF_NewTensor_scalar_with_null_dims_and_null_deallocator(api, lib):
    _keep, data = aligned_block(api, 8)
    api.ffi.memmove(data, np.array(42, np.int64).tobytes(), 8)
    t = lib.TF_NewTensor(TF_INT64, api.ffi.NULL, 0, data, 8, api.ffi.NULL, api.ffi.NULL)
    assert lib.TF_NumDims(t) == 0
    assert api.to_numpy(t) == 42
    lib.TF_DeleteTensor(t)


def test_TF_AllocateTensor_is_aligned_and_sized(api, lib):
    dims = api.ffi.new("int64_t[]", [4, 5])
    t = lib.TF_AllocateTensor(TF_DOUBLE, dims, 2, 160)
    assert t != api.ffi.NULL
    assert lib.TF_TensorByteSize(t) == 160
    assert address(api, lib.TF_TensorData(t)) % 64 == 0
    lib.TF_DeleteTensor(t)


def test_TF_AllocateTensor_rejects_wrong_length_and_bad_dims(api, lib):
    dims = api.ffi.new("int64_t[]", [4])
    assert lib.TF_AllocateTensor(TF_INT32, dims, 1, 15) == api.ffi.NULL
    assert lib.TF_AllocateTensor(TF_INT32, dims, -1, 16) == api.ffi.NULL
    assert lib.TF_AllocateTensor(TF_INT32, api.ffi.NULL, 1, 16) == api.ffi.NULL
    assert lib.TF_AllocateTensor(TF_STRING, dims, -1, 96) == api.ffi.NULL


def test_TF_AllocateTensor_empty(api, lib):
    dims = api.ffi.new("int64_t[]", [0, 3])
    t = lib.TF_AllocateTensor(TF_FLOAT, dims, 2, 0)
    assert t != api.ffi.NULL
    assert lib.TF_TensorElementCount(t) == 0
    assert lib.TF_TensorByteSize(t) == 0
    lib.TF_DeleteTensor(t)


def test_TF_DeleteTensor_accepts_null(api, lib):
    lib.TF_DeleteTensor(api.ffi.NULL)


def test_TF_TensorType_reports_dtype(api, lib):
    for value, expected in [
        (np.float32(1), TF_FLOAT),
        (np.int32(1), TF_INT32),
        (np.bool_(True), TF_BOOL),
        (np.float64(1), TF_DOUBLE),
    ]:
        t = api.tensor(value)
        assert lib.TF_TensorType(t) == expected
        lib.TF_DeleteTensor(t)


def test_TF_NumDims_counts_dimensions(api, lib):
    for shape in [(), (3,), (2, 3, 4)]:
        t = api.tensor(np.zeros(shape, np.float32))
        assert lib.TF_NumDims(t) == len(shape)
        lib.TF_DeleteTensor(t)


def test_TF_Dim_sizes_and_out_of_range(api, lib):
    t = api.tensor(np.zeros((2, 7), np.float32))
    assert (lib.TF_Dim(t, 0), lib.TF_Dim(t, 1)) == (2, 7)
    assert lib.TF_Dim(t, 2) == -1
    assert lib.TF_Dim(t, -1) == -1
    lib.TF_DeleteTensor(t)


def test_TF_TensorByteSize_numeric_and_string(api, lib):
    t = api.tensor(np.zeros((3, 2), np.int64))
    assert lib.TF_TensorByteSize(t) == 48
    lib.TF_DeleteTensor(t)
    s = api.string_tensor([b"ab", b""])
    assert lib.TF_TensorByteSize(s) == 2 * 24  # one TF_TString each
    lib.TF_DeleteTensor(s)


def test_TF_TensorData_is_writable(api, lib):
    t = api.tensor(np.zeros(3, np.int32))
    data = api.ffi.cast("int32_t*", lib.TF_TensorData(t))
    data[1] = 9
    assert api.to_numpy(t).tolist() == [0, 9, 0]
    lib.TF_DeleteTensor(t)


def test_TF_TensorElementCount(api, lib):
    for shape, count in [((), 1), ((5,), 5), ((2, 0), 0), ((2, 3, 4), 24)]:
        t = api.tensor(np.zeros(shape, np.float32))
        assert lib.TF_TensorElementCount(t) == count
        lib.TF_DeleteTensor(t)


@pytest.mark.parametrize(
    "length,expected", [(0, 1), (1, 2), (127, 128), (128, 130), (16383, 16385), (16384, 16387)]
)
def test_TF_StringEncodedSize_is_varint_plus_bytes(lib, length, expected):
    assert lib.TF_StringEncodedSize(length) == expected


def test_TF_StringEncode_writes_varint_length_then_bytes(api, lib, status):
    text = b"x" * 200
    out = api.ffi.new("char[]", 202)
    written = lib.TF_StringEncode(text, len(text), out, 202, status)
    api.check(status)
    assert written == 202
    assert api.ffi.buffer(out, 202)[:] == bytes([0xC8, 0x01]) + text


def test_TF_StringEncode_too_small_destination(api, lib, status):
    out = api.ffi.new("char[]", 3)
    assert lib.TF_StringEncode(b"abc", 3, out, 3, status) == 0
    assert lib.TF_GetCode(status) == CODES["INVALID_ARGUMENT"]


def test_TF_StringDecode_points_into_source(api, lib, status):
    encoded = api.ffi.new("char[]", b"\x05hello trailing")
    dst = api.ffi.new("char**")
    dst_len = api.ffi.new("size_t*")
    consumed = lib.TF_StringDecode(encoded, 15, dst, dst_len, status)
    api.check(status)
    assert consumed == 6
    assert dst_len[0] == 5
    assert address(api, dst[0]) == address(api, encoded) + 1
    assert api.ffi.buffer(dst[0], 5)[:] == b"hello"


@pytest.mark.parametrize("data", [b"\x05abc", b"\x80", b"\xff" * 11, b""])
def test_TF_StringDecode_rejects_truncated_or_malformed(api, lib, status, data):
    src = api.ffi.new("char[]", data or b"\0")
    dst = api.ffi.new("char**")
    dst_len = api.ffi.new("size_t*", 77)
    assert lib.TF_StringDecode(src, len(data), dst, dst_len, status) == 0
    assert lib.TF_GetCode(status) == CODES["INVALID_ARGUMENT"]
    assert dst_len[0] == 77


def test_string_tensor_round_trip(api, lib):
    values = [b"", b"a", b"\x00binary\xff", b"y" * 300]
    t = api.string_tensor(values, shape=[2, 2])
    assert lib.TF_TensorType(t) == TF_STRING
    assert api.shape(t) == (2, 2)
    assert api.strings(t) == values
    lib.TF_DeleteTensor(t)


@pytest.mark.parametrize("dtype", [2147483647, -1, 0, 24, 99, 101, 1000])
def test_TF_AllocateTensor_rejects_dtypes_outside_the_enum(api, lib, dtype):
    dims = api.ffi.new("int64_t[]", [1])
    assert lib.TF_AllocateTensor(dtype, dims, 1, 8) == api.ffi.NULL
    # 24 is TF_FLOAT8_E5M2: TensorFlow knows its size, the runtime cannot hold it.
    assert lib.TF_DataTypeSize(dtype) == (1 if dtype == 24 else 0)


def test_TF_AllocateTensor_refuses_byte_counts_that_wrap(api, lib):
    # 2^31 x 2^31 float32 elements are 2^64 bytes: zero once wrapped.
    dims = api.ffi.new("int64_t[]", [2**31, 2**31])
    assert lib.TF_AllocateTensor(TF_FLOAT, dims, 2, 0) == api.ffi.NULL
