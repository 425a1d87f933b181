"""The v1 control-flow ops (Switch, Merge, Enter, Exit, NextIteration,
LoopCond) and the grouping helpers tf.group, tf.tuple, tf.no_op and
with_dependencies, as TensorFlow 1.x's control_flow_ops module has them.

tf.cond (cond.py) and tf.while_loop (while_loop.py) build their graphs from
these ops; the contexts that route values into branches and loop bodies are
in control_flow_context.py and while_context.py.

    output_false, output_true = switch(x, pred)   # the other output is dead
    value, index = merge([output_false, output_true])
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import make_op

# tf.tuple below takes the name; the builtin stays reachable.
_python_tuple = tuple

# --- the ops -------------------------------------------------------------------


def _is_ref(tensor):
    return tensor.dtype.is_ref_dtype


def switch(data, pred, dtype=None, name=None):
    """(output_false, output_true): `data` comes out of the one `pred`
    selects; the other output is dead."""
    with ops.name_scope(name, "Switch", [data, pred]) as scope:
        data = ops.convert_to_tensor(data, dtype=dtype, name="data", as_ref=True)
        pred = ops.convert_to_tensor(pred, name="pred")
        if _is_ref(data):
            return _two_outputs("RefSwitch", [data, pred], {"T": data.dtype.base_dtype}, scope)
        return _two_outputs("Switch", [data, pred], {"T": data.dtype.base_dtype}, scope)


def ref_switch(data, pred, name=None):
    """Switch for a reference (a variable): forwards the reference itself."""
    with ops.name_scope(name, "RefSwitch", [data, pred]) as scope:
        data = ops.convert_to_tensor(data, name="data", as_ref=True)
        pred = ops.convert_to_tensor(pred, name="pred")
        return _two_outputs("RefSwitch", [data, pred], {"T": data.dtype.base_dtype}, scope)


def _two_outputs(op_type, inputs, attrs, scope):
    """Creates a Switch or Merge and returns its two outputs."""
    flat = [t for item in inputs for t in (item if isinstance(item, list) else [item])]
    op = _graph_of(flat).create_op(op_type, inputs, attrs=attrs, name=scope)
    return op.outputs[0], op.outputs[1]


def _switch_ref_or_tensor(data, pred, name="Switch"):
    """The Switch tf.cond puts on a value a branch takes from outside. It is
    colocated with the value (not with whatever colocation scope is open)."""
    data = ops.convert_to_tensor(data, name="data")
    with ops.colocate_with(data, ignore_existing=True):
        return switch(data, pred, name=name)


def merge(inputs, name=None):
    """(value, value_index) of the one input that is alive."""
    if any(value is None for value in inputs):
        raise ValueError(f"At least one of the merge inputs is None: {inputs}")
    with ops.name_scope(name, "Merge", inputs) as scope:
        inputs = [ops.convert_to_tensor(value, as_ref=True) for value in inputs]
        attrs = {"T": inputs[0].dtype.base_dtype, "N": len(inputs)}
        if all(_is_ref(value) for value in inputs):
            return _two_outputs("RefMerge", [inputs], attrs, scope)
        return _two_outputs("Merge", [inputs], attrs, scope)


def _enter(
    data,
    frame_name,
    is_constant=False,
    parallel_iterations=10,
    use_ref=True,
    use_input_shape=True,
    name=None,
):
    """Makes `data` available in the child frame `frame_name`."""
    data = ops.convert_to_tensor(data, as_ref=True)
    attrs = {
        "T": data.dtype.base_dtype,
        "frame_name": frame_name,
        "is_constant": bool(is_constant),
        "parallel_iterations": int(parallel_iterations),
    }
    # Named after the op type unless named, as TensorFlow's generated wrappers do.
    if _is_ref(data) and use_ref:
        with ops.name_scope(name, "RefEnter", [data]) as scope:
            result = make_op("RefEnter", [data], attrs, scope)
    else:
        with ops.name_scope(name, "Enter", [data]) as scope:
            result = make_op("Enter", [data], attrs, scope)
    if use_input_shape:
        result.set_shape(data.shape)
    return result


def exit(data, name=None):
    """Hands `data` from a frame back to its parent frame."""
    data = ops.convert_to_tensor(data, as_ref=True)
    if _is_ref(data):
        with ops.name_scope(name, "RefExit", [data]) as scope:
            return make_op("RefExit", [data], {"T": data.dtype.base_dtype}, scope)
    with ops.name_scope(name, "Exit", [data]) as scope:
        return make_op("Exit", [data], {"T": data.dtype.base_dtype}, scope)


def _next_iteration(data, name=None):
    data = ops.convert_to_tensor(data, as_ref=True)
    if _is_ref(data):
        with ops.name_scope(name, "RefNextIteration", [data]) as scope:
            return make_op("RefNextIteration", [data], {"T": data.dtype.base_dtype}, scope)
    with ops.name_scope(name, "NextIteration", [data]) as scope:
        return make_op("NextIteration", [data], {"T": data.dtype.base_dtype}, scope)


def loop_cond(input, name=None):
    """The predicate of a while loop: whether another iteration runs."""
    with ops.name_scope(name, "LoopCond", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op("LoopCond", [input], {}, scope)


def _identity(tensor, name=None):
    """Identity (of a reference too: it reads the value; the runtime has no
    RefIdentity)."""
    tensor = ops.convert_to_tensor(tensor, as_ref=True)
    with ops.name_scope(name, "Identity", [tensor]) as scope:
        return make_op("Identity", [tensor], {"T": tensor.dtype.base_dtype}, scope)


def _graph_of(tensors):
    return ops._graph_of(tensors) or ops.get_default_graph()


# --- grouping --------------------------------------------------------------------


@tf_export("no_op")
def no_op(name=None):
    with ops.name_scope(name, "NoOp") as scope:
        return make_op("NoOp", [], {}, scope)


@tf_export("group")
def group(*inputs, **kwargs):
    """An op that runs after all `inputs` (operations or tensors) and outputs nothing."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unknown keyword arguments: {', '.join(kwargs)}")
    flat = []
    for item in inputs:
        flat.extend(item if isinstance(item, (list, _python_tuple)) else [item])
    with ops.name_scope(name, "group_deps", flat) as scope, ops.control_dependencies(flat):
        return no_op(name=scope)


