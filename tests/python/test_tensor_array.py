"""tf.TensorArray against numpy: every method, dynamic_size, clear_after_read,
element-shape inference, TensorFlow's errors, per-step lifetime, and the
gradients of the TensorArray ops against central differences."""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_write_read_stack_size():
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    stacked, second, size = run([ta.stack(), ta.identity().read(1), ta.size()])
    np.testing.assert_array_equal(stacked, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(second, [3, 4])
    assert size == 3
    assert ta.stack().shape.as_list() == [3, 2]
    assert ta.read(0).shape.as_list() == [2]
    assert ta.dtype == tf.float32
    assert ta.handle.dtype == tf.resource
    assert ta.flow.dtype == tf.float32


def test_unstack_gather_scatter_and_the_element_shape_inferred():
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = tf.TensorArray(tf.float32, size=4).unstack(value)
    assert ta.element_shape.as_list() == [3]
    gathered = ta.gather([3, 1])
    assert gathered.shape.as_list() == [None, 3]  # as TensorFlow, even for constant indices
    np.testing.assert_array_equal(run(gathered), value[[3, 1]])
    scattered = tf.TensorArray(tf.float32, size=4).scatter([2, 0, 3, 1], value)
    np.testing.assert_array_equal(run(scattered.stack()), value[[1, 3, 0, 2]])


def test_concat_and_split_with_lengths():
    value = np.arange(10, dtype=np.float64).reshape(5, 2)
    # Pieces of different lengths need infer_shape=False (TensorFlow's rule:
    # with shape inference every element has the first piece's shape).
    ta = tf.TensorArray(tf.float64, size=3, infer_shape=False).split(value, [2, 0, 3])
    joined = ta.concat()
    np.testing.assert_array_equal(run(joined), value)
    strict = tf.TensorArray(tf.float64, size=3).split(value, [2, 0, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the TensorArray"):
        run(strict.concat())
    pieces = tf.TensorArray(tf.float64, size=3, clear_after_read=False, infer_shape=False)
    pieces = pieces.split(value, [2, 0, 3])
    first, empty, last = run([pieces.read(0), pieces.read(1), pieces.read(2)])
    np.testing.assert_array_equal(first, value[:2])
    assert empty.shape == (0, 2)
    np.testing.assert_array_equal(last, value[2:])
    # Equal constant lengths give the element shape statically.
    even = tf.TensorArray(tf.float64, size=5).split(value, [1, 1, 1, 1, 1])
    assert even.element_shape.as_list() == [1, 2]
    assert even.concat().shape.as_list() == [5, 2]


def test_dynamic_size_grows_and_unwritten_elements_stack_as_zeros():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    ta = ta.write(3, [1.0, 2.0])
    assert ta.dynamic_size
    stacked, size = run([ta.stack(), ta.size()])
    np.testing.assert_array_equal(stacked, [[0, 0], [0, 0], [0, 0], [1, 2]])
    assert size == 4


def test_a_fixed_size_array_refuses_an_index_beyond_it():
    ta = tf.TensorArray(tf.float32, size=3).write(5, [1.0, 2.0])
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="Tried to write to index 5 but array is not resizeable and size is: 3",
    ):
        run(ta.flow)


def test_clear_after_read_makes_a_second_read_an_error():
    ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="twice because it was cleared"):
        run([ta.read(0), ta.read(0)])
    kept = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, [1.0, 2.0])
    a, b = run([kept.read(0), kept.read(0)])
    np.testing.assert_array_equal(a, b)


