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