def with_dependencies(dependencies, output_tensor, name=None):
    """`output_tensor`'s value, produced only after `dependencies` ran."""
    values = list(dependencies) + [output_tensor]
    with (
        ops.name_scope(name, "control_dependency", values) as scope,
        ops.colocate_with(output_tensor),
        ops.control_dependencies(dependencies),
    ):
        output_tensor = ops.convert_to_tensor(output_tensor)
        return _identity(output_tensor, name=scope)


@tf_export("tuple")
def tuple(tensors, name=None, control_inputs=None):
    """The `tensors` (None entries stay None), each available only once all
    of them (and `control_inputs`) are computed."""
    with ops.name_scope(name, "tuple", [t for t in tensors if t is not None]):
        tensors = [
            t
            if t is None or isinstance(t, (ops.Operation, ops.Tensor))
            else ops.convert_to_tensor(t)
            for t in tensors
        ]
        gating_ops = [t if isinstance(t, ops.Operation) else t.op for t in tensors if t is not None]
        for control in control_inputs or ():
            if isinstance(control, ops.Tensor):
                control = control.op
            elif not isinstance(control, ops.Operation):
                raise TypeError(
                    "'control_inputs' must only contain Operation or Tensor. "
                    f"Received: {type(control)}"
                )
            gating_ops.append(control)
        # Each op once, in the order given: the same graph every time.
        gating_ops = list(dict.fromkeys(gating_ops))
        if not gating_ops:
            raise ValueError(f"'tensors' must have at least one Tensor. Received: {tensors}.")
        gate = group(*gating_ops)
        result = []
        for t in tensors:
            if isinstance(t, ops.Tensor):
                result.append(with_dependencies([gate], t))
            elif isinstance(t, ops.Operation):
                with ops.control_dependencies([gate]):
                    result.append(group(t))
            else:
                result.append(None)
        return result
