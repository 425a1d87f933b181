"""tf.strings (join, length, substr, to_number, as_string, regex_replace,
regex_full_match, strip, lower, upper, reduce_join, split,
to_hash_bucket_fast) and the TF1 names of the same functions
(tf.string_join, tf.substr, tf.string_to_number, tf.as_string,
tf.regex_replace, tf.string_strip, tf.reduce_join, tf.string_split,
tf.string_to_hash_bucket_fast), as tf.compat.v1 has them.

    words = tf.string_split(["a b c", "d e"])             # a SparseTensor
    line = tf.strings.join([names, ": ", tf.as_string(scores, precision=2)])
    clean = tf.strings.regex_replace(text, r"\\s+", " ")  # RE2 syntax
    value = tf.strings.to_number(field, out_type=tf.int64)

None of these ops is differentiable (strings have no gradient). tf.strings.split
returns a SparseTensor, as tf.compat.v1's does by default; RaggedTensors do
not exist here, so result_type="RaggedTensor" is refused.
"""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import NotDifferentiable
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.op_builder import is_tensor_like, make_op

_STRING_OPS = (
    "StringJoin",
    "ReduceJoin",
    "StringLength",
    "Substr",
    "StringStrip",
    "StringLower",
    "StringUpper",
    "AsString",
    "StringToNumber",
    "StringSplit",
    "StringSplitV2",
    "RegexReplace",
    "StaticRegexReplace",
    "RegexFullMatch",
    "StaticRegexFullMatch",
    "StringToHashBucketFast",
)
for _op_type in _STRING_OPS:
    NotDifferentiable(_op_type)


def _strings(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.string, name=name)


def _string_map(op_type, input, name, attrs=None):
    with ops.name_scope(name, op_type, [input]) as scope:
        return make_op(op_type, [_strings(input, "input")], attrs or {}, scope)


@tf_export("strings.join", "string_join")
def string_join(inputs, separator="", name=None):
    """Joins the strings of `inputs` elementwise with `separator`; scalars
    repeat, every other input has one shape."""
    with ops.name_scope(name, "StringJoin", inputs) as scope:
        tensors = [_strings(x, f"input_{i}") for i, x in enumerate(inputs)]
        attrs = {"N": len(tensors), "separator": separator}
        return make_op("StringJoin", [tensors], attrs, scope)


@tf_export("strings.length")
def string_length(input, name=None, unit="BYTE"):
    """The length of each string in bytes, or in UTF-8 characters with
    unit="UTF8_CHAR" (int32)."""
    return _string_map("StringLength", input, name, {"unit": unit})


@tf_export("strings.substr", "substr")
def substr(input, pos, len, name=None, unit="BYTE"):
    """input[pos:pos + len] of each string, in bytes or UTF-8 characters; a
    negative pos counts from the end, a negative len runs to the end."""
    with ops.name_scope(name, "Substr", [input, pos, len]) as scope:
        strings = _strings(input, "input")
        if is_tensor_like(pos):
            pos = ops.convert_to_tensor(pos, name="pos")
            len = ops.convert_to_tensor(len, dtype=pos.dtype.base_dtype, name="len")
        else:
            len = ops.convert_to_tensor(len, name="len")
            pos = ops.convert_to_tensor(pos, dtype=len.dtype.base_dtype, name="pos")
        attrs = {"T": pos.dtype.base_dtype, "unit": unit}
        return make_op("Substr", [strings, pos, len], attrs, scope)


@tf_export("strings.to_number", "string_to_number")
def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    """Each string parsed as a number of `out_type` (float32, float64, int32,
    int64); a string that is not one is an InvalidArgumentError."""
    with ops.name_scope(name, "StringToNumber", [string_tensor]) as scope:
        strings = _strings(string_tensor, "string_tensor")
        attrs = {"out_type": dtypes.as_dtype(out_type)}
        return make_op("StringToNumber", [strings], attrs, scope)


@tf_export("strings.as_string", "as_string")
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Each element as text, printf-style (see the AsString op)."""
    with ops.name_scope(name, "AsString", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {
            "T": x.dtype.base_dtype,
            "precision": precision,
            "scientific": scientific,
            "shortest": shortest,
            "width": width,
            "fill": fill,
        }
        return make_op("AsString", [x], attrs, scope)


def _is_text(value):
    return isinstance(value, (str, bytes))


@tf_export("strings.regex_replace", "regex_replace")
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces the matches of the RE2 `pattern` in each string with
    `rewrite` (\\1 .. \\9 name groups); only the first one unless
    replace_global. Python string pattern and rewrite compile once
    (StaticRegexReplace)."""
    if _is_text(pattern) and _is_text(rewrite):
        attrs = {"pattern": pattern, "rewrite": rewrite, "replace_global": replace_global}
        return _string_map("StaticRegexReplace", input, name, attrs)
    with ops.name_scope(name, "RegexReplace", [input, pattern, rewrite]) as scope:
        inputs = [_strings(input, "input"), _strings(pattern, "pattern")]
        inputs.append(_strings(rewrite, "rewrite"))
        return make_op("RegexReplace", inputs, {"replace_global": replace_global}, scope)


