"""Gradients of the ops of math_special_ops.py (and of ClipByValue,
PreventGradient and Snapshot), as TensorFlow's math_grad.py, nn_grad.py,
array_grad.py and clip_ops.py define them.

Binary ops sum each input's gradient back to its shape the way
math_grad.py does for arithmetic (_reduce_pair).
"""

import numpy as np

from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops import math_special_ops as special
from tensorweave.ops.math_grad import _reduce_pair, _reduce_to, _scalar
from tensorweave.ops.op_builder import make_op

# --- trigonometric and hyperbolic ------------------------------------------------------


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    return math_ops.multiply(grad, special.cos(op.inputs[0]))


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    return math_ops.multiply(math_ops.negative(grad), special.sin(op.inputs[0]))


@RegisterGradient("Tan")
def _tan_grad(op, grad):
    # sec^2(x) = 1 / cos^2(x).
    secant = math_ops.reciprocal(special.cos(op.inputs[0]))
    return math_ops.multiply(math_ops.square(secant), grad)


def _one_minus_square(x):
    return math_ops.subtract(_scalar(1, x), math_ops.square(x))


@RegisterGradient("Asin")
def _asin_grad(op, grad):
    x = op.inputs[0]
    return math_ops.multiply(grad, math_ops.reciprocal(math_ops.sqrt(_one_minus_square(x))))


@RegisterGradient("Acos")
def _acos_grad(op, grad):
    x = op.inputs[0]
    return math_ops.multiply(
        math_ops.negative(grad), math_ops.reciprocal(math_ops.sqrt(_one_minus_square(x)))
    )


@RegisterGradient("Atan")
def _atan_grad(op, grad):
    x = op.inputs[0]
    return math_ops.multiply(
        grad, math_ops.reciprocal(math_ops.add(_scalar(1, x), math_ops.square(x)))
    )


@RegisterGradient("Sinh")
def _sinh_grad(op, grad):
    return math_ops.multiply(grad, special.cosh(op.inputs[0]))


@RegisterGradient("Cosh")
def _cosh_grad(op, grad):
    return math_ops.multiply(grad, special.sinh(op.inputs[0]))


# The inverse hyperbolic functions through their output y: d/dx asinh(x) =
# 1 / cosh(y), d/dx acosh(x) = 1 / sinh(y).
@RegisterGradient("Asinh")
def _asinh_grad(op, grad):
    return math_ops.realdiv(grad, special.cosh(op.outputs[0]))


@RegisterGradient("Acosh")
def _acosh_grad(op, grad):
    return math_ops.realdiv(grad, special.sinh(op.outputs[0]))


@RegisterGradient("Atanh")
def _atanh_grad(op, grad):
    return math_ops.multiply(grad, math_ops.reciprocal(_one_minus_square(op.inputs[0])))


@RegisterGradient("Atan2")
def _atan2_grad(op, grad):
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2).
    y, x = op.inputs
    scaled = math_ops.realdiv(grad, math_ops.add(math_ops.square(y), math_ops.square(x)))
    return _reduce_pair(
        op, math_ops.multiply(x, scaled), math_ops.multiply(math_ops.negative(y), scaled)
    )


# --- special functions -----------------------------------------------------------------


@RegisterGradient("Erf")
def _erf_grad(op, grad):
    x = op.inputs[0]
    two_over_root_pi = _scalar(2 / np.sqrt(np.pi), grad)
    return math_ops.multiply(
        math_ops.multiply(grad, two_over_root_pi),
        math_ops.exp(math_ops.negative(math_ops.square(x))),
    )


@RegisterGradient("Erfc")
def _erfc_grad(op, grad):
    x = op.inputs[0]
    minus_two_over_root_pi = _scalar(-2 / np.sqrt(np.pi), grad)
    return math_ops.multiply(
        math_ops.multiply(grad, minus_two_over_root_pi),
        math_ops.exp(math_ops.negative(math_ops.square(x))),
    )


@RegisterGradient("Lgamma")
def _lgamma_grad(op, grad):
    return math_ops.multiply(grad, special.digamma(op.inputs[0]))


@RegisterGradient("Digamma")
def _digamma_grad(op, grad):
    x = op.inputs[0]
    return math_ops.multiply(grad, special.polygamma(_scalar(1, x), x))


