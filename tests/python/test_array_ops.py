"""Shape and indexing ops against numpy: values, dtypes, static shapes,
Python indexing on many index forms, and the bad-input errors."""

import numpy as np
import pytest
import tensorweave as tf
from op_test_util import run

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

INDEX_FORMS = [
    1,
    -1,
    slice(None),
    slice(1, None),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(-2, None, -2),
    slice(5, -100, -1),
    slice(-100, 100),
    slice(3, 1),
    Ellipsis,
    None,
    (1, 2),
    (1, slice(None, None, -1)),
    (slice(None), None, 1),
    (Ellipsis, -1),
    (Ellipsis, None, slice(1, 3)),
    (None, Ellipsis, None),
    (1, Ellipsis, 2, slice(None, None, 3)),
    (slice(1, None), slice(None, None, 2), None, Ellipsis, -1),
    (-2, -3, -4, -5),
    (slice(None), slice(None), slice(None), slice(None), None),
    (slice(1, 0, -1), slice(2, 0, -2), slice(0, 100, 3), slice(-1, -6, -2)),
    (np.int64(1), np.int32(-1)),
]


@pytest.mark.parametrize("index", INDEX_FORMS, ids=[repr(i) for i in INDEX_FORMS])
def test_python_indexing_matches_numpy(index):
    t = tf.constant(X)
    sliced = t[index]
    value = run(sliced)
    expected = X[index]
    assert value.dtype == expected.dtype
    assert value.shape == expected.shape
    np.testing.assert_array_equal(value, expected)
    assert sliced.shape.as_list() == list(expected.shape)


def test_indexing_with_tensor_indices():
    t = tf.constant(X)
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    results = run([t[i], t[:, i:j], t[i, ..., j], t[i::j], t[-i, None, :j]], {i: 1, j: 3})
    np.testing.assert_array_equal(results[0], X[1])
    np.testing.assert_array_equal(results[1], X[:, 1:3])
    np.testing.assert_array_equal(results[2], X[1, ..., 3])
    np.testing.assert_array_equal(results[3], X[1::3])
    np.testing.assert_array_equal(results[4], X[-1, None, :3])
    # Static shapes: dims taken whole keep their size, tensor-bounded ones do not.
    assert t[:, i].shape.as_list() == [2, 4, 5]
    assert t[i, ::-1, i:j, None].shape.as_list() == [3, None, 1, 5]
    assert t[..., j].shape.as_list() == [2, 3, 4]
    # t[j, ..., i] with j = 3 is out of range for dim 0 (size 2).
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        run(t[j], {j: 3})
    assert run(t[j, ..., i], {i: 4, j: 1}).tolist() == X[1, ..., 4].tolist()


def test_indexing_errors():
    t = tf.constant(X)
    for bad in (1.5, "a", True, [1, 2.0]):
        with pytest.raises(TypeError):
            t[bad]
    with pytest.raises(TypeError):
        t[tf.constant(1.0)]
    with pytest.raises(ValueError):
        t[..., 1, ...]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(ValueError):
        t[5]  # out of range is known while building
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.placeholder_with_default(t, None)[5])


def test_strided_slice_with_masks_and_int64():
    t = tf.constant(X)
    begin, end = np.array([1, 0], np.int64), np.array([0, 2], np.int64)
    strides = np.array([-1, 1], np.int64)
    out = tf.strided_slice(t, begin, end, strides, begin_mask=1)
    np.testing.assert_array_equal(run(out), X[1:0:-1, 0:2])
    out = tf.strided_slice(t, begin, end, strides, end_mask=1)
    np.testing.assert_array_equal(run(out), X[1::-1, 0:2])
    out = tf.strided_slice(t, begin, end, strides, ellipsis_mask=2, new_axis_mask=1)
    np.testing.assert_array_equal(run(out), X[None, ...])


