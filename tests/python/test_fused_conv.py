"""_FusedConv2D and _FusedMatMul (runtime/kernels/fused_conv_ops.cc)
against the unfused graph they replace (Conv2D or MatMul, BiasAdd or an
inference batch norm, then the activation) on many geometries, on both
convolution paths (TW_CONV2D_PATH: oneDNN's primitive with bias and eltwise
post-ops, or im2col followed by one pass over the output); their errors;
and a GraphDef holding a _FusedConv2D as TensorFlow's grappler writes it.
"""

import os

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


def fused_conv2d(
    x,
    w,
    args,
    fused_ops,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,
    explicit_paddings=(),
    alpha=0.2,
    epsilon=1e-4,
):
    attrs = {
        "T": tf.float32,
        "TArgs": [tf.float32] * len(args),
        "num_args": len(args),
        "strides": strides,
        "padding": padding,
        "explicit_paddings": list(explicit_paddings),
        "data_format": data_format,
        "dilations": dilations or [1, 1, 1, 1],
        "fused_ops": fused_ops,
        "leakyrelu_alpha": alpha,
        "epsilon": epsilon,
    }
    graph = tf.get_default_graph()
    inputs = [tf.convert_to_tensor(x), tf.convert_to_tensor(w), [tf.constant(a) for a in args], []]
    return graph.create_op("_FusedConv2D", inputs, attrs=attrs, name="fused_conv").outputs[0]


# (batch, rows, cols, in_depth, filter, out_depth, stride, dilation, padding)
CASES = [
    (1, 20, 20, 8, 3, 16, 1, 1, "SAME"),  # batch 1: rows split across the pool
    (3, 17, 19, 5, 3, 7, 2, 1, "SAME"),  # odd sizes, odd channels
    (2, 18, 18, 3, 5, 8, 1, 2, "VALID"),  # dilated
    (2, 15, 16, 4, 3, 9, 2, 1, ((1, 2), (0, 3))),  # EXPLICIT
    (2, 6, 6, 8, 1, 8, 1, 1, "VALID"),  # 1x1 (the im2col path)
]


def case_id(case):
    return "n{}_{}x{}x{}_k{}to{}_s{}_d{}_{}".format(*case[:-1], str(case[-1]).replace(" ", ""))


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fused_conv2d_bias_activation_matches_the_unfused_graph(case, data_format, conv_path):
    batch, rows, cols, depth, k, out_depth, stride, dilation, padding = case
    rng = np.random.default_rng(sum(case[:-1]))
    x = rng.standard_normal([batch, rows, cols, depth]).astype(np.float32)
    w = rng.standard_normal([k, k, depth, out_depth]).astype(np.float32)
    b = rng.standard_normal([out_depth]).astype(np.float32)
    nchw = data_format == "NCHW"
    if nchw:
        x = x.transpose(0, 3, 1, 2)
    strides = [1, 1, stride, stride] if nchw else [1, stride, stride, 1]
    dilations = [1, 1, dilation, dilation] if nchw else [1, dilation, dilation, 1]
    explicit = []
    if not isinstance(padding, str):
        pairs = [[0, 0], [0, 0], list(padding[0]), list(padding[1])]
        if not nchw:
            pairs = [pairs[0], pairs[2], pairs[3], pairs[1]]
        explicit = [p for pair in pairs for p in pair]
        padding_arg, padding_attr = pairs, "EXPLICIT"
    else:
        padding_arg = padding_attr = padding
    graph = tf.Graph()
    fused, unfused = {}, {}
    with graph.as_default():
        conv = tf.nn.conv2d(
            x, w, strides, padding_arg, data_format=data_format, dilations=dilations
        )
        biased = tf.nn.bias_add(conv, b, data_format=data_format)
        for name, activation in ACTIVATIONS.items():
            ops = ["BiasAdd"] + ([name] if name else [])
            fused[name] = fused_conv2d(
                x, w, [b], ops, strides, padding_attr, data_format, dilations, explicit, alpha=0.3
            )
            unfused[name] = activation(biased)
    with tf.Session(graph=graph) as sess:
        for path in ("onednn", "im2col"):
            conv_path(path)
            got, expected = sess.run([fused, unfused])
            for name in ACTIVATIONS:
                scale = np.abs(expected[name]).max()
                np.testing.assert_allclose(
                    got[name],
                    expected[name],
                    rtol=1e-5,
                    atol=1e-5 * scale,
                    err_msg=f"{path} {name}",
                )


