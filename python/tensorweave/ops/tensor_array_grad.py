"""Gradients of the TensorArrayV3 ops, as TensorFlow 1.x's tensor_array_grad.py.

The gradient of a TensorArray is another TensorArray (TensorArrayGradV3),
made in the runtime on first use for one gradient computation and shared by
every gradient op of that computation, so that gradients written to one
index by several reads add up. The gradient flows backwards through the
`flow` tensors: a read's gradient writes into the gradient array and
returns its flow as the gradient of the read's flow input; a write's
gradient reads the gradient array at its index.

Creating an array, taking its gradient array, its size and closing it have
no gradient (TensorFlow registers them NotDifferentiable too).
"""

from tensorweave.framework import ops
from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import array_ops, tensor_array_ops

for _op_type in (
    "TensorArrayV3",
    "TensorArrayGradV3",
    "TensorArrayGradWithShape",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
):
    NotDifferentiable(_op_type)


def _grad_source(op_or_tensor):
    """The name scope of the tf.gradients call `op_or_tensor` belongs to
    ("gradients", "outer/gradients_1", ...): each call gets its own gradient
    arrays, so two gradient computations in one run do not mix.

    A grad_ys tensor the caller made reaches a gradient function under its
    own name (TensorFlow copies it into the gradients scope first); then the
    scope the gradient function runs in names the call instead."""
    for name in (op_or_tensor.name, ops.get_default_graph().get_name_scope()):
        name_tokens = name.split("/")
        grad_pos = [i for i, x in enumerate(name_tokens) if x.startswith("gradients")]
        if grad_pos:
            return "/".join(name_tokens[: grad_pos[-1] + 1])
    raise ValueError(
        "Expected op/tensor name to start with gradients (excluding scope)"
        f", got: {op_or_tensor.name}. This means that a tf.gradients op with "
        "this op in its dependency path has a custom name that does not start "
        "with 'gradients'. Please make sure all calls to tf.gradients that "
        "have non-empty `name` arguments use names that start with "
        "'gradients'."
    )


def _gradient_array(handle, flow, dtype, source):
    forward = tensor_array_ops.TensorArray(
        dtype=dtype, handle=handle, flow=flow, colocate_with_first_write_call=False
    )
    return forward.grad(source=source, flow=flow)


def _after(flow, op):
    """`flow` once `op` has run: the gradient array is made only after the
    forward op it reads back from wrote its last value."""
    flow_out = array_ops.identity(op.outputs[0], "flow_out")
    with ops.control_dependencies([flow_out]):
        return array_ops.identity(flow, "write_barrier")


@RegisterGradient("TensorArrayReadV3")
def _tensor_array_read_grad(op, grad):
    handle, index, flow = op.inputs
    # Depending on the forward flow makes the gradient array after the
    # forward array reached its final size.
    g = _gradient_array(handle, flow, op.get_attr("dtype"), _grad_source(grad))
    return [None, None, g.write(index, grad).flow]


@RegisterGradient("TensorArrayWriteV3")
def _tensor_array_write_grad(op, flow):
    handle, index = op.inputs[0], op.inputs[1]
    flow = _after(flow, op)
    g = _gradient_array(handle, flow, op.get_attr("T"), _grad_source(flow))
    return [None, None, g.read(index), flow]


@RegisterGradient("TensorArrayGatherV3")
def _tensor_array_gather_grad(op, grad):
    handle, indices, flow = op.inputs
    g = _gradient_array(handle, flow, op.get_attr("dtype"), _grad_source(grad))
    return [None, None, g.scatter(indices, grad).flow]


@RegisterGradient("TensorArrayScatterV3")
def _tensor_array_scatter_grad(op, flow):
    handle, indices = op.inputs[0], op.inputs[1]
    flow = _after(flow, op)
    g = _gradient_array(handle, flow, op.get_attr("T"), _grad_source(flow))
    return [None, None, g.gather(indices), flow]


@RegisterGradient("TensorArrayConcatV3")
def _tensor_array_concat_grad(op, grad, unused_lengths_grad):
    handle, flow = op.inputs
    lengths = op.outputs[1]
    g = _gradient_array(handle, flow, op.get_attr("dtype"), _grad_source(grad))
    return [None, g.split(grad, lengths=lengths).flow]


@RegisterGradient("TensorArraySplitV3")
def _tensor_array_split_grad(op, flow):
    handle = op.inputs[0]
    flow = _after(flow, op)
    g = _gradient_array(handle, flow, op.get_attr("T"), _grad_source(flow))
    return [None, g.concat(), None, flow]
