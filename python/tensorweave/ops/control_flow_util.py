"""Questions about v1 control-flow ops and the contexts they belong to.

if is_loop_exit(op): ...
get_output_context(op)   # where op's outputs live: an Exit's are outside its loop
"""

_SWITCH_TYPES = frozenset(["Switch", "RefSwitch"])
_MERGE_TYPES = frozenset(["Merge", "RefMerge"])
_ENTER_TYPES = frozenset(["Enter", "RefEnter"])
_EXIT_TYPES = frozenset(["Exit", "RefExit"])
_NEXT_ITERATION_TYPES = frozenset(["NextIteration", "RefNextIteration"])


def is_switch(op):
    return op.type in _SWITCH_TYPES


def is_merge(op):
    return op.type in _MERGE_TYPES


def is_loop_enter(op):
    return op.type in _ENTER_TYPES


def is_loop_exit(op):
    return op.type in _EXIT_TYPES


def is_next_iteration(op):
    return op.type in _NEXT_ITERATION_TYPES


def is_loop_constant_enter(op):
    """An Enter of a value every iteration sees unchanged."""
    return is_loop_enter(op) and bool(op.get_attr("is_constant"))


def get_output_context(op):
    """The context of `op`'s outputs: its own, except for a loop's Exit,
    whose outputs are outside the loop."""
    context = op._control_flow_context
    if context is not None and is_loop_exit(op):
        context = context.outer_context
    return context


def get_while_context(op):
    """The innermost while loop `op` is in, or None."""
    context = op._control_flow_context
    return context.get_while_context() if context is not None else None


def is_containing_context(context, maybe_containing):
    """True when `maybe_containing` is `context` or one of its outer contexts."""
    while context is not maybe_containing:
        if context is None:
            return False
        context = context.outer_context
    return True


def op_in_context(op, context):
    return is_containing_context(op._control_flow_context, context)


def graph_has_while_loop(ops):
    """True when any of `ops` belongs to a while loop (or is one's Exit)."""
    return any(
        get_while_context(op) is not None or op.type in _EXIT_TYPES | _ENTER_TYPES for op in ops
    )


def _containing_while_context(context):
    return context.get_while_context() if context is not None else None


def check_input_from_valid_context(op_type, op_name, op_context, input_op):
    """ValueError (TensorFlow's message) when an op named `op_name` made in
    `op_context` may not read an output of `input_op`: a value made inside a
    while loop exists once per iteration, so only that loop (or a loop
    nested in it) can use it; outside, it must leave through the loop's
    result. Values from conds may be read anywhere (TensorFlow allows it;
    the reader is dead when the branch is not taken)."""
    input_context = get_output_context(input_op)
    if input_context is None or input_context is op_context:
        return
    while_context = _containing_while_context(op_context)
    input_while_context = _containing_while_context(input_context)
    if while_context is None:
        # The Enter and Switch ops the contexts make are built outside them.
        if input_while_context is None or op_type in _ENTER_TYPES | _SWITCH_TYPES:
            return
        raise ValueError(
            f"Cannot use '{input_op.name}' as input to '{op_name}' because "
            f"'{input_op.name}' is in a while loop."
        )
    if is_containing_context(while_context, input_while_context):
        return
    if _reads_across_gradient_loops(while_context, input_while_context):
        return
    raise ValueError(
        f"Cannot use '{input_op.name}' as input to '{op_name}' because they are in "
        "different while loops."
    )


def _reads_across_gradient_loops(while_context, input_while_context):
    """The reads tf.gradients makes between a forward loop and its backprop
    loop (control_flow_state.py): a backprop loop's op reads a value of its
    forward loop, of a loop around it or of a loop nested in it before the
    value is replaced by its history; a forward loop reads what its
    backprop side built for it (and so for one level of nesting)."""
    grad_state = getattr(while_context, "grad_state", None)
    if grad_state is not None:
        forward = grad_state.forward_context
        if input_while_context is not None and (
            is_containing_context(forward, input_while_context)
            or forward is input_while_context.outer_context
        ):
            return True
    input_grad_state = getattr(input_while_context, "grad_state", None)
    if input_grad_state is not None:
        if input_grad_state.forward_context is while_context:
            return True
        outer_state = input_grad_state.forward_context.grad_state
        if outer_state is not None and outer_state.forward_context is while_context:
            return True
    return False
