"""tf.debugging.assert_* (and the tf.assert_* names of TensorFlow 1.x).

    x = tf.placeholder(tf.float32)
    with tf.control_dependencies([tf.assert_positive(x)]):
        y = tf.log(x)

Each assert returns an op that fails the run with InvalidArgumentError
("assertion failed: [Condition x > 0 did not hold element-wise:] [x
(Placeholder:0) = ] [-1 2 3]") when the condition does not hold. What can be
decided while the graph is built is decided then, as in TensorFlow 1.x: a
static rank that is wrong is a ValueError, constants that fail a comparison
an InvalidArgumentError, a passing static check a no_op.
"""

import numpy as np

from tensorweave.framework import dtypes, errors, ops, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, control_flow_ops, math_ops
from tensorweave.ops.logging_ops import Assert

_NUMERIC_TYPES = frozenset(
    [
        dtypes.float16,
        dtypes.float32,
        dtypes.float64,
        dtypes.int8,
        dtypes.int16,
        dtypes.int32,
        dtypes.int64,
        dtypes.uint8,
        dtypes.uint16,
        dtypes.uint32,
        dtypes.uint64,
        dtypes.qint8,
        dtypes.qint16,
        dtypes.qint32,
        dtypes.quint8,
        dtypes.quint16,
        dtypes.complex64,
        dtypes.complex128,
        dtypes.bfloat16,
    ]
)


def _constant_value(tensor):
    """The value of `tensor` when the graph fixes it (a Const, or the shape,
    rank or size of a tensor whose shape is fully known), else None."""
    if not isinstance(tensor, ops.Tensor):
        return None
    op = tensor.op
    if op.type == "Const":
        return tensor_util.make_ndarray(op.get_attr("value"))
    if op.type == "Identity":
        return _constant_value(op.inputs[0])
    if op.type in ("Shape", "Size", "Rank"):
        shape = op.inputs[0].get_shape()
        if op.type == "Rank":
            return None if shape.ndims is None else np.array(shape.ndims, np.int32)
        if not shape.is_fully_defined():
            return None
        dims = shape.as_list()
        dtype = op.get_attr("out_type").as_numpy_dtype
        return np.array(dims, dtype) if op.type == "Shape" else np.array(np.prod(dims), dtype)
    return None


def _message_prefix(message):
    return f"{message}.  " if message else ""


def _assert_static(condition, data):
    """Raises InvalidArgumentError, showing what is known of `data`, unless
    `condition` holds."""
    if not condition:
        shown = []
        for item in data:
            value = _constant_value(item) if isinstance(item, ops.Tensor) else None
            shown.append(str(item) if value is None else str(value))
        raise errors.InvalidArgumentError(None, None, "\n".join(shown))


def _with_dependencies(dependencies, output):
    with ops.control_dependencies(dependencies):
        return array_ops.identity(output)


