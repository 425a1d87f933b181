"""The elementwise math ops of math_special_ops.py (trigonometric, hyperbolic,
special functions, classifiers, rint, softsign, C-style and guarded
divisions) and ClipByValue, PreventGradient and Snapshot: values against
numpy (and the standard library's math, or scipy.special where installed),
with static and unknown shapes, and every gradient against central
differences in float64 (op_test_util.check_op / gradient_check).

Expected special values (poles, NaN, zero divisors) are those TensorFlow
2.21 gives for the same inputs.
"""

import math

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients
from op_test_util import check_op, evaluate
from tensorweave.ops.op_builder import make_op

try:
    from scipy import special as scipy_special
except ImportError:  # scipy is not a project dependency
    scipy_special = None

needs_scipy = pytest.mark.skipif(scipy_special is None, reason="scipy.special is not installed")

RNG = np.random.RandomState(7)
FLOATS = [np.float32, np.float64]


def uniform(low, high, shape=(3, 4)):
    return RNG.uniform(low, high, shape)


def elementwise(function):
    """A numpy function of a math-module function, keeping the input dtype."""

    def apply(x):
        return np.vectorize(function, otypes=[np.float64])(x).astype(x.dtype)

    return apply


def tolerance(dtype):
    return 2e-6 if dtype == np.float32 else 1e-12


