"""Math ops and the Tensor operators (+ - * / // % ** @, unary -, abs, < <= > >=,
and & | ^ ~ on bool tensors).

As in TensorFlow 1.x, `==` and `!=` stay Python identity so tensors can be
dict keys; use tf.equal for elementwise equality.
"""

import numpy as np

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, constant_op
from tensorweave.ops.op_builder import binary, convert_pair, make_op, unary


@tf_export("add", "math.add")
def add(x, y, name=None):
    return binary("Add", x, y, name)


@tf_export("add_v2")
def add_v2(x, y, name=None):
    return binary("AddV2", x, y, name)


@tf_export("subtract", "math.subtract")
def subtract(x, y, name=None):
    return binary("Sub", x, y, name)


@tf_export("multiply", "math.multiply")
def multiply(x, y, name=None):
    return binary("Mul", x, y, name)


@tf_export("realdiv", "math.realdiv")
def realdiv(x, y, name=None):
    return binary("RealDiv", x, y, name)


# Integer true division casts first, as Python 3's `/` does.
_TRUEDIV_CASTS = {
    dtypes.int8: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint16: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.int64: dtypes.float64,
}


@tf_export("truediv", "math.truediv")
def truediv(x, y, name=None):
    with ops.name_scope(name, "truediv", [x, y]) as scope:
        x, y = convert_pair(x, y)
        cast_to = _TRUEDIV_CASTS.get(x.dtype.base_dtype)
        if cast_to is not None:
            x = array_ops.cast(x, cast_to)
            y = array_ops.cast(y, cast_to)
        return make_op("RealDiv", [x, y], {"T": x.dtype.base_dtype}, scope)


@tf_export("divide", "math.divide")
def divide(x, y, name=None):
    return truediv(x, y, name=name or "truediv")


@tf_export("div")
def div(x, y, name=None):
    """Python 2 division, as TensorFlow 1.x's tf.div: floor division for
    integers, true division for floats."""
    with ops.name_scope(name, "div", [x, y]) as scope:
        x, y = convert_pair(x, y)
        op_type = "FloorDiv" if x.dtype.base_dtype.is_integer else "RealDiv"
        return make_op(op_type, [x, y], {"T": x.dtype.base_dtype}, scope)


@tf_export("floordiv", "math.floor_div", "math.floordiv")
def floordiv(x, y, name=None):
    """floor(x / y) elementwise (Python's //); integer division by zero is an
    InvalidArgumentError when run."""
    return binary("FloorDiv", x, y, name, "floordiv")


@tf_export("floor_div")
def floor_div(x, y, name=None):
    return binary("FloorDiv", x, y, name)


@tf_export("floormod", "mod", "math.floormod", "math.mod")
def floormod(x, y, name=None):
    """x - floor(x / y) * y (Python's %): the result has the sign of y."""
    return binary("FloorMod", x, y, name)


mod = floormod


@tf_export("maximum", "math.maximum")
def maximum(x, y, name=None):
    return binary("Maximum", x, y, name)


@tf_export("minimum", "math.minimum")
def minimum(x, y, name=None):
    return binary("Minimum", x, y, name)


@tf_export("pow", "math.pow")
def pow(x, y, name=None):
    return binary("Pow", x, y, name)


@tf_export("squared_difference", "math.squared_difference")
def squared_difference(x, y, name=None):
    return binary("SquaredDifference", x, y, name)


@tf_export("sign", "math.sign")
def sign(x, name=None):
    return unary("Sign", x, name)


@tf_export("rsqrt", "math.rsqrt")
def rsqrt(x, name=None):
    return unary("Rsqrt", x, name)


@tf_export("log1p", "math.log1p")
def log1p(x, name=None):
    return unary("Log1p", x, name)


@tf_export("expm1", "math.expm1")
def expm1(x, name=None):
    """exp(x) - 1 elementwise, exact for x near 0."""
    return unary("Expm1", x, name)


@tf_export("reciprocal", "math.reciprocal")
def reciprocal(x, name=None):
    return unary("Reciprocal", x, name)


@tf_export("floor", "math.floor")
def floor(x, name=None):
    return unary("Floor", x, name)


@tf_export("ceil", "math.ceil")
def ceil(x, name=None):
    return unary("Ceil", x, name)


@tf_export("round", "math.round")
def round(x, name=None):
    """Rounds half to even; integers come back unchanged, as in TensorFlow."""
    x = ops.convert_to_tensor(x, name="x")
    if x.dtype.base_dtype.is_integer:
        return x
    return unary("Round", x, name)


@tf_export("logical_and", "math.logical_and")
def logical_and(x, y, name=None):
    return _logical("LogicalAnd", x, y, name)


@tf_export("logical_or", "math.logical_or")
def logical_or(x, y, name=None):
    return _logical("LogicalOr", x, y, name)


@tf_export("logical_not", "math.logical_not")
def logical_not(x, name=None):
    with ops.name_scope(name, "LogicalNot", [x]) as scope:
        x = ops.convert_to_tensor(x, dtype=dtypes.bool, name="x")
        return make_op("LogicalNot", [x], {}, scope)


