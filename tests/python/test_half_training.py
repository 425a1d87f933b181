"""Training in half (float16) and bfloat16: the gradient, loss, batch-norm,
elementwise and reduction ops and the optimizer updates compute in float
and round each result (runtime/kernels/half_via_float.cc). Each op is
checked against the same op in float32 on the same (already 16-bit)
values, rounded once; a small MLP and a small conv net train in float16
along the float32 trajectory.
"""

import math

import ml_dtypes
import numpy as np
import pytest
import tensorweave as tf

BF16 = ml_dtypes.bfloat16
TYPES = pytest.mark.parametrize("numpy_type", [np.float16, BF16], ids=["half", "bfloat16"])
# One unit in the last place: half keeps 11 significant bits, bfloat16 8.
ULP = {np.float16: 2**-10, BF16: 2**-7}


def _run_in(dtype, build, inputs):
    """Runs build(*constants of `inputs` in dtype) and returns its fetches."""
    with tf.Graph().as_default():
        fetches = build(*[tf.constant(a, dtype) for a in inputs])
        with tf.Session() as sess:
            return sess.run(fetches)


def _assert_matches_float(numpy_type, build, inputs, ulps=1, atol=1e-6):
    """build in numpy_type gives build in float32 on the same values,
    rounded to numpy_type, within `ulps` units in the last place (of each
    element, or of the tensor's largest)."""
    inputs = [np.asarray(a).astype(numpy_type) for a in inputs]
    got = _run_in(tf.as_dtype(numpy_type), build, inputs)
    expected = _run_in(tf.float32, build, [a.astype(np.float32) for a in inputs])
    got_items = got.items() if isinstance(got, dict) else [("result", got)]
    for name, value in got_items:
        reference = expected[name] if isinstance(got, dict) else expected
        if value.dtype != np.float32:  # outputs of type U stay float32
            assert value.dtype == numpy_type, name
            reference = reference.astype(numpy_type)
        reference = np.asarray(reference, np.float32)
        # Gradients through a rounded forward value (elu's y + 1 near
        # y = -1, say) lose bits to cancellation: errors are held to units
        # in the last place of the tensor's largest element.
        scale = np.max(np.abs(reference), initial=0.0)
        np.testing.assert_allclose(
            np.asarray(value, np.float32),
            reference,
            rtol=ulps * ULP[numpy_type],
            atol=max(atol, ulps * ULP[numpy_type] * scale),
            err_msg=name,
        )


def _sample(shape, seed, low=None):
    values = np.random.default_rng(seed).standard_normal(shape) * 2
    return values if low is None else np.abs(values) + low


_UNARY = {
    "reciprocal": (tf.reciprocal, lambda x: 1 / x, 0.5),
    "sign": (tf.sign, np.sign, None),
    "floor": (tf.floor, np.floor, None),
    "ceil": (tf.ceil, np.ceil, None),
    "round": (tf.round, np.round, None),
    "sin": (tf.sin, np.sin, None),
    "cos": (tf.cos, np.cos, None),
    "log1p": (tf.log1p, np.log1p, 0.0),
    "expm1": (tf.expm1, np.expm1, None),
    "erf": (tf.erf, np.vectorize(math.erf), None),
    "selu": (
        tf.nn.selu,
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        None,
    ),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), None),
}


@TYPES
@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_ops_against_numpy(numpy_type, name):
    op, reference, low = _UNARY[name]
    x = _sample([64], 1, low).astype(numpy_type)
    x_float = x.astype(np.float32)
    expected = reference(x_float).astype(np.float32).astype(numpy_type).astype(np.float32)
    got = _run_in(tf.as_dtype(numpy_type), op, [x])
    assert got.dtype == numpy_type
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=ULP[numpy_type], atol=1e-6)