def test_writing_an_index_twice_is_an_error():
    ta = tf.TensorArray(tf.float32, size=3).write(0, [1.0]).write(0, [2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="has already been written to"):
        run(ta.flow)


def test_reading_an_unwritten_index_needs_a_known_element_shape():
    with pytest.raises(tf.errors.InvalidArgumentError, match="element shape is not fully defined"):
        run(tf.TensorArray(tf.float32, size=3).read(1))
    zeros = run(tf.TensorArray(tf.float32, size=3, element_shape=[2]).read(1))
    np.testing.assert_array_equal(zeros, [0, 0])


def test_inconsistent_element_shapes_are_refused_when_the_graph_is_built():
    ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Inconsistent shapes: saw"):
        ta.write(1, [1.0, 2.0, 3.0])
    # Without shape inference different shapes may be written and concatenated.
    loose = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    loose = loose.write(0, [1.0, 2.0]).write(1, [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(run(loose.concat()), [1, 2, 3, 4, 5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inconsistent shapes"):
        run(loose.stack())


def test_dtype_mismatch_fails_when_the_op_runs():
    ta = tf.TensorArray(tf.float32, size=1).write(0, tf.constant([1, 2]))
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="TensorArray dtype is float but Op is trying to write dtype int32",
    ):
        run(ta.flow)


def test_close_then_use_is_an_error():
    ta = tf.TensorArray(tf.float32, size=1, dynamic_size=True).write(0, [1.0])
    close = ta.close()
    with tf.control_dependencies([close]):
        size = ta.identity().size()
    with pytest.raises(tf.errors.InvalidArgumentError, match="has already been closed"):
        run(size)


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="`size` must be provided"):
        tf.TensorArray(tf.float32)
    ta = tf.TensorArray(tf.float32, size=1)
    with pytest.raises(ValueError, match="both a `handle` and `size`"):
        tf.TensorArray(tf.float32, size=1, handle=ta.handle, flow=ta.flow)
    with pytest.raises(ValueError, match="flow must not be None"):
        tf.TensorArray(tf.float32, handle=ta.handle)
    with pytest.raises(TypeError, match="Expected `handle` to be a Tensor"):
        tf.TensorArray(tf.float32, handle=3, flow=ta.flow)


def test_a_handle_and_flow_make_a_view_of_the_same_array():
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(1, [7.0])
    view = tf.TensorArray(tf.float32, handle=ta.handle, flow=ta.flow)
    np.testing.assert_array_equal(run(view.read(1)), [7])


def test_every_run_gets_a_fresh_array():
    size = tf.placeholder(tf.int32, [])
    ta = tf.TensorArray(tf.float32, size=size).write(0, [1.0, 2.0])
    stacked = ta.stack()
    with tf.Session() as sess:
        for n in (1, 3, 2):
            out = sess.run(stacked, {size: n})
            assert out.shape == (n, 2)
            np.testing.assert_array_equal(out[0], [1, 2])


def test_fetching_a_handle_fails_cleanly():
    ta = tf.TensorArray(tf.float32, size=1)
    with tf.Session() as sess:
        try:
            value = sess.run(ta.handle)
        except TypeError as error:  # no numpy form for handles
            assert "type 20" in str(error)
        else:
            assert isinstance(value, (bytes, np.ndarray))
        # The session still works.
        assert sess.run(ta.size()) == 1


# --- Gradients ---------------------------------------------------------------


def test_gradient_through_write_and_read():
    def build(x):
        ta = tf.TensorArray(x.dtype, size=2, clear_after_read=False)
        ta = ta.write(0, x * x).write(1, tf.exp(x))
        return ta.read(0) * 3.0 + ta.read(1) * ta.read(0)

    check_gradients(build, [np.random.RandomState(0).randn(3)])


def test_gradient_through_unstack_and_stack():
    def build(x):
        ta = tf.TensorArray(x.dtype, size=4).unstack(x)
        return tf.square(ta.stack())

    check_gradients(build, [np.random.RandomState(1).randn(4, 3)])


def test_gradient_through_scatter_and_gather():
    def build(x):
        ta = tf.TensorArray(x.dtype, size=3).scatter([2, 0, 1], x)
        return ta.gather([1, 2]) * 2.0

    check_gradients(build, [np.random.RandomState(2).randn(3, 2)])


def test_gradient_through_split_and_concat():
    def build(x):
        ta = tf.TensorArray(x.dtype, size=3, infer_shape=False).split(x, [1, 3, 1])
        return tf.exp(ta.concat())

    check_gradients(build, [np.random.RandomState(3).randn(5, 2)])


def test_gradients_of_repeated_reads_add_up():
    x = tf.placeholder(tf.float32, [2])
    ta = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, x)
    y = tf.reduce_sum(ta.read(0) * 2.0 + ta.read(0) * 3.0)
    (grad,) = tf.gradients(y, [x])
    np.testing.assert_allclose(run(grad, {x: [1.0, 2.0]}), [5.0, 5.0])


def test_unread_elements_get_zero_gradients():
    x = tf.placeholder(tf.float32, [2, 3])
    ta = tf.TensorArray(tf.float32, size=2).unstack(x)
    y = tf.reduce_sum(ta.read(1))
    (grad,) = tf.gradients(y, [x])
    np.testing.assert_allclose(run(grad, {x: np.ones((2, 3))}), [[0, 0, 0], [1, 1, 1]])


def test_two_gradient_computations_do_not_share_arrays():
    x = tf.placeholder(tf.float32, [2])
    ta = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, x)
    y = tf.reduce_sum(ta.read(0) * 2.0)
    (g1,) = tf.gradients(y, [x])
    (g2,) = tf.gradients(y, [x])
    a, b = run([g1, g2], {x: [1.0, 1.0]})
    np.testing.assert_allclose(a, [2, 2])
    np.testing.assert_allclose(b, [2, 2])


def test_arrays_on_a_server_live_for_one_worker_step():
    # The master runs the step through the worker's RunGraph, whose step
    # container holds the array: each run writes index 0 of a fresh one.
    server = tf.train.Server.create_local_server()
    try:
        x = tf.placeholder(tf.float32, [2])
        ta = tf.TensorArray(tf.float32, size=2).write(0, x).write(1, x * 2.0)
        stacked = ta.stack()
        (grad,) = tf.gradients(tf.reduce_sum(stacked * stacked), [x])
        with tf.Session(server.target) as sess:
            for k in range(3):
                value = np.array([k, k + 1], np.float32)
                out, g = sess.run([stacked, grad], {x: value})
                np.testing.assert_array_equal(out, [value, value * 2])
                np.testing.assert_allclose(g, 2 * value + 8 * value)
    finally:
        server.stop()


# The TensorArray node names TensorFlow 2.21 (tf.compat.v1) gives the
# program of test_node_names_are_tensorflows, gradients included.
TENSORFLOW_NODE_NAMES = [
    "TensorArray",
    "TensorArrayConcatV3",
    "TensorArrayGatherV3",
    "TensorArrayReadV3",
    "TensorArraySplit/TensorArraySplitV3",
    "TensorArrayStack/TensorArrayGatherV3",
    "TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3",
    "TensorArrayWrite/TensorArrayWriteV3",
    "TensorArray_1",
    "TensorArray_2",
    "gradients/TensorArrayConcatV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayConcatV3_grad/TensorArraySplit/TensorArraySplitV3",
    "gradients/TensorArrayGatherV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayGatherV3_grad/TensorArrayScatter/TensorArrayScatterV3",
    "gradients/TensorArrayReadV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayReadV3_grad/TensorArrayWrite/TensorArrayWriteV3",
    "gradients/TensorArraySplit/TensorArraySplitV3_grad/TensorArrayConcatV3",
    "gradients/TensorArraySplit/TensorArraySplitV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayStack/TensorArrayGatherV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayStack/TensorArrayGatherV3_grad/TensorArrayScatter/TensorArrayScatterV3",
    "gradients/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3_grad/TensorArrayGatherV3",
    (
        "gradients/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3_grad/"
        "TensorArrayGrad/TensorArrayGradV3"
    ),
    "gradients/TensorArrayWrite/TensorArrayWriteV3_grad/TensorArrayGrad/TensorArrayGradV3",
    "gradients/TensorArrayWrite/TensorArrayWriteV3_grad/TensorArrayReadV3",
]


def test_node_names_are_tensorflows():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [3, 2], name="x")
        ta = tf.TensorArray(tf.float32, size=3).unstack(x)
        t2 = tf.TensorArray(tf.float32, size=3).write(1, x[1])
        t3 = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(tf.reshape(x, [6]), [2, 4])
        y = (
            tf.reduce_sum(ta.stack())
            + tf.reduce_sum(t2.read(1))
            + tf.reduce_sum(t3.concat())
            + tf.reduce_sum(ta.gather([0]))
        )
        tf.gradients(y, x)
    names = sorted(op.name for op in graph.get_operations() if op.type.startswith("TensorArray"))
    assert names == TENSORFLOW_NODE_NAMES