def _binary_assert(sym, opname, op_func, static_func, x, y, data, summarize, message, name):
    with ops.name_scope(name, opname, [x, y, data]):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y")
        if data is None:
            data = [
                f"Condition x {sym} y did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        if message is not None:
            data = [message] + list(data)
        condition = math_ops.reduce_all(op_func(x, y))
        x_static, y_static = _constant_value(x), _constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(np.all(static_func(x_static, y_static)), data)
        return Assert(condition, data, summarize=summarize)


@tf_export("debugging.assert_equal", "assert_equal")
def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x == y element-wise (broadcasting)."""
    with ops.name_scope(name, "assert_equal", [x, y, data]):
        if x is y:  # the same tensor: nothing to check
            return control_flow_ops.no_op()
    return _binary_assert(
        "==", "assert_equal", math_ops.equal, np.equal, x, y, data, summarize, message, name
    )


@tf_export("debugging.assert_none_equal", "assert_none_equal")
def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x != y element-wise."""
    return _binary_assert(
        "!=",
        "assert_none_equal",
        math_ops.not_equal,
        np.not_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


@tf_export("debugging.assert_less", "assert_less")
def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x < y element-wise."""
    return _binary_assert(
        "<", "assert_less", math_ops.less, np.less, x, y, data, summarize, message, name
    )


@tf_export("debugging.assert_less_equal", "assert_less_equal")
def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x <= y element-wise."""
    return _binary_assert(
        "<=",
        "assert_less_equal",
        math_ops.less_equal,
        np.less_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


@tf_export("debugging.assert_greater", "assert_greater")
def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x > y element-wise."""
    return _binary_assert(
        ">", "assert_greater", math_ops.greater, np.greater, x, y, data, summarize, message, name
    )


@tf_export("debugging.assert_greater_equal", "assert_greater_equal")
def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """An op failing unless x >= y element-wise."""
    return _binary_assert(
        ">=",
        "assert_greater_equal",
        math_ops.greater_equal,
        np.greater_equal,
        x,
        y,
        data,
        summarize,
        message,
        name,
    )


def _sign_assert(x, data, summarize, message, name, opname, sym, zero_on_left, compare):
    """x compared with zero, reported as "Condition x <sym> 0"."""
    message = _message_prefix(message)
    with ops.name_scope(name, opname, [x, data]):
        x = ops.convert_to_tensor(x, name="x")
        if data is None:
            condition = f"Condition x {sym} 0 did not hold element-wise:"
            data = [message, condition, f"x ({x.name}) = ", x]
            if opname == "assert_non_positive":
                # TensorFlow's list lacks a comma there, so these two
                # strings print as one; kept for identical messages.
                data = [message, condition + f"x ({x.name}) = ", x]
        zero = ops.convert_to_tensor(0, dtype=x.dtype)
        left, right = (zero, x) if zero_on_left else (x, zero)
        return compare(left, right, data=data, summarize=summarize)


@tf_export("debugging.assert_negative", "assert_negative")
def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """An op failing unless x < 0 element-wise."""
    return _sign_assert(
        x, data, summarize, message, name, "assert_negative", "<", False, assert_less
    )


@tf_export("debugging.assert_positive", "assert_positive")
def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """An op failing unless x > 0 element-wise."""
    return _sign_assert(
        x, data, summarize, message, name, "assert_positive", ">", True, assert_less
    )


@tf_export("debugging.assert_non_negative", "assert_non_negative")
def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """An op failing unless x >= 0 element-wise."""
    return _sign_assert(
        x, data, summarize, message, name, "assert_non_negative", ">=", True, assert_less_equal
    )


@tf_export("debugging.assert_non_positive", "assert_non_positive")
def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """An op failing unless x <= 0 element-wise."""
    return _sign_assert(
        x, data, summarize, message, name, "assert_non_positive", "<=", False, assert_less_equal
    )


@tf_export("debugging.assert_near", "assert_near")
def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None, name=None):
    """An op failing unless |x - y| < atol + rtol * |y| element-wise; both
    tolerances default to 10 * the dtype's machine epsilon."""
    message = _message_prefix(message)
    with ops.name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype)
        dtype = x.dtype.real_dtype
        eps = np.finfo(dtype.as_numpy_dtype).eps
        rtol = ops.convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=dtype)
        atol = ops.convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=dtype)
        if data is None:
            data = [
                message,
                f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        tolerance = atol + rtol * math_ops.abs(y)
        difference = math_ops.abs(x - y)
        condition = math_ops.reduce_all(math_ops.less(difference, tolerance))
        return Assert(condition, data, summarize=summarize)


def _assert_rank_condition(x, rank, static_condition, dynamic_condition, data, summarize):
    assert_type(rank, dtypes.int32)
    rank_static = _constant_value(rank)
    if rank_static is not None:
        if rank_static.ndim != 0:
            raise ValueError("Rank must be a scalar.")
        x_rank_static = x.get_shape().ndims
        if x_rank_static is not None:
            if not static_condition(x_rank_static, rank_static):
                raise ValueError("Static rank condition failed", x_rank_static, rank_static)
            return control_flow_ops.no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(array_ops.rank(x), rank)
    # Catches assert_rank(x, [n]) where assert_rank(x, n) was meant.
    if rank_static is None:
        rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
        condition = _with_dependencies([rank_check], condition)
    return Assert(condition, data, summarize=summarize)


def _rank_assert(
    x, rank, data, summarize, message, name, opname, wording, static_condition, dynamic_condition
):
    with ops.name_scope(name, opname, (x, rank) + tuple(data or [])):
        x = ops.convert_to_tensor(x, name="x")
        rank = ops.convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if data is None:
            data = [
                message,
                f"Tensor {x.name} must have {wording}",
                rank,
                "Received shape: ",
                array_ops.shape(x),
            ]
        try:
            return _assert_rank_condition(
                x, rank, static_condition, dynamic_condition, data, summarize
            )
        except ValueError as error:
            if error.args[0] == "Static rank condition failed":
                raise ValueError(
                    f"{message}Tensor {x.name} must have {wording} {error.args[2]}.  "
                    f"Received rank {error.args[1]}, shape {x.get_shape()}"
                ) from None
            raise ValueError(error.args[0]) from None


@tf_export("debugging.assert_rank", "assert_rank")
def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """An op failing unless x has rank `rank`; a ValueError now when the
    static rank already disagrees, a no_op when it agrees."""
    return _rank_assert(
        x, rank, data, summarize, message, name, "assert_rank", "rank",
        lambda actual, given: actual == given, math_ops.equal,
    )  # fmt: skip


@tf_export("debugging.assert_rank_at_least", "assert_rank_at_least")
def assert_rank_at_least(x, rank, data=None, summarize=None, message=None, name=None):
    """An op failing unless x has rank `rank` or more."""
    return _rank_assert(
        x, rank, data, summarize, message, name, "assert_rank_at_least", "rank at least",
        lambda actual, given: actual >= given, math_ops.greater_equal,
    )  # fmt: skip


@tf_export("debugging.assert_rank_in", "assert_rank_in")
def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """An op failing unless the rank of x is one of `ranks`."""
    with ops.name_scope(name, "assert_rank_in", (x,) + tuple(ranks) + tuple(data or [])):
        x = ops.convert_to_tensor(x, name="x")
        ranks = tuple(ops.convert_to_tensor(rank, name="rank") for rank in ranks)
        message = _message_prefix(message)
        if data is None:
            data = (
                [message, f"Tensor {x.name} must have rank in"]
                + list(ranks)
                + ["Received shape: ", array_ops.shape(x)]
            )
        for rank in ranks:
            assert_type(rank, dtypes.int32)
        ranks_static = tuple(_constant_value(rank) for rank in ranks)
        if all(r is not None for r in ranks_static):
            if any(r.ndim != 0 for r in ranks_static):
                raise ValueError("Rank must be a scalar.")
            x_rank_static = x.get_shape().ndims
            if x_rank_static is not None:
                if x_rank_static not in ranks_static:
                    raise ValueError(
                        f"{message}Tensor {x.name} must have rank in "
                        f"{tuple(r.item() for r in ranks_static)}.  Received rank "
                        f"{x_rank_static}, shape {x.get_shape()}"
                    )
                return control_flow_ops.no_op(name="static_checks_determined_all_ok")
        actual = array_ops.rank(x)
        if ranks:
            condition = math_ops.equal(ranks[0], actual)
            for rank in ranks[1:]:
                condition = math_ops.logical_or(condition, math_ops.equal(rank, actual))
        else:
            condition = ops.convert_to_tensor(False)
        for rank, rank_static in zip(ranks, ranks_static):
            if rank_static is None:
                check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
                condition = _with_dependencies([check], condition)
        return Assert(condition, data, summarize=summarize)


@tf_export("debugging.assert_integer", "assert_integer")
def assert_integer(x, message=None, name=None):
    """A no_op when x has an integer dtype; a TypeError now otherwise."""
    with ops.name_scope(name, "assert_integer", [x]):
        x = ops.convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(
                f'{_message_prefix(message)}Expected "x" to be integer type.  '
                f"Found: {x.name} of dtype {x.dtype}"
            )
        return control_flow_ops.no_op("statically_determined_was_integer")


@tf_export("debugging.assert_type", "assert_type")
def assert_type(tensor, tf_type, message=None, name=None):
    """A no_op when `tensor` has dtype `tf_type`; a TypeError now otherwise."""
    tf_type = dtypes.as_dtype(tf_type)
    with ops.name_scope(name, "assert_type", [tensor]):
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError(
                f"{_message_prefix(message)}{tensor.name} must be of type {tf_type!r}; "
                f"got {tensor.dtype!r}"
            )
        return control_flow_ops.no_op("statically_determined_correct_type")


@tf_export("debugging.assert_scalar", "assert_scalar")
def assert_scalar(tensor, name=None, message=None):
    """Returns `tensor` (as a Tensor) when its static shape is a scalar; a
    ValueError otherwise, also when the rank is unknown."""
    with ops.name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name=scope)
        shape = tensor.get_shape()
        if shape.ndims != 0:
            raise ValueError(
                f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, "
                f"saw shape: {shape}."
            )
        return tensor