def test_strings_slice_concat_stack_gather():
    s = tf.constant([b"a", b"b", b"c"])
    results = run(
        [
            s[::-1],
            tf.concat([s, s[:1]], 0),
            tf.stack([s, s]),
            tf.gather(s, [2, 2]),
            tf.tile(s[1:], [2]),
            tf.pad(s[:1], [[1, 1]], constant_values="z"),
        ]
    )
    assert results[0].tolist() == [b"c", b"b", b"a"]
    assert results[1].tolist() == [b"a", b"b", b"c", b"a"]
    assert results[2].shape == (2, 3)
    assert results[3].tolist() == [b"c", b"c"]
    assert results[4].tolist() == [b"b", b"c", b"b", b"c"]
    assert results[5].tolist() == [b"z", b"a", b"z"]


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16, np.bool_]
)
def test_data_movement_keeps_every_dtype(dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    t = tf.placeholder(tf.as_dtype(x.dtype), x.shape)
    fetches = [
        t[:, ::-1, 1:3],
        tf.concat([t, t], 1),
        tf.stack([t, t], -1),
        tf.tile(t, [2, 1, 1]),
        tf.pad(t, [[0, 1], [1, 0], [0, 0]]),
        tf.gather(t, [1, 0], axis=2),
        tf.broadcast_to(t[:, :1], [2, 3, 4]),
        tf.transpose(t),
        tf.slice(t, [1, 1, 1], [1, 2, -1]),
    ]
    fetches += tf.split(t, [1, 3], axis=2) + tf.unstack(t, axis=1)
    expected = [
        x[:, ::-1, 1:3],
        np.concatenate([x, x], 1),
        np.stack([x, x], -1),
        np.tile(x, [2, 1, 1]),
        np.pad(x, [[0, 1], [1, 0], [0, 0]]),
        x[:, :, [1, 0]],
        np.broadcast_to(x[:, :1], (2, 3, 4)),
        x.T,
        x[1:2, 1:3, 1:],
    ]
    expected += np.split(x, [1], axis=2) + [x[:, i] for i in range(3)]
    for got, want in zip(run(fetches, {t: x}), expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_shapes_and_size_rank():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.size(p).shape.as_list() == []
    results = run(
        [tf.size(p), tf.rank(p), tf.size(p, out_type=tf.int64), tf.shape_n([p, p[0]])],
        {p: np.zeros((4, 3), np.float32)},
    )
    assert results[0] == 12 and results[0].dtype == np.int32
    assert results[1] == 2
    assert results[2].dtype == np.int64
    assert [s.tolist() for s in results[3]] == [[4, 3], [3]]


def test_expand_dims_and_squeeze():
    x = np.zeros((1, 3, 1), np.float32)
    t = tf.constant(x)
    assert tf.expand_dims(t, -1).shape.as_list() == [1, 3, 1, 1]
    assert tf.expand_dims(t, 0).shape.as_list() == [1, 1, 3, 1]
    assert tf.squeeze(t).shape.as_list() == [3]
    assert tf.squeeze(t, [2]).shape.as_list() == [1, 3]
    assert tf.squeeze(t, axis=-3).shape.as_list() == [3, 1]
    with pytest.raises(ValueError, match="Can not squeeze dim"):
        tf.squeeze(t, [1])
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not squeeze dim"):
        run(tf.squeeze(p, [1]), {p: x})
    assert run(tf.expand_dims(p, 1), {p: x}).shape == (1, 1, 3, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tried to expand dim index"):
        run(tf.expand_dims(p, 5), {p: x})


def test_concat_and_errors():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(run(tf.concat([a, b], axis=-1)), np.concatenate([a, b], -1))
    assert tf.concat([tf.constant(a), b], 1).shape.as_list() == [2, 5]
    np.testing.assert_array_equal(run(tf.concat([a], 0)), a)
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        tf.concat([a, b], 0)
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be equal"):
        run(tf.concat([p, b], 0), {p: a})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Ranks of all input tensors"):
        run(tf.concat([p, b], 0), {p: a[0]})
    with pytest.raises(TypeError):
        tf.concat([tf.constant(a), tf.constant([[1, 2]])], 0)


def test_split_forms_and_errors():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    parts = run(tf.split(x, 3, axis=1))
    for got, want in zip(parts, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(got, want)
    parts = run(tf.split(x, [1, -1, 2], axis=0))
    assert [p.shape for p in parts] == [(1, 6), (1, 6), (2, 6)]
    sizes = tf.placeholder(tf.int32, [2])
    parts = run(tf.split(x, sizes, 1), {sizes: [5, 1]})
    np.testing.assert_array_equal(parts[1], x[:, 5:])
    with pytest.raises(ValueError, match="evenly divide"):
        tf.split(x, 5, axis=1)
    with pytest.raises(ValueError, match="Determined shape must either match"):
        tf.split(x, [1, 2], axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Determined shape"):
        run(tf.split(x, sizes, 1), {sizes: [5, 2]})
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divide"):
        run(tf.split(p, 4, axis=1), {p: x})


def test_stack_unstack_and_autopacking():
    a = tf.placeholder(tf.float32, [2])
    value = np.array([1, 2], np.float32)
    packed = tf.stack([a, a * 2.0], axis=1)
    assert packed.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(run(packed, {a: value}), [[1, 2], [2, 4]])
    mixed = tf.convert_to_tensor([[a[0], 5.0], [7.0, a[1]]])
    np.testing.assert_array_equal(run(mixed, {a: value}), [[1, 5], [7, 2]])
    assert mixed.op.type == "Pack"
    reshaped = tf.reshape(tf.constant(np.arange(6)), [tf.size(a), -1])
    assert run(reshaped, {a: value}).shape == (2, 3)
    rows = tf.unstack(tf.constant(np.eye(3, dtype=np.float32)), axis=1)
    assert len(rows) == 3
    np.testing.assert_array_equal(run(rows[2]), [0, 0, 1])
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="Shapes of all inputs must match"):
        tf.stack([a, tf.constant([1.0, 2.0, 3.0])])


def test_slice_tile_pad():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(run(tf.slice(x, [1, 0], [2, -1])), x[1:3, :])
    with pytest.raises(ValueError):
        tf.slice(x, [2, 0], [2, 1])
    begin = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected begin"):
        run(tf.slice(x, begin, [2, 1]), {begin: [2, 0]})
    np.testing.assert_array_equal(run(tf.tile(x, [2, 3])), np.tile(x, [2, 3]))
    assert run(tf.tile(x, [0, 1])).shape == (0, 4)
    np.testing.assert_array_equal(run(tf.pad(x, [[1, 2], [0, 1]])), np.pad(x, [[1, 2], [0, 1]]))
    np.testing.assert_array_equal(
        run(tf.pad(x, [[1, 0], [0, 0]], constant_values=-7)),
        np.pad(x, [[1, 0], [0, 0]], constant_values=-7),
    )
    for mode in ("REFLECT", "SYMMETRIC"):
        np.testing.assert_array_equal(
            run(tf.pad(x, [[2, 1], [3, 2]], mode)), np.pad(x, [[2, 1], [3, 2]], mode.lower())
        )
    with pytest.raises(ValueError, match="no greater than"):
        tf.pad(x, [[3, 0], [0, 0]], "REFLECT")
    with pytest.raises(ValueError, match="Paddings must be non-negative"):
        tf.pad(x, [[-1, 0], [0, 0]])
    paddings = tf.placeholder(tf.int32, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Paddings must be non-negative"):
        run(tf.pad(x, paddings), {paddings: [[0, -1], [0, 0]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="multiples"):
        run(tf.tile(x, begin), {begin: [1, -1]})


def test_range():
    assert run(tf.range(5)).tolist() == list(range(5))
    assert run(tf.range(5)).dtype == np.int32
    assert run(tf.range(2, 11, 3)).tolist() == list(range(2, 11, 3))
    assert run(tf.range(5, -3, -2)).tolist() == list(range(5, -3, -2))
    floats = run(tf.range(0.0, 1.0, 0.1))
    assert floats.dtype == np.float32
    np.testing.assert_allclose(floats, np.arange(0, 1, 0.1, dtype=np.float32), rtol=1e-6)
    assert run(tf.range(3, dtype=tf.float64)).dtype == np.float64
    assert run(tf.range(1, tf.constant(4, tf.int64))).dtype == np.int64
    assert tf.range(7).shape.as_list() == [7]
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)
    delta = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0"):
        run(tf.range(0, 5, delta), {delta: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires start <= limit"):
        run(tf.range(5, 0, delta), {delta: 1})


def test_gather_and_errors():
    params = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    indices = np.array([[2, 0], [1, 1]], np.int64)
    for axis in (0, 1, 2, -1):
        idx = indices % params.shape[axis]
        got = run(tf.gather(params, idx, axis=axis))
        np.testing.assert_array_equal(got, np.take(params, idx, axis=axis))
        assert tf.gather(params, idx, axis=axis).shape.as_list() == list(
            np.take(params, idx, axis=axis).shape
        )
    np.testing.assert_array_equal(run(tf.gather(params, 1)), params[1])
    index = tf.placeholder(tf.int32, [None])
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"indices\[1\] = 2 is not in \[0, 2\)"
    ):
        run(tf.gather(params, index), {index: [0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
        run(tf.gather(params, index), {index: [-1]})


def test_one_hot():
    indices = np.array([[0, 2], [1, -1]], np.int64)
    got = run(tf.one_hot(indices, 3))
    assert got.dtype == np.float32 and got.shape == (2, 2, 3)
    np.testing.assert_array_equal(
        got, np.eye(3, dtype=np.float32)[indices] * (indices >= 0)[..., None]
    )
    got = run(tf.one_hot([0, 1], 2, on_value=5, off_value=-1, axis=0))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[5, -1], [-1, 5]])
    assert run(tf.one_hot([1], 3, dtype=tf.float64)).dtype == np.float64
    assert tf.one_hot(tf.placeholder(tf.int32, [None]), 4, axis=0).shape.as_list() == [4, None]
    with pytest.raises(TypeError):
        tf.one_hot([1], 2, on_value=1.0, off_value=tf.constant(0))


def test_broadcast_to_where_stop_gradient_transpose():
    x = np.array([[1], [2]], np.int32)
    np.testing.assert_array_equal(run(tf.broadcast_to(x, [3, 2, 4])), np.broadcast_to(x, (3, 2, 4)))
    with pytest.raises(ValueError, match="Cannot broadcast"):
        tf.broadcast_to(x, [3, 3])
    cond = np.array([[True, False, True], [False, False, True]])
    got = run(tf.where_coordinates(cond))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argwhere(cond))
    assert run(tf.where_coordinates(np.array([0.0, 2.0, 0.0]))).tolist() == [[1]]
    np.testing.assert_array_equal(run(tf.stop_gradient(x)), x)
    unknown = tf.placeholder(tf.float32)
    value = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    np.testing.assert_array_equal(run(tf.transpose(unknown), {unknown: value}), value.T)


def test_invert_permutation_and_segment_sum():
    np.testing.assert_array_equal(run(tf.invert_permutation([2, 0, 1])), [1, 2, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicated"):
        run(tf.invert_permutation([0, 0]))
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = run(tf.unsorted_segment_sum(data, [0, 2, 0, -1], 3))
    np.testing.assert_array_equal(got, [[4, 6], [0, 0], [2, 3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        run(tf.unsorted_segment_sum(data, [0, 3, 0, 0], 3))


def test_large_copies_split_over_threads():
    # Big enough that StridedCopy hands rows to the intra-op pool.
    x = np.random.RandomState(0).standard_normal((300, 257)).astype(np.float32)
    t = tf.constant(x)
    index = np.random.RandomState(1).randint(0, 300, size=2000)
    results = run(
        [
            t[::-1, 1::2],
            tf.tile(t, [2, 2]),
            tf.concat([t, t], 1),
            tf.transpose(t),
            tf.gather(t, index),
            tf.gather(t, index % 257, axis=1),
        ]
    )
    np.testing.assert_array_equal(results[4], x[index])
    np.testing.assert_array_equal(results[5], x[:, index % 257])
    np.testing.assert_array_equal(results[0], x[::-1, 1::2])
    np.testing.assert_array_equal(results[1], np.tile(x, [2, 2]))
    np.testing.assert_array_equal(results[2], np.concatenate([x, x], 1))
    np.testing.assert_array_equal(results[3], x.T)


def test_variables_index_and_pack_like_tensors():
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    packed = tf.convert_to_tensor([v[0, 0], 9.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v[1, ::-1]), [5, 4, 3])
        np.testing.assert_array_equal(sess.run(packed), [0, 9])
        (grad,) = tf.gradients(tf.reduce_sum(v[:, 1:] * 2.0), [v])
        np.testing.assert_array_equal(sess.run(grad), [[0, 2, 2], [0, 2, 2]])


def test_zeros_and_ones_take_a_shapes_dimensions_large_or_small():
    for dims in ([2, 3], [32, 128]):
        shape = tf.TensorShape(dims)
        with tf.Session() as sess:
            zeros, ones = sess.run([tf.zeros(shape.dims), tf.ones(shape)])
        np.testing.assert_array_equal(zeros, np.zeros(dims, np.float32))
        np.testing.assert_array_equal(ones, np.ones(dims, np.float32))


def test_zeros_of_strings_are_empty_strings_as_in_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(tf.zeros([2, 1], tf.string)), np.array([[b""], [b""]], object)
        )
        np.testing.assert_array_equal(sess.run(tf.zeros([3], tf.bool)), [False] * 3)
