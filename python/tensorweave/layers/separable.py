"""SeparableConv2D and tf.layers.separable_conv2d: a depthwise convolution
(one [kh, kw] filter per input channel and depth multiplier) followed by a
1x1 convolution mixing the channels, then a bias and an activation.

y = tf.layers.separable_conv2d(images, 64, 3, padding="same", depth_multiplier=2)
    # variables separable_conv2d/depthwise_kernel [3, 3, C, 2],
    #           separable_conv2d/pointwise_kernel [1, 1, 2 * C, 64],
    #           separable_conv2d/bias [64]

As in convolutional.py, a channels_first layer transposes its input to NHWC
and its output back.
"""

import tensorweave as tf
from tensorweave.layers.base import normalize_data_format, normalize_padding, normalize_tuple
from tensorweave.layers.convolutional import _TO_NCHW, _TO_NHWC, _check_rank_4
from tensorweave.layers.core import _KernelLayer, _positive_int, _with_activity_regularizer


class SeparableConv2D(_KernelLayer):
    """Depthwise-separable 2-D convolution with TensorFlow 1.x's variable names
    depthwise_kernel, pointwise_kernel and bias."""

    _default_name = "separable_conv2d"

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format="channels_last",
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer=None,
        pointwise_initializer=None,
        bias_initializer=None,
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        trainable=True,
        name=None,
        **kwargs,
    ):
        if depthwise_constraint is not None or pointwise_constraint is not None:
            raise ValueError("depthwise_constraint and pointwise_constraint are not supported")
        self.filters = _positive_int(filters, "filters")
        self.depth_multiplier = _positive_int(depth_multiplier, "depth_multiplier")
        super().__init__(
            activation,
            use_bias,
            None,
            bias_initializer,
            None,
            bias_regularizer,
            activity_regularizer,
            None,
            bias_constraint,
            trainable,
            name,
            **kwargs,
        )
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        if self.dilation_rate != (1, 1) and self.strides != (1, 1):
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`")
        self.depthwise_kernel = None
        self.pointwise_kernel = None

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        if input_shape.ndims is not None and input_shape.ndims != 4:
            raise ValueError(
                f"Input 0 of layer {self.name} is incompatible with the layer: "
                f"expected ndim=4, found ndim={input_shape.ndims}. "
                f"Full shape received: {input_shape}"
            )
        dims = input_shape.as_list() if input_shape.ndims is not None else None
        channel_axis = -1 if self.data_format == "channels_last" else 1
        if dims is None or len(dims) != 4 or dims[channel_axis] is None:
            raise ValueError(
                "The channel dimension of the inputs should be defined. "
                f"Found `None` (input shape {input_shape})."
            )
        channels = dims[channel_axis]
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer or tf.glorot_uniform_initializer(),
            regularizer=self.depthwise_regularizer,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [1, 1, channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer or tf.glorot_uniform_initializer(),
            regularizer=self.pointwise_regularizer,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.filters],
                initializer=self.bias_initializer or tf.zeros_initializer(),
                regularizer=self.bias_regularizer,
            )
        self.built = True

    def call(self, inputs):
        _check_rank_4(self, inputs)
        channels_first = self.data_format == "channels_first"
        if channels_first:
            inputs = tf.transpose(inputs, _TO_NHWC)
        outputs = tf.nn.separable_conv2d(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            strides=[1, *self.strides, 1],
            padding=self.padding,
            rate=list(self.dilation_rate),
            data_format="NHWC",
        )
        if self.use_bias:
            outputs = tf.nn.bias_add(outputs, self.bias, data_format="NHWC")
        if channels_first:
            outputs = tf.transpose(outputs, _TO_NCHW)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return _with_activity_regularizer(self, outputs)


def separable_conv2d(
    inputs,
    filters,
    kernel_size,
    strides=(1, 1),
    padding="valid",
    data_format="channels_last",
    dilation_rate=(1, 1),
    depth_multiplier=1,
    activation=None,
    use_bias=True,
    depthwise_initializer=None,
    pointwise_initializer=None,
    bias_initializer=None,
    depthwise_regularizer=None,
    pointwise_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    depthwise_constraint=None,
    pointwise_constraint=None,
    bias_constraint=None,
    trainable=True,
    name=None,
    reuse=None,
):
    """tf.layers.separable_conv2d: variables `<scope>/depthwise_kernel`,
    `<scope>/pointwise_kernel` and `<scope>/bias`, where the scope is `name` or
    a unique `separable_conv2d`, `separable_conv2d_1`, ..."""
    layer = SeparableConv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        data_format=data_format,
        dilation_rate=dilation_rate,
        depth_multiplier=depth_multiplier,
        activation=activation,
        use_bias=use_bias,
        depthwise_initializer=depthwise_initializer,
        pointwise_initializer=pointwise_initializer,
        bias_initializer=bias_initializer,
        depthwise_regularizer=depthwise_regularizer,
        pointwise_regularizer=pointwise_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        depthwise_constraint=depthwise_constraint,
        pointwise_constraint=pointwise_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _reuse=reuse,
    )
    return layer(inputs)