@tf_export("debugging.assert_proper_iterable", "assert_proper_iterable")
def assert_proper_iterable(values):
    """TypeError unless `values` is an iterable other than a tensor, an
    ndarray or a string (each of which is iterable by accident)."""
    if isinstance(values, (ops.Tensor, np.ndarray, bytes, str)):
        raise TypeError(
            f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}'
        )
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def _assert_same_base_type(items, expected_type=None):
    original_expected = expected_type
    mismatch = False
    for item in items:
        if item is not None:
            item_type = item.dtype.base_dtype
            if not expected_type:
                expected_type = item_type
            elif expected_type != item_type:
                mismatch = True
                break
    if not mismatch:
        return expected_type
    # Go round again to name the culprits (slow, so only on failure).
    expected_type, first_name = original_expected, None
    for item in items:
        if item is None:
            continue
        item_type = item.dtype.base_dtype
        if not expected_type:
            expected_type = item_type
            first_name = item.name if hasattr(item, "name") else str(item)
        elif expected_type != item_type:
            item_name = item.name if hasattr(item, "name") else str(item)
            suffix = f" as {first_name}" if first_name else ""
            raise ValueError(
                f"{item_name}, type={item_type}, must be of the same type ({expected_type}){suffix}."
            )
    return expected_type


@tf_export("debugging.assert_same_float_dtype", "assert_same_float_dtype")
def assert_same_float_dtype(tensors=None, dtype=None):
    """The one floating dtype of `tensors` (and `dtype`, when given);
    float32 when there is neither. ValueError on a mismatch or a
    non-floating type."""
    if tensors:
        dtype = _assert_same_base_type(tensors, dtype)
    if not dtype:
        return dtypes.float32
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