@tf_export("strings.regex_full_match")
def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches the RE2 `pattern` (bool)."""
    if _is_text(pattern):
        return _string_map("StaticRegexFullMatch", input, name, {"pattern": pattern})
    with ops.name_scope(name, "RegexFullMatch", [input, pattern]) as scope:
        inputs = [_strings(input, "input"), _strings(pattern, "pattern")]
        return make_op("RegexFullMatch", inputs, {}, scope)


@tf_export("strings.strip", "string_strip")
def string_strip(input, name=None):
    """Each string without leading and trailing ASCII whitespace."""
    return _string_map("StringStrip", input, name)


@tf_export("strings.lower")
def lower(input, encoding="", name=None):
    """Each string with its ASCII letters lowercased."""
    return _string_map("StringLower", input, name, {"encoding": encoding})


@tf_export("strings.upper")
def upper(input, encoding="", name=None):
    """Each string with its ASCII letters uppercased."""
    return _string_map("StringUpper", input, name, {"encoding": encoding})


@tf_export("strings.to_hash_bucket_fast", "string_to_hash_bucket_fast")
def string_to_hash_bucket_fast(input, num_buckets, name=None):
    """Each string's bucket in [0, num_buckets): TensorFlow's Fingerprint64
    of it modulo num_buckets, so hashed features land where TensorFlow puts
    them (int64)."""
    return _string_map("StringToHashBucketFast", input, name, {"num_buckets": num_buckets})


@tf_export("strings.reduce_join", "reduce_join")
def reduce_join(
    inputs,
    axis=None,
    keep_dims=None,
    separator="",
    name=None,
    reduction_indices=None,
    keepdims=None,
):
    """Joins strings along `axis` (all dims when None, in row-major order;
    the first listed axis varies fastest); keepdims keeps each reduced axis
    as 1."""
    from tensorweave.ops import array_ops  # array_ops imports this package's modules

    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    axis = reduction_indices if axis is None else axis
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    with ops.name_scope(name, "ReduceJoin", [inputs, axis]) as scope:
        strings = _strings(inputs, "inputs")
        if axis is None:
            rank = strings.shape.ndims
            if rank is not None:
                axis = list(range(rank - 1, -1, -1))
            else:
                axis = array_ops.range(array_ops.rank(strings) - 1, -1, -1)
        axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        attrs = {"keep_dims": keepdims, "separator": separator}
        return make_op("ReduceJoin", [strings, axis], attrs, scope)


def _sparse_split(op_type, source, separator, attrs, name):
    with ops.name_scope(name, op_type, [source, separator]) as scope:
        inputs = [_strings(source, "input"), _strings(separator, "delimiter")]
        op = ops.get_default_graph().create_op(op_type, inputs, attrs=attrs, name=scope)
        indices, values, shape = op.outputs
        return SparseTensor(indices=indices, values=values, dense_shape=shape)


def _check_sparse_result(result_type):
    if result_type != "SparseTensor":
        raise ValueError(
            f"result_type={result_type!r} is not supported: tensorweave has no RaggedTensor; "
            "use result_type='SparseTensor'"
        )


@tf_export("string_split")
def string_split(
    source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None
):
    """Splits each string of the vector `source` at every character of
    `sep` (" " by default; "" splits into bytes), dropping empty tokens
    with skip_empty. A SparseTensor of shape [len(source), most tokens]."""
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'.")
    _check_sparse_result(result_type)
    sep = delimiter if sep is None else sep
    sep = " " if sep is None else sep
    return _sparse_split("StringSplit", source, sep, {"skip_empty": skip_empty}, name)


@tf_export("strings.split")
def strings_split(
    input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None, name=None
):
    """Python's str.split(sep, maxsplit) of each string of the vector
    `input` (runs of whitespace when sep is None or ""). A SparseTensor, as
    tf.compat.v1.strings.split returns by default."""
    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'.")
    _check_sparse_result(result_type)
    input = source if input is None else input
    return _sparse_split("StringSplitV2", input, sep or "", {"maxsplit": maxsplit}, name)
