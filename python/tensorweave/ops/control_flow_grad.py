"""Gradients of the v1 control-flow ops, as TensorFlow 1.x computes them
for tf.cond: the gradient of a Merge is a Switch of the incoming gradient
on the cond's predicate (so it flows back only into the branch that ran),
and the gradient of a branch's Switch is a Merge of its two output
gradients. tf.gradients gives the unused output of a Switch zeros (a
ZerosLike of that output, alive only when the other branch ran), so the
value that reached the cond gets the taken branch's gradient, or zeros.

    r = tf.cond(p, lambda: x * x, lambda: 3.0 * x)
    dx, = tf.gradients(r, [x])   # 2x when p, else 3

Gradients through tf.while_loop need forward values kept per iteration and
a backward loop; they are not built yet, so reaching a loop's ops raises
NotImplementedError instead of building a wrong graph.
"""

from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import control_flow_ops, math_ops
from tensorweave.ops import control_flow_util as util


def _while_loop_unsupported(op):
    frame = None
    context = op._control_flow_context
    if context is not None and context.get_while_context() is not None:
        frame = context.get_while_context().name
    where = f" of loop '{frame}'" if frame else ""
    return NotImplementedError(
        "tf.gradients through tf.while_loop is not supported yet: it reached "
        f"operation '{op.name}' (op type: {op.type}){where}"
    )


def _in_while_loop(op):
    context = op._control_flow_context
    return context is not None and context.get_while_context() is not None


@RegisterGradient("Switch")
def _switch_grad(op, *grads):
    context = op._control_flow_context
    if _in_while_loop(op):
        raise _while_loop_unsupported(op)
    if context is not None and context.is_cond_context():
        if grads[1 - context.branch] is None:
            # The other output carries nothing (not a floating-point value).
            return None, None
        return control_flow_ops.merge(list(grads), name="cond_grad")[0], None
    # A Switch built by hand: each output's gradient comes back on its side.
    false_grad = control_flow_ops.switch(grads[0], op.inputs[1])[0]
    true_grad = control_flow_ops.switch(grads[1], op.inputs[1])[1]
    return control_flow_ops.merge([false_grad, true_grad])[0], None


@RegisterGradient("RefSwitch")
def _ref_switch_grad(op, *grads):
    return _switch_grad(op, *grads)


@RegisterGradient("Merge")
def _merge_grad(op, grad, _):
    if _in_while_loop(op):
        raise _while_loop_unsupported(op)
    context = util.get_output_context(op.inputs[0].op)
    if context is not None and context.is_cond_context():
        return control_flow_ops._switch_ref_or_tensor(grad, context.pred, name="cond_grad")
    # A Merge built by hand: input i gets the gradient when it was the one chosen.
    chosen = [math_ops.equal(op.outputs[1], i) for i in range(len(op.inputs))]
    return [control_flow_ops._switch_ref_or_tensor(grad, c)[1] for c in chosen]


@RegisterGradient("RefMerge")
def _ref_merge_grad(op, grad, _):
    return _merge_grad(op, grad, _)


@RegisterGradient("Enter")
def _enter_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("RefEnter")
def _ref_enter_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("Exit")
def _exit_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("RefExit")
def _ref_exit_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("NextIteration")
def _next_iteration_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("RefNextIteration")
def _ref_next_iteration_grad(op, grad):
    raise _while_loop_unsupported(op)


@RegisterGradient("LoopCond")
def _loop_cond_grad(op, grad):
    # The loop's predicate is a bool: nothing flows back through it.
    return None


# No inputs, no outputs: nothing to differentiate.
NotDifferentiable("ControlTrigger")
