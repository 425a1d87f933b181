"""TensorFlow's TensorList ops (gen_list_ops) as thin wrappers, and their
gradients. A list is a scalar `tf.variant` tensor; every op that changes a
list returns a new one and leaves its input as it was. TF 1.x programs never
build these (tf.TensorArray is the TensorArrayV3 family here); they come in
GraphDefs TensorFlow 2.x wrote (Keras RNN layers, while loops over lists),
and the wrappers exist for those graphs' gradients and for tests.

    handle = tensor_list_reserve([2], 3, tf.float32)
    handle = tensor_list_set_item(handle, 0, tf.ones([2]))
    stacked = tensor_list_stack(handle, tf.float32, element_shape=[2])  # [3, 2], zeros unset

An element shape is given as TensorFlow's shape tensors are: None (unknown
rank, -1), a list with None or -1 for unknown dimensions, or a tensor.
"""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import array_ops
from tensorweave.ops.op_builder import make_op


def _shape_tensor(shape, dtype=dtypes.int32):
    """An element shape as a shape tensor (-1: unknown rank or dimension)."""
    if shape is None:
        return ops.convert_to_tensor(-1, dtype=dtype, name="element_shape")
    if isinstance(shape, ops.Tensor):
        return shape
    dims = [-1 if d is None else int(d) for d in shape]
    return ops.convert_to_tensor(dims, dtype=dtype, name="element_shape")


def _create(op_type, inputs, attrs, scope):
    """All outputs of a new op (make_op returns only the first)."""
    flat = [t for t in inputs if isinstance(t, ops.Tensor)]
    graph = ops._graph_of(flat) or ops.get_default_graph()
    return graph.create_op(op_type, inputs, attrs=attrs, name=scope).outputs


def _dtype(value):
    return dtypes.as_dtype(value).base_dtype


def empty_tensor_list(element_shape, element_dtype, max_num_elements=-1, name=None):
    """A list with no elements; `max_num_elements` -1 means unbounded."""
    with ops.name_scope(name, "EmptyTensorList") as scope:
        shape = _shape_tensor(element_shape)
        limit = ops.convert_to_tensor(max_num_elements, dtype=dtypes.int32, name="max_num_elements")
        attrs = {"element_dtype": _dtype(element_dtype), "shape_type": shape.dtype.base_dtype}
        return make_op("EmptyTensorList", [shape, limit], attrs, scope)


def tensor_list_reserve(element_shape, num_elements, element_dtype, name=None):
    """A list of `num_elements` elements none of which is set (they read as zeros)."""
    with ops.name_scope(name, "TensorListReserve") as scope:
        shape = _shape_tensor(element_shape)
        count = ops.convert_to_tensor(num_elements, dtype=dtypes.int32, name="num_elements")
        attrs = {"element_dtype": _dtype(element_dtype), "shape_type": shape.dtype.base_dtype}
        return make_op("TensorListReserve", [shape, count], attrs, scope)