# name: (tf function, numpy reference, input sampler)
UNARY = {
    "sin": (tf.sin, np.sin, lambda: uniform(-3, 3)),
    "cos": (tf.cos, np.cos, lambda: uniform(-3, 3)),
    "tan": (tf.tan, np.tan, lambda: uniform(-1.2, 1.2)),
    "asin": (tf.asin, np.arcsin, lambda: uniform(-0.9, 0.9)),
    "acos": (tf.acos, np.arccos, lambda: uniform(-0.9, 0.9)),
    "atan": (tf.atan, np.arctan, lambda: uniform(-3, 3)),
    "sinh": (tf.sinh, np.sinh, lambda: uniform(-3, 3)),
    "cosh": (tf.cosh, np.cosh, lambda: uniform(-3, 3)),
    "asinh": (tf.asinh, np.arcsinh, lambda: uniform(-3, 3)),
    "acosh": (tf.acosh, np.arccosh, lambda: uniform(1.2, 4)),
    "atanh": (tf.atanh, np.arctanh, lambda: uniform(-0.9, 0.9)),
    "erf": (tf.erf, elementwise(math.erf), lambda: uniform(-2.5, 2.5)),
    "erfc": (tf.math.erfc, elementwise(math.erfc), lambda: uniform(-2.5, 2.5)),
    "lgamma": (tf.lgamma, elementwise(math.lgamma), lambda: uniform(0.2, 6)),
    "lgamma_negative": (tf.math.lgamma, elementwise(math.lgamma), lambda: uniform(-2.9, -2.1)),
    "softsign": (tf.nn.softsign, lambda x: x / (np.abs(x) + 1), lambda: uniform(-3, 3)),
    "expm1": (tf.math.expm1, np.expm1, lambda: uniform(-2, 2)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_numpy_with_gradient(name, dtype):
    tf_fn, numpy_fn, sample = UNARY[name]
    x = sample().astype(dtype)
    # Central differences need the float64 run only once.
    check_op(tf_fn, numpy_fn, [x], grad=dtype == np.float64, rtol=tolerance(dtype), atol=1e-6)


def test_special_values_match_tensorflow():
    x = np.array([-0.5, 0.0, -1.0, 1e-300, 3.5, -np.inf, np.inf])
    lgamma = evaluate(tf.lgamma, [x])
    np.testing.assert_allclose(
        lgamma, [1.26551212, np.inf, np.inf, 690.7755279, 1.2009736, np.inf, np.inf], rtol=1e-6
    )
    digamma = evaluate(tf.digamma, [np.array([-0.5, 0.0, -1.0, 3.5, -np.inf, np.inf])])
    np.testing.assert_allclose(
        digamma, [0.03648997, np.nan, np.nan, 1.10315664, np.nan, np.inf], rtol=1e-6
    )
    np.testing.assert_array_equal(
        evaluate(tf.acosh, [np.array([0.5, 1.0], np.float32)]), [np.nan, 0.0]
    )
    np.testing.assert_array_equal(
        evaluate(tf.erfc, [np.array([-30.0, 0.0, 30.0], np.float32)]), [2.0, 1.0, 0.0]
    )
    # Halves round to even, and the sign of zero is kept.
    rint = evaluate(tf.rint, [np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32)])
    np.testing.assert_array_equal(rint, [0.0, 2.0, 2.0, -0.0, -2.0])
    assert np.signbit(rint[3])


def test_digamma_polygamma_zeta_identities():
    # Known closed forms, so these hold without scipy.
    euler_gamma = 0.5772156649015329
    x = np.array([0.3, 1.0, 2.5, 7.0])
    digamma = evaluate(tf.digamma, [x])
    np.testing.assert_allclose(evaluate(tf.digamma, [x + 1]) - digamma, 1 / x, rtol=1e-12)
    np.testing.assert_allclose(digamma[1], -euler_gamma, rtol=1e-14)
    trigamma_at_1 = evaluate(lambda n, v: tf.polygamma(n, v), [np.array(1.0), np.array(1.0)])
    np.testing.assert_allclose(trigamma_at_1, math.pi**2 / 6, rtol=1e-13)
    np.testing.assert_allclose(
        evaluate(lambda a, b: tf.math.zeta(a, b), [np.array([2.0, 4.0]), np.array(1.0)]),
        [math.pi**2 / 6, math.pi**4 / 90],
        rtol=1e-13,
    )
    # polygamma(0, x) is digamma; a non-integer order is NaN, as TensorFlow.
    np.testing.assert_allclose(evaluate(tf.polygamma, [np.zeros(4), x]), digamma, rtol=1e-13)
    assert np.isnan(evaluate(tf.polygamma, [np.array(1.5), np.array(2.0)]))


@needs_scipy
@pytest.mark.parametrize("dtype", FLOATS)
def test_digamma_polygamma_zeta_against_scipy(dtype):
    x = uniform(0.3, 5).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    check_op(tf.digamma, lambda v: scipy_special.digamma(v).astype(dtype), [x], rtol=rtol)
    order = np.array([[0.0], [1.0], [2.0]], dtype)  # broadcasts against (3, 4)
    check_op(
        tf.polygamma,
        lambda n, v: scipy_special.polygamma(n.astype(int), v).astype(dtype),
        [order, x],
        rtol=rtol,
        grad=dtype == np.float64,
        wrt=[1],
    )
    exponent = uniform(1.5, 4, (4,)).astype(dtype)
    check_op(
        tf.math.zeta,
        lambda s, q: scipy_special.zeta(s, q).astype(dtype),
        [exponent, x],
        rtol=rtol,
        grad=dtype == np.float64,
        wrt=[1],
    )


@needs_scipy
def test_erf_and_lgamma_against_scipy_in_float32():
    x = np.linspace(-4, 4, 101).astype(np.float32)
    np.testing.assert_allclose(evaluate(tf.erf, [x]), scipy_special.erf(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(evaluate(tf.erfc, [x]), scipy_special.erfc(x), rtol=2e-6, atol=1e-7)
    positive = np.linspace(0.05, 30, 101).astype(np.float32)
    np.testing.assert_allclose(
        evaluate(tf.lgamma, [positive]), scipy_special.gammaln(positive), rtol=2e-6, atol=2e-6
    )


def test_classifiers():
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -2.5], np.float64)
    for tf_fn, numpy_fn in (
        (tf.is_nan, np.isnan),
        (tf.math.is_inf, np.isinf),
        (tf.math.is_finite, np.isfinite),
    ):
        for dtype in FLOATS:
            check_op(tf_fn, numpy_fn, [x.astype(dtype)])


def test_classifiers_and_rint_pass_no_gradient():
    x = tf.placeholder(tf.float64, [3])
    assert tf.gradients(tf.rint(x), x) == [None]
    assert tf.gradients(tf.cast(tf.is_nan(x), tf.float64), x) == [None]


BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
def test_atan2_broadcasts_with_gradient(shapes):
    y = RNG.standard_normal(shapes[0])
    x = RNG.uniform(0.3, 2, shapes[1]) * RNG.choice([-1, 1], shapes[1])
    check_op(tf.atan2, np.arctan2, [y, x])
    check_op(tf.math.atan2, np.arctan2, [y.astype(np.float32), x.astype(np.float32)], rtol=1e-6)


def test_atan2_signed_zeros_and_axes():
    y = np.array([1.0, -0.0, 0.0, 1.0], np.float32)
    x = np.array([-1.0, -1.0, -1.0, 0.0], np.float32)
    np.testing.assert_array_equal(evaluate(tf.atan2, [y, x]), np.arctan2(y, x))


INTEGERS = [np.int32, np.int64]


@pytest.mark.parametrize("dtype", INTEGERS + FLOATS)
def test_truncated_division_and_remainder(dtype):
    x = np.array([[7, -7, 7, -7, 0, 11]], dtype)
    y = np.array([[2], [-2], [3]], dtype)
    if np.issubdtype(dtype, np.integer):
        expected_quotient = lambda a, b: (np.trunc(a / b)).astype(dtype)
    else:
        expected_quotient = lambda a, b: np.trunc(a / b)
    check_op(tf.truncatediv, expected_quotient, [x, y], grad=False)
    check_op(tf.truncatemod, np.fmod, [x, y])

    def raw_mod(a, b):
        return make_op("Mod", [a, b], {"T": a.dtype.base_dtype}, "Mod")

    check_op(raw_mod, np.fmod, [x, y])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.uint32, np.uint64])