@RegisterGradient("Polygamma")
def _polygamma_grad(op, grad):
    # The order a is a whole number: no gradient, as in TensorFlow.
    a, x = op.inputs
    partial_x = special.polygamma(math_ops.add(a, _scalar(1, a)), x)
    return _reduce_pair(op, None, math_ops.multiply(partial_x, grad))


@RegisterGradient("Zeta")
def _zeta_grad(op, grad):
    # d/dq zeta(x, q) = -x zeta(x + 1, q); TensorFlow has none for x either.
    x, q = op.inputs
    partial_q = math_ops.multiply(
        math_ops.negative(x), special.zeta(math_ops.add(x, _scalar(1, x)), q)
    )
    return _reduce_pair(op, None, math_ops.multiply(partial_q, grad))


@RegisterGradient("Softsign")
def _softsign_grad(op, grad):
    features = op.inputs[0]
    return make_op(
        "SoftsignGrad", [grad, features], {"T": features.dtype.base_dtype}, "SoftsignGrad"
    )


# For second derivatives (TensorFlow has none): z = g / (|f| + 1)^2, so
# dz/dg = SoftsignGrad(1, f) and dz/df = -2 g sign(f) / (|f| + 1)^3.
@RegisterGradient("SoftsignGrad")
def _softsign_grad_grad(op, grad):
    gradients, features = op.inputs
    grad_gradients = make_op(
        "SoftsignGrad", [grad, features], {"T": features.dtype.base_dtype}, "SoftsignGrad"
    )
    denominator = math_ops.add(math_ops.abs(features), _scalar(1, features))
    slope = math_ops.realdiv(
        math_ops.multiply(_scalar(-2, features), math_ops.sign(features)),
        math_ops.multiply(math_ops.square(denominator), denominator),
    )
    return grad_gradients, math_ops.multiply(math_ops.multiply(grad, gradients), slope)


# --- divisions -------------------------------------------------------------------------


@RegisterGradient("TruncateDiv")
def _truncate_div_grad(op, grad):
    return None, None  # piecewise constant


# TensorFlow defines no gradient for these two; x - trunc(x / y) * y has the
# same one as FloorMod away from its jumps.
@RegisterGradient("TruncateMod")
@RegisterGradient("Mod")
def _truncate_mod_grad(op, grad):
    x, y = op.inputs
    grad_y = math_ops.multiply(math_ops.negative(grad), special.truncatediv(x, y))
    return _reduce_pair(op, grad, grad_y)


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    grad_x = special.div_no_nan(grad, y)
    grad_y = math_ops.multiply(
        grad, special.div_no_nan(special.div_no_nan(math_ops.negative(x), y), y)
    )
    return _reduce_pair(op, grad_x, grad_y)


def _nonzero_indicator(x):
    return array_ops.cast(math_ops.not_equal(x, _scalar(0, x)), x.dtype.base_dtype)


@RegisterGradient("Xlogy")
def _xlogy_grad(op, grad):
    # 0 for x where x is 0 (the op is constant there), as TensorFlow.
    x, y = op.inputs
    partial_x = special.xlogy(_nonzero_indicator(x), y)
    partial_y = special.xdivy(x, y)
    return _reduce_pair(op, math_ops.multiply(partial_x, grad), math_ops.multiply(partial_y, grad))


@RegisterGradient("Xdivy")
def _xdivy_grad(op, grad):
    x, y = op.inputs
    partial_x = special.xdivy(_nonzero_indicator(x), y)
    partial_y = special.xdivy(math_ops.negative(x), math_ops.square(y))
    return _reduce_pair(op, math_ops.multiply(partial_x, grad), math_ops.multiply(partial_y, grad))


# --- clipping and identities -----------------------------------------------------------


@RegisterGradient("ClipByValue")
def _clip_by_value_grad(op, grad):
    # The gradient goes to t where it lies inside the bounds, else to the
    # bound that was taken (summed over t's elements for a scalar bound).
    t, low, high = op.inputs
    zero = _scalar(0, grad)
    below = math_ops.less(t, low)
    above = math_ops.greater(t, high)
    grad_t = math_ops.where_v2(math_ops.logical_or(below, above), zero, grad)
    grad_low = _reduce_to(math_ops.where_v2(below, grad, zero), low, t)
    grad_high = _reduce_to(math_ops.where_v2(above, grad, zero), high, t)
    return grad_t, grad_low, grad_high


@RegisterGradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')}")


for _op_type in ("IsNan", "IsInf", "IsFinite", "Rint"):
    NotDifferentiable(_op_type)
