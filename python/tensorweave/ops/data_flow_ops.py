"""The Stack ops (StackV2, StackPushV2, StackPopV2, StackCloseV2) as
TensorFlow's gen_data_flow_ops has them: internal builders, not public API
(TensorFlow exposes them only as tf.raw_ops), for the gradient of
tf.while_loop, which pushes each iteration's forward values and pops them
in the backward loop.

    handle = stack_v2(max_size=-1, elem_type=tf.float32)  # -1: no limit
    pushed = stack_push_v2(handle, x)    # x, once it is on the stack
    with tf.control_dependencies([pushed]):
        top = stack_pop_v2(handle, tf.float32)
    closed = stack_close_v2(handle)

A stack lives in its step's container: every run starts with none.
"""

from tensorweave.framework import dtypes, ops
from tensorweave.ops.op_builder import make_op


def stack_v2(max_size, elem_type, stack_name="", name=None):
    """A new stack of `elem_type` tensors holding at most `max_size` (a
    negative size means no limit); returns its handle."""
    with ops.name_scope(name, "StackV2", [max_size]) as scope:
        max_size = ops.convert_to_tensor(max_size, dtype=dtypes.int32, name="max_size")
        return make_op(
            "StackV2",
            [max_size],
            {"elem_type": dtypes.as_dtype(elem_type).base_dtype, "stack_name": stack_name},
            scope,
        )


def stack_push_v2(handle, elem, swap_memory=False, name=None):
    """Pushes `elem`; returns it, once pushed."""
    with ops.name_scope(name, "StackPushV2", [handle, elem]) as scope:
        elem = ops.convert_to_tensor(elem, name="elem")
        return make_op(
            "StackPushV2",
            [handle, elem],
            {"T": elem.dtype.base_dtype, "swap_memory": bool(swap_memory)},
            scope,
        )


def stack_pop_v2(handle, elem_type, name=None):
    """Pops the top element (INVALID_ARGUMENT when the stack is empty)."""
    with ops.name_scope(name, "StackPopV2", [handle]) as scope:
        return make_op(
            "StackPopV2", [handle], {"elem_type": dtypes.as_dtype(elem_type).base_dtype}, scope
        )


def stack_close_v2(handle, name=None):
    """Frees the stack's elements; later use of it is an error."""
    with ops.name_scope(name, "StackCloseV2", [handle]) as scope:
        return make_op("StackCloseV2", [handle], {}, scope)