def test_truncatediv_small_integers(dtype):
    x = np.array([7, 9, 100, 0], dtype)
    y = np.array([2, 4, 7, 3], dtype)
    check_op(tf.truncatediv, lambda a, b: (a // b).astype(dtype), [x, y])


def test_integer_minimum_over_minus_one_wraps():
    for dtype in INTEGERS:
        low = np.iinfo(dtype).min
        x = np.array([low, low, 5], dtype)
        y = np.array([-1, 1, -1], dtype)
        np.testing.assert_array_equal(evaluate(tf.truncatediv, [x, y]), [low, low, -5])
        np.testing.assert_array_equal(evaluate(tf.truncatemod, [x, y]), [0, 0, 0])


def test_float_division_by_zero_gives_ieee_values():
    x = np.array([7.0, -7.0, 0.0, 7.5], np.float32)
    y = np.array([0.0, 0.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(evaluate(tf.truncatediv, [x, y]), [np.inf, -np.inf, np.nan, 3])
    np.testing.assert_array_equal(evaluate(tf.truncatemod, [x, y])[:3], [np.nan] * 3)


@pytest.mark.parametrize("op_type", ["TruncateDiv", "TruncateMod", "Mod"])
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_division_by_zero_is_invalid_argument(op_type, dtype):
    x = tf.constant([7, 8], dtype=dtype)
    y = tf.placeholder(dtype, [None])
    z = make_op(op_type, [x, y], {"T": dtype}, op_type)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            sess.run(z, {y: np.array([3, 0])})
        np.testing.assert_array_equal(sess.run(z, {y: np.array([3, 3])}).shape, [2])


def test_truncatemod_gradient_and_truncatediv_has_none():
    x = RNG.uniform(0.1, 0.9, (3, 4)) + 3 * RNG.randint(-2, 3, (3, 4))
    y = RNG.choice([-1.7, 1.3], (4,))
    check_gradients(tf.truncatemod, [x, y])
    a = tf.placeholder(tf.float64, [2])
    assert tf.gradients(tf.truncatediv(a, 2.0), a) == [None]


def test_guarded_divisions_match_tensorflow():
    x = np.array([1.0, 0.0, np.nan, np.inf, 6.0], np.float32)
    y = np.array([0.0, 0.0, 0.0, 0.0, 4.0], np.float32)
    np.testing.assert_array_equal(evaluate(tf.div_no_nan, [x, y]), [0, 0, 0, 0, 1.5])
    np.testing.assert_array_equal(evaluate(tf.math.divide_no_nan, [x, y]), [0, 0, 0, 0, 1.5])
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, np.nan, 0.0], np.float32)
    y = np.array([0.0, -1.0, np.nan, 0.0, 3.0, 0.0, np.inf], np.float32)
    np.testing.assert_allclose(
        evaluate(tf.math.xlogy, [x, y]), [0, 0, 0, -np.inf, 2 * np.log(3), np.nan, 0], rtol=1e-6
    )
    np.testing.assert_allclose(
        evaluate(tf.math.xdivy, [x[:6], y[:6]]), [0, 0, 0, np.inf, 2 / 3, np.nan], rtol=1e-6
    )


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES)
def test_guarded_divisions_with_gradients(shapes):
    x = RNG.standard_normal(shapes[0])
    y = RNG.uniform(0.5, 2, shapes[1])
    check_op(tf.div_no_nan, np.divide, [x, y])
    check_op(tf.math.xlogy, lambda a, b: a * np.log(b), [x, y])
    check_op(tf.math.xdivy, np.divide, [x, y])


def test_guarded_division_gradients_at_zero():
    # Where y (DivNoNan) or x (Xlogy, Xdivy) is 0 the op is constant in the
    # other input, and TensorFlow's gradients give 0 there, not NaN.
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    feed = {x: [0.0, 2.0], y: [0.0, 4.0]}
    with tf.Session() as sess:
        gx, gy = sess.run(tf.gradients(tf.div_no_nan(y, x), [x, y]), feed)
        np.testing.assert_array_equal(gx, [0.0, -1.0])
        np.testing.assert_array_equal(gy, [0.0, 0.5])
        gx, gy = sess.run(tf.gradients(tf.math.xlogy(x, y), [x, y]), feed)
        np.testing.assert_allclose(gx, [0.0, np.log(4.0)])
        np.testing.assert_allclose(gy, [0.0, 0.5])
        gx, gy = sess.run(tf.gradients(tf.math.xdivy(x, y), [x, y]), feed)
        np.testing.assert_allclose(gx, [0.0, 0.25])
        np.testing.assert_allclose(gy, [0.0, -0.125])


def test_div_no_nan_rejects_integers():
    with pytest.raises(TypeError, match="floating-point"):
        tf.div_no_nan(tf.constant([1, 2]), tf.constant([1, 0]))


def clip_op(t, low, high):
    return make_op("ClipByValue", [t, low, high], {"T": t.dtype.base_dtype}, "ClipByValue")


def numpy_clip(t, low, high):
    return np.maximum(np.minimum(t, high), low).astype(t.dtype)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.int16, np.uint16]
)
def test_clip_by_value_op(dtype):
    t = np.array([[1, 5, 9], [3, 0, 7]], dtype)
    check_op(clip_op, numpy_clip, [t, np.array(2, dtype), np.array(6, dtype)], grad=False)
    low = np.array([[2, 2, 2], [0, 1, 8]], dtype)
    check_op(clip_op, numpy_clip, [t, low, np.array(6, dtype)], grad=False)