def tensor_list_from_tensor(tensor, element_shape, name=None):
    """A list of the slices of `tensor` along its first dimension."""
    with ops.name_scope(name, "TensorListFromTensor", [tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        shape = _shape_tensor(element_shape)
        attrs = {"element_dtype": tensor.dtype.base_dtype, "shape_type": shape.dtype.base_dtype}
        return make_op("TensorListFromTensor", [tensor, shape], attrs, scope)


def tensor_list_get_item(input_handle, index, element_dtype, element_shape=None, name=None):
    """The element at `index` (zeros of the element shape if never set)."""
    with ops.name_scope(name, "TensorListGetItem", [input_handle, index]) as scope:
        index = ops.convert_to_tensor(index, dtype=dtypes.int32, name="index")
        shape = _shape_tensor(element_shape)
        attrs = {"element_dtype": _dtype(element_dtype), "Tshape": shape.dtype.base_dtype}
        return make_op("TensorListGetItem", [input_handle, index, shape], attrs, scope)


def tensor_list_set_item(input_handle, index, item, resize_if_index_out_of_bounds=False, name=None):
    """The list with `item` at `index`."""
    with ops.name_scope(name, "TensorListSetItem", [input_handle, index, item]) as scope:
        index = ops.convert_to_tensor(index, dtype=dtypes.int32, name="index")
        item = ops.convert_to_tensor(item, name="item")
        attrs = {
            "element_dtype": item.dtype.base_dtype,
            "resize_if_index_out_of_bounds": bool(resize_if_index_out_of_bounds),
        }
        return make_op("TensorListSetItem", [input_handle, index, item], attrs, scope)


def tensor_list_stack(input_handle, element_dtype, num_elements=-1, element_shape=None, name=None):
    """The elements stacked along a new first dimension."""
    with ops.name_scope(name, "TensorListStack", [input_handle]) as scope:
        shape = _shape_tensor(element_shape)
        attrs = {"element_dtype": _dtype(element_dtype), "num_elements": int(num_elements)}
        return make_op("TensorListStack", [input_handle, shape], attrs, scope)


def tensor_list_length(input_handle, name=None):
    """The number of elements (int32)."""
    with ops.name_scope(name, "TensorListLength", [input_handle]) as scope:
        return make_op("TensorListLength", [input_handle], {}, scope)


def tensor_list_element_shape(input_handle, shape_type=dtypes.int32, name=None):
    """The list's element shape as a shape tensor (-1 for an unknown rank)."""
    with ops.name_scope(name, "TensorListElementShape", [input_handle]) as scope:
        attrs = {"shape_type": _dtype(shape_type)}
        return make_op("TensorListElementShape", [input_handle], attrs, scope)


def tensor_list_push_back(input_handle, tensor, name=None):
    """The list with `tensor` appended."""
    with ops.name_scope(name, "TensorListPushBack", [input_handle, tensor]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        attrs = {"element_dtype": tensor.dtype.base_dtype}
        return make_op("TensorListPushBack", [input_handle, tensor], attrs, scope)


def tensor_list_pop_back(input_handle, element_dtype, element_shape=None, name=None):
    """(the list without its last element, that element)."""
    with ops.name_scope(name, "TensorListPopBack", [input_handle]) as scope:
        shape = _shape_tensor(element_shape)
        attrs = {"element_dtype": _dtype(element_dtype)}
        handle, tensor = _create("TensorListPopBack", [input_handle, shape], attrs, scope)
        return handle, tensor


def tensor_list_concat_v2(input_handle, element_dtype, element_shape, leading_dims, name=None):
    """(the elements concatenated along dimension 0, each one's length there)."""
    with ops.name_scope(name, "TensorListConcatV2", [input_handle]) as scope:
        shape = _shape_tensor(element_shape)
        leading = ops.convert_to_tensor(leading_dims, dtype=dtypes.int64, name="leading_dims")
        attrs = {"element_dtype": _dtype(element_dtype), "shape_type": shape.dtype.base_dtype}
        tensor, lengths = _create(
            "TensorListConcatV2", [input_handle, shape, leading], attrs, scope
        )
        return tensor, lengths


def tensor_list_gather(input_handle, indices, element_dtype, element_shape=None, name=None):
    """The elements at `indices`, stacked."""
    with ops.name_scope(name, "TensorListGather", [input_handle, indices]) as scope:
        indices = ops.convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
        shape = _shape_tensor(element_shape)
        attrs = {"element_dtype": _dtype(element_dtype)}
        return make_op("TensorListGather", [input_handle, indices, shape], attrs, scope)


def tensor_list_scatter_into_existing_list(input_handle, tensor, indices, name=None):
    """The list with tensor[i] at indices[i] for every i."""
    with ops.name_scope(
        name, "TensorListScatterIntoExistingList", [input_handle, tensor, indices]
    ) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        indices = ops.convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
        attrs = {"element_dtype": tensor.dtype.base_dtype}
        return make_op(
            "TensorListScatterIntoExistingList", [input_handle, tensor, indices], attrs, scope
        )


def tensor_list_split(tensor, element_shape, lengths, name=None):
    """A list of the pieces of `tensor` along dimension 0 of the given lengths."""
    with ops.name_scope(name, "TensorListSplit", [tensor, lengths]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        shape = _shape_tensor(element_shape)
        lengths = ops.convert_to_tensor(lengths, dtype=dtypes.int64, name="lengths")
        attrs = {"element_dtype": tensor.dtype.base_dtype, "shape_type": shape.dtype.base_dtype}
        return make_op("TensorListSplit", [tensor, shape, lengths], attrs, scope)


def tensor_list_resize(input_handle, size, name=None):
    """The list cut to `size` elements, or grown with unset ones."""
    with ops.name_scope(name, "TensorListResize", [input_handle, size]) as scope:
        size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
        return make_op("TensorListResize", [input_handle, size], {}, scope)


# Ops whose variant output is (a version of) their first input's list:
# looking through them finds the op that says what the list holds.
_VARIANT_FORWARDING_OP_TYPES = frozenset(
    [
        "Identity",
        "Snapshot",
        "StopGradient",
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "Switch",
        "RefSwitch",
        "Merge",
        "RefMerge",
        "NextIteration",
        "RefNextIteration",
        "ZerosLike",
        "AddN",
    ]
)


def element_dtype_of(tensor):
    """The element dtype of the TensorList the variant `tensor` holds when the
    graph says it (the element_dtype of the list op that made it, looking
    through the ops that pass a list on), else None. TensorFlow keeps the
    same fact in the tensor's handle data (backprop_util._DTypeFromTensor
    reads it to decide whether a list carries gradients)."""
    seen = set()
    op = tensor.op
    while op not in seen:
        seen.add(op)
        if op.type in _VARIANT_FORWARDING_OP_TYPES and op.inputs:
            # A Merge's first input is its loop's Enter (or a cond's side):
            # it carries the same list without going around the loop.
            op = op.inputs[0].op
            continue
        try:
            return dtypes.as_dtype(op.get_attr("element_dtype")).base_dtype
        except (ValueError, KeyError, TypeError):
            return None
    return None


# Gradients, as TensorFlow's list_ops.py defines them: the gradient of a
# list is a list of the elements' gradients, built by the op that undoes
# the forward one. Lists built from nothing have no gradient.

for _op_type in (
    "EmptyTensorList",
    "TensorListReserve",
    "TensorListLength",
    "TensorListElementShape",
):
    NotDifferentiable(_op_type)


def _element_shape_of(tensor):
    """The shape of `tensor` after its first dimension, as a shape tensor."""
    return array_ops.shape(tensor)[1:]


@RegisterGradient("TensorListPushBack")
def _tensor_list_push_back_grad(op, dlist):
    if dlist is None:
        return None, None
    dlist, delement = tensor_list_pop_back(
        dlist, op.get_attr("element_dtype"), element_shape=array_ops.shape(op.inputs[1])
    )
    return dlist, delement


@RegisterGradient("TensorListPopBack")
def _tensor_list_pop_back_grad(op, dlist, delement):
    if dlist is None:
        dlist = empty_tensor_list(
            tensor_list_element_shape(op.outputs[0]), op.get_attr("element_dtype")
        )
    if delement is None:
        delement = array_ops.zeros_like(op.outputs[1])
    return tensor_list_push_back(dlist, delement), None


@RegisterGradient("TensorListStack")
def _tensor_list_stack_grad(op, dtensor):
    return tensor_list_from_tensor(dtensor, element_shape=_element_shape_of(dtensor)), None


@RegisterGradient("TensorListFromTensor")
def _tensor_list_from_tensor_grad(op, dlist):
    if dlist is None:
        return None, None
    tensor = op.inputs[0]
    rows = tensor.shape.dims[0].value if tensor.shape.dims else None
    dtensor = tensor_list_stack(
        dlist,
        tensor.dtype,
        num_elements=-1 if rows is None else rows,
        element_shape=_element_shape_of(tensor),
    )
    return dtensor, None


@RegisterGradient("TensorListGetItem")
def _tensor_list_get_item_grad(op, ditem):
    handle, index = op.inputs[0], op.inputs[1]
    reserved = tensor_list_reserve(
        tensor_list_element_shape(handle), tensor_list_length(handle), ditem.dtype
    )
    return tensor_list_set_item(reserved, index, ditem), None, None


@RegisterGradient("TensorListSetItem")
def _tensor_list_set_item_grad(op, dlist):
    if dlist is None:
        return None, None, None
    handle, index, item = op.inputs
    dlist_rest = tensor_list_set_item(dlist, index, array_ops.zeros_like(item))
    ditem = tensor_list_get_item(dlist, index, item.dtype, element_shape=array_ops.shape(item))
    if op.get_attr("resize_if_index_out_of_bounds"):
        # The set may have grown the list: its input had only the first
        # length(handle) elements.
        dlist_rest = tensor_list_resize(dlist_rest, tensor_list_length(handle))
    return dlist_rest, None, ditem


@RegisterGradient("TensorListGather")
def _tensor_list_gather_grad(op, dtensor):
    handle, indices = op.inputs[0], op.inputs[1]
    reserved = tensor_list_reserve(
        _element_shape_of(dtensor), tensor_list_length(handle), dtensor.dtype
    )
    return tensor_list_scatter_into_existing_list(reserved, dtensor, indices), None, None


@RegisterGradient("TensorListScatterIntoExistingList")
def _tensor_list_scatter_into_existing_list_grad(op, dlist):
    if dlist is None:
        return None, None, None
    tensor, indices = op.inputs[1], op.inputs[2]
    dtensor = tensor_list_gather(
        dlist, indices, tensor.dtype, element_shape=_element_shape_of(tensor)
    )
    zeros = array_ops.zeros_like(tensor)
    return tensor_list_scatter_into_existing_list(dlist, zeros, indices), dtensor, None


@RegisterGradient("TensorListConcatV2")
def _tensor_list_concat_v2_grad(op, dtensor, unused_dlengths):
    dlist = tensor_list_split(dtensor, element_shape=op.inputs[1], lengths=op.outputs[1])
    return dlist, None, None


@RegisterGradient("TensorListSplit")
def _tensor_list_split_grad(op, dlist):
    if dlist is None:
        return None, None, None
    tensor, lengths = op.inputs[0], op.inputs[2]
    element_shape = array_ops.concat([[-1], _element_shape_of(tensor)], 0)
    dtensor, _ = tensor_list_concat_v2(dlist, tensor.dtype, element_shape, leading_dims=lengths)
    return dtensor, None, None


@RegisterGradient("TensorListResize")
def _tensor_list_resize_grad(op, dlist):
    if dlist is None:
        return None, None
    return tensor_list_resize(dlist, tensor_list_length(op.inputs[0])), None
