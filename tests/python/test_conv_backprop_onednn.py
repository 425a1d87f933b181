"""Conv2DBackpropInput and Conv2DBackpropFilter through oneDNN's
backward primitives (runtime/kernels/conv_backprop_onednn.h) against numpy
and against the im2col path, on the geometries the image split and the
filter layouts must get right: SAME, VALID (with unread last rows) and
EXPLICIT padding, strides, dilations, odd sizes and channel counts that are
not multiples of oneDNN's block of 8, batches of 1 and of more images than
threads, NHWC and NCHW. TW_CONV2D_PATH forces the path of each run; the
gradients of a float32 convolution are also checked against numeric
differentiation on each path.
"""

import os

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients


def padded_geometry(rows, cols, fr, fc, stride, dilation, padding):
    """(out_rows, out_cols, ((top, bottom), (left, right))) as TensorFlow
    computes them; `padding` is SAME, VALID or explicit pairs."""
    span_r, span_c = (fr - 1) * dilation + 1, (fc - 1) * dilation + 1
    if padding == "SAME":
        out_r, out_c = -(-rows // stride), -(-cols // stride)
        pr = max((out_r - 1) * stride + span_r - rows, 0)
        pc = max((out_c - 1) * stride + span_c - cols, 0)
        return out_r, out_c, ((pr // 2, pr - pr // 2), (pc // 2, pc - pc // 2))
    pads = ((0, 0), (0, 0)) if padding == "VALID" else padding
    out_r = (rows + sum(pads[0]) - span_r) // stride + 1
    out_c = (cols + sum(pads[1]) - span_c) // stride + 1
    return out_r, out_c, pads


def numpy_backprops(x, w, dy, stride, dilation, padding):
    """(d input, d filter) of sum(conv2d(x, w) * dy), NHWC, in float64."""
    _, rows, cols, _ = x.shape
    fr, fc = w.shape[:2]
    out_r, out_c, pads = padded_geometry(rows, cols, fr, fc, stride, dilation, padding)
    xp = np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)])
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    for r in range(fr):
        for c in range(fc):
            rs = slice(r * dilation, r * dilation + (out_r - 1) * stride + 1, stride)
            cs = slice(c * dilation, c * dilation + (out_c - 1) * stride + 1, stride)
            dxp[:, rs, cs, :] += np.einsum("nhwo,io->nhwi", dy, w[r, c])
            dw[r, c] = np.einsum("nhwi,nhwo->io", xp[:, rs, cs, :], dy)
    dx = dxp[:, pads[0][0] : pads[0][0] + rows, pads[1][0] : pads[1][0] + cols, :]
    return dx, dw


@pytest.fixture
def conv_path():
    previous = os.environ.get("TW_CONV2D_PATH")

    def use(path):
        os.environ["TW_CONV2D_PATH"] = path

    yield use
    if previous is None:
        os.environ.pop("TW_CONV2D_PATH", None)
    else:
        os.environ["TW_CONV2D_PATH"] = previous


# (batch, rows, cols, in_depth, filter_rows, filter_cols, out_depth, stride, dilation, padding)
CASES = [
    (1, 9, 9, 8, 3, 3, 8, 1, 1, "SAME"),
    (4, 28, 28, 1, 5, 5, 32, 1, 1, "SAME"),  # the tutorial CNN's first layer
    (3, 14, 14, 32, 5, 5, 64, 1, 1, "SAME"),  # and its second
    (2, 20, 15, 12, 3, 3, 20, 2, 1, "SAME"),
    (3, 22, 22, 16, 3, 3, 16, 2, 1, "VALID"),  # the last input row is unread
    (2, 20, 20, 12, 3, 3, 20, 1, 2, "SAME"),  # dilated
    (5, 17, 13, 5, 3, 3, 7, 1, 1, "SAME"),  # channels not a multiple of 8
    (2, 19, 19, 3, 7, 7, 16, 2, 1, "VALID"),  # a stem
    (2, 16, 16, 9, 4, 2, 10, 3, 1, "SAME"),  # even filter, stride 3
    (2, 12, 11, 6, 3, 3, 8, 2, 1, ((1, 3), (2, 0))),  # EXPLICIT
    (2, 8, 8, 16, 1, 1, 24, 1, 1, "VALID"),  # 1x1
    (2, 3, 3, 8, 3, 3, 8, 1, 1, "SAME"),  # windows mostly in the padding
]


def case_id(case):
    return "n{}_{}x{}x{}_{}x{}to{}_s{}_d{}_{}".format(*case[:-1], str(case[-1]).replace(" ", ""))


def tf_padding(padding, data_format):
    if isinstance(padding, str):
        return padding
    if data_format == "NHWC":
        return [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]
    return [[0, 0], [0, 0], list(padding[0]), list(padding[1])]


