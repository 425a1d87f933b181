"""Python values ⇄ AttrValue protos for op attributes.

Op wrappers pass typed Python values (a DType, a TensorShape, an ndarray for
a tensor, lists of these); the proto is what the C API receives, so every
attr kind goes through one call (TF_SetAttrValueProto).
"""

import numpy as np

from tensorweave.framework import dtypes, tensor_shape, tensor_util
from tensorweave.proto import attr_value_pb2, tensor_pb2

# DType attrs serialized, by DType: nearly every op has one (T, dtype), and
# the bytes never change.
_SERIALIZED_TYPES = {}


def serialize(value):
    """to_attr_value(value) as bytes, the form the C API takes."""
    if isinstance(value, dtypes.DType):
        found = _SERIALIZED_TYPES.get(value)
        if found is None:
            found = _SERIALIZED_TYPES[value] = to_attr_value(value).SerializeToString()
        return found
    return to_attr_value(value).SerializeToString()


def to_attr_value(value):
    attr = attr_value_pb2.AttrValue()
    if isinstance(value, attr_value_pb2.AttrValue):
        attr.CopyFrom(value)
    elif isinstance(value, dtypes.DType):
        attr.type = value.as_datatype_enum
    elif isinstance(value, (bool, np.bool_)):
        attr.b = bool(value)
    elif isinstance(value, (int, np.integer)):
        attr.i = int(value)
    elif isinstance(value, (float, np.floating)):
        attr.f = float(value)
    elif isinstance(value, (str, bytes)):
        attr.s = value.encode() if isinstance(value, str) else value
    elif isinstance(value, tensor_shape.TensorShape):
        attr.shape.CopyFrom(value.as_proto())
    elif isinstance(value, tensor_pb2.TensorProto):
        attr.tensor.CopyFrom(value)
    elif isinstance(value, np.ndarray):
        attr.tensor.CopyFrom(tensor_util.make_tensor_proto(value))
    elif isinstance(value, (list, tuple)):
        _fill_list(attr.list, value)
    else:
        raise TypeError(f"Cannot use {value!r} of type {type(value).__name__} as an attr value")
    return attr


def _fill_list(list_value, items):
    for item in items:
        if isinstance(item, dtypes.DType):
            list_value.type.append(item.as_datatype_enum)
        elif isinstance(item, (bool, np.bool_)):
            list_value.b.append(bool(item))
        elif isinstance(item, (int, np.integer)):
            list_value.i.append(int(item))
        elif isinstance(item, (float, np.floating)):
            list_value.f.append(float(item))
        elif isinstance(item, (str, bytes)):
            list_value.s.append(item.encode() if isinstance(item, str) else item)
        elif isinstance(item, tensor_shape.TensorShape):
            list_value.shape.add().CopyFrom(item.as_proto())
        elif isinstance(item, np.ndarray):
            list_value.tensor.add().CopyFrom(tensor_util.make_tensor_proto(item))
        else:
            raise TypeError(f"Cannot use {item!r} in a list attr value")


def from_attr_value(attr):
    """The value `Operation.get_attr` returns, as TensorFlow 1.x does: bytes for
    strings, DType for types, protos for shapes and tensors, lists for lists."""
    kind = attr.WhichOneof("value")
    if kind == "list":
        fields = attr.list
        for name in ("s", "i", "f", "b", "shape", "tensor", "func"):
            if len(getattr(fields, name)):
                return list(getattr(fields, name))
        if len(fields.type):
            return [dtypes.as_dtype(t) for t in fields.type]
        return []
    if kind == "type":
        return dtypes.as_dtype(attr.type)
    if kind is None:
        return []
    return getattr(attr, kind)