@TYPES
def test_binary_ops_and_reductions_against_numpy(numpy_type):
    x = _sample([4, 6], 2, 0.25).astype(numpy_type)
    y = (_sample([6], 3) / 2).astype(numpy_type)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    expected = {
        "pow": np.power(xf, yf),
        "squared_difference": np.square(xf - yf),
        "max": xf.max(axis=1),
        "min": xf.min(axis=0),
        "prod": xf.prod(axis=1),
    }

    def build(a, b):
        return {
            "pow": tf.pow(a, b),
            "squared_difference": tf.squared_difference(a, b),
            "max": tf.reduce_max(a, axis=1),
            "min": tf.reduce_min(a, axis=0),
            "prod": tf.reduce_prod(a, axis=1),
            "argmax": tf.argmax(a, axis=1),
            "argmin": tf.argmin(a, axis=0, output_type=tf.int32),
        }

    got = _run_in(tf.as_dtype(numpy_type), build, [x, y])
    for name, value in expected.items():
        assert got[name].dtype == numpy_type, name
        np.testing.assert_allclose(
            got[name].astype(np.float32),
            value.astype(numpy_type).astype(np.float32),
            rtol=ULP[numpy_type],
            err_msg=name,
        )
    np.testing.assert_array_equal(got["argmax"], np.argmax(xf, axis=1))
    assert got["argmin"].dtype == np.int32
    np.testing.assert_array_equal(got["argmin"], np.argmin(xf, axis=0))


def _gradients(loss_of, *inputs):
    loss = loss_of(*inputs)
    return dict(zip([f"d{i}" for i in range(len(inputs))], tf.gradients(loss, list(inputs))))


_ACTIVATIONS = {
    "relu": tf.nn.relu,
    "relu6": lambda x: tf.nn.relu6(x * 4),
    "elu": tf.nn.elu,
    "selu": tf.nn.selu,
    "softplus": tf.nn.softplus,
    "leaky_relu": tf.nn.leaky_relu,
    "tanh": tf.tanh,
    "sigmoid": tf.sigmoid,
    "sqrt": lambda x: tf.sqrt(tf.abs(x) + 0.5),
    "rsqrt": lambda x: tf.rsqrt(tf.abs(x) + 0.5),
    "reciprocal": lambda x: tf.reciprocal(tf.abs(x) + 0.5),
}


@TYPES
@pytest.mark.parametrize("name", sorted(_ACTIVATIONS))
def test_activation_gradients_match_float(numpy_type, name):
    activation = _ACTIVATIONS[name]
    weights = _sample([5, 7], 11)

    def build(x, w):
        return _gradients(lambda a: tf.reduce_sum(activation(a) * w), x)

    _assert_matches_float(numpy_type, build, [_sample([5, 7], 10), weights], ulps=2)


@TYPES
def test_convolution_pooling_and_bias_gradients_match_float(numpy_type):
    rng = np.random.default_rng(5)
    image = rng.standard_normal([2, 6, 6, 3])
    kernel = rng.standard_normal([3, 3, 3, 4]) / 3
    depthwise = rng.standard_normal([3, 3, 3, 2]) / 3
    bias = rng.standard_normal([4])
    weights = rng.standard_normal([2, 3, 3, 4])

    def build(x, k, d, b, w):
        def loss(x, k, d, b):
            conv = tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), b)
            side = tf.nn.depthwise_conv2d(x, d, [1, 1, 1, 1], "SAME")
            # Max pooling of the input, whose maxima both dtypes place alike
            # (of the rounded conv, a near tie may fall the other way).
            pooled = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
            averaged = tf.nn.avg_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
            return (
                tf.reduce_sum(averaged * w)
                + tf.reduce_sum(pooled * w[..., :3])
                + tf.reduce_sum(tf.square(side))
            )

        return _gradients(loss, x, k, d, b)

    # Each gradient op reads inputs already rounded to 16 bits, and the
    # filter gradients sum 72 products, so a few units in the last place.
    _assert_matches_float(
        numpy_type, build, [image, kernel, depthwise, bias, weights], ulps=8, atol=2e-2
    )


