"""Depthwise and separable convolutions: DepthwiseConv2dNative and its two
backprops against a numpy reference (SAME/VALID/EXPLICIT padding, strides,
dilations, channel multipliers, NHWC and NCHW, float32 and float64), their
gradients against central differences, the errors bad attrs and shapes
give, and tf.nn.depthwise_conv2d / separable_conv2d."""

import time

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

RNG = np.random.RandomState(7)


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def padding_before_after(size, window, stride, dilation, padding):
    """TensorFlow's (output size, pad before, pad after) of one dimension;
    `padding` is "SAME", "VALID" or a (before, after) pair."""
    effective = (window - 1) * dilation + 1
    if padding == "VALID":
        return (size - effective) // stride + 1, 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = padding
    return (size + before + after - effective) // stride + 1, before, after


def reference_depthwise(x, w, strides, padding, dilations=(1, 1)):
    """NHWC x, [kh, kw, C, M] w: out[n, i, j, c*M+m] = sum x * w[.., c, m]."""
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    row_padding, col_padding = (padding, padding) if isinstance(padding, str) else padding
    rows = padding_before_after(h, kh, strides[0], dilations[0], row_padding)
    cols = padding_before_after(wd, kw, strides[1], dilations[1], col_padding)
    padded = np.pad(x, [(0, 0), rows[1:], cols[1:], (0, 0)])
    out = np.zeros((n, rows[0], cols[0], c, m), x.dtype)
    for fr in range(kh):
        for fc in range(kw):
            r0, c0 = fr * dilations[0], fc * dilations[1]
            window = padded[
                :,
                r0 : r0 + (rows[0] - 1) * strides[0] + 1 : strides[0],
                c0 : c0 + (cols[0] - 1) * strides[1] + 1 : strides[1],
                :,
            ]
            out += window[..., None] * w[fr, fc]
    return out.reshape(n, rows[0], cols[0], c * m)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


CASES = [
    # (input shape NHWC, filter shape, strides, padding, dilations)
    ((2, 7, 8, 3), (3, 3, 3, 1), (1, 1), "SAME", (1, 1)),
    ((2, 7, 8, 3), (3, 3, 3, 2), (2, 2), "SAME", (1, 1)),
    ((1, 9, 6, 4), (3, 2, 4, 3), (2, 1), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 3)),
    ((1, 8, 7, 5), (2, 3, 5, 1), (3, 2), ((1, 2), (0, 1)), (1, 1)),
    ((3, 5, 5, 8), (5, 5, 8, 1), (1, 1), "VALID", (1, 1)),
    ((1, 4, 4, 3), (1, 1, 3, 4), (1, 1), "VALID", (1, 1)),
    ((1, 3, 3, 2), (5, 5, 2, 1), (2, 2), "SAME", (1, 1)),  # window larger than the input
]


def explicit_pairs(padding, data_format="NHWC"):
    if isinstance(padding, str):
        return padding
    if data_format == "NCHW":
        return [[0, 0], [0, 0], list(padding[0]), list(padding[1])]
    return [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_matches_numpy(case, dtype):
    shape, filter_shape, strides, padding, dilations = case
    x, w = randn(*shape, dtype=dtype), randn(*filter_shape, dtype=dtype)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d_native(
            x, w, [1, *strides, 1], explicit_pairs(padding), dilations=[1, *dilations, 1]
        )
        expected = reference_depthwise(x, w, strides, padding, dilations)
        assert y.shape.as_list() == list(expected.shape)
        got = run(y)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5
    )


@pytest.mark.parametrize("case", CASES)
def test_nchw_matches_nhwc(case):
    shape, filter_shape, strides, padding, dilations = case
    x, w = randn(*shape), randn(*filter_shape)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d_native(
            np.transpose(x, [0, 3, 1, 2]),
            w,
            [1, 1, *strides],
            explicit_pairs(padding, "NCHW"),
            data_format="NCHW",
            dilations=[1, 1, *dilations],
        )
        got = run(y)
    expected = reference_depthwise(x, w, strides, padding, dilations)
    np.testing.assert_allclose(np.transpose(got, [0, 2, 3, 1]), expected, rtol=1e-12, atol=1e-12)


