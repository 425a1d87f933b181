"""Depthwise and separable convolutions, and the gradients of their ops.

y = tf.nn.depthwise_conv2d(x, filter, strides=[1, 1, 1, 1], padding="SAME")
    # x [N, H, W, C], filter [kh, kw, C, multiplier] -> y [N, H, W, C * multiplier]
z = tf.nn.separable_conv2d(x, depthwise_filter, pointwise_filter, [1, 2, 2, 1], "VALID")
    # pointwise_filter [1, 1, C * multiplier, out] mixes the channels afterwards

TensorFlow runs `rate` (dilations) through SpaceToBatchND/BatchToSpaceND
around the native op; tensorweave gives the dilations to the native op,
which computes the same values. The node names follow TensorFlow's: the op
of depthwise_conv2d is `depthwise` (in separable_conv2d,
`separable_conv2d/depthwise` then the pointwise Conv2D `separable_conv2d`).
"""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import RegisterGradient
from tensorweave.ops import array_ops, nn_ops
from tensorweave.ops.op_builder import convert_pair, make_op


def _spatial_dims(data_format):
    return (2, 3) if data_format == "NCHW" else (1, 2)


def _data_format(data_format):
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format


def _four(values, name, data_format):
    """An int, or 1, 2 or 4 ints, as the op's 4-vector in data_format order."""
    return nn_ops._four(values, name, "NCHW" if data_format == "NCHW" else "NHWC")


def _padding_attrs(padding, data_format):
    """ "SAME"/"VALID", or explicit paddings as 4 [before, after] pairs in
    data_format order (TensorFlow's list form), as the padding attrs."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID", "EXPLICIT"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of pairs, got {padding!r}")
        if padding.upper() == "EXPLICIT":
            raise ValueError(
                "padding 'EXPLICIT' takes its values as a list of 4 [before, after] pairs"
            )
        return {"padding": padding.upper(), "explicit_paddings": []}
    pairs = [list(pair) for pair in padding]
    if len(pairs) != 4 or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"explicit padding must be 4 [before, after] pairs, got {padding!r}")
    channel = 1 if data_format == "NCHW" else 3
    if pairs[0] != [0, 0] or pairs[channel] != [0, 0]:
        raise ValueError(
            f"explicit padding of the batch and channel dimensions must be 0, got {padding!r}"
        )
    return {"padding": "EXPLICIT", "explicit_paddings": [int(v) for pair in pairs for v in pair]}


def _depthwise_attrs(dtype, strides, padding, data_format, dilations):
    data_format = _data_format(data_format)
    attrs = {
        "T": dtype,
        "strides": _four(strides, "strides", data_format),
        "data_format": data_format,
        "dilations": _four(1 if dilations is None else dilations, "dilations", data_format),
    }
    attrs.update(_padding_attrs(padding, data_format))
    return attrs


@tf_export("nn.depthwise_conv2d_native")
def depthwise_conv2d_native(
    input, filter, strides, padding, data_format="NHWC", dilations=None, name=None
):
    """The DepthwiseConv2dNative op: `filter` [kh, kw, C, multiplier] convolves
    each input channel with its own `multiplier` filters."""
    with ops.name_scope(name, "DepthwiseConv2dNative", [input, filter]) as scope:
        input, filter = convert_pair(input, filter, "input", "filter")
        attrs = _depthwise_attrs(input.dtype.base_dtype, strides, padding, data_format, dilations)
        return make_op("DepthwiseConv2dNative", [input, filter], attrs, scope)


@tf_export("nn.depthwise_conv2d_native_backprop_input")
def depthwise_conv2d_native_backprop_input(
    input_sizes,
    filter,
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The gradient of depthwise_conv2d_native with respect to an input of
    shape `input_sizes`."""
    values = [input_sizes, filter, out_backprop]
    with ops.name_scope(name, "DepthwiseConv2dNativeBackpropInput", values) as scope:
        input_sizes = ops.convert_to_tensor(input_sizes, dtype=dtypes.int32, name="input_sizes")
        filter, out_backprop = convert_pair(filter, out_backprop, "filter", "out_backprop")
        attrs = _depthwise_attrs(filter.dtype.base_dtype, strides, padding, data_format, dilations)
        return make_op(
            "DepthwiseConv2dNativeBackpropInput", [input_sizes, filter, out_backprop], attrs, scope
        )


