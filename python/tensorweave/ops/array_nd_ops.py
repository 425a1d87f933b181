"""Index-row gathers and scatters (tf.gather_nd, tf.scatter_nd,
tf.tensor_scatter_update/add/sub and their TF 2.x _nd_ names) and the
block rearrangements (tf.space_to_depth, tf.depth_to_space,
tf.space_to_batch_nd, tf.batch_to_space_nd)."""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import make_op


def _index(value, name, dtype=None):
    """Index tensors: int32 unless given as a tensor (or `dtype` says)."""
    if isinstance(value, ops.Tensor):
        return value
    return ops.convert_to_tensor(value, dtype=dtype or dtypes.int32, name=name)


@tf_export("gather_nd")
def gather_nd(params, indices, name=None, batch_dims=0):
    """The slices of params named by the rows of indices' last dim:
    output[i..] = params[indices[i..]] (an index row of depth d picks
    params[i_1, .., i_d, ...])."""
    if batch_dims != 0:
        raise NotImplementedError("tensorweave's gather_nd supports batch_dims=0 only")
    with ops.name_scope(name, "GatherNd", [params, indices]) as scope:
        params = ops.convert_to_tensor(params, name="params")
        indices = _index(indices, "indices")
        attrs = {"Tparams": params.dtype.base_dtype, "Tindices": indices.dtype.base_dtype}
        return make_op("GatherNd", [params, indices], attrs, scope)


@tf_export("scatter_nd")
def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with updates[i..] added at the slice indices[i..]
    names (repeated index rows add up)."""
    with ops.name_scope(name, "ScatterNd", [indices, updates, shape]) as scope:
        indices = _index(indices, "indices")
        updates = ops.convert_to_tensor(updates, name="updates")
        shape = _index(shape, "shape", indices.dtype.base_dtype)
        attrs = {"T": updates.dtype.base_dtype, "Tindices": indices.dtype.base_dtype}
        return make_op("ScatterNd", [indices, updates, shape], attrs, scope)


def _tensor_scatter(op_type, tensor, indices, updates, name):
    with ops.name_scope(name, op_type, [tensor, indices, updates]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        indices = _index(indices, "indices")
        updates = ops.convert_to_tensor(updates, dtype=tensor.dtype.base_dtype, name="updates")
        attrs = {"T": tensor.dtype.base_dtype, "Tindices": indices.dtype.base_dtype}
        return make_op(op_type, [tensor, indices, updates], attrs, scope)


@tf_export("tensor_scatter_update", "tensor_scatter_nd_update")
def tensor_scatter_update(tensor, indices, updates, name=None):
    """A copy of tensor with the slices indices names replaced by updates."""
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, name)


@tf_export("tensor_scatter_add", "tensor_scatter_nd_add")
def tensor_scatter_add(tensor, indices, updates, name=None):
    """A copy of tensor with updates added at the slices indices names."""
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, name)


@tf_export("tensor_scatter_sub", "tensor_scatter_nd_sub")
def tensor_scatter_sub(tensor, indices, updates, name=None):
    """A copy of tensor with updates subtracted at the slices indices names."""
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, name)


def _space_depth(op_type, input, block_size, data_format, name):
    with ops.name_scope(name, op_type, [input]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        attrs = {
            "T": input.dtype.base_dtype,
            "block_size": int(block_size),
            "data_format": data_format,
        }
        return make_op(op_type, [input], attrs, scope)


@tf_export("space_to_depth", "nn.space_to_depth")
def space_to_depth(input, block_size, name=None, data_format="NHWC"):
    """Moves each block_size x block_size spatial block of an NHWC image into
    its channels: [N, H, W, C] -> [N, H/b, W/b, C*b*b]."""
    return _space_depth("SpaceToDepth", input, block_size, data_format, name)


@tf_export("depth_to_space", "nn.depth_to_space")
def depth_to_space(input, block_size, name=None, data_format="NHWC"):
    """space_to_depth's inverse: [N, H, W, C*b*b] -> [N, H*b, W*b, C]."""
    return _space_depth("DepthToSpace", input, block_size, data_format, name)


def _space_batch(op_type, input, block_shape, pads, pads_attr, name):
    with ops.name_scope(name, op_type, [input, block_shape, pads]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        block_shape = _index(block_shape, "block_shape")
        pads = _index(pads, pads_attr[1:].lower())
        attrs = {
            "T": input.dtype.base_dtype,
            "Tblock_shape": block_shape.dtype.base_dtype,
            pads_attr: pads.dtype.base_dtype,
        }
        return make_op(op_type, [input, block_shape, pads], attrs, scope)


@tf_export("space_to_batch_nd")
def space_to_batch_nd(input, block_shape, paddings, name=None):
    """Zero-pads the M dims after the batch by paddings [M, 2], cuts them into
    blocks of block_shape and moves the offsets within a block into the
    batch: [B, s_1.., rest] -> [B*prod(block), padded s_k / b_k.., rest]."""
    return _space_batch("SpaceToBatchND", input, block_shape, paddings, "Tpaddings", name)


@tf_export("batch_to_space_nd")
def batch_to_space_nd(input, block_shape, crops, name=None):
    """space_to_batch_nd's inverse, with crops [M, 2] removed afterwards."""
    return _space_batch("BatchToSpaceND", input, block_shape, crops, "Tcrops", name)


@tf_export("space_to_batch")
def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):
    """TensorFlow 1.x's 4-D form: space_to_batch_nd over H and W with a
    square block of block_size (or block_shape)."""
    block_shape = _square_block(block_size, block_shape)
    return space_to_batch_nd(input, block_shape, paddings, name=name or "SpaceToBatchND")


@tf_export("batch_to_space")
def batch_to_space(input, crops, block_size=None, name=None, block_shape=None):
    """TensorFlow 1.x's 4-D form of batch_to_space_nd (square block)."""
    block_shape = _square_block(block_size, block_shape)
    return batch_to_space_nd(input, block_shape, crops, name=name or "BatchToSpaceND")


def _square_block(block_size, block_shape):
    if block_shape is not None:
        return block_shape
    if block_size is None:
        raise ValueError("block_size or block_shape is required")
    return [int(block_size), int(block_size)]
