"""tf.layers.separable_conv2d / SeparableConv2D: TensorFlow 1.x's variable
names and shapes, outputs equal to depthwise then pointwise convolution
plus bias and activation, channels_first, reuse, and training through it."""

import numpy as np
import pytest
import tensorweave as tf
from test_depthwise import reference_depthwise

RNG = np.random.RandomState(11)


def test_variables_have_tf1_names_and_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 9, 9, 3])
        y = tf.layers.separable_conv2d(x, 8, 3, padding="same", depth_multiplier=2)
        z = tf.layers.separable_conv2d(y, 4, (1, 3), strides=2, use_bias=False)
        shapes = {v.op.name: v.shape.as_list() for v in tf.global_variables()}
        assert shapes == {
            "separable_conv2d/depthwise_kernel": [3, 3, 3, 2],
            "separable_conv2d/pointwise_kernel": [1, 1, 6, 8],
            "separable_conv2d/bias": [8],
            "separable_conv2d_1/depthwise_kernel": [1, 3, 8, 1],
            "separable_conv2d_1/pointwise_kernel": [1, 1, 8, 4],
        }
        assert y.shape.as_list() == [None, 9, 9, 8]
        assert z.shape.as_list() == [None, 5, 4, 4]
        assert len(tf.trainable_variables()) == 5


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_output_is_depthwise_pointwise_bias_activation(data_format):
    images = RNG.standard_normal((2, 8, 7, 3)).astype(np.float32)
    with tf.Graph().as_default():
        layer = tf.layers.SeparableConv2D(
            5,
            (3, 2),
            padding="valid",
            depth_multiplier=2,
            activation=tf.nn.relu,
            bias_initializer=tf.constant_initializer(0.25),
            data_format=data_format,
        )
        fed = images if data_format == "channels_last" else images.transpose(0, 3, 1, 2)
        y = layer(tf.constant(fed))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, depthwise, pointwise = sess.run(
                [y, layer.depthwise_kernel, layer.pointwise_kernel]
            )
    if data_format == "channels_first":
        got = got.transpose(0, 2, 3, 1)
    expected = reference_depthwise(images, depthwise, (1, 1), "VALID") @ pointwise[0, 0] + 0.25
    np.testing.assert_allclose(got, np.maximum(expected, 0), rtol=1e-5, atol=1e-5)


def test_dilation_rate_reaches_the_depthwise_op():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [1, 9, 9, 2])
        tf.layers.separable_conv2d(x, 3, 3, dilation_rate=2, padding="same")
        (depthwise,) = [op for op in graph.get_operations() if op.type == "DepthwiseConv2dNative"]
        assert depthwise.get_attr("dilations") == [1, 2, 2, 1]
    with pytest.raises(ValueError, match="dilation_rate"):
        tf.layers.SeparableConv2D(3, 3, strides=2, dilation_rate=2)


def test_calling_a_layer_twice_shares_its_weights_and_reuse_works():
    with tf.Graph().as_default():
        layer = tf.layers.SeparableConv2D(4, 3, name="sep")
        a = tf.placeholder(tf.float32, [1, 5, 5, 2])
        layer(a)
        layer(a)
        with tf.variable_scope("block"):
            tf.layers.separable_conv2d(a, 4, 3, name="shared")
        with tf.variable_scope("block", reuse=True):
            tf.layers.separable_conv2d(a, 4, 3, name="shared")
        assert len(tf.global_variables()) == 6


def test_training_step_reduces_the_loss():
    images = RNG.standard_normal((4, 6, 6, 3)).astype(np.float32)
    targets = RNG.standard_normal((4, 6, 6, 2)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        y = tf.layers.separable_conv2d(tf.constant(images), 2, 3, padding="same")
        loss = tf.reduce_mean(tf.square(y - targets))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(20):
                sess.run(train)
            assert sess.run(loss) < first * 0.9


def test_rank_and_channel_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="expected ndim=4"):
            tf.layers.separable_conv2d(tf.zeros([2, 5, 5]), 3, 3)
        with pytest.raises(ValueError, match="channel dimension"):
            tf.layers.separable_conv2d(tf.placeholder(tf.float32, [1, 5, 5, None]), 3, 3)
        with pytest.raises(ValueError, match="depth_multiplier"):
            tf.layers.SeparableConv2D(3, 3, depth_multiplier=0)
