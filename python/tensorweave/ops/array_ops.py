"""Array ops: placeholders, identity, shapes, reshapes, fills, casts, argmax,
and the shape and indexing family (concat, split, stack, slice, tile, pad,
gather, one_hot, range, ...). Python indexing (`x[1:, ::2, None, ..., -1]`)
lives in array_slicing.

This module defines tf.range and tf.slice, so it reaches Python's own
through `builtins`.
"""

import builtins

import numpy as np

from tensorweave.framework import dtypes, ops, tensor_shape, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import constant_op
from tensorweave.ops.op_builder import make_op

# Fills up to this many elements are stored as a Const (as TensorFlow does);
# larger ones become a Fill op computed at run time.


_MAX_CONSTANT_FILL = 1000


@tf_export("placeholder")
def placeholder(dtype, shape=None, name=None):
    """A tensor that must be fed (running it unfed is InvalidArgumentError)."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "Placeholder") as scope:
        return make_op(
            "Placeholder", [], {"dtype": dtype, "shape": tensor_shape.as_shape(shape)}, scope
        )


@tf_export("placeholder_with_default")
def placeholder_with_default(input, shape, name=None):
    """`input` unless fed; `shape` may be less specific than input's."""
    with ops.name_scope(name, "PlaceholderWithDefault", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op(
            "PlaceholderWithDefault",
            [input],
            {"dtype": input.dtype.base_dtype, "shape": tensor_shape.as_shape(shape)},
            scope,
        )


@tf_export("identity")
def identity(input, name=None):
    with ops.name_scope(name, "Identity", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op("Identity", [input], {"T": input.dtype.base_dtype}, scope)


def _index_tensor(value, name):
    """Shapes, permutations and axes: int32 unless given as an int64 tensor."""
    if isinstance(value, ops.Tensor):
        return value
    if isinstance(value, tensor_shape.TensorShape):
        value = value.as_list()
    return ops.convert_to_tensor(value, dtype=dtypes.int32, name=name)


@tf_export("reshape")
def reshape(tensor, shape, name=None):
    with ops.name_scope(name, "Reshape", [tensor, shape]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        shape = _index_tensor(shape, "shape")
        return make_op(
            "Reshape", [tensor, shape], {"T": tensor.dtype.base_dtype, "Tshape": shape.dtype}, scope
        )


@tf_export("shape")
def shape(input, name=None, out_type=dtypes.int32):
    with ops.name_scope(name, "Shape", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op(
            "Shape",
            [input],
            {"T": input.dtype.base_dtype, "out_type": dtypes.as_dtype(out_type)},
            scope,
        )


@tf_export("transpose")
def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes dimensions; without `perm`, reverses them."""
    with ops.name_scope(name, "transpose", [a]) as scope:
        a = ops.convert_to_tensor(a, name="a")
        if perm is None:
            rank = a.shape.ndims
            # Reversed dims: computed in the graph when the rank is unknown.
            if rank is None:
                last = make_op(
                    "Sub",
                    [_rank(a), constant_op.constant(1, name="one")],
                    {"T": dtypes.int32},
                    "sub",
                )
                perm = range(last, -1, -1, name="perm")
            else:
                perm = list(builtins.range(rank - 1, -1, -1))
        perm = _index_tensor(perm, "perm")
        return make_op(
            "Transpose", [a, perm], {"T": a.dtype.base_dtype, "Tperm": perm.dtype}, scope
        )


@tf_export("fill")
def fill(dims, value, name=None):
    with ops.name_scope(name, "Fill", [dims, value]) as scope:
        dims = _index_tensor(dims, "dims")
        value = ops.convert_to_tensor(value, name="value")
        return make_op(
            "Fill", [dims, value], {"T": value.dtype.base_dtype, "index_type": dims.dtype}, scope
        )


def _filled(value, shape, dtype, name, default_name):
    dtype = dtypes.as_dtype(dtype).base_dtype
    with ops.name_scope(name, default_name, [shape]) as scope:
        if not isinstance(shape, ops.Tensor):
            # Plain ints from here on (a TensorShape's Dimensions included).
            shape = tensor_shape.as_shape(shape).as_list()
            if int(np.prod(shape)) <= _MAX_CONSTANT_FILL:
                return constant_op.constant(value, dtype=dtype, shape=shape, name=scope)
        return fill(shape, constant_op.constant(value, dtype=dtype), name=scope)


@tf_export("zeros")
def zeros(shape, dtype=dtypes.float32, name=None):
    dtype = dtypes.as_dtype(dtype)
    # TensorFlow's zero of each kind: "" for strings, False for bools.
    zero = "" if dtype.base_dtype == dtypes.string else False if dtype.is_bool else 0
    return _filled(zero, shape, dtype, name, "zeros")


@tf_export("ones")
def ones(shape, dtype=dtypes.float32, name=None):
    return _filled(True if dtypes.as_dtype(dtype).is_bool else 1, shape, dtype, name, "ones")


@tf_export("zeros_like")
def zeros_like(tensor, dtype=None, name=None, optimize=True):
    with ops.name_scope(name, "zeros_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype=dtype, name=scope)
        return make_op("ZerosLike", [tensor], {"T": tensor.dtype.base_dtype}, scope)


@tf_export("ones_like")
def ones_like(tensor, dtype=None, name=None, optimize=True):
    with ops.name_scope(name, "ones_like", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype.base_dtype:
            return ones(shape(tensor), dtype=dtype, name=scope)
        return make_op("OnesLike", [tensor], {"T": tensor.dtype.base_dtype}, scope)


@tf_export("cast")
def cast(x, dtype, name=None):
    """`x` as `dtype`; returns `x` itself when it already has that dtype."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, ops.Tensor) and x.dtype.base_dtype == dtype:
        return x
    with ops.name_scope(name, "Cast", [x]) as scope:
        x = ops.convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == dtype:
            return x
        return make_op(
            "Cast", [x], {"SrcT": x.dtype.base_dtype, "DstT": dtype, "Truncate": False}, scope
        )


@tf_export("argmax", "math.argmax")
def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    """Index of the largest value along `axis` (default 0)."""
    if axis is not None and dimension is not None:
        raise ValueError("Cannot specify both 'axis' and 'dimension'")
    axis = dimension if axis is None else axis
    axis = 0 if axis is None else axis
    with ops.name_scope(name, "ArgMax", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        axis = _index_tensor(axis, "dimension")
        return make_op(
            "ArgMax",
            [input, axis],
            {
                "T": input.dtype.base_dtype,
                "Tidx": axis.dtype,
                "output_type": dtypes.as_dtype(output_type),
            },
            scope,
        )


# --- shape and indexing family ---------------------------------------------------


def _rank(tensor):
    return make_op("Rank", [tensor], {"T": tensor.dtype.base_dtype}, "Rank")


def _static_int(value):
    """`value` as a Python int when it is one (or a 0-d numpy integer), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    return None


def _common_dtype(values):
    """The dtype of the first tensor-like value, for converting the others."""
    from tensorweave.ops.op_builder import is_tensor_like

    for value in values:
        if is_tensor_like(value):
            return ops.convert_to_tensor(value).dtype.base_dtype
    return None


def _convert_all(values, name):
    from tensorweave.ops.op_builder import is_tensor_like

    dtype = _common_dtype(values)
    # Tensors keep their dtype (a mismatch is the TypeError below); Python
    # values take the first tensor's.
    tensors = [
        ops.convert_to_tensor(v, dtype=None if is_tensor_like(v) else dtype, name=f"{name}_{i}")
        for i, v in enumerate(values)
    ]
    first = tensors[0].dtype.base_dtype
    for i, tensor in enumerate(tensors):
        if tensor.dtype.base_dtype != first:
            raise TypeError(
                f"{name}[{i}] has dtype {tensor.dtype.base_dtype.name}, not "
                f"{first.name} like {name}[0]"
            )
    return tensors


@tf_export("size")
def size(input, name=None, out_type=dtypes.int32):
    """The number of elements of `input`, as a scalar of `out_type`."""
    with ops.name_scope(name, "Size", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op(
            "Size",
            [input],
            {"T": input.dtype.base_dtype, "out_type": dtypes.as_dtype(out_type)},
            scope,
        )


@tf_export("rank")
def rank(input, name=None):
    """The number of dimensions of `input`, as an int32 scalar."""
    with ops.name_scope(name, "Rank", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op("Rank", [input], {"T": input.dtype.base_dtype}, scope)


def _make_multi_output_op(op_type, inputs, attrs, name):
    """Creates `op_type` and returns the list of its outputs."""
    graph = ops._graph_of(list(inputs)) or ops.get_default_graph()
    return list(graph.create_op(op_type, [list(inputs)], attrs=attrs, name=name).outputs)


@tf_export("shape_n")
def shape_n(input, out_type=dtypes.int32, name=None):
    """The shapes of several tensors, from one ShapeN op."""
    with ops.name_scope(name, "ShapeN", list(input)) as scope:
        values = [ops.convert_to_tensor(t) for t in input]
        attrs = {
            "N": len(values),
            "T": values[0].dtype.base_dtype if values else dtypes.float32,
            "out_type": dtypes.as_dtype(out_type),
        }
        return _make_multi_output_op("ShapeN", values, attrs, scope)


@tf_export("identity_n")
def identity_n(input, name=None):
    """Each of `input` passed through one IdentityN op (the tensors may differ in dtype)."""
    with ops.name_scope(name, "IdentityN", list(input)) as scope:
        values = [ops.convert_to_tensor(t) for t in input]
        attrs = {"T": [t.dtype.base_dtype for t in values]}
        return _make_multi_output_op("IdentityN", values, attrs, scope)


@tf_export("expand_dims")
def expand_dims(input, axis=None, name=None, dim=None):
    """Inserts a size-1 dimension at `axis` (negative counts from the end)."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("expand_dims needs an axis")
    with ops.name_scope(name, "ExpandDims", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        axis = _index_tensor(axis, "dim")
        return make_op(
            "ExpandDims", [input, axis], {"T": input.dtype.base_dtype, "Tdim": axis.dtype}, scope
        )


@tf_export("squeeze")
def squeeze(input, axis=None, name=None, squeeze_dims=None):
    """Removes the size-1 dimensions listed in `axis` (all of them by default)."""
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
    axis = squeeze_dims if axis is None else axis
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    with ops.name_scope(name, "Squeeze", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op(
            "Squeeze",
            [input],
            {"T": input.dtype.base_dtype, "squeeze_dims": [int(a) for a in axis or []]},
            scope,
        )


@tf_export("stop_gradient")
def stop_gradient(input, name=None):
    """`input` unchanged; tf.gradients treats it as a constant."""
    with ops.name_scope(name, "StopGradient", [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        return make_op("StopGradient", [input], {"T": input.dtype.base_dtype}, scope)


@tf_export("invert_permutation")
def invert_permutation(x, name=None):
    with ops.name_scope(name, "InvertPermutation", [x]) as scope:
        x = _index_tensor(x, "x")
        return make_op("InvertPermutation", [x], {"T": x.dtype}, scope)


@tf_export("concat")
def concat(values, axis, name="concat"):
    """Joins `values` along `axis`; a single value is returned as an Identity."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    with ops.name_scope(name, "concat", list(values)) as scope:
        values = _convert_all(values, "values")
        if len(values) == 1:
            return identity(values[0], name=scope)
        axis = _index_tensor(axis, "axis")
        return make_op(
            "ConcatV2",
            [values, axis],
            {"N": len(values), "T": values[0].dtype.base_dtype, "Tidx": axis.dtype},
            scope,
        )


@tf_export("split")
def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """An int splits into that many equal parts (Split); a list or 1-D tensor
    gives the part sizes, one of which may be -1 (SplitV)."""
    with ops.name_scope(name, "split", [value]) as scope:
        value = ops.convert_to_tensor(value, name="value")
        axis = ops.convert_to_tensor(axis, dtype=dtypes.int32, name="split_dim")
        count = _static_int(num_or_size_splits)
        if count is not None:
            op = ops.get_default_graph().create_op(
                "Split",
                [axis, value],
                attrs={"num_split": count, "T": value.dtype.base_dtype},
                name=scope,
            )
            return op.outputs
        sizes = _index_tensor(num_or_size_splits, "size_splits")
        if num is None:
            num = sizes.shape.num_elements() if sizes.shape.ndims == 1 else None
        if num is None:
            raise ValueError(f"Cannot infer num from shape {sizes.shape}")
        op = ops.get_default_graph().create_op(
            "SplitV",
            [value, sizes, axis],
            attrs={"num_split": int(num), "T": value.dtype.base_dtype, "Tlen": sizes.dtype},
            name=scope,
        )
        return op.outputs


@tf_export("slice")
def slice(input_, begin, size, name=None):
    """The block starting at `begin` with `size` elements per dim (-1: to the end)."""
    with ops.name_scope(name, "Slice", [input_, begin, size]) as scope:
        input_ = ops.convert_to_tensor(input_, name="input")
        begin = _index_tensor(begin, "begin")
        size = ops.convert_to_tensor(size, dtype=begin.dtype, name="size")
        return make_op(
            "Slice",
            [input_, begin, size],
            {"T": input_.dtype.base_dtype, "Index": begin.dtype},
            scope,
        )


@tf_export("stack")
def stack(values, axis=0, name="stack"):
    """Packs same-shaped tensors into one with a new dimension at `axis`."""
    with ops.name_scope(name, "stack", list(values)) as scope:
        values = _convert_all(list(values), "values")
        return make_op(
            "Pack",
            [values],
            {"N": len(values), "T": values[0].dtype.base_dtype, "axis": int(axis)},
            scope,
        )


@tf_export("unstack")
def unstack(value, num=None, axis=0, name="unstack"):
    """The tensors along `axis` (their number must be static unless `num` is given)."""
    with ops.name_scope(name, "unstack", [value]) as scope:
        value = ops.convert_to_tensor(value, name="value")
        if num is None:
            rank = value.shape.ndims
            if rank is None:
                raise ValueError(f"Cannot infer num from shape {value.shape}")
            if not -rank <= axis < rank:
                raise ValueError(f"axis = {axis} not in [{-rank}, {rank})")
            num = value.shape.as_list()[axis]
            if num is None:
                raise ValueError(f"Cannot infer num from shape {value.shape}")
        op = ops.get_default_graph().create_op(
            "Unpack",
            [value],
            attrs={"num": int(num), "T": value.dtype.base_dtype, "axis": int(axis)},
            name=scope,
        )
        return op.outputs


def _autopack(value, dtype=None, name=None):
    """convert_to_tensor of a (nested) list holding tensors: Pack ops over the
    converted elements. None when the list holds no tensor."""
    from tensorweave.ops.op_builder import is_tensor_like

    def holds_tensor(item):
        if isinstance(item, (list, tuple)):
            return any(holds_tensor(v) for v in item)
        return is_tensor_like(item)

    if not holds_tensor(value):
        return None

    def first_dtype(item):
        if isinstance(item, (list, tuple)):
            for v in item:
                found = first_dtype(v)
                if found is not None:
                    return found
            return None
        return ops.convert_to_tensor(item).dtype.base_dtype if is_tensor_like(item) else None

    dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else first_dtype(value)

    def pack(item, scope_name):
        if isinstance(item, (list, tuple)) and holds_tensor(item):
            return stack(
                [pack(v, f"{scope_name}_{i}") for i, v in enumerate(item)], name=scope_name
            )
        return ops.convert_to_tensor(item, dtype=dtype)

    return pack(value, name or "packed")


@tf_export("tile")
def tile(input, multiples, name=None):
    """Repeats `input` multiples[i] times along dim i."""
    with ops.name_scope(name, "Tile", [input, multiples]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        multiples = _index_tensor(multiples, "multiples")
        return make_op(
            "Tile",
            [input, multiples],
            {"T": input.dtype.base_dtype, "Tmultiples": multiples.dtype},
            scope,
        )


@tf_export("pad")
def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads with paddings[i] = [before, after] elements along dim i: the
    constant (CONSTANT), a mirror without the edge (REFLECT) or with it
    (SYMMETRIC)."""
    mode = mode.upper()
    with ops.name_scope(name, "Pad", [tensor, paddings]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"Unknown padding mode: {mode}")
        paddings = _index_tensor(paddings, "paddings")
        attrs = {"T": tensor.dtype.base_dtype, "Tpaddings": paddings.dtype}
        if mode != "CONSTANT":
            return make_op("MirrorPad", [tensor, paddings], {**attrs, "mode": mode}, scope)
        if not isinstance(constant_values, ops.Tensor) and np.all(np.asarray(constant_values) == 0):
            return make_op("Pad", [tensor, paddings], attrs, scope)
        constant_values = ops.convert_to_tensor(
            constant_values, dtype=tensor.dtype.base_dtype, name="constant_values"
        )
        return make_op("PadV2", [tensor, paddings, constant_values], attrs, scope)


@tf_export("range")
def range(start, limit=None, delta=1, dtype=None, name="range"):
    """start, start + delta, ... below `limit`; range(n) counts from 0. The
    dtype is the widest of the arguments' (int32 < int64 < float32 < float64)."""
    if limit is None:
        start, limit = 0, start
    with ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        values = [start, limit, delta]
        if dtype is None:
            order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
            found = []
            for v in values:
                if isinstance(v, ops.Tensor):
                    found.append(v.dtype.base_dtype)
                else:
                    found.append(
                        dtypes.as_dtype(
                            np.asarray(v, dtype=np.float32 if isinstance(v, float) else None).dtype
                        )
                        if not isinstance(v, int)
                        else dtypes.int32
                    )
            known = [d for d in found if d in order]
            dtype = max(known, key=order.index) if known else found[0]
        dtype = dtypes.as_dtype(dtype).base_dtype
        converted = []
        for v, arg in zip(values, ("start", "limit", "delta")):
            if isinstance(v, ops.Tensor) and v.dtype.base_dtype != dtype:
                v = cast(v, dtype)
            converted.append(ops.convert_to_tensor(v, dtype=dtype, name=arg))
        return make_op("Range", converted, {"Tidx": dtype}, scope)


@tf_export("gather")
def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of `params` along `axis` (default 0) at `indices`; an index out
    of range is an InvalidArgumentError at run time."""
    if batch_dims != 0:
        raise ValueError("gather supports batch_dims=0 only")
    with ops.name_scope(name, "GatherV2", [params, indices]) as scope:
        params = ops.convert_to_tensor(params, name="params")
        indices = _index_tensor(indices, "indices")
        axis = _index_tensor(0 if axis is None else axis, "axis")
        return make_op(
            "GatherV2",
            [params, indices, axis],
            {
                "Tparams": params.dtype.base_dtype,
                "Tindices": indices.dtype,
                "Taxis": axis.dtype,
                "batch_dims": 0,
            },
            scope,
        )


@tf_export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """on_value where the new dimension's index equals indices, off_value
    elsewhere (1 and 0 by default; dtype from them, else float32)."""
    with ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        if dtype is None:
            for value in (on_value, off_value):
                if isinstance(value, ops.Tensor):
                    dtype = value.dtype.base_dtype
                    break
                if value is not None:  # TensorFlow's inference: 1 -> int32, 1.0 -> float32
                    dtype = dtypes.as_dtype(tensor_util.to_ndarray(value).dtype)
                    break
        dtype = dtypes.as_dtype(dtype or dtypes.float32).base_dtype
        # A tensor keeps its dtype, so a mismatch is the TypeError below.
        on_value = ops.convert_to_tensor(
            1 if on_value is None else on_value,
            dtype=None if isinstance(on_value, ops.Tensor) else dtype,
            name="on_value",
        )
        off_value = ops.convert_to_tensor(
            0 if off_value is None else off_value,
            dtype=None if isinstance(off_value, ops.Tensor) else dtype,
            name="off_value",
        )
        if on_value.dtype.base_dtype != off_value.dtype.base_dtype:
            raise TypeError(
                f"dtype of on_value ({on_value.dtype.name}) and off_value "
                f"({off_value.dtype.name}) must be the same"
            )
        indices = ops.convert_to_tensor(indices, name="indices")
        depth = ops.convert_to_tensor(depth, dtype=dtypes.int32, name="depth")
        return make_op(
            "OneHot",
            [indices, depth, on_value, off_value],
            {"axis": -1 if axis is None else int(axis), "T": dtype, "TI": indices.dtype.base_dtype},
            scope,
        )


@tf_export("broadcast_to")
def broadcast_to(input, shape, name=None):
    """`input` repeated along its size-1 (and missing leading) dims to `shape`."""
    with ops.name_scope(name, "BroadcastTo", [input, shape]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        shape = _index_tensor(shape, "shape")
        return make_op(
            "BroadcastTo", [input, shape], {"T": input.dtype.base_dtype, "Tidx": shape.dtype}, scope
        )


@tf_export("where_coordinates")
def where_coordinates(condition, name=None):
    """The one-argument tf.where: int64 [num_true, rank] coordinates of the
    true (non-zero) elements, in row-major order."""
    with ops.name_scope(name, "Where", [condition]) as scope:
        condition = ops.convert_to_tensor(condition, name="condition")
        return make_op("Where", [condition], {"T": condition.dtype.base_dtype}, scope)


@tf_export("unsorted_segment_sum")
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """output[i] = sum of the rows of data whose segment id is i (negative ids
    are dropped; ids >= num_segments are an error at run time)."""
    with ops.name_scope(name, "UnsortedSegmentSum", [data, segment_ids]) as scope:
        data = ops.convert_to_tensor(data, name="data")
        segment_ids = _index_tensor(segment_ids, "segment_ids")
        num_segments = _index_tensor(num_segments, "num_segments")
        return make_op(
            "UnsortedSegmentSum",
            [data, segment_ids, num_segments],
            {
                "T": data.dtype.base_dtype,
                "Tindices": segment_ids.dtype,
                "Tnumsegments": num_segments.dtype,
            },
            scope,
        )
