"""Batch normalization as TensorFlow 1.x programs use it: tf.nn.moments,
tf.nn.batch_normalization (composed of elementwise ops), tf.nn.fused_batch_norm
(one FusedBatchNormV3 node), and the gradients of the FusedBatchNorm family.

    mean, variance = tf.nn.moments(x, axes=[0, 1, 2])
    y = tf.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    y, batch_mean, batch_var = tf.nn.fused_batch_norm(x, scale, offset)   # training
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, mean, var, is_training=False)
"""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import RegisterGradient
from tensorweave.ops import array_ops, constant_op, gradients_impl, math_ops

# cuDNN refuses a smaller epsilon, so TensorFlow raises every epsilon to this
# one; graphs then compute the same values everywhere.
_MIN_EPSILON = 1.001e-5


@tf_export("nn.moments")
def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of `x` over `axes`; the variance is the biased one
    (divided by the count). `shift` is accepted and unused, as in TensorFlow."""
    del shift  # TensorFlow ignores it too: the two-pass computation needs none
    if keep_dims is not None and keepdims is not None and bool(keep_dims) != bool(keepdims):
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims' with different values")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with ops.name_scope(name, "moments", [x, axes]):
        x = ops.convert_to_tensor(x, name="x")
        # float16 has too little range for sums of squares.
        y = array_ops.cast(x, dtypes.float32) if x.dtype.base_dtype == dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean's own dependence on x adds nothing to the variance's
        # gradient (its derivative there is zero), so it is cut.
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)),
            axes,
            keepdims=True,
            name="variance",
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype.base_dtype == dtypes.float16:
            return array_ops.cast(mean, dtypes.float16), array_ops.cast(variance, dtypes.float16)
        return mean, variance


@tf_export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, with
    broadcasting; `offset` and `scale` may be None. Built as TensorFlow builds
    it, x * a + b, so that graphs match node for node."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        inv = math_ops.rsqrt(math_ops.add(variance, variance_epsilon))
        if scale is not None:
            inv = math_ops.multiply(inv, scale)
        x = ops.convert_to_tensor(x, name="x")
        shifted = (
            math_ops.subtract(offset, math_ops.multiply(mean, inv))
            if offset is not None
            else math_ops.negative(math_ops.multiply(mean, inv))
        )
        return math_ops.add(
            math_ops.multiply(x, array_ops.cast(inv, x.dtype)), array_ops.cast(shifted, x.dtype)
        )


def _fused_op(op_type, inputs, attrs, name):
    """Creates one op of the family and returns all its outputs."""
    graph = ops._graph_of(inputs) or ops.get_default_graph()
    return graph.create_op(op_type, inputs, attrs=attrs, name=name).outputs


@tf_export("nn.fused_batch_norm")
def fused_batch_norm(
    x,
    scale,
    offset,
    mean=None,
    variance=None,
    epsilon=0.001,
    data_format="NHWC",
    is_training=True,
    name=None,
    exponential_avg_factor=1.0,
):
    """Batch normalization of a 4-D (or 5-D, NDHWC/NCDHW) tensor in one op.

    Returns (y, mean, variance): in training, the batch statistics (the
    variance with Bessel's correction), blended into the given `mean` and
    `variance` when exponential_avg_factor != 1; in inference, `mean` and
    `variance` themselves, which then must be given.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
            f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` "
            f"{variance!r}"
        )
    x = ops.convert_to_tensor(x, name="input")
    scale = ops.convert_to_tensor(scale, name="scale")
    offset = ops.convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant_op.constant([])
    if variance is None:
        variance = constant_op.constant([])
    mean = ops.convert_to_tensor(mean, name="mean")
    variance = ops.convert_to_tensor(variance, name="variance")
    epsilon = max(float(epsilon), _MIN_EPSILON)
    with ops.name_scope(name, "FusedBatchNormV3", [x, scale, offset, mean, variance]) as scope:
        outputs = _fused_op(
            "FusedBatchNormV3",
            [x, scale, offset, mean, variance],
            {
                "T": x.dtype.base_dtype,
                "U": scale.dtype.base_dtype,
                "epsilon": epsilon,
                # None is the op's default, as in TensorFlow's generated wrapper.
                "exponential_avg_factor": (
                    1.0 if exponential_avg_factor is None else float(exponential_avg_factor)
                ),
                "data_format": data_format,
                "is_training": bool(is_training),
            },
            scope,
        )
    return outputs[0], outputs[1], outputs[2]


# --- gradients --------------------------------------------------------------------------

# Channels-first layouts and the permutations to channels-last and back.
_TO_CHANNELS_LAST = {
    "NCHW": ([0, 2, 3, 1], [0, 3, 1, 2]),
    "NCDHW": ([0, 2, 3, 4, 1], [0, 4, 1, 2, 3]),
}


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _grad_attrs(op, data_format):
    attrs = {
        "T": op.get_attr("T"),
        "epsilon": op.get_attr("epsilon"),
        "data_format": data_format,
        "is_training": op.get_attr("is_training"),
    }
    if op.type != "FusedBatchNorm":
        attrs["U"] = op.get_attr("U")
    return attrs


def _fused_batch_norm_grad(op, grad_op, grad_y):
    """In training the gradient runs through the batch statistics the op
    saved (reserve spaces); in inference the given mean and variance are
    constants. The inference gradient runs channels-last, so channels-first
    tensors are transposed around it, as TensorFlow does."""
    x, scale = op.inputs[0], op.inputs[1]
    data_format = _text(op.get_attr("data_format"))
    if op.get_attr("is_training"):
        inputs = [grad_y, x, scale, op.outputs[3], op.outputs[4]]
        if op.type == "FusedBatchNormV3":
            inputs.append(op.outputs[5])
        dx, dscale, doffset = _fused_op(grad_op, inputs, _grad_attrs(op, data_format), None)[:3]
        return dx, dscale, doffset, None, None
    to_last, back = _TO_CHANNELS_LAST.get(data_format, (None, None))
    if to_last is not None:
        x = array_ops.transpose(x, to_last)
        grad_y = array_ops.transpose(grad_y, to_last)
    channels_last = "NDHWC" if data_format in ("NDHWC", "NCDHW") else "NHWC"
    inputs = [grad_y, x, scale, op.inputs[3], op.inputs[4]]
    if op.type == "FusedBatchNormV3":
        inputs.append(op.outputs[5])
    dx, dscale, doffset = _fused_op(grad_op, inputs, _grad_attrs(op, channels_last), None)[:3]
    if back is not None:
        dx = array_ops.transpose(dx, back)
    return dx, dscale, doffset, None, None


# Only y's gradient matters: the statistics outputs are not functions of x
# that TensorFlow differentiates.
@RegisterGradient("FusedBatchNorm")
def _fused_batch_norm_v1_grad(op, grad_y, *unused_statistic_grads):
    return _fused_batch_norm_grad(op, "FusedBatchNormGrad", grad_y)


@RegisterGradient("FusedBatchNormV2")
def _fused_batch_norm_v2_grad(op, grad_y, *unused_statistic_grads):
    return _fused_batch_norm_grad(op, "FusedBatchNormGradV2", grad_y)


@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_v3_grad(op, grad_y, *unused_statistic_grads):
    return _fused_batch_norm_grad(op, "FusedBatchNormGradV3", grad_y)


def _batch_norm_grad_composite(grad_y, x, scale, mean, variance, epsilon, data_format, training):
    """FusedBatchNormGrad's outputs rebuilt from differentiable ops, for the
    second derivative. In training the statistics are recomputed from x
    (they depend on it); in inference `mean` and `variance` are constants."""
    channels_first = data_format in ("NCHW", "NCDHW")
    rank = 5 if data_format in ("NDHWC", "NCDHW") else 4
    axes = [0] + list(range(2, rank)) if channels_first else list(range(rank - 1))
    if channels_first:
        broadcast = [1, -1] + [1] * (rank - 2)
        scale = array_ops.reshape(scale, broadcast)
        mean = array_ops.reshape(mean, broadcast)
        variance = array_ops.reshape(variance, broadcast)
    keep = channels_first
    if training:
        mean_grad_y = math_ops.reduce_mean(grad_y, axes, keepdims=keep)
        mean_x = math_ops.reduce_mean(x, axes, keepdims=keep)
        var_x = math_ops.reduce_mean(
            math_ops.squared_difference(x, array_ops.stop_gradient(mean_x)), axes, keepdims=keep
        )
        grad_y_centered = grad_y - mean_grad_y
        x_centered = x - mean_x
        inv_std = math_ops.rsqrt(var_x + epsilon)
        mean_product = math_ops.reduce_mean(grad_y * x_centered, axes, keepdims=keep)
        grad_x = (
            scale
            * inv_std
            * (grad_y_centered - math_ops.reciprocal(var_x + epsilon) * mean_product * x_centered)
        )
        grad_scale = inv_std * math_ops.reduce_sum(grad_y * x_centered, axes, keepdims=keep)
        if channels_first:
            grad_scale = array_ops.reshape(grad_scale, [-1])
    else:
        inv_std = math_ops.rsqrt(variance + epsilon)
        grad_scale = math_ops.reduce_sum(grad_y * (x - mean) * inv_std, axes)
        grad_x = grad_y * scale * inv_std
    grad_offset = math_ops.reduce_sum(grad_y, axes)
    return grad_x, grad_scale, grad_offset


def _fused_batch_norm_grad_grad(op, grad_grad_x, grad_grad_scale, grad_grad_offset, *unused):
    """Second derivative: differentiates the composite form of the gradient."""
    grad_y, x, scale, mean, variance = op.inputs[:5]
    outputs = _batch_norm_grad_composite(
        grad_y,
        x,
        scale,
        mean,
        variance,
        op.get_attr("epsilon"),
        _text(op.get_attr("data_format")),
        op.get_attr("is_training"),
    )
    # grad_y itself depends on x in the enclosing graph: the sources stop
    # the backprop, so only the composite's own dependence counts.
    sources = [grad_y, x, scale]
    grad_grad_y, grad_x, grad_scale = gradients_impl.gradients(
        list(outputs),
        sources,
        [grad_grad_x, grad_grad_scale, grad_grad_offset],
        stop_gradients=sources,
    )
    return [grad_grad_y, grad_x, grad_scale] + [None] * (len(op.inputs) - 3)


for _grad_op in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    RegisterGradient(_grad_op)(_fused_batch_norm_grad_grad)