@tf_export("logical_xor", "math.logical_xor")
def logical_xor(x, y, name="LogicalXor"):
    """(x OR y) AND NOT (x AND y), as TensorFlow composes it."""
    with ops.name_scope(name, "LogicalXor", [x, y]) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


def _logical(op_type, x, y, name):
    with ops.name_scope(name, op_type, [x, y]) as scope:
        x = ops.convert_to_tensor(x, dtype=dtypes.bool, name="x")
        y = ops.convert_to_tensor(y, dtype=dtypes.bool, name="y")
        return make_op(op_type, [x, y], {}, scope)


def _select(op_type, condition, x, y, name, default_name):
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    with ops.name_scope(name, default_name, [condition, x, y]) as scope:
        condition = ops.convert_to_tensor(condition, dtype=dtypes.bool, name="condition")
        if x is None:  # the coordinates of the true elements (array ops)
            return array_ops.where_coordinates(condition, name=scope)
        x, y = convert_pair(x, y, "x", "y")
        return make_op(op_type, [condition, x, y], {"T": x.dtype.base_dtype}, scope)


@tf_export("where")
def where(condition, x=None, y=None, name=None):
    """TensorFlow 1.x's where: elements of x where condition holds, else of y
    (condition is a scalar, x's shape, or a vector along x's first dim);
    with neither x nor y, the [num_true, rank] int64 coordinates of the true
    elements."""
    return _select("Select", condition, x, y, name, "Select")


@tf_export("where_v2")
def where_v2(condition, x=None, y=None, name=None):
    """Like where, but condition, x and y broadcast together."""
    return _select("SelectV2", condition, x, y, name, "SelectV2")


@tf_export("negative", "math.negative")
def negative(x, name=None):
    return unary("Neg", x, name)


@tf_export("square", "math.square")
def square(x, name=None):
    return unary("Square", x, name)


@tf_export("sqrt", "math.sqrt")
def sqrt(x, name=None):
    return unary("Sqrt", x, name)


@tf_export("exp", "math.exp")
def exp(x, name=None):
    return unary("Exp", x, name)


@tf_export("log", "math.log")
def log(x, name=None):
    return unary("Log", x, name)


@tf_export("abs", "math.abs")
def abs(x, name=None):
    return unary("Abs", x, name)


@tf_export("tanh", "math.tanh", "nn.tanh")
def tanh(x, name=None):
    return unary("Tanh", x, name)


@tf_export("sigmoid", "math.sigmoid", "nn.sigmoid")
def sigmoid(x, name=None):
    return unary("Sigmoid", x, name)


@tf_export("equal", "math.equal")
def equal(x, y, name=None):
    return binary("Equal", x, y, name)


@tf_export("not_equal", "math.not_equal")
def not_equal(x, y, name=None):
    return binary("NotEqual", x, y, name)


@tf_export("greater", "math.greater")
def greater(x, y, name=None):
    return binary("Greater", x, y, name)


@tf_export("greater_equal", "math.greater_equal")
def greater_equal(x, y, name=None):
    return binary("GreaterEqual", x, y, name)


@tf_export("less", "math.less")
def less(x, y, name=None):
    return binary("Less", x, y, name)


@tf_export("less_equal", "math.less_equal")
def less_equal(x, y, name=None):
    return binary("LessEqual", x, y, name)


@tf_export("matmul", "linalg.matmul")
def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product of two rank-2 tensors (each optionally transposed); inputs
    of higher (or unknown) rank multiply matrix by matrix over broadcast batch
    dimensions (BatchMatMulV2), as in TensorFlow."""
    with ops.name_scope(name, "MatMul", [a, b]) as scope:
        a, b = convert_pair(a, b, "a", "b")
        if a.shape.ndims != 2 or b.shape.ndims != 2:
            return make_op(
                "BatchMatMulV2",
                [a, b],
                {"T": a.dtype.base_dtype, "adj_x": bool(transpose_a), "adj_y": bool(transpose_b)},
                scope,
            )
        return make_op(
            "MatMul",
            [a, b],
            {
                "T": a.dtype.base_dtype,
                "transpose_a": bool(transpose_a),
                "transpose_b": bool(transpose_b),
            },
            scope,
        )


@tf_export("add_n", "math.add_n")
def add_n(inputs, name=None):
    """Elementwise sum of a list of same-shaped tensors."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError(
            "inputs must be a list of at least one Tensor with the same dtype and shape"
        )
    with ops.name_scope(name, "AddN", inputs) as scope:
        inputs = ops.convert_n_to_tensor(inputs)
        dtype = inputs[0].dtype.base_dtype
        if any(t.dtype.base_dtype != dtype for t in inputs):
            raise TypeError("inputs of add_n must all have the same dtype")
        if len(inputs) == 1:
            return array_ops.identity(inputs[0], name=scope)
        return make_op("AddN", [list(inputs)], {"N": len(inputs), "T": dtype}, scope)


