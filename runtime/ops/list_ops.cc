// TensorList ops: lists of tensors held in scalar DT_VARIANT tensors, as
// TensorFlow 2.x's while loops and Keras' RNN layers use them. Names,
// inputs, outputs, attrs and defaults are TensorFlow's (core/ops/list_ops.cc);
// the kernels are in runtime/kernels/list_kernels.cc.
//
// Shapes: a list handle is a scalar. TensorFlow also tracks the element
// dtype and shape of a handle (handle data); we do not, so an element's
// static shape comes from the op's element_shape input when it is a
// constant and is unknown otherwise.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/framework/tensor_list.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

PartialTensorShape Scalar() { return PartialTensorShape::FromShape(TensorShape()); }

Status CheckScalar(InferenceContext* c, int i) {
  PartialTensorShape scalar;
  return c->WithRank(i, 0, &scalar);
}

// The element shape input i means when it is a constant, else unknown.
Status ConstantElementShape(InferenceContext* c, int i, PartialTensorShape* out) {
  *out = PartialTensorShape();
  const Tensor* value = c->input_tensor(i);
  if (value == nullptr) return Status::OK();
  Status status = PartialShapeFromShapeTensor(*value, out);
  if (!status.ok()) return c->Error(status.message());
  return Status::OK();
}

// [leading] + element (unknown when the element's rank is).
PartialTensorShape Prepend(int64_t leading, const PartialTensorShape& element) {
  if (element.unknown_rank()) return PartialTensorShape();
  std::vector<int64_t> dims = {leading};
  dims.insert(dims.end(), element.dim_sizes().begin(), element.dim_sizes().end());
  PartialTensorShape out;
  if (!PartialTensorShape::Build(dims, &out).ok()) return PartialTensorShape();
  return out;
}

Status NewListShape(InferenceContext* c) {
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 0, &element));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status FromTensorShape(InferenceContext* c) {
  PartialTensorShape tensor;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &tensor));
  c->set_output(0, Scalar());
  return Status::OK();
}

// Ops taking (handle, ...) and returning a new handle.
Status HandleOutShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status ScalarOutShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status ElementShapeShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  c->set_output(0, PartialTensorShape());
  return Status::OK();
}

Status GetItemShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 2, &element));
  c->set_output(0, element);
  return Status::OK();
}

Status SetItemShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status StackShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 1, &element));
  int64_t num_elements = -1;
  TW_RETURN_IF_ERROR(c->GetAttr("num_elements", &num_elements));
  c->set_output(0, Prepend(num_elements < 0 ? -1 : num_elements, element));
  return Status::OK();
}

Status PopBackShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 1, &element));
  c->set_output(0, Scalar());
  c->set_output(1, element);
  return Status::OK();
}

Status ConcatShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 1, &element));
  PartialTensorShape concat;
  if (!element.unknown_rank() && element.dims() > 0) {
    std::vector<int64_t> dims = element.dim_sizes();
    dims[0] = -1;
    TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &concat));
  }
  c->set_output(0, concat);
  c->set_output(1, PartialTensorShape::UnknownDims(1));
  return Status::OK();
}

Status GatherShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  PartialTensorShape indices;
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &indices));
  PartialTensorShape element;
  TW_RETURN_IF_ERROR(ConstantElementShape(c, 2, &element));
  c->set_output(0, Prepend(indices.dim_size(0), element));
  return Status::OK();
}

Status ScatterIntoShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  PartialTensorShape tensor;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1, &tensor));
  PartialTensorShape indices;
  TW_RETURN_IF_ERROR(c->WithRank(2, 1, &indices));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status SplitShape(InferenceContext* c) {
  PartialTensorShape tensor;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &tensor));
  PartialTensorShape lengths;
  TW_RETURN_IF_ERROR(c->WithRank(2, 1, &lengths));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status ResizeShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  c->set_output(0, Scalar());
  return Status::OK();
}

}  // namespace

REGISTER_OP("EmptyTensorList")
    .Input("element_shape: shape_type")
    .Input("max_num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(NewListShape)
    .Doc("An empty list of element_dtype tensors; max_num_elements -1 is unbounded.");

REGISTER_OP("TensorListReserve")
    .Input("element_shape: shape_type")
    .Input("num_elements: int32")
    .Output("handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(NewListShape)
    .Doc("A list of num_elements elements, none set yet (they read as zeros).");

REGISTER_OP("TensorListFromTensor")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(FromTensorShape)
    .Doc("A list of the slices of tensor along its first dimension.");

REGISTER_OP("TensorListGetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("element_shape: Tshape")
    .Output("item: element_dtype")
    .Attr("element_dtype: type")
    .Attr("Tshape: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(GetItemShape)
    .Doc("The element at index (zeros of element_shape if never set).");

REGISTER_OP("TensorListSetItem")
    .Input("input_handle: variant")
    .Input("index: int32")
    .Input("item: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("resize_if_index_out_of_bounds: bool = false")
    .SetShapeFn(SetItemShape)
    .Doc("The list with item at index; the input list is unchanged.");

REGISTER_OP("TensorListStack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .Attr("num_elements: int = -1")
    .SetShapeFn(StackShape)
    .Doc("The elements stacked along a new first dimension.");

REGISTER_OP("TensorListLength")
    .Input("input_handle: variant")
    .Output("length: int32")
    .SetShapeFn(ScalarOutShape)
    .Doc("The number of elements.");

REGISTER_OP("TensorListElementShape")
    .Input("input_handle: variant")
    .Output("element_shape: shape_type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(ElementShapeShape)
    .Doc("The list's element shape: -1 for an unknown rank, else its dims (-1 unknown).");

REGISTER_OP("TensorListPushBack")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .SetShapeFn(HandleOutShape)
    .Doc("The list with tensor appended.");

REGISTER_OP("TensorListPopBack")
    .Input("input_handle: variant")
    .Input("element_shape: int32")
    .Output("output_handle: variant")
    .Output("tensor: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(PopBackShape)
    .Doc("The list without its last element, and that element.");

REGISTER_OP("TensorListConcatV2")
    .Input("input_handle: variant")
    .Input("element_shape: shape_type")
    .Input("leading_dims: int64")
    .Output("tensor: element_dtype")
    .Output("lengths: int64")
    .Attr("element_dtype: type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(ConcatShape)
    .Doc("The elements concatenated along their first dimension, and each one's length there.");

REGISTER_OP("TensorListGather")
    .Input("input_handle: variant")
    .Input("indices: int32")
    .Input("element_shape: int32")
    .Output("values: element_dtype")
    .Attr("element_dtype: type")
    .SetShapeFn(GatherShape)
    .Doc("The elements at indices, stacked.");

REGISTER_OP("TensorListScatterIntoExistingList")
    .Input("input_handle: variant")
    .Input("tensor: element_dtype")
    .Input("indices: int32")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .SetShapeFn(ScatterIntoShape)
    .Doc("The list with tensor[i] at indices[i] for every i.");

REGISTER_OP("TensorListSplit")
    .Input("tensor: element_dtype")
    .Input("element_shape: shape_type")
    .Input("lengths: int64")
    .Output("output_handle: variant")
    .Attr("element_dtype: type")
    .Attr("shape_type: {" TW_INDEX_TYPES "}")
    .SetShapeFn(SplitShape)
    .Doc("A list of the pieces of tensor along dimension 0 of the given lengths.");

REGISTER_OP("TensorListResize")
    .Input("input_handle: variant")
    .Input("size: int32")
    .Output("output_handle: variant")
    .SetShapeFn(ResizeShape)
    .Doc("The list cut to size elements, or grown with unset ones.");

}  // namespace tensorweave
