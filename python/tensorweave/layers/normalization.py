"""BatchNormalization and batch_normalization, TensorFlow 1.x's tf.layers forms.

    y = tf.layers.batch_normalization(conv, training=is_training)  # a bool or a bool tensor
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss)

The layer owns gamma and beta (trainable) and moving_mean and moving_variance
(not trainable) under its variable scope. In training it normalizes with the
batch statistics and its update ops move the moving statistics toward them:
moving -= (moving - batch) * (1 - momentum), where the fused path's batch
variance has Bessel's correction and the composed path's does not (both as
TensorFlow 1.x); in inference it normalizes with the moving statistics. Every call adds its update ops to
tf.GraphKeys.UPDATE_OPS. A 4-D input normalized over axis 1 or 3 (5-D over 1
or 4) runs as one FusedBatchNormV3 node (fused=None or True), the graph
TensorFlow builds; other inputs, or fused=False, run through tf.nn.moments
and tf.nn.batch_normalization.
"""

import numbers

import numpy as np

import tensorweave as tf
from tensorweave.framework import ops, tensor_util
from tensorweave.layers.base import Layer


def _static_bool(value):
    """The Python value of `training` when it is known while building the
    graph (a bool, or a constant bool tensor), else None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, ops.Tensor) and value.op.type == "Const":
        return bool(tensor_util.make_ndarray(value.op.get_attr("value")))
    if isinstance(value, ops.Tensor):
        return None
    return bool(value)


def _select(training, true_fn, false_fn):
    """true_fn() or false_fn() when `training` is known, else a tf.cond."""
    known = _static_bool(training)
    if known is None:
        return tf.cond(training, true_fn, false_fn)
    return true_fn() if known else false_fn()


class BatchNormalization(Layer):
    """Normalizes each channel (`axis`) of its input over all other axes."""

    _default_name = "batch_normalization"

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer=None,
        gamma_initializer=None,
        moving_mean_initializer=None,
        moving_variance_initializer=None,
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        renorm=False,
        renorm_clipping=None,
        renorm_momentum=0.99,
        fused=None,
        trainable=True,
        virtual_batch_size=None,
        adjustment=None,
        name=None,
        **kwargs,
    ):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError(
                "tensorweave's BatchNormalization does not support renorm, virtual_batch_size "
                "or adjustment yet"
            )
        if beta_constraint is not None or gamma_constraint is not None:
            raise NotImplementedError(
                "tensorweave's BatchNormalization does not support beta_constraint or "
                "gamma_constraint yet"
            )
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise NotImplementedError(
                    f"tensorweave's BatchNormalization normalizes one axis; got axis={axis}"
                )
            axis = axis[0]
        if not isinstance(axis, numbers.Integral):
            raise TypeError(f"Expected an int or a list of one int for axis, got {axis!r}")
        self.axis = int(axis)
        self.momentum = momentum
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer or tf.zeros_initializer()
        self.gamma_initializer = gamma_initializer or tf.ones_initializer()
        self.moving_mean_initializer = moving_mean_initializer or tf.zeros_initializer()
        self.moving_variance_initializer = moving_variance_initializer or tf.ones_initializer()
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.fused = True if fused is None else bool(fused)
        self._fused_requested = fused
        self.updates = []

    def build(self, input_shape):
        rank = input_shape.ndims
        if rank is None:
            raise ValueError(f"Input has undefined rank: {input_shape}")
        axis = self.axis + rank if self.axis < 0 else self.axis
        if not 0 <= axis < rank:
            raise ValueError(f"Invalid axis: {self.axis} for input of rank {rank}")
        self.axis = axis
        channels = input_shape.as_list()[axis]
        if channels is None:
            raise ValueError(
                f"Input has undefined `axis` dimension. Received input with shape {input_shape}."
            )
        layouts = {(4, 1): "NCHW", (4, 3): "NHWC", (5, 1): "NCDHW", (5, 4): "NDHWC"}
        self._data_format = layouts.get((rank, axis))
        if self._fused_requested and self._data_format is None:
            raise ValueError(
                "Unsupported axis. The use of `fused=True` is only possible with `axis=1` or "
                f"`axis=3` for 4D input tensors (`axis=1` or `axis=4` for 5D). Received: "
                f"axis={self.axis}, rank {rank}"
            )
        self.fused = self.fused and self._data_format is not None
        param_shape = [channels]
        dtype = tf.float32 if self.dtype in (tf.float16, tf.bfloat16) else self.dtype
        self.gamma = (
            self.add_weight(
                "gamma", param_shape, dtype, self.gamma_initializer, self.gamma_regularizer
            )
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(
                "beta", param_shape, dtype, self.beta_initializer, self.beta_regularizer
            )
            if self.center
            else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean", param_shape, dtype, self.moving_mean_initializer, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", param_shape, dtype, self.moving_variance_initializer, trainable=False
        )

    def _moving_average_update(self, variable, value, momentum):
        """variable -= (variable - value) * (1 - momentum), named and placed as
        TensorFlow's (AssignMovingAvg, colocated with the variable)."""
        with (
            tf.name_scope(None, "AssignMovingAvg", [variable, value, momentum]) as scope,
            tf.colocate_with(variable),
        ):
            decay = tf.convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = tf.cast(decay, variable.dtype.base_dtype)
            delta = (variable - tf.cast(value, variable.dtype.base_dtype)) * decay
            return tf.assign_sub(variable, delta, name=scope)

    def _update_momentum(self, training):
        """The momentum the updates use: the layer's when training, 1 (no
        change) when a training tensor is false at run time."""
        if _static_bool(training) is None:
            return tf.cond(
                training,
                lambda: tf.constant(self.momentum, tf.float32),
                lambda: tf.constant(1.0, tf.float32),
            )
        return tf.convert_to_tensor(self.momentum, dtype=tf.float32)

    def _fused_call(self, inputs, training):
        param_shape = self.moving_mean.shape
        gamma = self.gamma if self.scale else tf.constant(1.0, shape=param_shape)
        beta = self.beta if self.center else tf.constant(0.0, shape=param_shape)

        def training_branch():
            return tf.nn.fused_batch_norm(
                inputs,
                gamma,
                beta,
                mean=self.moving_mean,
                variance=self.moving_variance,
                epsilon=self.epsilon,
                is_training=True,
                data_format=self._data_format,
            )

        def inference_branch():
            return tf.nn.fused_batch_norm(
                inputs,
                gamma,
                beta,
                mean=self.moving_mean,
                variance=self.moving_variance,
                epsilon=self.epsilon,
                is_training=False,
                data_format=self._data_format,
            )

        # As TensorFlow 1.x's layer, the moving variance follows the op's
        # variance output, which has Bessel's correction (the composed path
        # below uses the biased one).
        outputs, mean, variance = _select(training, training_branch, inference_branch)
        if _static_bool(training) is not False:
            momentum = self._update_momentum(training)
            self._add_updates(
                [
                    self._moving_average_update(self.moving_mean, mean, momentum),
                    self._moving_average_update(self.moving_variance, variance, momentum),
                ]
            )
        return outputs

    def _composed_call(self, inputs, training):
        rank = inputs.shape.ndims
        reduction_axes = [i for i in range(rank) if i != self.axis]
        broadcast_shape = [1] * rank
        broadcast_shape[self.axis] = self.moving_mean.shape.as_list()[0]

        def broadcast(value):
            if value is None or self.axis == rank - 1:
                return value
            return tf.reshape(value, broadcast_shape)

        batch_mean, batch_variance = tf.nn.moments(inputs, reduction_axes)
        mean = _select(training, lambda: batch_mean, lambda: tf.identity(self.moving_mean))
        variance = _select(
            training, lambda: batch_variance, lambda: tf.identity(self.moving_variance)
        )
        if _static_bool(training) is not False:

            def updates_for(variable, value):
                return _select(
                    training,
                    lambda: self._moving_average_update(variable, value, self.momentum),
                    lambda: variable,
                )

            self._add_updates(
                [updates_for(self.moving_mean, mean), updates_for(self.moving_variance, variance)]
            )
        dtype = inputs.dtype.base_dtype
        return tf.nn.batch_normalization(
            inputs,
            broadcast(tf.cast(mean, dtype)),
            broadcast(tf.cast(variance, dtype)),
            broadcast(None if self.beta is None else tf.cast(self.beta, dtype)),
            broadcast(None if self.gamma is None else tf.cast(self.gamma, dtype)),
            self.epsilon,
        )

    def _add_updates(self, updates):
        self.updates.extend(updates)
        for update in updates:
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update)

    def call(self, inputs, training=False):
        if self.fused:
            return self._fused_call(inputs, training)
        return self._composed_call(inputs, training)


def batch_normalization(
    inputs,
    axis=-1,
    momentum=0.99,
    epsilon=1e-3,
    center=True,
    scale=True,
    beta_initializer=None,
    gamma_initializer=None,
    moving_mean_initializer=None,
    moving_variance_initializer=None,
    beta_regularizer=None,
    gamma_regularizer=None,
    beta_constraint=None,
    gamma_constraint=None,
    training=False,
    trainable=True,
    name=None,
    reuse=None,
    renorm=False,
    renorm_clipping=None,
    renorm_momentum=0.99,
    fused=None,
    virtual_batch_size=None,
    adjustment=None,
):
    """The functional form: a new BatchNormalization applied to `inputs`;
    its update ops go to tf.GraphKeys.UPDATE_OPS."""
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _reuse=reuse,
    )
    return layer.apply(inputs, training=training)