def _reduction(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
    keepdims = keep_dims if keepdims is None else keepdims
    axis = reduction_indices if axis is None else axis
    with ops.name_scope(name, op_type, [input_tensor]) as scope:
        input_tensor = ops.convert_to_tensor(input_tensor, name="input_tensor")
        if axis is None:  # every dimension
            rank = input_tensor.shape.ndims
            if rank is None:  # counted when the graph runs
                axis = array_ops.range(0, array_ops.rank(input_tensor))
            else:
                axis = np.arange(rank, dtype=np.int32)
        if isinstance(axis, ops.Tensor):
            indices = axis
        else:
            indices = constant_op.constant(axis, dtype=dtypes.int32, name="reduction_indices")
        attrs = {"Tidx": indices.dtype, "keep_dims": bool(keepdims)}
        if op_type not in ("All", "Any"):  # those two are bool only, without T
            attrs["T"] = input_tensor.dtype.base_dtype
        return make_op(op_type, [input_tensor, indices], attrs, scope)


@tf_export("reduce_sum", "math.reduce_sum")
def reduce_sum(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_mean", "math.reduce_mean")
def reduce_mean(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_max", "math.reduce_max")
def reduce_max(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_min", "math.reduce_min")
def reduce_min(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_prod", "math.reduce_prod")
def reduce_prod(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_all", "math.reduce_all")
def reduce_all(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_any", "math.reduce_any")
def reduce_any(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    return _reduction("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_logsumexp", "math.reduce_logsumexp")
def reduce_logsumexp(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
):
    """log(sum(exp(x))) over the axes, computed as m + log(sum(exp(x - m))) with
    m the max so that large inputs do not overflow; an infinite max is replaced
    by 0 so that all -inf inputs give -inf, not NaN. (The gradients through m
    cancel exactly, so m needs no stop_gradient.)"""
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    axis = reduction_indices if axis is None else axis
    with ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = ops.convert_to_tensor(input_tensor, name="input_tensor")

        def finite_max(keep):
            raw = reduce_max(x, axis, keepdims=keep)
            zero = constant_op.constant(0, dtype=raw.dtype.base_dtype)
            return where_v2(_is_finite(raw), raw, zero)

        # The max twice (kept dims to shift x, reduced dims to add back)
        # rather than a Reshape, so that only math ops need gradients.
        # Over every axis the max is a scalar, which broadcasts without
        # needing x's rank.
        shifted = subtract(x, finite_max(axis is not None))
        summed = reduce_sum(exp(shifted), axis, keepdims=keepdims)
        finite = finite_max(keepdims)
        return add(log(summed), finite, name=scope)


def _is_finite(x):
    # |x| < inf is false for both infinities and for NaN.
    return less(abs(x), constant_op.constant(np.inf, dtype=x.dtype.base_dtype))


@tf_export("argmin", "math.argmin")
def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    """Index of the smallest value along `axis` (default 0)."""
    if axis is not None and dimension is not None:
        raise ValueError("Cannot specify both 'axis' and 'dimension'")
    axis = dimension if axis is None else axis
    axis = 0 if axis is None else axis
    with ops.name_scope(name, "ArgMin", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        if not isinstance(axis, ops.Tensor):
            axis = constant_op.constant(axis, dtype=dtypes.int32, name="dimension")
        return make_op(
            "ArgMin",
            [input, axis],
            {
                "T": input.dtype.base_dtype,
                "Tidx": axis.dtype.base_dtype,
                "output_type": dtypes.as_dtype(output_type),
            },
            scope,
        )


# --- Tensor operators ------------------------------------------------------------


def _binary_operator(function, scope_name):
    def forward(x, y):
        with ops.name_scope(None, scope_name, [x, y]) as scope:
            return function(x, y, name=scope)

    def reflected(y, x):
        with ops.name_scope(None, scope_name, [x, y]) as scope:
            return function(x, y, name=scope)

    return forward, reflected


def _install_operators():
    binary_operators = {
        "add": (add_v2, "add"),
        "sub": (subtract, "sub"),
        "mul": (multiply, "mul"),
        "truediv": (truediv, "truediv"),
        "matmul": (matmul, "matmul"),
        "floordiv": (floordiv, "floordiv"),
        "mod": (floormod, "mod"),
        "pow": (pow, "pow"),
        "and": (logical_and, "and"),
        "or": (logical_or, "or"),
        "xor": (logical_xor, "xor"),
    }
    for operator, (function, scope_name) in binary_operators.items():
        forward, reflected = _binary_operator(function, scope_name)
        ops.Tensor._override_operator(f"__{operator}__", forward)
        ops.Tensor._override_operator(f"__r{operator}__", reflected)
    ops.Tensor._override_operator("__neg__", lambda x: negative(x))
    ops.Tensor._override_operator("__abs__", lambda x: abs(x))
    ops.Tensor._override_operator("__invert__", lambda x: logical_not(x))
    ops.Tensor._override_operator("__lt__", lambda x, y: less(x, y))
    ops.Tensor._override_operator("__le__", lambda x, y: less_equal(x, y))
    ops.Tensor._override_operator("__gt__", lambda x, y: greater(x, y))
    ops.Tensor._override_operator("__ge__", lambda x, y: greater_equal(x, y))


_install_operators()
