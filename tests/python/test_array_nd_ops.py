"""GatherNd, ScatterNd, TensorScatterUpdate/Add/Sub, MirrorPad (tf.pad
REFLECT/SYMMETRIC) and MirrorPadGrad, SpaceToDepth/DepthToSpace and
SpaceToBatchND/BatchToSpaceND: values against numpy, clean
INVALID_ARGUMENT errors naming the node for bad indices and shapes, and
gradients against central differences."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

RNG = np.random.RandomState(5)


def run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def _numpy_gather_nd(params, indices):
    depth = indices.shape[-1]
    rows = indices.reshape(-1, depth)
    picked = np.stack([params[tuple(r)] for r in rows]) if len(rows) else None
    return picked.reshape(indices.shape[:-1] + params.shape[depth:])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_gather_nd_matches_numpy(depth):
    params = RNG.standard_normal((3, 4, 5))
    indices = np.stack([RNG.randint(0, n, (2, 3)) for n in params.shape[:depth]], -1)
    with tf.Graph().as_default():
        out = tf.gather_nd(params, indices)
        assert out.shape.as_list() == list(indices.shape[:-1] + params.shape[depth:])
        got = run(out)
    np.testing.assert_array_equal(got, _numpy_gather_nd(params, indices))


def test_gather_nd_strings_and_int64_indices():
    params = np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object)
    with tf.Graph().as_default():
        got = run(tf.gather_nd(params, np.array([[1, 0], [0, 1]], np.int64)))
    assert list(got) == [b"c", b"b"]


def test_gather_nd_bad_index_is_invalid_argument_naming_the_node():
    with tf.Graph().as_default():
        indices = tf.placeholder(tf.int32, [None, 2])
        out = tf.gather_nd(np.zeros((2, 3), np.float32), indices, name="picker")
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"picker") as info:
            run(out, {indices: [[0, 1], [0, 5]]})
        assert "indices[1] = [0, 5] does not index into param shape [2,3]" in str(info.value)
        with pytest.raises(ValueError, match="innermost dimension"):
            tf.gather_nd(np.zeros((2, 3)), [[0, 1, 2]])


def test_scatter_nd_adds_repeated_rows():
    indices = np.array([[4], [3], [1], [7], [1]], np.int32)
    updates = np.array([9.0, 10.0, 11.0, 12.0, 1.0])
    expected = np.zeros(8)
    np.add.at(expected, indices[:, 0], updates)
    with tf.Graph().as_default():
        np.testing.assert_array_equal(run(tf.scatter_nd(indices, updates, [8])), expected)
        slices = tf.scatter_nd([[0], [2]], np.ones((2, 3), np.int64), [4, 3])
        np.testing.assert_array_equal(run(slices), [[1] * 3, [0] * 3, [1] * 3, [0] * 3])


def test_scatter_nd_errors():
    with tf.Graph().as_default():
        indices = tf.placeholder(tf.int32, [None, 1])
        out = tf.scatter_nd(indices, [1.0], [4])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[5\]"):
            run(out, {indices: [[5]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="updates has shape"):
            run(out, {indices: [[1], [2]]})
        with pytest.raises(ValueError, match="updates has shape"):
            tf.scatter_nd([[1]], [1.0, 2.0], [4])


@pytest.mark.parametrize(
    "fn, combine",
    [
        (tf.tensor_scatter_update, lambda old, new: new),
        (tf.tensor_scatter_nd_add, lambda old, new: old + new),
        (tf.tensor_scatter_sub, lambda old, new: old - new),
    ],
    ids=["update", "add", "sub"],
)
def test_tensor_scatter_ops(fn, combine):
    tensor = RNG.standard_normal((4, 3))
    updates = RNG.standard_normal((2, 3))
    expected = tensor.copy()
    for row, update in zip([3, 1], updates):
        expected[row] = combine(expected[row], update)
    with tf.Graph().as_default():
        got = run(fn(tensor, [[3], [1]], updates))
    np.testing.assert_allclose(got, expected)


def test_tensor_scatter_update_leaves_its_input_unchanged_and_checks_rows():
    with tf.Graph().as_default():
        x = tf.constant([1, 2, 3])
        y = tf.tensor_scatter_nd_update(x, [[0]], [9])
        got_x, got_y = run([x, y])
        indices = tf.placeholder(tf.int64, [None, 1])
        bad = tf.tensor_scatter_update(x, indices, [9])
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
            run(bad, {indices: [[-1]]})
    np.testing.assert_array_equal(got_x, [1, 2, 3])
    np.testing.assert_array_equal(got_y, [9, 2, 3])


def test_gather_and_scatter_gradients():
    indices = np.array([[0, 1], [2, 0], [0, 1]], np.int32)
    check_gradients(lambda p: tf.gather_nd(p, indices), [RNG.standard_normal((3, 2, 2))])
    check_gradients(lambda u: tf.scatter_nd(indices, u, [3, 2, 4]), [RNG.standard_normal((3, 4))])
    rows = np.array([[2], [0]], np.int32)
    for fn in (tf.tensor_scatter_update, tf.tensor_scatter_add, tf.tensor_scatter_sub):
        check_gradients(
            lambda t, u, fn=fn: fn(t, rows, u),
            [RNG.standard_normal((3, 2)), RNG.standard_normal((2, 2))],
        )


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_matches_numpy_with_runtime_paddings(mode):
    x = RNG.standard_normal((3, 4, 2))
    pads = [[2, 1], [0, 3], [1, 1]]
    with tf.Graph().as_default():
        paddings = tf.placeholder(tf.int64, [3, 2])
        out = tf.pad(x, paddings, mode)
        got = run(out, {paddings: pads})
        graph_ops = [op.type for op in tf.get_default_graph().get_operations()]
    assert "MirrorPad" in graph_ops
    np.testing.assert_array_equal(got, np.pad(x, pads, mode.lower()))


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize(
    "pads",
    [[[0, 0], [2, 1], [1, 2], [0, 0]], [[1, 1], [0, 0], [0, 0], [0, 0]], [[0, 0]] * 4],
    ids=["image", "outer_only", "none"],
)
def test_mirror_pad_moves_unpadded_trailing_dims_whole(mode, pads):
    # Trailing dims without padding are copied (and summed back) as runs.
    x = RNG.standard_normal((2, 3, 4, 5))
    with tf.Graph().as_default():
        v = tf.constant(x)
        y = tf.pad(v, pads, mode)
        weights = RNG.standard_normal(np.pad(x, pads).shape)
        (g,) = tf.gradients(y, [v], grad_ys=[tf.constant(weights)])
        got, got_grad = run([y, g])
    np.testing.assert_array_equal(got, np.pad(x, pads, mode.lower()))
    positions = np.pad(np.arange(x.size).reshape(x.shape), pads, mode.lower())
    expected_grad = np.zeros(x.size)
    np.add.at(expected_grad, positions.reshape(-1), weights.reshape(-1))
    np.testing.assert_allclose(got_grad, expected_grad.reshape(x.shape))


def test_mirror_pad_too_large_paddings_are_invalid_argument():
    with tf.Graph().as_default():
        paddings = tf.placeholder(tf.int32, [2, 2])
        x = np.zeros((3, 3), np.float32)
        reflect, symmetric = tf.pad(x, paddings, "REFLECT"), tf.pad(x, paddings, "SYMMETRIC")
        with pytest.raises(tf.errors.InvalidArgumentError, match="not less than 3"):
            run(reflect, {paddings: [[3, 0], [0, 0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="greater than 3"):
            run(symmetric, {paddings: [[4, 0], [0, 0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            run(symmetric, {paddings: [[0, -1], [0, 0]]})


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_gradient_and_second_derivative(mode):
    x = RNG.standard_normal((3, 4))
    check_gradients(lambda v: tf.pad(v, [[2, 1], [1, 2]], mode), [x])
    # MirrorPadGrad is linear in its input; its gradient is MirrorPad again.
    with tf.Graph().as_default():
        v = tf.constant(x)
        y = tf.pad(v, [[2, 1], [1, 2]], mode)
        (g,) = tf.gradients(y, [v], grad_ys=[tf.ones_like(y) * 2.0])
        assert g.op.type == "MirrorPadGrad"
        counts = run(g)
    ones = np.ones_like(x)
    contributions = np.zeros_like(x)
    padded_positions = np.pad(np.arange(x.size).reshape(x.shape), [[2, 1], [1, 2]], mode.lower())
    np.add.at(contributions.reshape(-1), padded_positions.reshape(-1), 2.0)
    np.testing.assert_array_equal(counts, contributions * ones)


def _numpy_space_to_depth(x, b):
    n, h, w, c = x.shape
    blocks = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return blocks.reshape(n, h // b, w // b, b * b * c)


def test_space_to_depth_and_back():
    x = RNG.standard_normal((2, 4, 6, 3)).astype(np.float32)
    with tf.Graph().as_default():
        deep = tf.space_to_depth(x, 2)
        assert deep.shape.as_list() == [2, 2, 3, 12]
        back = tf.nn.depth_to_space(deep, 2)
        got_deep, got_back = run([deep, back])
    np.testing.assert_array_equal(got_deep, _numpy_space_to_depth(x, 2))
    np.testing.assert_array_equal(got_back, x)


def test_space_depth_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None, None])
        with pytest.raises(tf.errors.InvalidArgumentError, match="divisible by block_size: 2"):
            run(tf.space_to_depth(x, 2), {x: np.zeros((1, 5, 4, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="should be divisible by: 4"):
            run(tf.depth_to_space(x, 2), {x: np.zeros((1, 4, 4, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Only NHWC"):
            run(tf.space_to_depth(x, 2, data_format="NCHW"), {x: np.zeros((1, 4, 4, 4))})


def test_space_depth_gradients():
    check_gradients(lambda v: tf.space_to_depth(v, 2), [RNG.standard_normal((1, 4, 2, 2))])
    check_gradients(lambda v: tf.depth_to_space(v, 2), [RNG.standard_normal((1, 2, 1, 8))])


def _numpy_space_to_batch(x, block, pads):
    pads = [[0, 0]] + list(pads) + [[0, 0]] * (x.ndim - 1 - len(block))
    padded = np.pad(x, pads)
    batch, m = x.shape[0], len(block)
    shape = [batch]
    for k, b in enumerate(block):
        shape += [padded.shape[k + 1] // b, b]
    shape += list(x.shape[m + 1 :])
    reshaped = padded.reshape(shape)
    perm = [2 + 2 * k for k in range(m)] + [0] + [1 + 2 * k for k in range(m)]
    perm += list(range(1 + 2 * m, reshaped.ndim))
    moved = reshaped.transpose(perm)
    return moved.reshape([batch * int(np.prod(block))] + list(moved.shape[m + 1 :]))


@pytest.mark.parametrize(
    "shape, block, pads",
    [
        ((2, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]),
        ((1, 3, 5, 2), [2, 3], [[1, 0], [0, 1]]),
        ((2, 5, 1), [3], [[2, 2]]),
    ],
)
def test_space_to_batch_nd_and_back(shape, block, pads):
    x = RNG.standard_normal(shape)
    with tf.Graph().as_default():
        batched = tf.space_to_batch_nd(x, block, pads)
        back = tf.batch_to_space_nd(batched, block, pads)
        got, got_back = run([batched, back])
    np.testing.assert_array_equal(got, _numpy_space_to_batch(x, block, pads))
    np.testing.assert_array_equal(got_back, x)


def test_space_batch_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible by block_shape"):
            run(tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]), {x: np.zeros((1, 5, 4, 1))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="product of block sizes"):
            run(tf.batch_to_space_nd(x, [2, 2], [[0, 0], [0, 0]]), {x: np.zeros((3, 2, 2, 1))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
            run(tf.space_to_batch_nd(x, [0], [[0, 0]]), {x: np.zeros((1, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="cropped_shape"):
            run(tf.batch_to_space_nd(x, [2], [[3, 2]]), {x: np.zeros((2, 2))})


def test_space_batch_gradients():
    check_gradients(
        lambda v: tf.space_to_batch_nd(v, [2, 2], [[1, 1], [0, 2]]),
        [RNG.standard_normal((1, 2, 2, 2))],
    )
    check_gradients(
        lambda v: tf.batch_to_space_nd(v, [2], [[1, 0]]), [RNG.standard_normal((4, 2, 3))]
    )


def test_tf1_space_to_batch_with_a_square_block():
    x = RNG.standard_normal((1, 4, 4, 2))
    with tf.Graph().as_default():
        batched = tf.space_to_batch(x, [[0, 0], [0, 0]], block_size=2)
        back = tf.batch_to_space(batched, [[0, 0], [0, 0]], block_size=2)
        got, got_back = run([batched, back])
    np.testing.assert_array_equal(got, _numpy_space_to_batch(x, [2, 2], [[0, 0], [0, 0]]))
    np.testing.assert_array_equal(got_back, x)