def test_clip_by_value_op_nan_and_crossed_bounds_match_tensorflow():
    def clip(t, low, high):
        values = [np.array(v, np.float32) for v in (t, low, high)]
        return evaluate(clip_op, values)

    np.testing.assert_array_equal(clip([np.nan, 5, 9], 2, 6), [np.nan, 5, 6])
    np.testing.assert_array_equal(clip([1, 5, 9], np.nan, 6), [1, 5, 6])
    np.testing.assert_array_equal(clip([1, 5, 9], 7, 3), [7, 7, 7])


def test_clip_by_value_op_rejects_broadcast_bounds():
    t = np.array([[1.0, 5.0, 9.0]], np.float32)
    bad_low = np.array([2.0, 2.0, 2.0], np.float32)
    high = np.array(6.0, np.float32)
    with pytest.raises(ValueError, match="same shape as input, or a scalar"):
        clip_op(tf.constant(t), tf.constant(bad_low), tf.constant(high))
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape as input, or a scalar"):
        evaluate(clip_op, [t, bad_low, high], static_shapes=False)


@pytest.mark.parametrize("bound_shape", [(), (3, 4)])
def test_clip_by_value_gradient(bound_shape):
    t = RNG.uniform(-3, 3, (3, 4))
    low = np.full(bound_shape, -1.0) + RNG.uniform(-0.2, 0.2, bound_shape)
    high = np.full(bound_shape, 1.0) + RNG.uniform(-0.2, 0.2, bound_shape)
    t[np.abs(np.abs(t) - 1) < 0.3] = 0.0  # away from the bounds (kinks)
    check_gradients(clip_op, [t, low, high])