def test_large_input_runs_in_parallel_blocks_with_the_same_result():
    # Enough work for the intra-op pool (MobileNet's second block shape).
    x, w = randn(2, 56, 56, 64, dtype=np.float32), randn(3, 3, 64, 1, dtype=np.float32)
    with tf.Graph().as_default():
        got = run(tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"))
    expected = reference_depthwise(x, w, (2, 2), "SAME")
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", CASES)
def test_gradients_match_central_differences(case, data_format):
    shape, filter_shape, strides, padding, dilations = case
    if data_format == "NCHW":
        x = randn(shape[0], shape[3], shape[1], shape[2])
        strides4, dilations4 = [1, 1, *strides], [1, 1, *dilations]
    else:
        x = randn(*shape)
        strides4, dilations4 = [1, *strides, 1], [1, *dilations, 1]
    check_gradients(
        lambda x, w: tf.nn.depthwise_conv2d_native(
            x,
            w,
            strides4,
            explicit_pairs(padding, data_format),
            data_format=data_format,
            dilations=dilations4,
        ),
        [x, randn(*filter_shape)],
    )


def _backprop_graphs(x_shape, w_shape, strides, padding):
    """Builds the two backprop ops of a depthwise conv on placeholders."""

    def backprop_input(w, dy):
        return tf.nn.depthwise_conv2d_native_backprop_input(
            x_shape, w, dy, [1, *strides, 1], padding
        )

    def backprop_filter(x, dy):
        return tf.nn.depthwise_conv2d_native_backprop_filter(
            x, w_shape, dy, [1, *strides, 1], padding
        )

    return backprop_input, backprop_filter


@pytest.mark.parametrize(
    "x_shape, w_shape, strides, padding",
    [((1, 6, 5, 2), (3, 3, 2, 2), (2, 2), "SAME"), ((2, 5, 5, 3), (2, 2, 3, 1), (1, 1), "VALID")],
)
def test_backprop_ops_have_gradients(x_shape, w_shape, strides, padding):
    rows = padding_before_after(x_shape[1], w_shape[0], strides[0], 1, padding)[0]
    cols = padding_before_after(x_shape[2], w_shape[1], strides[1], 1, padding)[0]
    dy = randn(x_shape[0], rows, cols, x_shape[3] * w_shape[3])
    backprop_input, backprop_filter = _backprop_graphs(x_shape, w_shape, strides, padding)
    check_gradients(backprop_input, [randn(*w_shape), dy])
    check_gradients(backprop_filter, [randn(*x_shape), dy])


def test_backprops_are_the_transposes_of_the_forward_op():
    # <dy, conv(x, w)> = <backprop_input(dy), x> = <backprop_filter(dy), w>.
    x, w = randn(2, 9, 7, 3), randn(3, 2, 3, 2)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d_native(x, w, [1, 2, 3, 1], "SAME", dilations=[1, 1, 1, 1])
        dy = randn(*y.shape.as_list())
        dx = tf.nn.depthwise_conv2d_native_backprop_input(x.shape, w, dy, [1, 2, 3, 1], "SAME")
        dw = tf.nn.depthwise_conv2d_native_backprop_filter(x, w.shape, dy, [1, 2, 3, 1], "SAME")
        y_value, dx_value, dw_value = run([y, dx, dw])
    forward = np.sum(dy * y_value)
    np.testing.assert_allclose(np.sum(dx_value * x), forward, rtol=1e-10)
    np.testing.assert_allclose(np.sum(dw_value * w), forward, rtol=1e-10)


def test_filter_gradient_is_deterministic():
    x, dy = randn(4, 30, 30, 16, dtype=np.float32), randn(4, 30, 30, 16, dtype=np.float32)
    with tf.Graph().as_default():
        dw = tf.nn.depthwise_conv2d_native_backprop_filter(
            x, [3, 3, 16, 1], dy, [1, 1, 1, 1], "SAME"
        )
        with tf.Session() as sess:
            first = sess.run(dw)
            for _ in range(3):
                np.testing.assert_array_equal(sess.run(dw), first)


def test_depthwise_conv2d_rate_dilates_the_filter():
    x, w = randn(1, 10, 10, 2), randn(3, 3, 2, 2)
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 3])
        same_by_alias = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", dilations=[2, 3])
        assert y.op.name == "depthwise" and y.op.get_attr("dilations") == [1, 2, 3, 1]
        got, alias = run([y, same_by_alias])
    np.testing.assert_allclose(got, reference_depthwise(x, w, (1, 1), "SAME", (2, 3)), rtol=1e-12)
    np.testing.assert_array_equal(got, alias)
    with pytest.raises(ValueError, match="strides > 1"):
        tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME", rate=2)