@TYPES
def test_softmax_cross_entropy_and_its_gradients_match_float(numpy_type):
    logits = _sample([6, 5], 20)
    labels = np.random.default_rng(21).dirichlet(np.ones(5), 6)
    indices = np.array([0, 4, 2, 1, 3, 3], np.int64)

    def build(z, p):
        dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=p, logits=z)
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=indices, logits=z)
        dz_dense, dz_sparse = [tf.gradients(tf.reduce_sum(c), z)[0] for c in (dense, sparse)]
        return {"dense": dense, "sparse": sparse, "dz_dense": dz_dense, "dz_sparse": dz_sparse}

    _assert_matches_float(numpy_type, build, [logits, labels], ulps=2)


@TYPES
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
def test_fused_batch_norm_and_its_gradient_match_float(numpy_type, training):
    rng = np.random.default_rng(30)
    x = rng.standard_normal([2, 4, 4, 3]) * 3 + 1
    weights = rng.standard_normal([2, 4, 4, 3])
    # scale, offset, mean and variance stay float32 (TensorFlow's U).
    scale = np.array([1.5, 0.5, 2.0], np.float32)
    offset = np.array([0.1, -0.2, 0.3], np.float32)
    mean = np.array([0.5, 1.0, 1.5], np.float32)
    variance = np.array([4.0, 9.0, 2.0], np.float32)

    def build(x, w):
        def normalized(x):
            if training:
                return tf.nn.fused_batch_norm(x, scale, offset, is_training=True)
            return tf.nn.fused_batch_norm(x, scale, offset, mean, variance, is_training=False)

        y, batch_mean, batch_variance = normalized(x)
        assert batch_mean.dtype == tf.float32 and batch_variance.dtype == tf.float32
        dx = tf.gradients(tf.reduce_sum(y * w), x)[0]
        return {"y": y, "mean": batch_mean, "variance": batch_variance, "dx": dx}

    _assert_matches_float(numpy_type, build, [x, weights], ulps=4, atol=1e-2)


def _step(numpy_type, make_optimizer, use_resource, steps=3):
    """The variable after `steps` updates of loss = sum(var^2 * w)."""
    dtype = tf.as_dtype(numpy_type)
    start = _sample([3, 4], 40).astype(numpy_type)
    weights = np.abs(_sample([3, 4], 41)).astype(numpy_type)
    with tf.Graph().as_default():
        var = tf.get_variable(
            "var", initializer=tf.constant(start, dtype), use_resource=use_resource
        )
        loss = tf.reduce_sum(tf.square(var) * tf.constant(weights, dtype))
        train = make_optimizer().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            return sess.run(var)


_OPTIMIZERS = {
    "gradient_descent": lambda: tf.train.GradientDescentOptimizer(0.05),
    "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    # An epsilon half holds (1e-8 rounds to zero there) and betas bfloat16
    # holds (0.999 rounds to 1 there, and v would stay zero).
    "adam": lambda: tf.train.AdamOptimizer(0.05, beta1=0.875, beta2=0.984375, epsilon=1e-3),
}


@TYPES
@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("name", sorted(_OPTIMIZERS))
def test_optimizer_updates_match_float(numpy_type, use_resource, name):
    got = _step(numpy_type, _OPTIMIZERS[name], use_resource)
    expected = _step(np.float32, _OPTIMIZERS[name], use_resource)
    assert got.dtype == numpy_type
    # Three steps, each rounding the variable and its slots.
    np.testing.assert_allclose(
        got.astype(np.float32), expected, rtol=8 * ULP[numpy_type], atol=8 * ULP[numpy_type]
    )
    # Moved, and not to where it started.
    assert not np.array_equal(got, _sample([3, 4], 40).astype(numpy_type))


def test_an_update_of_a_variable_of_another_dtype_is_refused():
    with tf.Graph().as_default() as graph:
        var = tf.get_variable("var", initializer=tf.zeros([2], tf.float32), use_resource=True)
        half = tf.constant([1.0, 2.0], tf.float16)
        update = graph.create_op(
            "ResourceApplyGradientDescent",
            [var.handle, tf.constant(0.5, tf.float16), half],
            [],
            attrs={"T": tf.float16},
            name="update",
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="holds float"):
                sess.run(update)


