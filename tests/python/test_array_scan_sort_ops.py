"""ShapeN, IdentityN, Snapshot, Cumsum, Cumprod, TopKV2, InTopKV2, Unique and
MatrixBandPart: values against numpy, TensorFlow's tie and edge rules, clean
INVALID_ARGUMENT errors for bad inputs, and gradients against central
differences."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

RNG = np.random.RandomState(11)


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_shape_n_is_one_op_with_a_shape_per_input():
    with tf.Graph().as_default() as graph:
        a = tf.placeholder(tf.float32, [None, 3])
        b = tf.constant(np.zeros((4, 5, 6), np.float32))
        shapes = tf.shape_n([a, b], out_type=tf.int64)
        assert [op.type for op in graph.get_operations()].count("ShapeN") == 1
        assert shapes[0].shape.as_list() == [2] and shapes[1].dtype == tf.int64
        got = run(shapes, {a: np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(got[0], [2, 3])
    np.testing.assert_array_equal(got[1], [4, 5, 6])


def test_identity_n_passes_mixed_dtypes_and_gradients():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], tf.float64)
        i = tf.constant([3, 4])
        y, j = tf.identity_n([x, i])
        assert j.dtype == tf.int32
        got = run([y, j])
        (grad,) = tf.gradients(y * 3.0, [x])
        np.testing.assert_array_equal(run(grad), [3.0, 3.0])
    np.testing.assert_array_equal(got[0], [1.0, 2.0])
    np.testing.assert_array_equal(got[1], [3, 4])


def _numpy_scan(x, axis, exclusive, reverse, op):
    moved = np.moveaxis(x, axis, -1)
    if reverse:
        moved = moved[..., ::-1]
    out = op.accumulate(moved, axis=-1)
    if exclusive:
        identity = np.zeros_like if op is np.add else np.ones_like
        out = np.concatenate([identity(out[..., :1]), out[..., :-1]], axis=-1)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod_match_numpy(exclusive, reverse, axis):
    x = RNG.uniform(0.5, 1.5, (3, 4, 2))
    with tf.Graph().as_default():
        s = tf.cumsum(x, axis, exclusive=exclusive, reverse=reverse)
        p = tf.math.cumprod(x, tf.constant(axis, tf.int64), exclusive=exclusive, reverse=reverse)
        got_s, got_p = run([s, p])
    np.testing.assert_allclose(got_s, _numpy_scan(x, axis, exclusive, reverse, np.add))
    np.testing.assert_allclose(got_p, _numpy_scan(x, axis, exclusive, reverse, np.multiply))


def test_integer_cumsum_wraps_like_tensorflow():
    x = np.array([2**31 - 1, 1, 5], np.int32)
    with tf.Graph().as_default():
        np.testing.assert_array_equal(run(tf.cumsum(x)), [2**31 - 1, -(2**31), -(2**31) + 5])


def test_cumsum_axis_out_of_range_is_invalid_argument():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        s = tf.cumsum(x, axis=2, name="scan")
        with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis in the range"):
            run(s, {x: np.zeros((2, 2), np.float32)})


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients(exclusive, reverse):
    x = RNG.uniform(0.5, 1.5, (3, 4))
    check_gradients(lambda v: tf.cumsum(v, 1, exclusive=exclusive, reverse=reverse), [x])
    check_gradients(lambda v: tf.cumprod(v, 0, exclusive=exclusive, reverse=reverse), [x])


def test_top_k_values_indices_and_ties():
    x = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [5.0, -1.0, 0.0, 5.0, 4.0]], np.float32)
    with tf.Graph().as_default():
        values, indices = tf.nn.top_k(x, k=3)
        assert values.shape.as_list() == [2, 3]
        got_v, got_i = run([values, indices])
    np.testing.assert_array_equal(got_v, [[3, 3, 3], [5, 5, 4]])
    # Equal values: the lower index first, as TensorFlow.
    np.testing.assert_array_equal(got_i, [[1, 2, 4], [0, 3, 4]])


def test_top_k_random_rows_match_numpy_and_integers():
    x = RNG.permutation(60).reshape(3, 4, 5).astype(np.int64)
    with tf.Graph().as_default():
        values, indices = tf.math.top_k(x, tf.constant(2))
        got_v, got_i = run([values, indices])
    order = np.argsort(-x, axis=-1, kind="stable")[..., :2]
    np.testing.assert_array_equal(got_i, order)
    np.testing.assert_array_equal(got_v, np.take_along_axis(x, order, -1))


@pytest.mark.parametrize(
    "k, message", [(-1, "Need k >= 0"), (6, "at least k columns")], ids=["negative", "too_big"]
)
def test_top_k_bad_k_is_invalid_argument(k, message):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        kk = tf.placeholder(tf.int32, [])
        values, _ = tf.nn.top_k(x, kk)
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            run(values, {x: np.zeros((2, 5), np.float32), kk: k})


def test_top_k_gradient():
    x = RNG.permutation(24).reshape(2, 3, 4) + RNG.uniform(0, 0.1, (2, 3, 4))
    check_gradients(lambda v: tf.nn.top_k(v, 2).values, [x])


def test_in_top_k_counts_ties_as_in_and_rejects_bad_targets():
    predictions = np.array(
        [[0.1, 0.3, 0.3, 0.2], [0.5, 0.1, 0.2, 0.2], [np.nan, 1.0, 0, 0], [1, 2, 3, 4]], np.float32
    )
    targets = np.array([2, 3, 0, 7], np.int32)
    with tf.Graph().as_default():
        got = run(tf.nn.in_top_k(predictions, targets, 1))
        got2 = run(tf.math.in_top_k(predictions, targets.astype(np.int64), 2))
    np.testing.assert_array_equal(got, [True, False, False, False])
    np.testing.assert_array_equal(got2, [True, True, False, False])


def test_in_top_k_mismatched_batch_is_invalid_argument():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3])
        t = tf.placeholder(tf.int32, [None])
        r = tf.nn.in_top_k(p, t, 1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must match length of targets"):
            run(r, {p: np.zeros((2, 3), np.float32), t: [0]})


@pytest.mark.parametrize("out_idx", [tf.int32, tf.int64])
def test_unique_in_order_of_first_appearance(out_idx):
    x = np.array([4, 1, 4, 2, 1, 1, 9], np.int64)
    with tf.Graph().as_default():
        y, idx = tf.unique(x, out_idx=out_idx)
        assert idx.dtype == out_idx
        got_y, got_idx = run([y, idx])
    np.testing.assert_array_equal(got_y, [4, 1, 2, 9])
    np.testing.assert_array_equal(got_idx, [0, 1, 0, 2, 1, 1, 3])
    np.testing.assert_array_equal(got_y[got_idx], x)


def test_unique_strings_and_bad_rank():
    with tf.Graph().as_default():
        y, idx = tf.unique(tf.constant([b"b", b"a", b"b"]))
        got_y, got_idx = run([y, idx])
        m = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="1D vector"):
            run(tf.unique(m).y, {m: np.zeros((2, 2), np.float32)})
    assert list(got_y) == [b"b", b"a"]
    np.testing.assert_array_equal(got_idx, [0, 1, 0])


@pytest.mark.parametrize("lower, upper", [(1, 0), (-1, 0), (0, -1), (2, 1), (-1, -1), (0, 0)])
def test_matrix_band_part_matches_numpy(lower, upper):
    x = RNG.standard_normal((2, 4, 5))
    m, n = np.indices((4, 5))
    keep = ((lower < 0) | (m - n <= lower)) & ((upper < 0) | (n - m <= upper))
    with tf.Graph().as_default():
        got = run(tf.matrix_band_part(x, lower, upper))
    np.testing.assert_array_equal(got, np.where(keep, x, 0))


def test_matrix_band_part_bound_past_rows_and_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        lower = tf.placeholder(tf.int64, [])
        band = tf.matrix_band_part(x, lower, 0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_lower must be negative"):
            run(band, {x: np.zeros((3, 3), np.float32), lower: 4})
    check_gradients(lambda v: tf.matrix_band_part(v, 1, 0), [RNG.standard_normal((3, 4))])


def test_tf1_top_k_and_in_top_k_with_k_as_an_attr():
    # GraphDefs from TensorFlow 1.x carry TopK and InTopK (k an attr).
    graph_def = tf.GraphDef()
    x = graph_def.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = tf.float32.as_datatype_enum
    t = graph_def.node.add(name="t", op="Placeholder")
    t.attr["dtype"].type = tf.int32.as_datatype_enum
    top = graph_def.node.add(name="top", op="TopK", input=["x"])
    top.attr["T"].type = tf.float32.as_datatype_enum
    top.attr["k"].i = 2
    hit = graph_def.node.add(name="hit", op="InTopK", input=["x", "t"])
    hit.attr["k"].i = 1
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        (grad,) = tf.gradients(graph.get_tensor_by_name("top:0"), [graph.get_tensor_by_name("x:0")])
        feeds = {"x:0": [[1.0, 4.0, 2.0], [3.0, 0.0, 3.0]], "t:0": [1, 2]}
        values, indices, hits, g = run(["top:0", "top:1", "hit:0", grad], feeds)
    np.testing.assert_array_equal(values, [[4, 2], [3, 3]])
    np.testing.assert_array_equal(indices, [[1, 2], [0, 2]])
    np.testing.assert_array_equal(hits, [True, True])
    np.testing.assert_array_equal(g, [[0, 1, 1], [1, 0, 1]])


def test_linalg_namespace_names_band_part_and_matmul_as_tensorflow():
    assert tf.linalg.band_part is tf.matrix_band_part
    assert tf.linalg.matmul is tf.matmul