def test_separable_conv2d_is_depthwise_then_pointwise():
    x, dw, pw = randn(2, 8, 8, 3), randn(3, 3, 3, 2), randn(1, 1, 6, 5)
    with tf.Graph().as_default() as graph:
        y = tf.nn.separable_conv2d(x, dw, pw, [1, 2, 2, 1], "SAME")
        types = {op.name: op.type for op in graph.get_operations()}
        got = run(y)
    assert types["separable_conv2d/depthwise"] == "DepthwiseConv2dNative"
    assert types["separable_conv2d"] == "Conv2D"
    depthwise = reference_depthwise(x, dw, (2, 2), "SAME")
    np.testing.assert_allclose(got, depthwise @ pw[0, 0], rtol=1e-12)
    check_gradients(
        lambda x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID"),
        [randn(1, 5, 5, 2), randn(3, 3, 2, 2), randn(1, 1, 4, 3)],
    )
    with pytest.raises(ValueError, match=r"\[1, 1, in, out\]"):
        tf.nn.separable_conv2d(x, dw, randn(2, 1, 6, 5), [1, 1, 1, 1], "SAME")


def test_shape_function_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 17, None, 6])
        y = tf.nn.depthwise_conv2d(x, tf.zeros([3, 3, 6, 2]), [1, 2, 2, 1], "SAME")
        assert y.shape.as_list() == [None, 9, None, 12]
        nchw = tf.placeholder(tf.float32, [4, None, 10, 10])
        z = tf.nn.depthwise_conv2d_native(
            nchw, tf.zeros([3, 3, 5, 3]), [1, 1, 1, 1], "VALID", data_format="NCHW"
        )
        assert z.shape.as_list() == [4, 15, 8, 8]
        dx = tf.nn.depthwise_conv2d_native_backprop_input(
            [2, 5, 5, 3], tf.zeros([3, 3, 3, 1]), tf.zeros([2, 5, 5, 3]), [1, 1, 1, 1], "SAME"
        )
        assert dx.shape.as_list() == [2, 5, 5, 3]