def test_an_update_of_an_uninitialized_variable_fails_cleanly():
    with tf.Graph().as_default():
        var = tf.Variable(tf.zeros([2], tf.float16), name="never_initialized")
        update = tf.train.GradientDescentOptimizer(0.5).apply_gradients(
            [(tf.constant([1.0, 2.0], tf.float16), var)]
        )
        with (
            tf.Session() as sess,
            pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"),
        ):
            sess.run(update)


def test_an_update_naming_one_variable_twice_is_refused():
    with tf.Graph().as_default() as graph:
        var = tf.get_variable("var", initializer=tf.zeros([2], tf.float16), use_resource=True)
        half = tf.constant(0.5, tf.float16)
        update = graph.create_op(
            "ResourceApplyMomentum",
            [var.handle, var.handle, half, tf.constant([1.0, 2.0], tf.float16), half],
            [],
            attrs={"T": tf.float16},
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="different variables"):
                sess.run(update)


def _mlp_loss(x, labels, dtype, seed):
    rng = np.random.default_rng(seed)
    hidden = tf.get_variable("w1", initializer=tf.constant(rng.standard_normal([8, 16]) / 3, dtype))
    b1 = tf.get_variable("b1", initializer=tf.zeros([16], dtype))
    out = tf.get_variable("w2", initializer=tf.constant(rng.standard_normal([16, 4]) / 4, dtype))
    b2 = tf.get_variable("b2", initializer=tf.zeros([4], dtype))
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, hidden), b1))
    logits = tf.nn.bias_add(tf.matmul(h, out), b2)
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )


def _conv_loss(x, labels, dtype, seed):
    rng = np.random.default_rng(seed)
    k1 = tf.get_variable(
        "k1", initializer=tf.constant(rng.standard_normal([3, 3, 2, 4]) / 4, dtype)
    )
    b1 = tf.get_variable("b1", initializer=tf.zeros([4], dtype))
    dense = tf.get_variable("w", initializer=tf.constant(rng.standard_normal([16, 3]) / 4, dtype))
    conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k1, [1, 1, 1, 1], "SAME"), b1))
    pooled = tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    logits = tf.matmul(tf.reshape(pooled, [-1, 16]), dense)
    return tf.reduce_mean(
        tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.one_hot(labels, 3, dtype=dtype), logits=logits
        )
    )


def _train(loss_fn, inputs, labels, dtype, steps=6):
    """The losses of `steps` GradientDescent steps of loss_fn in dtype,
    fed float32 inputs cast in the graph."""
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.float32, inputs.shape, name="x")
        loss = loss_fn(tf.cast(fed, dtype), tf.constant(labels), dtype, seed=50)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        feed = {fed: inputs}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], feed)[0] for _ in range(steps)]
    assert all(value.dtype == dtype.as_numpy_dtype for value in losses)
    return np.array(losses, np.float32)


@pytest.mark.parametrize(
    "loss_fn, shape, classes",
    [(_mlp_loss, [32, 8], 4), (_conv_loss, [8, 4, 4, 2], 3)],
    ids=["mlp", "conv_net"],
)
def test_a_network_trains_in_float16_as_in_float32(loss_fn, shape, classes):
    rng = np.random.default_rng(60)
    inputs = rng.standard_normal(shape).astype(np.float32)
    labels = rng.integers(0, classes, shape[0]).astype(np.int64)
    in_half = _train(loss_fn, inputs, labels, tf.float16)
    in_float = _train(loss_fn, inputs, labels, tf.float32)
    assert in_half[-1] < 0.9 * in_half[0], in_half
    # Rounding every op's result to 11 bits moves the trajectory a little.
    np.testing.assert_allclose(in_half, in_float, rtol=2e-2, atol=2e-3)