@tf_export("debugging.is_numeric_tensor", "is_numeric_tensor")
def is_numeric_tensor(tensor):
    """True for a Tensor of a numeric dtype (not bool, not string)."""
    return isinstance(tensor, ops.Tensor) and tensor.dtype in _NUMERIC_TYPES


def _adjacent_comparison(x, compare):
    """compare(x[1:], x[:-1]) over the flattened x (empty for fewer than two
    elements, where TensorFlow's cond gives the same empty result)."""
    x = array_ops.reshape(x, [-1])
    if not is_numeric_tensor(x):
        raise TypeError(f"Expected x to be numeric, instead found: {x}")
    return compare(x[1:], x[:-1])


@tf_export("debugging.is_non_decreasing", "math.is_non_decreasing", "is_non_decreasing")
def is_non_decreasing(x, name=None):
    """A bool scalar: x[i] <= x[i + 1] for every i (x flattened)."""
    with ops.name_scope(name, "is_non_decreasing", [x]):
        return math_ops.reduce_all(_adjacent_comparison(x, math_ops.greater_equal))


@tf_export(
    "debugging.is_strictly_increasing", "math.is_strictly_increasing", "is_strictly_increasing"
)
def is_strictly_increasing(x, name=None):
    """A bool scalar: x[i] < x[i + 1] for every i (x flattened)."""
    with ops.name_scope(name, "is_strictly_increasing", [x]):
        return math_ops.reduce_all(_adjacent_comparison(x, math_ops.greater))
