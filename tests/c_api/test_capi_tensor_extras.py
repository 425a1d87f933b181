"""TensorFlow's tf_tensor.h extras: TF_TensorMaybeMove, TF_TensorBitcastFrom,
TF_SetShape, alignment and TF_TensorFromProto."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_FLOAT, TF_INT32


def test_TF_TensorMaybeMove_only_a_sole_owner(api, lib, graph):
    t = api.tensor(np.arange(4, dtype=np.float32))
    assert lib.TF_TensorMaybeMove(t) == t  # nothing else holds its memory
    shared = lib.TF_AllocateTensor(TF_INT32, api.ffi.new("int64_t[]", [4]), 1, 16)
    api.call(lib.TF_TensorBitcastFrom, t, TF_INT32, shared, api.ffi.new("int64_t[]", [4]), 1)
    assert lib.TF_TensorMaybeMove(t) == api.ffi.NULL  # `shared` holds it too
    lib.TF_DeleteTensor(shared)
    assert lib.TF_TensorMaybeMove(t) == t
    lib.TF_DeleteTensor(t)


def test_TF_TensorBitcastFrom(api, lib, status):
    source = api.tensor(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    target = lib.TF_AllocateTensor(TF_INT32, api.ffi.new("int64_t[]", [1]), 1, 4)
    lib.TF_TensorBitcastFrom(source, TF_INT32, target, api.ffi.new("int64_t[]", [6]), 1, status)
    api.check(status)
    expected = np.array([1, 2, 3, 4, 5, 6], np.float32).view(np.int32)
    assert api.to_numpy(target).tolist() == expected.tolist()
    # Same memory: a write through one shows through the other.
    api.ffi.cast("int32_t*", lib.TF_TensorData(target))[0] = 0
    assert api.to_numpy(source)[0, 0] == 0.0
    # Byte counts that differ, and a type without a fixed size: TensorFlow's
    # error, and the target untouched.
    for dtype, dims in [(TF_INT32, [5]), (7, [6])]:
        lib.TF_TensorBitcastFrom(source, dtype, target, api.ffi.new("int64_t[]", dims), 1, status)
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
        assert "not compatible" in api.message(status)
        assert api.shape(target) == (6,)
    lib.TF_DeleteTensor(target)
    lib.TF_DeleteTensor(source)


def test_TF_SetShape(api, lib):
    t = api.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    lib.TF_SetShape(t, api.ffi.new("int64_t[]", [3, 2]), 2)
    assert api.shape(t) == (3, 2)
    lib.TF_SetShape(t, api.ffi.new("int64_t[]", [7]), 1)  # 7 elements do not fit: ignored
    assert api.shape(t) == (3, 2)
    lib.TF_SetShape(t, api.ffi.new("int64_t[]", [-2]), 1)
    assert api.shape(t) == (3, 2)
    assert api.take(t).tolist() == [[0, 1], [2, 3], [4, 5]]


@pytest.mark.covers("TF_TensorDefaultAlignment")
def test_TF_TensorIsAligned(api, lib):
    assert lib.TF_TensorDefaultAlignment() == 64
    t = api.tensor(np.zeros(3, np.float32))
    assert lib.TF_TensorIsAligned(t)
    lib.TF_DeleteTensor(t)
    block = api.ffi.new("char[]", 256)
    odd = block + (-int(api.ffi.cast("uintptr_t", block)) % 64) + 4  # 4 past a 64-byte line
    t = lib.TF_NewTensor(TF_FLOAT, api.ffi.NULL, 0, odd, 4, api.ffi.NULL, api.ffi.NULL)
    # TF_NewTensor wraps memory aligned for the element type as it is.
    assert not lib.TF_TensorIsAligned(t)
    lib.TF_DeleteTensor(t)


def test_TF_TensorFromProto(api, lib, pb, status):
    proto = pb.TensorProto(dtype=TF_INT32, int_val=[4, 5, 6])
    proto.tensor_shape.dim.add(size=3)
    data = proto.SerializeToString()
    buffer = lib.TF_NewBufferFromString(data, len(data))
    t = api.tensor(np.zeros(2, np.float32))
    lib.TF_TensorFromProto(buffer, t, status)
    api.check(status)
    assert lib.TF_TensorType(t) == TF_INT32
    assert api.to_numpy(t).tolist() == [4, 5, 6]
    lib.TF_DeleteBuffer(buffer)
    bad = lib.TF_NewBufferFromString(b"\xff\xff", 2)
    lib.TF_TensorFromProto(bad, t, status)
    assert api.code(status) == CODES["INVALID_ARGUMENT"]
    assert api.to_numpy(t).tolist() == [4, 5, 6]
    lib.TF_DeleteBuffer(bad)
    lib.TF_DeleteTensor(t)
