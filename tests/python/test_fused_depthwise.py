"""_FusedDepthwiseConv2dNative (runtime/kernels/fused_conv_ops.cc) against
the unfused graph it replaces (DepthwiseConv2dNative, BiasAdd or an
inference batch norm, then the activation) on several geometries: float
with multiplier 1 runs through oneDNN's depthwise primitive
(depthwise_onednn.cc), the multiplier-2 case through the loops, and the
unfused graph always through the loops; its
errors; the remapper's fusion of the chain in MobileNet's blocks
(DepthwiseConv2dNative -> BiasAdd -> Relu6) with the values of the graph
run unoptimized; and the _FusedConv2D kernel's reordered-filter cache
(attr _filter_is_const) over changing inputs and batch sizes.
"""

import numpy as np
import pytest
import tensorweave as tf

ACTIVATIONS = {
    None: lambda y: y,
    "Relu": tf.nn.relu,
    "Relu6": tf.nn.relu6,
    "Elu": tf.nn.elu,
    "LeakyRelu": lambda y: tf.nn.leaky_relu(y, alpha=0.3),
}


def fused_depthwise(x, w, args, fused_ops, strides, padding, data_format="NHWC", dilations=None):
    attrs = {
        "T": tf.float32,
        "num_args": len(args),
        "strides": strides,
        "padding": padding,
        "data_format": data_format,
        "dilations": dilations or [1, 1, 1, 1],
        "fused_ops": fused_ops,
        "leakyrelu_alpha": 0.3,
        "epsilon": 1e-3,
    }
    inputs = [tf.convert_to_tensor(x), tf.convert_to_tensor(w), [tf.constant(a) for a in args]]
    graph = tf.get_default_graph()
    op = graph.create_op("_FusedDepthwiseConv2dNative", inputs, attrs=attrs, name="fused_depthwise")
    return op.outputs[0]


# (batch, rows, cols, depth, filter, multiplier, stride, dilation, padding)
CASES = [
    (1, 12, 12, 40, 3, 1, 1, 1, "SAME"),  # MobileNet's blocks: more than one channel block
    (2, 13, 11, 16, 3, 1, 2, 1, "VALID"),  # stride 2 after MobileNet's Pad
    (2, 9, 10, 5, 3, 2, 1, 1, "SAME"),  # channel multiplier 2, odd depth
    (1, 14, 14, 8, 3, 1, 1, 2, "SAME"),  # dilated
    (8, 25, 25, 48, 3, 1, 2, 1, "VALID"),  # a batch split into blocks of images for oneDNN
]


def case_id(case):
    return "n{}_{}x{}x{}_k{}_m{}_s{}_d{}_{}".format(*case)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fused_depthwise_bias_activation_matches_the_unfused_graph(case, data_format):
    batch, rows, cols, depth, k, multiplier, stride, dilation, padding = case
    rng = np.random.default_rng(sum(case[:-1]))
    x = (rng.standard_normal([batch, rows, cols, depth]) * 3).astype(np.float32)  # reach 6
    w = rng.standard_normal([k, k, depth, multiplier]).astype(np.float32)
    b = rng.standard_normal([depth * multiplier]).astype(np.float32)
    nchw = data_format == "NCHW"
    if nchw:
        x = x.transpose(0, 3, 1, 2)
    strides = [1, 1, stride, stride] if nchw else [1, stride, stride, 1]
    dilations = [1, 1, dilation, dilation] if nchw else [1, dilation, dilation, 1]
    graph = tf.Graph()
    fused, unfused = {}, {}
    with graph.as_default():
        conv = tf.nn.depthwise_conv2d_native(
            x, w, strides, padding, data_format=data_format, dilations=dilations
        )
        biased = tf.nn.bias_add(conv, b, data_format=data_format)
        for name, activation in ACTIVATIONS.items():
            ops = ["BiasAdd"] + ([name] if name else [])
            fused[name] = fused_depthwise(x, w, [b], ops, strides, padding, data_format, dilations)
            unfused[name] = activation(biased)
    # Unoptimized, so that the unfused graph stays DepthwiseConv2dNative's loops.
    with tf.Session(graph=graph, config=_config(False)) as sess:
        got, expected = sess.run([fused, unfused])
    for name in ACTIVATIONS:
        np.testing.assert_allclose(
            got[name],
            expected[name],
            rtol=1e-5,
            atol=1e-5 * np.abs(expected[name]).max(),
            err_msg=str(name),
        )


