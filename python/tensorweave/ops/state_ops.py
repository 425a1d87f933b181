"""Raw state ops on a variable's ref tensor: VariableV2, Assign, AssignAdd,
AssignSub, IsVariableInitialized. Given a resource variable, assign & co.
call its own methods (AssignVariableOp, ...), as TensorFlow's do."""

from tensorweave.framework import ops, tensor_shape
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import make_op


def variable_op_v2(shape, dtype, name="Variable", container="", shared_name=""):
    with ops.name_scope(name, "Variable") as scope:
        return make_op(
            "VariableV2",
            [],
            {
                "shape": tensor_shape.as_shape(shape),
                "dtype": dtype.base_dtype,
                "container": container,
                "shared_name": shared_name,
            },
            scope,
        )


def _is_resource_variable(ref):
    # Imported here: resource variables build on this module.
    from tensorweave.ops import resource_variable_ops

    return isinstance(ref, resource_variable_ops.ResourceVariable)


def _as_ref(ref):
    """A Variable stands for its ref tensor (the VariableV2 output)."""
    return ref._ref() if hasattr(ref, "_ref") else ref


@tf_export("assign")
def assign(ref, value, validate_shape=True, use_locking=True, name=None):
    """Stores `value` into the variable `ref` refers to; outputs the new value."""
    if _is_resource_variable(ref):
        return ref.assign(value, name=name)
    ref = _as_ref(ref)
    with ops.name_scope(name, "Assign", [ref, value]) as scope:
        value = ops.convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        return make_op(
            "Assign",
            [ref, value],
            {
                "T": ref.dtype.base_dtype,
                "validate_shape": bool(validate_shape),
                "use_locking": bool(use_locking),
            },
            scope,
        )


def _check_ref(ref, function):
    if not ref.dtype.is_ref_dtype:
        raise TypeError(
            f"{function} needs a variable (a ref tensor), got {ref.name} of type {ref.dtype.name}"
        )


def _update(op_type, ref, value, use_locking, name):
    if _is_resource_variable(ref):
        update = ref.assign_add if op_type == "AssignAdd" else ref.assign_sub
        return update(value, name=name)
    ref = _as_ref(ref)
    with ops.name_scope(name, op_type, [ref, value]) as scope:
        _check_ref(ref, op_type)
        value = ops.convert_to_tensor(value, dtype=ref.dtype.base_dtype, name="value")
        return make_op(
            op_type,
            [ref, value],
            {"T": ref.dtype.base_dtype, "use_locking": bool(use_locking)},
            scope,
        )


@tf_export("assign_add")
def assign_add(ref, value, use_locking=False, name=None):
    """Adds `value` to the initialized variable `ref`; outputs the new value."""
    return _update("AssignAdd", ref, value, use_locking, name)


@tf_export("assign_sub")
def assign_sub(ref, value, use_locking=False, name=None):
    """Subtracts `value` from the initialized variable `ref`; outputs the new value."""
    return _update("AssignSub", ref, value, use_locking, name)


@tf_export("is_variable_initialized")
def is_variable_initialized(ref, name=None):
    """A bool scalar: whether the variable has been assigned a value."""
    if _is_resource_variable(ref):
        return ref.is_initialized(name=name)
    ref = _as_ref(ref)
    with ops.name_scope(name, "IsVariableInitialized", [ref]) as scope:
        _check_ref(ref, "is_variable_initialized")
        return make_op("IsVariableInitialized", [ref], {"dtype": ref.dtype.base_dtype}, scope)
