"""tf.saved_model.utils: TensorInfo protos, the description of a tensor a
signature feeds or fetches (its name in the graph, dtype and static shape).

    info = tf.saved_model.utils.build_tensor_info(x)        # name "x:0"
    x_again = tf.saved_model.utils.get_tensor_from_tensor_info(info, graph)
"""

from tensorweave.framework import ops, sparse_tensor
from tensorweave.framework.api_export import tf_export
from tensorweave.proto import meta_graph_pb2

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


@tf_export("saved_model.build_tensor_info")
def build_tensor_info(tensor):
    """The TensorInfo of a Tensor or SparseTensor (for a SparseTensor, the
    names of its three component tensors)."""
    if isinstance(tensor, sparse_tensor.SparseTensor):
        info = meta_graph_pb2.TensorInfo(
            dtype=tensor.values.dtype.base_dtype.as_datatype_enum,
            tensor_shape=tensor.get_shape().as_proto(),
        )
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        return info
    tensor = ops.convert_to_tensor(tensor)
    return meta_graph_pb2.TensorInfo(
        name=tensor.name,
        dtype=tensor.dtype.base_dtype.as_datatype_enum,
        tensor_shape=tensor.get_shape().as_proto(),
    )


def build_tensor_info_from_op(op):
    """The TensorInfo TensorFlow uses to name an operation in a signature
    (its init and train ops): the op's name and an invalid dtype."""
    return meta_graph_pb2.TensorInfo(name=op.name)


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


@tf_export("saved_model.get_tensor_from_tensor_info")
def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) of `graph` (default: the default graph)
    that `tensor_info` names, looked up under `import_scope`. KeyError when
    the graph has no such tensor, ValueError for a TensorInfo with no name."""
    graph = graph or ops.get_default_graph()

    def tensor_named(name):
        return graph.get_tensor_by_name(_scoped(name, import_scope))

    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return tensor_named(tensor_info.name)
    if encoding == "coo_sparse":
        sparse = tensor_info.coo_sparse
        return sparse_tensor.SparseTensor(
            tensor_named(sparse.indices_tensor_name),
            tensor_named(sparse.values_tensor_name),
            tensor_named(sparse.dense_shape_tensor_name),
        )
    raise ValueError(
        f"Invalid TensorInfo.encoding: {encoding}. Expected `coo_sparse`, "
        "`composite_tensor`, or `name` for a dense tensor."
    )


def get_element_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor or Operation `tensor_info` names (signatures name the init
    and train ops by operation name)."""
    graph = graph or ops.get_default_graph()
    return graph.as_graph_element(_scoped(tensor_info.name, import_scope))
