"""Gradients of the v1 control-flow ops, as TensorFlow 1.x computes them
for tf.cond: the gradient of a Merge is a Switch of the incoming gradient
on the cond's predicate (so it flows back only into the branch that ran),
and the gradient of a branch's Switch is a Merge of its two output
gradients. tf.gradients gives the unused output of a Switch zeros (a
ZerosLike of that output, alive only when the other branch ran), so the
value that reached the cond gets the taken branch's gradient, or zeros.

    r = tf.cond(p, lambda: x * x, lambda: 3.0 * x)
    dx, = tf.gradients(r, [x])   # 2x when p, else 3

Inside a while loop (TensorFlow 1.x's design, with control_flow_state.py):
the backprop loop runs the forward iterations in reverse. An Exit's
gradient enters the backprop loop (an Enter), a loop Switch's gradient is a
Merge whose back edge carries the gradient of the next iteration, a loop
Merge's gradient is a Switch on the backprop loop's predicate, and a loop
variable's Enter hands the gradient out of the backprop loop (an Exit). A
loop constant's Enter sums its gradients over every iteration (an
accumulator loop variable). A tf.cond inside a loop replays its predicate
from the forward iterations.

    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])
    dx, = tf.gradients(y, [x])   # 4x^3
"""

from tensorweave.framework import ops
from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import control_flow_ops, math_ops
from tensorweave.ops import control_flow_util as util


def _grad_while_context():
    """The backprop loop being built (the graph's context while tf.gradients
    builds the gradient of an op of a forward loop), or None."""
    context = ops.get_default_graph()._get_control_flow_context()
    return context.get_while_context() if context is not None else None


@RegisterGradient("Switch")
def _switch_grad(op, *grads):
    context = op._control_flow_context
    if context is not None and context.is_while_context():
        return _loop_switch_grad(op, grads)
    if context is not None and context.is_cond_context():
        if grads[1 - context.branch] is None:
            # The other output carries nothing (not a floating-point value).
            return None, None
        return control_flow_ops.merge(list(grads), name="cond_grad")[0], None
    # A Switch built by hand: each output's gradient comes back on its side.
    false_grad = control_flow_ops.switch(grads[0], op.inputs[1])[0]
    true_grad = control_flow_ops.switch(grads[1], op.inputs[1])[1]
    return control_flow_ops.merge([false_grad, true_grad])[0], None


def _loop_switch_grad(op, grads):
    """A loop Switch is reached twice: first from its Exit side (grads[0]),
    then, once the body's gradient is built, from its body side
    (grads[1]), which becomes the back edge of the Merge made the first
    time."""
    grad_state = _grad_while_context().grad_state
    merge_grad = grad_state.switch_map.get(op)
    if merge_grad is not None:
        if grads[1] is not None:
            next_grad = control_flow_ops._next_iteration(grads[1])
            merge_grad.op._update_input(1, next_grad)
        return None, None
    if grads[0] is not None:
        # For now both inputs of the Merge are the entering gradient.
        merge_grad = control_flow_ops.merge([grads[0], grads[0]], name="b_switch")[0]
        grad_state.switch_map[op] = merge_grad
        return merge_grad, None
    # Reached from the body side with no gradient on the Exit side: the
    # loop's result is not differentiable.
    return None, None


@RegisterGradient("RefSwitch")
def _ref_switch_grad(op, *grads):
    return _switch_grad(op, *grads)


@RegisterGradient("Merge")
def _merge_grad(op, grad, _):
    context = util.get_output_context(op.inputs[0].op)
    if context is not None and context.is_while_context():
        # A loop variable's Merge: the first iteration's value came from the
        # Enter, the others' from NextIteration.
        return control_flow_ops._switch_ref_or_tensor(grad, _grad_while_context().pivot)
    if context is not None and context.is_cond_context():
        pred = context.pred
        grad_context = _grad_while_context()
        if grad_context is not None and grad_context.grad_state is not None:
            pred = _replayed_pred(grad_context.grad_state, pred)
        return control_flow_ops._switch_ref_or_tensor(grad, pred, name="cond_grad")
    # A Merge built by hand: input i gets the gradient when it was the one chosen.
    chosen = [math_ops.equal(op.outputs[1], i) for i in range(len(op.inputs))]
    return [control_flow_ops._switch_ref_or_tensor(grad, c)[1] for c in chosen]


def _replayed_pred(grad_state, pred):
    """The predicate of a tf.cond inside a forward loop, as the backprop loop
    sees it: its value in the forward iteration being undone (kept in a
    stack), made once per backprop loop."""
    real_pred = grad_state.history_map.get(pred.name)
    if real_pred is None:
        grad_context = grad_state.grad_context
        grad_context.exit()
        try:
            history_pred = grad_state.add_forward_accumulator(pred)
        finally:
            grad_context.enter()
        real_pred = grad_state.add_backprop_accumulated_value(history_pred, pred)
        grad_state.history_map[pred.name] = real_pred
    return real_pred


@RegisterGradient("RefMerge")
def _ref_merge_grad(op, grad, _):
    return _merge_grad(op, grad, _)


@RegisterGradient("Enter")
def _enter_grad(op, grad):
    grad_context = _grad_while_context()
    if grad_context is None or not grad_context.back_prop or grad_context.grad_state is None:
        # Not in a backprop loop (or its loop asked for no backprop): the
        # gradient passes through.
        return grad
    if op.get_attr("is_constant"):
        # A loop constant: its gradient is the sum over every iteration.
        return grad_context.add_backprop_accumulator(op, grad)
    result = control_flow_ops.exit(grad)
    grad_context.loop_exits.append(result)
    grad_context.exit_result([result])
    return result


@RegisterGradient("RefEnter")
def _ref_enter_grad(op, grad):
    return _enter_grad(op, grad)


@RegisterGradient("Exit")
def _exit_grad(op, grad):
    grad_context = _grad_while_context()
    if not grad_context.back_prop:
        # tf.while_loop(..., back_prop=False): no gradient flows into it.
        return None
    if op._control_flow_context.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    grad_context.add_name(grad.name)
    grad_context.enter()
    try:
        result = control_flow_ops._enter(
            grad,
            grad_context.name,
            is_constant=False,
            parallel_iterations=grad_context.parallel_iterations,
            name="b_exit",
        )
        result.op._set_control_flow_context(grad_context)
    finally:
        grad_context.exit()
    grad_context.loop_enters.append(result)
    return result


@RegisterGradient("RefExit")
def _ref_exit_grad(op, grad):
    return _exit_grad(op, grad)


@RegisterGradient("NextIteration")
def _next_iteration_grad(op, grad):
    return grad


@RegisterGradient("RefNextIteration")
def _ref_next_iteration_grad(op, grad):
    return grad


@RegisterGradient("LoopCond")
def _loop_cond_grad(op, grad):
    # The loop's predicate is a bool: nothing flows back through it.
    return None


# No inputs, no outputs: nothing to differentiate.
NotDifferentiable("ControlTrigger")

# The stacks of the while-loop gradient keep forward values; they are the
# gradient's machinery, not something to differentiate (TensorFlow's
# data_flow_grad.py registers them the same way).
for _op_type in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"):
    NotDifferentiable(_op_type)