def test_tf_clip_by_value_builds_minimum_and_maximum_as_tensorflow():
    t = tf.placeholder(tf.float32, [3])
    clipped = tf.clip_by_value(t, 0.0, 1.0)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"Minimum", "Maximum"} <= types and "ClipByValue" not in types
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(clipped, {t: [-1, 0.5, 2]}), [0, 0.5, 1])


def test_softsign_second_derivative():
    def first_derivative(x):
        return tf.gradients(tf.nn.softsign(x), x)[0]

    check_gradients(first_derivative, [np.array([-2.0, -0.4, 0.7, 3.0])])


def test_softsign_grad_op_shapes_must_agree():
    g = tf.constant([1.0, 1.0])
    f = tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="same shape"):
        make_op("SoftsignGrad", [g, f], {"T": tf.float32}, "SoftsignGrad")


def test_prevent_gradient_refuses_gradients_with_its_message():
    x = tf.placeholder(tf.float32, [2])
    y = make_op("PreventGradient", [x], {"T": tf.float32, "message": "no second order"}, "PG")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1, 2]}), [1, 2])
    with pytest.raises(
        LookupError, match="Gradient explicitly disabled. Reason: .*no second order"
    ):
        tf.gradients(y, x)


def test_snapshot_copies_and_passes_the_gradient():
    for value in (np.array([1.0, 2.0]), np.array([b"a", b"bc"]), np.array([True, False])):
        out = evaluate(
            lambda t: make_op("Snapshot", [t], {"T": t.dtype.base_dtype}, "Snapshot"), [value]
        )
        np.testing.assert_array_equal(out, value)
    check_gradients(
        lambda t: make_op("Snapshot", [t], {"T": t.dtype.base_dtype}, "Snapshot") * 3.0,
        [np.array([1.0, -2.0])],
    )


def test_public_names():
    top_level = [
        "erf",
        "erfc",
        "lgamma",
        "digamma",
        "polygamma",
        "zeta",
        "atan2",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "is_nan",
        "is_inf",
        "is_finite",
        "rint",
        "truncatediv",
        "truncatemod",
        "div_no_nan",
        "expm1",
        "log1p",
        "mod",
        "floormod",
    ]
    in_math = [
        "erf",
        "erfc",
        "lgamma",
        "digamma",
        "polygamma",
        "zeta",
        "atan2",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "is_nan",
        "is_inf",
        "is_finite",
        "rint",
        "xlogy",
        "xdivy",
        "divide_no_nan",
        "softsign",
        "expm1",
        "floormod",
        "mod",
    ]
    assert [name for name in top_level if not hasattr(tf, name)] == []
    assert [name for name in in_math if not hasattr(tf.math, name)] == []
    assert tf.nn.softsign is tf.math.softsign
    # As in TensorFlow 1.x, the remainders keep their namespaces.
    assert not hasattr(tf.math, "truncatemod") and not hasattr(tf, "xlogy")


def test_python_numbers_take_the_tensor_dtype():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    for output in (tf.atan2(1.0, x), tf.polygamma(1.0, x), tf.math.zeta(2.0, x)):
        assert output.dtype == tf.float64
    assert tf.atan2(x, 1.0).dtype == tf.float64
    with pytest.raises(TypeError):
        tf.atan2(tf.constant([1.0]), x)