@tf_export("nn.depthwise_conv2d_native_backprop_filter")
def depthwise_conv2d_native_backprop_filter(
    input,
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """The gradient of depthwise_conv2d_native with respect to a filter of
    shape `filter_sizes`."""
    values = [input, filter_sizes, out_backprop]
    with ops.name_scope(name, "DepthwiseConv2dNativeBackpropFilter", values) as scope:
        input, out_backprop = convert_pair(input, out_backprop, "input", "out_backprop")
        filter_sizes = ops.convert_to_tensor(filter_sizes, dtype=dtypes.int32, name="filter_sizes")
        attrs = _depthwise_attrs(input.dtype.base_dtype, strides, padding, data_format, dilations)
        return make_op(
            "DepthwiseConv2dNativeBackpropFilter", [input, filter_sizes, out_backprop], attrs, scope
        )


def _rate(rate, dilations):
    """TensorFlow's `rate` argument (with `dilations` as its alias): 2 ints."""
    if rate is not None and dilations is not None:
        raise ValueError("Cannot specify both 'rate' and 'dilations'")
    rate = dilations if rate is None else rate
    if rate is None:
        return [1, 1]
    rate = [int(rate)] * 2 if isinstance(rate, int) else [int(r) for r in rate]
    if len(rate) != 2 or any(r < 1 for r in rate):
        raise ValueError(f"rate must be 2 positive ints, got {rate}")
    return rate


def _native_dilations(rate, strides, data_format):
    """The op's dilations for `rate`; TensorFlow refuses strides with a rate."""
    if rate != [1, 1] and any(s != 1 for s in _four(strides, "strides", data_format)):
        raise ValueError(
            f"strides > 1 not supported in conjunction with rate > 1 (rate {rate}, "
            f"strides {strides})"
        )
    return [1, 1, *rate] if data_format == "NCHW" else [1, *rate, 1]


@tf_export("nn.depthwise_conv2d")
def depthwise_conv2d(
    input, filter, strides, padding, rate=None, name=None, data_format=None, dilations=None
):
    """Depthwise 2-D convolution: output channel c * multiplier + m is input
    channel c convolved with filter[:, :, c, m]. `rate` dilates the filter."""
    data_format = _data_format(data_format)
    rate = _rate(rate, dilations)
    with ops.name_scope(name, "depthwise", [input, filter]) as scope:
        input = ops.convert_to_tensor(input, name="tensor_in")
        filter = ops.convert_to_tensor(filter, name="filter_in")
        attrs = _depthwise_attrs(
            input.dtype.base_dtype,
            strides,
            padding,
            data_format,
            _native_dilations(rate, strides, data_format),
        )
        return make_op("DepthwiseConv2dNative", [input, filter], attrs, scope)


@tf_export("nn.separable_conv2d")
def separable_conv2d(
    input,
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,
    rate=None,
    name=None,
    data_format=None,
    dilations=None,
):
    """A depthwise convolution followed by a 1x1 convolution mixing channels:
    depthwise_filter [kh, kw, C, multiplier], pointwise_filter
    [1, 1, C * multiplier, out_channels]."""
    data_format = _data_format(data_format)
    rate = _rate(rate, dilations)
    values = [input, depthwise_filter, pointwise_filter]
    with ops.name_scope(name, "separable_conv2d", values) as scope:
        input = ops.convert_to_tensor(input, name="tensor_in")
        depthwise_filter = ops.convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = ops.convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pointwise_shape = pointwise_filter.shape
        if pointwise_shape.ndims is not None:
            if pointwise_shape.ndims != 4:
                raise ValueError(f"pointwise_filter must have rank 4, got shape {pointwise_shape}")
            for dim in pointwise_shape.as_list()[:2]:
                if dim is not None and dim != 1:
                    raise ValueError(
                        f"pointwise_filter must be [1, 1, in, out], got shape {pointwise_shape}"
                    )
        attrs = _depthwise_attrs(
            input.dtype.base_dtype,
            strides,
            padding,
            data_format,
            _native_dilations(rate, strides, data_format),
        )
        depthwise = make_op("DepthwiseConv2dNative", [input, depthwise_filter], attrs, "depthwise")
        return nn_ops.conv2d(
            depthwise,
            pointwise_filter,
            [1, 1, 1, 1],
            padding="VALID",
            data_format=data_format,
            name=scope,
        )


# --- gradients ------------------------------------------------------------------------------


def _attrs_of(op):
    def text(name):
        value = op.get_attr(name)
        return value.decode() if isinstance(value, bytes) else value

    return {
        "T": op.get_attr("T"),
        "strides": list(op.get_attr("strides")),
        "padding": text("padding"),
        "explicit_paddings": list(op.get_attr("explicit_paddings")),
        "data_format": text("data_format"),
        "dilations": list(op.get_attr("dilations")),
    }


@RegisterGradient("DepthwiseConv2dNative")
def _depthwise_conv2d_native_grad(op, grad):
    input, filter = op.inputs
    attrs = _attrs_of(op)
    grad_input = make_op(
        "DepthwiseConv2dNativeBackpropInput",
        [array_ops.shape(input), filter, grad],
        attrs,
        None,
    )
    grad_filter = make_op(
        "DepthwiseConv2dNativeBackpropFilter",
        [input, array_ops.shape(filter), grad],
        attrs,
        None,
    )
    return grad_input, grad_filter


@RegisterGradient("DepthwiseConv2dNativeBackpropInput")
def _depthwise_backprop_input_grad(op, grad):
    # The op is linear in filter and out_backprop: its gradients are the
    # other two depthwise ops applied to the incoming gradient.
    _, filter, out_backprop = op.inputs
    attrs = _attrs_of(op)
    grad_filter = make_op(
        "DepthwiseConv2dNativeBackpropFilter",
        [grad, array_ops.shape(filter), out_backprop],
        attrs,
        None,
    )
    grad_out_backprop = make_op("DepthwiseConv2dNative", [grad, filter], attrs, None)
    return None, grad_filter, grad_out_backprop


@RegisterGradient("DepthwiseConv2dNativeBackpropFilter")
def _depthwise_backprop_filter_grad(op, grad):
    input, _, out_backprop = op.inputs
    attrs = _attrs_of(op)
    grad_input = make_op(
        "DepthwiseConv2dNativeBackpropInput",
        [array_ops.shape(input), grad, out_backprop],
        attrs,
        None,
    )
    grad_out_backprop = make_op("DepthwiseConv2dNative", [input, grad], attrs, None)
    return grad_input, None, grad_out_backprop
