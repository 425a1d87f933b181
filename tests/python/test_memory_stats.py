"""tf.contrib.memory_stats (BytesInUse, BytesLimit, MaxBytesInUse) and the
memory a traced step records per node (RunMetadata step_stats: TensorFlow's
AllocatorMemoryUsed), including kernels that write into an input's buffer."""

import numpy as np
import tensorweave as tf

FULL_TRACE = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
ELEMENTS_16MB = 4 * 2**20  # of float32


def test_bytes_in_use_counts_a_live_tensor_and_the_peak_stays_above_it():
    graph = tf.Graph()
    with graph.as_default():
        big = tf.fill([ELEMENTS_16MB], 1.0, name="big")
        with tf.control_dependencies([big]):
            in_use = tf.contrib.memory_stats.BytesInUse()
        with tf.control_dependencies([in_use]):
            peak = tf.contrib.memory_stats.MaxBytesInUse()
        limit = tf.contrib.memory_stats.BytesLimit()
        after = tf.contrib.memory_stats.BytesInUse(name="after")
    with tf.Session(graph=graph) as sess:
        # `big` is fetched, so it is alive when the stats ops run after it.
        value, in_use_value, peak_value = sess.run([big, in_use, peak])
        assert value.shape == (ELEMENTS_16MB,)
        assert in_use_value >= ELEMENTS_16MB * 4
        assert peak_value >= in_use_value
        assert sess.run(limit) == 0
        # The fetched array is the tensor's buffer (no copy): alive until dropped.
        assert sess.run(after) >= ELEMENTS_16MB * 4
        del value
        assert sess.run(after) < in_use_value - ELEMENTS_16MB * 4 + 4096
    assert in_use.dtype == tf.int64 and in_use.shape.ndims == 0
    assert in_use.op.type == "BytesInUse" and peak.op.type == "MaxBytesInUse"


def test_traced_step_records_what_each_kernel_allocated():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [1000, 1000], name="x")
        y = tf.nn.relu(x * 2.0 + 1.0, name="y")
        z = tf.reduce_sum(y, name="z")
    metadata = tf.RunMetadata()
    # Remapping would fuse mul, add and the Relu into one kernel; the test
    # follows each one's buffer.
    unfused = tf.ConfigProto(
        graph_options=tf.GraphOptions(
            rewrite_options=tf.RewriterConfig(remapping=tf.RewriterConfig.OFF)
        )
    )
    with tf.Session(graph=graph, config=unfused) as sess:
        total = sess.run(
            z, {x: np.ones((1000, 1000), np.float32)}, options=FULL_TRACE, run_metadata=metadata
        )
    assert total == 3.0 * 1000 * 1000
    stats = {n.node_name: n for d in metadata.step_stats.dev_stats for n in d.node_stats}
    (memory,) = stats["mul"].memory
    assert memory.allocator_name == "cpu"
    assert memory.total_bytes == memory.peak_bytes == memory.live_bytes == 4 * 1000 * 1000
    assert memory.allocator_bytes_in_use >= 4 * 1000 * 1000
    # mul's buffer is nobody else's once add has it: add and the Relu write
    # into it (as TensorFlow's forward_input_or_allocate_output does) and
    # allocate nothing.
    address = stats["mul"].output[0].tensor_description.allocation_description.ptr
    for name in ("add", "y"):
        assert not stats[name].memory
        assert stats[name].output[0].tensor_description.allocation_description.ptr == address
    (memory,) = stats["z"].memory
    assert memory.total_bytes >= 4


def test_a_fed_or_fetched_tensor_is_never_overwritten():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [256, 256], name="x")
        doubled = tf.multiply(x, 2.0, name="doubled")
        y = tf.nn.relu(doubled, name="y")
    feed = np.full((256, 256), -1.0, np.float32)
    with tf.Session(graph=graph) as sess:
        doubled_value, y_value = sess.run([doubled, y], {x: feed})
    np.testing.assert_array_equal(feed, -1.0)
    np.testing.assert_array_equal(doubled_value, -2.0)
    np.testing.assert_array_equal(y_value, 0.0)


def test_backward_kernels_of_a_training_step_write_into_their_gradient_input():
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 32], name="x")
        w = tf.Variable(rng.standard_normal([32, 16]).astype(np.float32), name="w")
        hidden = tf.nn.relu(tf.matmul(x, w), name="hidden")
        loss = tf.reduce_sum(tf.square(hidden), name="loss")
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    metadata = tf.RunMetadata()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        sess.run(
            train,
            {x: rng.standard_normal([64, 32]).astype(np.float32)},
            options=FULL_TRACE,
            run_metadata=metadata,
        )
    stats = {n.node_name: n for d in metadata.step_stats.dev_stats for n in d.node_stats}

    def address(name):
        return stats[name].output[0].tensor_description.allocation_description.ptr

    (relu_grad,) = [op for op in graph.get_operations() if op.type == "ReluGrad"]
    gradient_input = relu_grad.inputs[0].op.name
    assert address(relu_grad.name) == address(gradient_input)
    assert not stats[relu_grad.name].memory