@pytest.mark.parametrize("activation", [None, "Relu"])
def test_fused_conv2d_batch_norm_matches_the_formula(activation, conv_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal([2, 18, 18, 6]).astype(np.float32)
    w = rng.standard_normal([3, 3, 6, 10]).astype(np.float32)
    scale, offset, mean = (rng.standard_normal([10]).astype(np.float32) for _ in range(3))
    variance = rng.random(10).astype(np.float32) + 0.5
    graph = tf.Graph()
    with graph.as_default():
        conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        expected_t = (conv - mean) * (scale / tf.sqrt(variance + 1e-3)) + offset
        if activation:
            expected_t = tf.nn.relu(expected_t)
        ops = ["FusedBatchNorm"] + ([activation] if activation else [])
        fused = fused_conv2d(
            x, w, [scale, offset, mean, variance], ops, [1, 1, 1, 1], "SAME", epsilon=1e-3
        )
    with tf.Session(graph=graph) as sess:
        for path in ("onednn", "im2col"):
            conv_path(path)
            got, expected = sess.run([fused, expected_t])
            np.testing.assert_allclose(
                got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max(), err_msg=path
            )


@pytest.mark.parametrize("transpose_a,transpose_b", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_fused_matmul_matches_the_unfused_graph(activation, transpose_a, transpose_b):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal([7, 5]) * 3).astype(np.float32)
    b = rng.standard_normal([5, 9]).astype(np.float32)
    bias = rng.standard_normal([9]).astype(np.float32)
    a_in = a.T.copy() if transpose_a else a
    b_in = b.T.copy() if transpose_b else b
    graph = tf.Graph()
    with graph.as_default():
        expected_t = ACTIVATIONS[activation](tf.nn.bias_add(tf.matmul(a, b), bias))
        fused = graph.create_op(
            "_FusedMatMul",
            [tf.constant(a_in), tf.constant(b_in), [tf.constant(bias)]],
            attrs={
                "T": tf.float32,
                "num_args": 1,
                "transpose_a": transpose_a,
                "transpose_b": transpose_b,
                "fused_ops": ["BiasAdd"] + ([activation] if activation else []),
                "leakyrelu_alpha": 0.3,
            },
            name="fused_matmul",
        ).outputs[0]
    with tf.Session(graph=graph) as sess:
        got, expected = sess.run([fused, expected_t])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_fused_matmul_passes_nan_through_its_activation(activation):
    # TensorFlow's activations give NaN for NaN (Relu and Relu6 too); the
    # 9 columns cover both the packet part and the tail of the epilogue.
    a = np.ones([3, 2], np.float32)
    a[1, 0] = np.nan
    b = np.ones([2, 9], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        fused = graph.create_op(
            "_FusedMatMul",
            [tf.constant(a), tf.constant(b), [tf.constant(np.zeros([9], np.float32))]],
            attrs={
                "T": tf.float32,
                "num_args": 1,
                "transpose_a": False,
                "transpose_b": False,
                "fused_ops": ["BiasAdd"] + ([activation] if activation else []),
                "leakyrelu_alpha": 0.3,
            },
            name="fused_matmul",
        ).outputs[0]
    with tf.Session(graph=graph) as sess:
        got = sess.run(fused)
    assert np.isnan(got[1]).all()
    assert not np.isnan(got[[0, 2]]).any()


def test_unknown_fusions_are_unimplemented():
    x = np.ones([1, 4, 4, 2], np.float32)
    w = np.ones([3, 3, 2, 2], np.float32)
    b = np.ones([2], np.float32)
    for ops in (["BiasAdd", "Tanh"], ["Relu"], ["BiasAdd", "Relu", "Relu"]):
        graph = tf.Graph()
        with graph.as_default():
            y = fused_conv2d(x, w, [b], ops, [1, 1, 1, 1], "SAME")
        with (
            tf.Session(graph=graph) as sess,
            pytest.raises(tf.errors.UnimplementedError, match="Fusion is not implemented"),
        ):
            sess.run(y)


def test_a_bias_of_the_wrong_size_is_invalid_argument():
    x = np.ones([1, 4, 4, 2], np.float32)
    w = np.ones([3, 3, 2, 3], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        y = fused_conv2d(x, w, [np.ones([2], np.float32)], ["BiasAdd"], [1, 1, 1, 1], "SAME")
    with (
        tf.Session(graph=graph) as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match="bias must be a vector of the 3"),
    ):
        sess.run(y)


# A _FusedConv2D node as TensorFlow 2.21's grappler remapper writes it
# (attrs in its order, num_host_args and filter_format absent as in graphs
# saved by earlier versions).
GRAPPLER_NODE = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "w" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node {
  name: "conv/Relu" op: "_FusedConv2D" input: "x" input: "w" input: "b"
  device: "/job:localhost/replica:0/task:0/device:CPU:0"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "TArgs" value { list { type: DT_FLOAT } } }
  attr { key: "data_format" value { s: "NHWC" } }
  attr { key: "dilations" value { list { i: 1 i: 1 i: 1 i: 1 } } }
  attr { key: "epsilon" value { f: 0 } }
  attr { key: "explicit_paddings" value { list { } } }
  attr { key: "fused_ops" value { list { s: "BiasAdd" s: "Relu" } } }
  attr { key: "leakyrelu_alpha" value { f: 0.2 } }
  attr { key: "num_args" value { i: 1 } }
  attr { key: "padding" value { s: "SAME" } }
  attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } }
  attr { key: "use_cudnn_on_gpu" value { b: true } }
}
"""


def test_a_grappler_written_fused_conv2d_imports_and_runs():
    from google.protobuf import text_format

    graph_def = text_format.Parse(GRAPPLER_NODE, tf.GraphDef())
    rng = np.random.default_rng(6)
    x = rng.standard_normal([2, 8, 8, 3]).astype(np.float32)
    w = rng.standard_normal([3, 3, 3, 4]).astype(np.float32)
    b = rng.standard_normal([4]).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
        expected_t = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    with tf.Session(graph=graph) as sess:
        got = sess.run("conv/Relu:0", {"x:0": x, "w:0": w, "b:0": b})
        expected = sess.run(expected_t)
    assert graph.get_tensor_by_name("conv/Relu:0").shape.ndims == 4  # Conv2D's shape function
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# (batch, rows, cols, in_depth, out_depth): rows split over the pool, and a
# filter larger than the input (oneDNN's blocks of output channels).
ADD_CASES = [(2, 9, 11, 6, 32), (1, 4, 4, 64, 128)]


@pytest.mark.parametrize("case", ADD_CASES)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("activation", [None, "Relu"])
def test_fused_conv2d_bias_add_matches_the_unfused_graph(case, activation, data_format, conv_path):
    # The remapper's residual fusion: act(conv + bias + addend), the addend
    # the second arg, through oneDNN's sum post-op and through im2col.
    batch, rows, cols, depth, out_depth = case
    rng = np.random.default_rng(7)
    nchw = data_format == "NCHW"
    x = rng.standard_normal([batch, rows, cols, depth]).astype(np.float32)
    w = rng.standard_normal([3, 3, depth, out_depth]).astype(np.float32)
    b = rng.standard_normal([out_depth]).astype(np.float32)
    z = rng.standard_normal([batch, rows, cols, out_depth]).astype(np.float32)
    if nchw:
        x, z = x.transpose(0, 3, 1, 2), z.transpose(0, 3, 1, 2)
    strides = [1, 1, 1, 1]
    ops = ["BiasAdd", "Add"] + ([activation] if activation else [])
    graph = tf.Graph()
    with graph.as_default():
        fused = fused_conv2d(x, w, [b, z], ops, strides, "SAME", data_format)
        unfused = tf.nn.bias_add(
            tf.nn.conv2d(x, w, strides, "SAME", data_format=data_format), b, data_format=data_format
        )
        unfused = ACTIVATIONS[activation](unfused + z)
    with tf.Session(graph=graph) as sess:
        for path in ("onednn", "im2col"):
            conv_path(path)
            got, expected = sess.run([fused, unfused])
            scale = np.abs(expected).max()
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=path)


def test_a_fused_add_of_another_shape_is_invalid_argument():
    rng = np.random.default_rng(8)
    x = rng.standard_normal([1, 5, 5, 3]).astype(np.float32)
    w = rng.standard_normal([3, 3, 3, 4]).astype(np.float32)
    b = np.zeros([4], np.float32)
    z = np.zeros([4], np.float32)  # would broadcast in AddV2: not here
    graph = tf.Graph()
    with graph.as_default():
        fused = fused_conv2d(x, w, [b, z], ["BiasAdd", "Add", "Relu"], [1, 1, 1, 1], "SAME")
    with (
        tf.Session(graph=graph) as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match="fused_conv"),
    ):
        sess.run(fused)
