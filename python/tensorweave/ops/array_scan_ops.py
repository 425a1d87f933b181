"""Running sums and products (tf.cumsum, tf.cumprod), tf.unique and
tf.matrix_band_part. tf.nn.top_k and tf.nn.in_top_k live in nn_ops."""

import collections

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import make_op


def _scan(op_type, x, axis, exclusive, reverse, name, default_name):
    with ops.name_scope(name, default_name, [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        if not isinstance(axis, ops.Tensor):
            axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="axis")
        attrs = {
            "T": x.dtype.base_dtype,
            "Tidx": axis.dtype.base_dtype,
            "exclusive": bool(exclusive),
            "reverse": bool(reverse),
        }
        return make_op(op_type, [x, axis], attrs, scope)


@tf_export("cumsum", "math.cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis`: [a, b, c] -> [a, a + b, a + b + c];
    exclusive leaves each element out ([0, a, a + b]), reverse sums from the end."""
    return _scan("Cumsum", x, axis, exclusive, reverse, name, "Cumsum")


@tf_export("cumprod", "math.cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`, with cumsum's exclusive and reverse."""
    return _scan("Cumprod", x, axis, exclusive, reverse, name, "Cumprod")


UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


@tf_export("unique")
def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct elements of the vector x in order of first
    appearance, and x[i] == y[idx[i]]."""
    with ops.name_scope(name, "Unique", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        graph = ops._graph_of([x]) or ops.get_default_graph()
        attrs = {"T": x.dtype.base_dtype, "out_idx": dtypes.as_dtype(out_idx)}
        op = graph.create_op("Unique", [x], attrs=attrs, name=scope)
        return UniqueResult(*op.outputs)


@tf_export("matrix_band_part", "linalg.band_part")
def matrix_band_part(input, num_lower, num_upper, name=None):
    """The innermost matrices of `input` with every entry (m, n) zeroed unless
    m - n <= num_lower and n - m <= num_upper (a negative bound keeps the
    whole lower or upper triangle)."""
    with ops.name_scope(name, "MatrixBandPart", [input, num_lower, num_upper]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        if isinstance(num_lower, ops.Tensor):
            index_dtype = num_lower.dtype.base_dtype
        elif isinstance(num_upper, ops.Tensor):
            index_dtype = num_upper.dtype.base_dtype
        else:
            index_dtype = dtypes.int64
        num_lower = ops.convert_to_tensor(num_lower, dtype=index_dtype, name="num_lower")
        num_upper = ops.convert_to_tensor(num_upper, dtype=index_dtype, name="num_upper")
        attrs = {"T": input.dtype.base_dtype, "Tindex": index_dtype}
        return make_op("MatrixBandPart", [input, num_lower, num_upper], attrs, scope)
