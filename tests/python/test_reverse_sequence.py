"""tf.reverse_sequence (ReverseSequence) and tf.reverse (ReverseV2) against
numpy, TensorFlow's checks and messages, and their gradients."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients


def _numpy_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = x.copy()
    for b, length in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        source = [slice(None)] * x.ndim
        source[batch_axis] = b
        index[seq_axis] = slice(0, length)
        source[seq_axis] = slice(length - 1, None, -1) if length > 0 else slice(0, 0)
        out[tuple(index)] = x[tuple(source)]
    return out


@pytest.mark.parametrize(
    "shape, seq_axis, batch_axis",
    [((3, 4), 1, 0), ((4, 3), 0, 1), ((2, 5, 3), 1, 0), ((5, 2, 3, 2), 0, 2), ((2, 3, 6), 2, 1)],
)
@pytest.mark.parametrize("length_dtype", [np.int32, np.int64])
def test_reverse_sequence_matches_numpy(shape, seq_axis, batch_axis, length_dtype):
    rng = np.random.RandomState(0)
    x = rng.randn(*shape).astype(np.float32)
    lengths = rng.randint(0, shape[seq_axis] + 1, size=shape[batch_axis]).astype(length_dtype)
    y = tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    assert y.op.type == "ReverseSequence"
    assert y.shape.as_list() == list(shape)
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(y), _numpy_reverse_sequence(x, lengths, seq_axis, batch_axis)
        )


def test_reverse_sequence_v1_argument_names_and_attrs():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    y = tf.reverse_sequence(x, [1, 2, 3], seq_dim=1, batch_dim=0)
    assert y.op.get_attr("seq_dim") == 1 and y.op.get_attr("batch_dim") == 0
    assert y.op.get_attr("Tlen") == tf.int32
    with tf.Session() as sess:
        assert sess.run(y).tolist() == [[0, 1, 2, 3], [5, 4, 6, 7], [10, 9, 8, 11]]
    with pytest.raises(ValueError):
        tf.reverse_sequence(x, [1, 2, 3], seq_axis=1, seq_dim=0)


def test_reverse_sequence_shape_function():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    y = tf.reverse_sequence(x, tf.placeholder(tf.int32, [3]), seq_axis=1)
    assert y.shape.as_list() == [3, 4, 5]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.reverse_sequence(tf.zeros([3, 4]), [1, 2], seq_axis=1)
    with pytest.raises(ValueError, match="seq_dim must be < input rank: 2 vs. 2"):
        tf.reverse_sequence(tf.zeros([3, 4]), [1, 2, 3], seq_axis=2)


@pytest.mark.parametrize(
    "lengths, seq_axis, batch_axis, message",
    [
        ([1, 2, 5], 1, 0, r"seq_lens\(2\) > input.dims\(1\)"),
        ([1, -1, 2], 1, 0, r"seq_lens\(1\) < 0"),
        ([1, 2], 1, 0, r"Length of seq_lengths != input.dims\(0\), \(2 vs. 3\)"),
        ([1, 2, 3], 1, 1, "batch_dim == seq_dim == 1"),
        ([1, 2, 3], -1, 0, "Invalid seq_dim -1"),
        ([[1, 2, 3]], 1, 0, "seq_lengths must be 1-dim, not 2"),
    ],
)
def test_reverse_sequence_run_time_checks_name_the_node(lengths, seq_axis, batch_axis, message):
    x = tf.placeholder(tf.float32, None)
    seq = tf.placeholder(tf.int64, None)
    y = tf.reverse_sequence(x, seq, seq_axis=seq_axis, batch_axis=batch_axis, name="rs")
    with (
        tf.Session() as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match=message) as raised,
    ):
        sess.run(y, {x: np.zeros((3, 4), np.float32), seq: np.array(lengths, np.int64)})
    assert "rs" in str(raised.value)


def test_reverse_sequence_gradient():
    lengths = np.array([3, 0, 2], np.int32)
    check_gradients(
        lambda x: tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0),
        [np.random.RandomState(1).randn(3, 4, 2)],
    )


@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 2], [2, 0, 1], []])
def test_reverse_matches_numpy(axes):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = tf.reverse(x, axes)
    assert y.op.type == "ReverseV2"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), np.flip(x, axis=tuple(axes)) if axes else x)


def test_reverse_checks_its_axes():
    x = tf.placeholder(tf.int32, None)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="specified more than once"):
            sess.run(tf.reverse(x, [0, -2]), {x: np.zeros((2, 2), np.int32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of valid range"):
            sess.run(tf.reverse(x, [2]), {x: np.zeros((2, 2), np.int32)})


def test_reverse_gradient():
    check_gradients(lambda x: tf.reverse(x, [0, 2]), [np.random.RandomState(2).randn(2, 3, 2)])