@pytest.mark.parametrize("activation", [None, "Relu6"])
def test_fused_depthwise_batch_norm_matches_the_formula(activation):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal([2, 10, 10, 12]) * 3).astype(np.float32)
    w = rng.standard_normal([3, 3, 12, 1]).astype(np.float32)
    scale, offset, mean = (rng.standard_normal([12]).astype(np.float32) for _ in range(3))
    variance = rng.random(12).astype(np.float32) + 0.5
    graph = tf.Graph()
    with graph.as_default():
        conv = tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], "SAME")
        expected_t = (conv - mean) * (scale / tf.sqrt(variance + 1e-3)) + offset
        if activation:
            expected_t = tf.nn.relu6(expected_t)
        ops = ["FusedBatchNorm"] + ([activation] if activation else [])
        fused = fused_depthwise(x, w, [scale, offset, mean, variance], ops, [1, 1, 1, 1], "SAME")
    with tf.Session(graph=graph) as sess:
        got, expected = sess.run([fused, expected_t])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_fused_depthwise_errors():
    x = np.ones([1, 5, 5, 3], np.float32)
    w = np.ones([3, 3, 3, 1], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        wrong_bias = fused_depthwise(x, w, [np.ones([2], np.float32)], ["BiasAdd"], [1] * 4, "SAME")
        unknown = fused_depthwise(
            x, w, [np.ones([3], np.float32)], ["BiasAdd", "Tanh"], [1] * 4, "SAME"
        )
    with tf.Session(graph=graph) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bias must be a vector of the 3"):
            sess.run(wrong_bias)
        with pytest.raises(tf.errors.UnimplementedError, match="Fusion is not implemented"):
            sess.run(unknown)


def _config(optimize):
    level = tf.OptimizerOptions.L1 if optimize else tf.OptimizerOptions.L0
    return tf.ConfigProto(
        graph_options=tf.GraphOptions(optimizer_options=tf.OptimizerOptions(opt_level=level))
    )


def _run(graph, fetch, feeds, optimize, trace=False):
    with tf.Session(graph=graph, config=_config(optimize)) as sess:
        if not trace:
            return sess.run(fetch, feeds), None
        options = tf.RunOptions(output_partition_graphs=True)
        metadata = tf.RunMetadata()
        value = sess.run(fetch, feeds, options=options, run_metadata=metadata)
        return value, [n for g in metadata.partition_graphs for n in g.node]


def test_the_remapper_fuses_mobilenets_depthwise_bias_relu6():
    rng = np.random.default_rng(7)
    w = rng.standard_normal([3, 3, 24, 1]).astype(np.float32)
    b = rng.standard_normal([24]).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 12, 12, 24], name="x")
        conv = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")
        y = tf.nn.relu6(tf.nn.bias_add(conv, b), name="y")
    feeds = {x: (rng.standard_normal([2, 12, 12, 24]) * 3).astype(np.float32)}
    got, nodes = _run(graph, y, feeds, optimize=True, trace=True)
    expected, _ = _run(graph, y, feeds, optimize=False)
    fused = [n for n in nodes if n.op == "_FusedDepthwiseConv2dNative"]
    assert [list(n.attr["fused_ops"].list.s) for n in fused] == [[b"BiasAdd", b"Relu6"]]
    assert not [n for n in nodes if n.op in ("DepthwiseConv2dNative", "BiasAdd", "Relu6")]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# (size, in_depth, window, out_depth): at batch 1 the first two split the
# output rows across the pool, the last two (more weights than input values)
# split the output channels.
CACHED_SHAPES = [(20, 16, 3, 32), (20, 16, 1, 32), (4, 64, 3, 64), (2, 256, 3, 128)]


@pytest.mark.parametrize("shape", CACHED_SHAPES, ids=lambda s: "{}x{}x{}_k{}to{}".format(s[0], *s))
def test_a_constant_filter_is_reordered_once_and_stays_right(shape):
    # A constant filter sends every shape through oneDNN with the filter
    # reordered once (the optimizer marks the fused node _filter_is_const);
    # batches 1 and 8 split the work differently and read the cache in turn.
    size, depth, k, out_depth = shape
    rng = np.random.default_rng(8)
    w = rng.standard_normal([k, k, depth, out_depth]).astype(np.float32)
    b = rng.standard_normal([out_depth]).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, size, size, depth], name="x")
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b), name="y")
    inputs = [
        rng.standard_normal([batch, size, size, depth]).astype(np.float32) for batch in (1, 8, 1)
    ]
    config = _config(True)
    with tf.Session(graph=graph, config=config) as sess:
        options = tf.RunOptions(output_partition_graphs=True)
        metadata = tf.RunMetadata()
        sess.run(y, {x: inputs[0]}, options=options, run_metadata=metadata)
        (fused,) = [n for g in metadata.partition_graphs for n in g.node if n.op == "_FusedConv2D"]
        assert fused.attr["_filter_is_const"].b
        got = [sess.run(y, {x: value}) for value in inputs + inputs]
    for value, result in zip(inputs + inputs, got):
        expected, _ = _run(graph, y, {x: value}, optimize=False)
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_a_variable_filter_is_not_marked_constant():
    rng = np.random.default_rng(9)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [1, 6, 6, 4], name="x")
        w = tf.placeholder(tf.float32, [3, 3, 4, 8], name="w")
        b = rng.standard_normal([8]).astype(np.float32)
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b), name="y")
    feeds = {x: rng.standard_normal([1, 6, 6, 4]).astype(np.float32)}
    for seed in (1, 2):  # a new filter on each run
        feeds[w] = np.random.default_rng(seed).standard_normal([3, 3, 4, 8]).astype(np.float32)
        got, nodes = _run(graph, y, feeds, optimize=True, trace=True)
        (fused,) = [n for n in nodes if n.op == "_FusedConv2D"]
        assert "_filter_is_const" not in fused.attr
        expected, _ = _run(graph, y, feeds, optimize=False)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