@pytest.mark.parametrize(
    "attrs, message",
    [
        ({"strides": [2, 1, 1, 1]}, "batch and depth"),
        ({"strides": [1, 1, 1]}, "must specify 4"),
        ({"strides": [1, 0, 1, 1]}, "must be positive"),
        ({"dilations": [1, 1, 1, 2]}, "batch and depth"),
        ({"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}, "must contain 8"),
        ({"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 1, 0, 0, 0, 0]}, "nonnegative"),
        ({"padding": "EXPLICIT", "explicit_paddings": [1, 0, 0, 0, 0, 0, 0, 0]}, "batch or depth"),
        ({"padding": "SAME", "explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 0]}, "must be empty"),
    ],
)
def test_bad_attrs_are_invalid_argument_naming_the_node(attrs, message):
    full = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC", "T": tf.float32}
    full.update(attrs)
    with tf.Graph().as_default() as graph:
        x, w = tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2, 1])
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match=message) as error:
            graph.create_op("DepthwiseConv2dNative", [x, w], attrs=full, name="bad_depthwise")
    assert "bad_depthwise" in str(error.value)


def test_kernel_errors_are_invalid_argument():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None)
        w = tf.placeholder(tf.float32, None)
        y = tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], "VALID", name="conv_node")
        with tf.Session() as sess:
            feeds = [
                (np.zeros([1, 4, 4, 3]), np.zeros([2, 2, 2, 1]), "same depth"),
                (np.zeros([4, 4, 3]), np.zeros([2, 2, 3, 1]), "4-dimensional"),
                (np.zeros([1, 4, 4, 3]), np.zeros([2, 3, 1]), "4-dimensional"),
                (np.zeros([1, 2, 2, 3]), np.zeros([3, 3, 3, 1]), "negative"),
                (np.zeros([1, 4, 4, 3]), np.zeros([0, 3, 3, 1]), "non-empty"),
            ]
            for x_value, w_value, message in feeds:
                with pytest.raises(tf.errors.InvalidArgumentError, match=message) as error:
                    sess.run(y, {x: x_value, w: w_value})
                assert "conv_node" in str(error.value)
        dy = tf.placeholder(tf.float32, None)
        dx = tf.nn.depthwise_conv2d_native_backprop_input(
            [1, 4, 4, 3], tf.zeros([3, 3, 3, 1]), dy, [1, 1, 1, 1], "SAME"
        )
        sizes = tf.placeholder(tf.int32, None)
        dw = tf.nn.depthwise_conv2d_native_backprop_filter(
            tf.zeros([1, 4, 4, 3]), sizes, tf.zeros([1, 4, 4, 3]), [1, 1, 1, 1], "SAME"
        )
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop has shape"):
                sess.run(dx, {dy: np.zeros([1, 4, 4, 2])})
            with pytest.raises(tf.errors.InvalidArgumentError, match="4 sizes"):
                sess.run(dw, {sizes: [3, 3, 3]})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(dw, {sizes: [3, -3, 3, 1]})
            # A huge multiplier is refused before any allocation.
            with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop has shape"):
                sess.run(dw, {sizes: [3, 3, 3, 2**31 - 1]})


def test_empty_batch_and_empty_channels():
    with tf.Graph().as_default():
        y = tf.nn.depthwise_conv2d(
            np.zeros([0, 5, 5, 2], np.float32),
            np.ones([3, 3, 2, 2], np.float32),
            [1, 1, 1, 1],
            "SAME",
        )
        z = tf.nn.depthwise_conv2d_native_backprop_filter(
            np.zeros([0, 5, 5, 2], np.float32),
            [3, 3, 2, 1],
            np.zeros([0, 5, 5, 2], np.float32),
            [1, 1, 1, 1],
            "SAME",
        )
        y_value, z_value = run([y, z])
    assert y_value.shape == (0, 5, 5, 4)
    np.testing.assert_array_equal(z_value, np.zeros([3, 3, 2, 1]))


@pytest.mark.parametrize("op", ["forward", "backprop_input", "backprop_filter"])
def test_a_huge_window_stops_at_the_step_deadline(op):
    # 600x600 pixels x a 300x300 window is ~3e10 multiply-adds (minutes); the
    # kernels poll the step's deadline between rows.
    x_value = np.ones([1, 600, 600, 1], np.float32)
    w_value = np.ones([300, 300, 1, 1], np.float32)
    with tf.Graph().as_default():
        # Placeholders: constants would be folded before the step starts.
        x = tf.placeholder(tf.float32, x_value.shape)
        w = tf.placeholder(tf.float32, w_value.shape)
        if op == "forward":
            y = tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], "SAME")
        elif op == "backprop_input":
            y = tf.nn.depthwise_conv2d_native_backprop_input(
                x_value.shape, w, x, [1, 1, 1, 1], "SAME"
            )
        else:
            y = tf.nn.depthwise_conv2d_native_backprop_filter(
                x, w_value.shape, x, [1, 1, 1, 1], "SAME"
            )
        with tf.Session() as sess:
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(
                    y.op,
                    feed_dict={x: x_value, w: w_value},
                    options=tf.RunOptions(timeout_in_ms=300),
                )
            assert time.monotonic() - start < 20
