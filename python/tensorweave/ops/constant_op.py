"""tf.constant."""

from tensorweave.framework import dtypes, ops, tensor_util
from tensorweave.framework.api_export import tf_export


@tf_export("constant")
def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A Const op holding `value` (converted to `dtype`, reshaped or filled to `shape`)."""
    array = tensor_util.to_ndarray(value, dtype, shape)
    if verify_shape and shape is not None and list(array.shape) != list(shape):
        raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
    dtype = dtypes.as_dtype(array.dtype) if dtype is None else dtypes.as_dtype(dtype).base_dtype
    graph = ops.get_default_graph()
    return graph.create_op(
        "Const",
        [],
        # `array` already has `dtype`: converting it again would only repeat the checks.
        attrs={"value": tensor_util.tensor_proto_of_array(array), "dtype": dtype},
        name=name,
    ).outputs[0]
