"""Python values ⇄ numpy arrays ⇄ TensorProto, with TensorFlow 1.x's rules
for inferring a dtype (Python floats become float32, Python ints int32 when
they fit) and for refusing lossy conversions (2.5 into an int32 tensor)."""

import numbers

import numpy as np

from tensorweave.framework import dtypes, tensor_shape
from tensorweave.proto import tensor_pb2


def _python_leaves(value):
    """Scalars inside nested lists/tuples (empty for numpy arrays)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _python_leaves(item)
    elif not isinstance(value, np.ndarray):
        yield value


def _assert_compatible(value, dtype):
    """TypeError when Python scalars cannot become `dtype` without loss."""
    for leaf in _python_leaves(value):
        if isinstance(leaf, np.generic):
            continue
        ok = True
        if dtype.is_bool:
            ok = isinstance(leaf, bool)
        elif dtype.is_integer:
            ok = isinstance(leaf, numbers.Integral)
        elif dtype.is_floating:
            ok = isinstance(leaf, numbers.Real)
        elif dtype == dtypes.string:
            ok = isinstance(leaf, (str, bytes))
        if not ok:
            raise TypeError(
                f"Expected {dtype.name}, got {leaf!r} of type '{type(leaf).__name__}' instead."
            )


def to_ndarray(value, dtype=None, shape=None):
    """The numpy array a constant of `value` holds, with dtype and shape applied."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        _assert_compatible(value, dtype)
        if dtype == dtypes.string:
            array = _string_array(value)
        else:
            array = np.asarray(value)
            if array.dtype.kind in "OSU":
                raise TypeError(f"Expected {dtype.name}, got {value!r} instead.")
            array = array.astype(dtype.as_numpy_dtype, copy=False)
    else:
        array = np.asarray(value) if not _is_stringish(value) else _string_array(value)
        if array.dtype == np.float64 and not isinstance(value, (np.ndarray, np.generic)):
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and not isinstance(value, (np.ndarray, np.generic)):
            info = np.iinfo(np.int32)
            if array.size == 0 or (array.min() >= info.min and array.max() <= info.max):
                array = array.astype(np.int32)
        elif array.dtype.kind not in "biufcO" and array.dtype.name != "bfloat16":
            raise TypeError(
                f"Failed to convert object of type {type(value)} to Tensor. Contents: {value!r}."
            )
        dtypes.as_dtype(array.dtype)  # raises for dtypes tensors cannot hold
    if shape is not None:
        shape = tensor_shape.as_shape(shape).as_list()
        if array.size == 1 and int(np.prod(shape)) != 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise ValueError(
                f"Too many elements provided. Needed {int(np.prod(shape))}, "
                f"but received {array.size}"
            )
    return array


def _is_stringish(value):
    """True for string arrays and for Python strings (possibly nested in lists)."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OSU"
    return isinstance(next(_python_leaves(value), None), (str, bytes))


def _string_array(value):
    array = np.asarray(value, dtype=object)
    flat = [item.encode() if isinstance(item, str) else item for item in array.reshape(-1)]
    if any(not isinstance(item, bytes) for item in flat):
        raise TypeError(f"Expected string, got {value!r} instead.")
    result = np.empty(len(flat), dtype=object)
    result[:] = flat
    return result.reshape(array.shape)


def make_tensor_proto(value, dtype=None, shape=None):
    """A TensorProto (tensor_content for numbers, string_val for strings)."""
    return tensor_proto_of_array(to_ndarray(value, dtype, shape))


def tensor_proto_of_array(array):
    """The TensorProto of an array to_ndarray made (its dtype and shape as they are)."""
    proto = tensor_pb2.TensorProto(dtype=dtypes.as_dtype(array.dtype).as_datatype_enum)
    proto.tensor_shape.CopyFrom(tensor_shape.TensorShape(array.shape).as_proto())
    if array.dtype == object:
        proto.string_val.extend(array.reshape(-1).tolist())
    else:
        proto.tensor_content = (
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        )
    return proto


_VALUE_FIELDS = {
    dtypes.float32: "float_val",
    dtypes.float64: "double_val",
    dtypes.int32: "int_val",
    dtypes.int16: "int_val",
    dtypes.int8: "int_val",
    dtypes.uint8: "int_val",
    dtypes.uint16: "int_val",
    dtypes.bool: "bool_val",
    dtypes.int64: "int64_val",
    dtypes.uint32: "uint32_val",
    dtypes.uint64: "uint64_val",
    dtypes.string: "string_val",
    # 16-bit patterns, one per int32 (TensorFlow's encoding).
    dtypes.float16: "half_val",
    dtypes.bfloat16: "half_val",
}


def make_ndarray(proto):
    """The numpy value of a TensorProto (tensor_content or typed values, where
    fewer values than elements repeat the last one, as TensorFlow does)."""
    dtype = dtypes.as_dtype(proto.dtype)
    shape = tensor_shape.TensorShape(proto.tensor_shape).as_list()
    count = int(np.prod(shape))
    if proto.tensor_content:
        array = np.frombuffer(
            proto.tensor_content, dtype=np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        )
        return array.astype(dtype.as_numpy_dtype).reshape(shape)
    values = list(getattr(proto, _VALUE_FIELDS[dtype]))
    if dtype == dtypes.string:
        array = np.empty(count, dtype=object)
        if values:
            array[:] = values + [values[-1]] * (count - len(values))
        return array.reshape(shape)
    if dtype in (dtypes.float16, dtypes.bfloat16):
        values = np.asarray(values, dtype=np.uint16).view(dtype.as_numpy_dtype).tolist()
    array = np.zeros(count, dtype=dtype.as_numpy_dtype)
    if values:
        array[: len(values)] = values
        array[len(values) :] = values[-1]
    return array.reshape(shape)