def to_format(array, data_format):
    return array if data_format == "NHWC" else array.transpose(0, 3, 1, 2)


def from_format(array, data_format):
    return array if data_format == "NHWC" else array.transpose(0, 2, 3, 1)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_both_paths_match_numpy(case, data_format, conv_path):
    batch, rows, cols, depth, fr, fc, out_depth, stride, dilation, padding = case
    out_r, out_c, _ = padded_geometry(rows, cols, fr, fc, stride, dilation, padding)
    rng = np.random.default_rng(sum(case[:-2]))
    x = rng.standard_normal([batch, rows, cols, depth]).astype(np.float32)
    w = rng.standard_normal([fr, fc, depth, out_depth]).astype(np.float32)
    dy = rng.standard_normal([batch, out_r, out_c, out_depth]).astype(np.float32)
    dx_expected, dw_expected = numpy_backprops(
        x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64), stride, dilation, padding
    )
    if data_format == "NHWC":
        strides, dilations = [1, stride, stride, 1], [1, dilation, dilation, 1]
    else:
        strides, dilations = [1, 1, stride, stride], [1, 1, dilation, dilation]
    graph = tf.Graph()
    with graph.as_default():
        xp = tf.placeholder(tf.float32)
        dyp = tf.placeholder(tf.float32)
        pad = tf_padding(padding, data_format)
        dx = tf.nn.conv2d_backprop_input(
            tf.shape(xp), w, dyp, strides, pad, data_format=data_format, dilations=dilations
        )
        dw = tf.nn.conv2d_backprop_filter(
            xp, w.shape, dyp, strides, pad, data_format=data_format, dilations=dilations
        )
    feed = {xp: to_format(x, data_format), dyp: to_format(dy, data_format)}
    with tf.Session(graph=graph) as sess:
        for path in ("onednn", "im2col"):
            conv_path(path)
            dx_value, dw_value = sess.run([dx, dw], feed)
            np.testing.assert_allclose(
                from_format(dx_value, data_format),
                dx_expected,
                rtol=1e-4,
                atol=1e-4 * np.abs(dx_expected).max(),
                err_msg=path,
            )
            np.testing.assert_allclose(
                dw_value,
                dw_expected,
                rtol=1e-4,
                atol=1e-4 * np.abs(dw_expected).max(),
                err_msg=path,
            )


@pytest.mark.parametrize("path", ["onednn", "im2col"])
@pytest.mark.parametrize(
    "stride,dilation,padding", [(1, 1, "SAME"), (2, 1, "VALID"), (1, 2, "SAME"), (2, 1, "SAME")]
)
def test_float32_gradients_match_numeric_differentiation(
    path, stride, dilation, padding, conv_path
):
    """tf.gradients of a float32 conv (its two backprop ops on `path`)
    against central differences; the conv is linear in each input, so a
    large step is exact up to float32 rounding (which a small one magnifies)."""
    conv_path(path)
    rng = np.random.default_rng(stride * 10 + dilation)
    x = rng.standard_normal([3, 9, 8, 5])
    w = rng.standard_normal([3, 3, 5, 6])
    check_gradients(
        lambda xp, wp: tf.nn.conv2d(
            xp, wp, [1, stride, stride, 1], padding, dilations=[1, dilation, dilation, 1]
        ),
        [x, w],
        dtype=np.float32,
        delta=0.25,
        rtol=1e-3,
        atol=5e-3,
    )


def test_chosen_by_default_on_the_tutorial_shapes(conv_path):
    """Without TW_CONV2D_PATH the dispatch picks a path on its own; the
    result is the numpy one either way (the choice is a matter of speed)."""
    os.environ.pop("TW_CONV2D_PATH", None)
    rng = np.random.default_rng(5)
    x = rng.standard_normal([8, 14, 14, 32]).astype(np.float32)
    w = rng.standard_normal([5, 5, 32, 64]).astype(np.float32)
    dy = rng.standard_normal([8, 14, 14, 64]).astype(np.float32)
    dx_expected, dw_expected = numpy_backprops(
        x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64), 1, 1, "SAME"
    )
    graph = tf.Graph()
    with graph.as_default():
        dx = tf.nn.conv2d_backprop_input(x.shape, w, dy, [1, 1, 1, 1], "SAME")
        dw = tf.nn.conv2d_backprop_filter(x, w.shape, dy, [1, 1, 1, 1], "SAME")
    with tf.Session(graph=graph) as sess:
        dx_value, dw_value = sess.run([dx, dw])
    np.testing.assert_allclose(dx_value, dx_expected, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dw_value, dw_expected, rtol=1e-4, atol=1e-3)
