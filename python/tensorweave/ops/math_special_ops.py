"""Elementwise math beyond arithmetic, under TensorFlow 1.x's names: the
trigonometric and hyperbolic functions, the special functions (erf, lgamma,
digamma, polygamma, zeta), is_nan/is_inf/is_finite, rint, softsign, and the
divisions truncatediv, truncatemod, div_no_nan, xlogy and xdivy.

    y = tf.atan2(tf.sin(a), tf.cos(a))   # a wrapped into [-pi, pi]
    safe = tf.div_no_nan(total, count)   # 0 where count is 0

Their gradients are in math_special_grad.py. tf.mod and tf.floormod are
FloorMod (Python's %, math_ops.py); the C-style remainder is tf.truncatemod.
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import binary, convert_pair, make_op, unary


@tf_export("sin", "math.sin")
def sin(x, name=None):
    return unary("Sin", x, name)


@tf_export("cos", "math.cos")
def cos(x, name=None):
    return unary("Cos", x, name)


@tf_export("tan", "math.tan")
def tan(x, name=None):
    return unary("Tan", x, name)


@tf_export("asin", "math.asin")
def asin(x, name=None):
    return unary("Asin", x, name)


@tf_export("acos", "math.acos")
def acos(x, name=None):
    return unary("Acos", x, name)


@tf_export("atan", "math.atan")
def atan(x, name=None):
    return unary("Atan", x, name)


@tf_export("sinh", "math.sinh")
def sinh(x, name=None):
    return unary("Sinh", x, name)


@tf_export("cosh", "math.cosh")
def cosh(x, name=None):
    return unary("Cosh", x, name)


@tf_export("asinh", "math.asinh")
def asinh(x, name=None):
    return unary("Asinh", x, name)


@tf_export("acosh", "math.acosh")
def acosh(x, name=None):
    return unary("Acosh", x, name)


@tf_export("atanh", "math.atanh")
def atanh(x, name=None):
    return unary("Atanh", x, name)


@tf_export("atan2", "math.atan2")
def atan2(y, x, name=None):
    """The angle of the point (x, y) in [-pi, pi] (note the order: y first)."""
    with ops.name_scope(name, "Atan2", [y, x]) as scope:
        y, x = convert_pair(y, x, "y", "x")
        return make_op("Atan2", [y, x], {"T": y.dtype.base_dtype}, scope)


@tf_export("erf", "math.erf")
def erf(x, name=None):
    return unary("Erf", x, name)


@tf_export("erfc", "math.erfc")
def erfc(x, name=None):
    return unary("Erfc", x, name)


@tf_export("lgamma", "math.lgamma")
def lgamma(x, name=None):
    """log|Gamma(x)|."""
    return unary("Lgamma", x, name)


@tf_export("digamma", "math.digamma")
def digamma(x, name=None):
    """The derivative of lgamma."""
    return unary("Digamma", x, name)


@tf_export("polygamma", "math.polygamma")
def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a a whole number, as a float)."""
    with ops.name_scope(name, "Polygamma", [a, x]) as scope:
        a, x = convert_pair(a, x, "a", "x")
        return make_op("Polygamma", [a, x], {"T": a.dtype.base_dtype}, scope)


@tf_export("zeta", "math.zeta")
def zeta(x, q, name=None):
    """The Hurwitz zeta function: sum over k >= 0 of (k + q)^-x."""
    with ops.name_scope(name, "Zeta", [x, q]) as scope:
        x, q = convert_pair(x, q, "x", "q")
        return make_op("Zeta", [x, q], {"T": x.dtype.base_dtype}, scope)


def _classify(op_type, x, name):
    with ops.name_scope(name, op_type, [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        return make_op(op_type, [x], {"T": x.dtype.base_dtype}, scope)


@tf_export("is_nan", "math.is_nan")
def is_nan(x, name=None):
    return _classify("IsNan", x, name)


@tf_export("is_inf", "math.is_inf")
def is_inf(x, name=None):
    return _classify("IsInf", x, name)


@tf_export("is_finite", "math.is_finite")
def is_finite(x, name=None):
    return _classify("IsFinite", x, name)


@tf_export("rint", "math.rint")
def rint(x, name=None):
    """x rounded to the nearest integer, halves to even (a float result)."""
    return unary("Rint", x, name)


@tf_export("nn.softsign", "math.softsign")
def softsign(features, name=None):
    """features / (|features| + 1)."""
    with ops.name_scope(name, "Softsign", [features]) as scope:
        features = ops.convert_to_tensor(features, name="features")
        return make_op("Softsign", [features], {"T": features.dtype.base_dtype}, scope)


@tf_export("truncatediv")
def truncatediv(x, y, name=None):
    """x / y rounded toward zero (C's integer division); integer division by
    zero is an InvalidArgumentError when run."""
    return binary("TruncateDiv", x, y, name)


@tf_export("truncatemod")
def truncatemod(x, y, name=None):
    """The remainder of truncatediv (C's % and fmod): the sign of x."""
    return binary("TruncateMod", x, y, name)


@tf_export("div_no_nan", "math.divide_no_nan")
def div_no_nan(x, y, name=None):
    """x / y, but 0 wherever y is 0 (even where x is inf or NaN)."""
    with ops.name_scope(name, "div_no_nan", [x, y]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        if not x.dtype.base_dtype.is_floating:
            raise TypeError(
                f"div_no_nan needs floating-point inputs, got {x.dtype.base_dtype.name} "
                "(the integer dtypes are not supported)"
            )
        return make_op("DivNoNan", [x, y], {"T": x.dtype.base_dtype}, scope)


@tf_export("math.xlogy")
def xlogy(x, y, name=None):
    """x * log(y), but 0 wherever x is 0."""
    return binary("Xlogy", x, y, name)


@tf_export("math.xdivy")
def xdivy(x, y, name=None):
    """x / y, but 0 wherever x is 0."""
    return binary("Xdivy", x, y, name)
