"""tf.nn.moments, tf.nn.batch_normalization and tf.nn.fused_batch_norm against
numpy, their gradients against central differences (the fused ops are float32
only, as in TensorFlow, so the differences run in float32 with a coarse step),
second derivatives, and the errors bad input gets."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

RNG = np.random.RandomState(7)

CHANNELS_LAST = {"NHWC": True, "NCHW": False, "NDHWC": True, "NCDHW": False}


def _shape(data_format, channels=3):
    spatial = [3, 2] if len(data_format) == 4 else [2, 3, 2]
    return [2, *spatial, channels] if CHANNELS_LAST[data_format] else [2, channels, *spatial]


def _axes(data_format):
    rank = len(data_format)
    return tuple(range(rank - 1)) if CHANNELS_LAST[data_format] else (0, *range(2, rank))


def _per_channel(vector, data_format):
    rank = len(data_format)
    shape = [1] * rank
    shape[rank - 1 if CHANNELS_LAST[data_format] else 1] = -1
    return np.reshape(vector, shape)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_moments_match_numpy_and_keep_dims():
    x = RNG.randn(4, 5, 6).astype(np.float32) * 3 + 2
    mean, variance = tf.nn.moments(tf.constant(x), axes=[0, 2])
    kept = tf.nn.moments(tf.constant(x), axes=[0, 2], keep_dims=True)
    kept2 = tf.nn.moments(tf.constant(x), axes=[0, 2], keepdims=True, shift=123.0)
    m, v, (km, kv), (k2m, _) = _run([mean, variance, kept, kept2])
    np.testing.assert_allclose(m, x.mean((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(v, x.var((0, 2)), rtol=1e-5)
    assert km.shape == (1, 5, 1) and kv.shape == (1, 5, 1)
    np.testing.assert_allclose(k2m, km)  # shift changes nothing
    assert mean.op.name.startswith("moments/")


def test_moments_gradient():
    check_gradients(lambda x: list(tf.nn.moments(x, axes=[0])), [RNG.randn(5, 3)])


def test_batch_normalization_matches_numpy_with_and_without_offset_scale():
    x = RNG.randn(4, 3).astype(np.float32)
    mean, var = RNG.randn(3).astype(np.float32), RNG.rand(3).astype(np.float32) + 0.5
    offset, scale = RNG.randn(3).astype(np.float32), RNG.rand(3).astype(np.float32) + 0.5
    full = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    bare = tf.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    got_full, got_bare = _run([full, bare])
    np.testing.assert_allclose(got_full, (x - mean) / np.sqrt(var + 1e-3) * scale + offset, 1e-5)
    np.testing.assert_allclose(got_bare, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-5, atol=1e-6)
    assert full.op.name.startswith("batchnorm/")


def test_batch_normalization_gradient():
    check_gradients(
        lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 0.01),
        [RNG.randn(4, 3), RNG.randn(3), RNG.rand(3) + 0.5, RNG.randn(3), RNG.rand(3) + 0.5],
    )


@pytest.mark.parametrize("data_format", list(CHANNELS_LAST))
def test_fused_batch_norm_training_matches_numpy(data_format):
    x = (RNG.randn(*_shape(data_format)) * 2 + 1).astype(np.float32)
    scale = RNG.rand(3).astype(np.float32) + 0.5
    offset = RNG.randn(3).astype(np.float32)
    y, mean, var = tf.nn.fused_batch_norm(x, scale, offset, data_format=data_format)
    got_y, got_mean, got_var = _run([y, mean, var])
    axes = _axes(data_format)
    n = x.size / 3
    ref_mean, ref_var = x.mean(axes), x.var(axes)
    expected = (x - _per_channel(ref_mean, data_format)) / np.sqrt(
        _per_channel(ref_var, data_format) + 1e-3
    ) * _per_channel(scale, data_format) + _per_channel(offset, data_format)
    np.testing.assert_allclose(got_y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_mean, ref_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_var, ref_var * n / (n - 1), rtol=1e-5)
    assert y.op.type == "FusedBatchNormV3"
    assert y.op.get_attr("data_format") in (data_format, data_format.encode())


def test_fused_batch_norm_exponential_avg_factor_blends_the_statistics():
    x = RNG.randn(4, 2, 2, 3).astype(np.float32)
    old_mean, old_var = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    ones, zeros = np.ones(3, np.float32), np.zeros(3, np.float32)
    _, mean, var = tf.nn.fused_batch_norm(
        x, ones, zeros, old_mean, old_var, exponential_avg_factor=0.25
    )
    got_mean, got_var = _run([mean, var])
    n = 16
    np.testing.assert_allclose(got_mean, 0.75 * old_mean + 0.25 * x.mean((0, 1, 2)), rtol=1e-5)
    expected_var = 0.75 * old_var + 0.25 * x.var((0, 1, 2)) * n / (n - 1)
    np.testing.assert_allclose(got_var, expected_var, rtol=1e-5)


def test_fused_batch_norm_inference_and_its_epsilon_floor():
    x = RNG.randn(2, 3, 3, 4).astype(np.float32)
    scale, offset = np.ones(4, np.float32), np.zeros(4, np.float32)
    mean, var = RNG.randn(4).astype(np.float32), np.zeros(4, np.float32) + 1e-6
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset, mean, var, epsilon=0, is_training=False)
    assert y.op.get_attr("epsilon") == pytest.approx(1.001e-5)
    got_y, got_m, got_v = _run([y, m, v])
    np.testing.assert_allclose(got_y, (x - mean) / np.sqrt(var + 1.001e-5), rtol=1e-4)
    np.testing.assert_array_equal(got_m, mean)
    np.testing.assert_array_equal(got_v, var)


def test_fused_batch_norm_inference_needs_mean_and_variance():
    with pytest.raises(ValueError, match="Both `mean` and `variance` must be a 1D tensor"):
        tf.nn.fused_batch_norm(np.ones((1, 1, 1, 2), np.float32), [1.0, 1.0], [0.0, 0.0], None,
                               None, is_training=False)  # fmt: skip
    with pytest.raises(ValueError, match="exponential_avg_factor"):
        tf.nn.fused_batch_norm(np.ones((1, 1, 1, 2), np.float32), [1.0, 1.0], [0.0, 0.0],
                               exponential_avg_factor=0.5)  # fmt: skip


def test_fused_batch_norm_shape_errors_at_graph_construction():
    with pytest.raises(ValueError, match="must have rank 4"):
        tf.nn.fused_batch_norm(np.ones((2, 3, 4), np.float32), [1.0] * 4, [0.0] * 4)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.fused_batch_norm(np.ones((2, 3, 3, 4), np.float32), [1.0] * 3, [0.0] * 3)


def test_fused_batch_norm_runtime_error_names_the_node():
    x = tf.placeholder(tf.float32, name="images")
    y, _, _ = tf.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0], name="bn")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(y, {x: np.ones((2, 2, 2, 3), np.float32)})
        assert "scale must have the same number of elements" in raised.value.message
        assert "bn" in raised.value.message
        with pytest.raises(tf.errors.InvalidArgumentError, match="4 or 5-dimensional"):
            sess.run(y, {x: np.ones((2, 2), np.float32)})


def test_fused_batch_norm_empty_batch_has_nan_statistics():
    x = tf.placeholder(tf.float32, [None, 2, 2, 3])
    y, mean, var = tf.nn.fused_batch_norm(x, [1.0] * 3, [0.0] * 3)
    dx = tf.gradients(tf.reduce_sum(y), x)[0]
    got_y, got_mean, got_var, got_dx = _run(
        [y, mean, var, dx], {x: np.zeros((0, 2, 2, 3), np.float32)}
    )
    assert got_y.shape == (0, 2, 2, 3) and got_dx.shape == (0, 2, 2, 3)
    assert np.isnan(got_mean).all() and np.isnan(got_var).all()


def _fused(data_format, is_training):
    def build(x, scale, offset, mean, variance):
        y, _, _ = tf.nn.fused_batch_norm(
            x, scale, offset, mean, variance, epsilon=0.01, data_format=data_format,
            is_training=is_training,
        )  # fmt: skip
        return y

    return build


def _fused_inputs(data_format):
    return [
        RNG.randn(*_shape(data_format)) * 1.5 + 0.5,
        RNG.rand(3) + 0.5,
        RNG.randn(3),
        RNG.randn(3) * 0.2,
        RNG.rand(3) + 0.5,
    ]


@pytest.mark.parametrize("is_training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("data_format", list(CHANNELS_LAST))
def test_fused_batch_norm_gradients_match_central_differences(data_format, is_training):
    # Training differentiates x, scale and offset (mean and variance are
    # not used); inference also treats the statistics as constants.
    check_gradients(
        _fused(data_format, is_training),
        _fused_inputs(data_format),
        dtype=np.float32,
        delta=1e-2,
        rtol=2e-2,
        atol=2e-3,
        wrt=[0, 1, 2],
    )


@pytest.mark.parametrize("is_training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_second_derivatives_match_central_differences(data_format, is_training):
    def build(x, scale, offset, mean, variance):
        y = _fused(data_format, is_training)(x, scale, offset, mean, variance)
        weights = tf.constant(np.linspace(-1, 1, np.prod(_shape(data_format))), tf.float32)
        loss = tf.reduce_sum(tf.square(y) * tf.reshape(weights, _shape(data_format)))
        return tf.gradients(loss, [x, scale])

    check_gradients(
        build,
        _fused_inputs(data_format),
        dtype=np.float32,
        delta=1e-2,
        rtol=3e-2,
        atol=5e-3,
        wrt=[0, 1],
    )


@pytest.mark.parametrize("op_type", ["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])
def test_every_version_has_its_gradient(op_type):
    x = tf.placeholder(tf.float32, [2, 2, 2, 3])
    scale, offset = tf.constant([1.0, 2.0, 0.5]), tf.constant([0.0, 1.0, -1.0])
    attrs = {"T": tf.float32, "epsilon": 0.001, "is_training": True, "data_format": "NHWC"}
    if op_type != "FusedBatchNorm":
        attrs["U"] = tf.float32
    empty = tf.constant([], tf.float32)
    op = tf.get_default_graph().create_op(op_type, [x, scale, offset, empty, empty], attrs=attrs)
    dx, dscale = tf.gradients(tf.reduce_sum(op.outputs[0] * x), [x, scale])
    types = {o.type for o in tf.get_default_graph().get_operations()}
    assert op_type.replace("Norm", "NormGrad") in types
    reference = tf.nn.fused_batch_norm(x, scale, offset)[0]
    ref_dx, ref_dscale = tf.gradients(tf.reduce_sum(reference * x), [x, scale])
    values = RNG.randn(2, 2, 2, 3).astype(np.float32)
    got = _run([dx, dscale, ref_dx, ref_dscale], {x: values})
    np.testing.assert_allclose(got[0], got[2], rtol=1e-6)
    np.testing.assert_allclose(got[1], got[3], rtol=1e-6)


def test_inference_gradient_of_channels_first_runs_channels_last_as_tensorflow():
    x = tf.placeholder(tf.float32, [2, 3, 2, 2])
    y, _, _ = tf.nn.fused_batch_norm(
        x, [1.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3, data_format="NCHW", is_training=False
    )
    tf.gradients(y, x)
    grads = [op for op in tf.get_default_graph().get_operations() if op.type.endswith("GradV3")]
    assert [g.get_attr("data_format") in ("NHWC", b"NHWC") for g in grads] == [True]
