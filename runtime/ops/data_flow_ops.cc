// TensorArray (V3) and Stack (V2) ops: per-step containers of tensors named
// by DT_RESOURCE handles, as TensorFlow 1.x's tf.TensorArray and the
// gradient of tf.while_loop use them. Names, inputs, outputs, attrs and
// defaults are TensorFlow's (core/ops/data_flow_ops.cc); the kernels are in
// runtime/kernels/tensor_array_ops.cc and stack_ops.cc.
//
// Shapes: as in TensorFlow a TensorArray handle is statically a vector of
// two (the V1 string handle's shape, kept for graphs written by TensorFlow)
// while at run time it is a scalar resource; a Stack handle is a scalar.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

PartialTensorShape Scalar() { return PartialTensorShape::FromShape(TensorShape()); }
PartialTensorShape HandleVector() { return PartialTensorShape::FromShape(TensorShape({2})); }

// Input i must be a TensorArray handle: a vector of two when known.
Status CheckTensorArrayHandle(InferenceContext* c, int i) {
  PartialTensorShape handle;
  TW_RETURN_IF_ERROR(c->WithRank(i, 1, &handle));
  if (handle.dim_size(0) >= 0 && handle.dim_size(0) != 2) {
    return c->Error("Input ", i, " must be a TensorArray handle of shape [2] but has shape ",
                    handle.DebugString());
  }
  return Status::OK();
}

Status CheckScalar(InferenceContext* c, int i) {
  PartialTensorShape scalar;
  return c->WithRank(i, 0, &scalar);
}

Status CheckVector(InferenceContext* c, int i) {
  PartialTensorShape vector;
  return c->WithRank(i, 1, &vector);
}

Status TensorArrayShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  c->set_output(0, HandleVector());
  c->set_output(1, Scalar());
  return Status::OK();
}

Status TensorArrayGradShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  if (c->num_inputs() > 2) TW_RETURN_IF_ERROR(CheckVector(c, 2));
  c->set_output(0, HandleVector());
  c->set_output(1, Scalar());
  return Status::OK();
}

Status TensorArrayWriteShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  TW_RETURN_IF_ERROR(CheckScalar(c, 3));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status TensorArrayReadShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  TW_RETURN_IF_ERROR(CheckScalar(c, 2));
  c->set_output(0, PartialTensorShape());
  return Status::OK();
}

// [?] + element_shape (unknown when element_shape's rank is): TensorFlow
// leaves the first dimension unknown even for constant indices.
Status TensorArrayGatherShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  PartialTensorShape indices;
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &indices));
  TW_RETURN_IF_ERROR(CheckScalar(c, 2));
  PartialTensorShape element_shape;
  TW_RETURN_IF_ERROR(c->GetAttr("element_shape", &element_shape));
  if (element_shape.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  std::vector<int64_t> dims = {-1};
  dims.insert(dims.end(), element_shape.dim_sizes().begin(), element_shape.dim_sizes().end());
  PartialTensorShape value;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &value));
  c->set_output(0, value);
  return Status::OK();
}

Status TensorArrayScatterShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckVector(c, 1));
  PartialTensorShape value;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(2, 1, &value));
  TW_RETURN_IF_ERROR(CheckScalar(c, 3));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status TensorArrayConcatShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  c->set_output(0, PartialTensorShape());
  c->set_output(1, PartialTensorShape::UnknownDims(1));
  return Status::OK();
}

Status TensorArraySplitShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  PartialTensorShape value;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1, &value));
  TW_RETURN_IF_ERROR(CheckVector(c, 2));
  TW_RETURN_IF_ERROR(CheckScalar(c, 3));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status TensorArraySizeShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckTensorArrayHandle(c, 0));
  TW_RETURN_IF_ERROR(CheckScalar(c, 1));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status TensorArrayCloseShape(InferenceContext* c) { return CheckTensorArrayHandle(c, 0); }

Status StackShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckScalar(c, 0));
  c->set_output(0, Scalar());
  return Status::OK();
}

Status StackPushShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  return Status::OK();
}

}  // namespace

REGISTER_OP("TensorArrayV3")
    .Input("size: int32")
    .Output("handle: resource")
    .Output("flow: float")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .Attr("dynamic_size: bool = false")
    .Attr("clear_after_read: bool = true")
    .Attr("identical_element_shapes: bool = false")
    .Attr("tensor_array_name: string = ''")
    .SetShapeFn(TensorArrayShape)
    .SetIsStateful()
    .Doc(
        "An array of `size` tensors of type dtype living for the step; flow orders the ops "
        "that use it.");

REGISTER_OP("TensorArrayGradV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("grad_handle: resource")
    .Output("flow_out: float")
    .Attr("source: string")
    .SetShapeFn(TensorArrayGradShape)
    .SetIsStateful()
    .Doc(
        "The gradient TensorArray of handle for `source` (made on first use): same size and "
        "dtype; writes to one index add up.");

REGISTER_OP("TensorArrayGradWithShape")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Input("shape_to_prepend: int32")
    .Output("grad_handle: resource")
    .Output("flow_out: float")
    .Attr("source: string")
    .SetShapeFn(TensorArrayGradShape)
    .SetIsStateful()
    .Doc(
        "TensorArrayGradV3 whose element shapes are shape_to_prepend followed by the forward "
        "array's.");

REGISTER_OP("TensorArrayWriteV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetShapeFn(TensorArrayWriteShape)
    .SetIsStateful()
    .Doc("Writes value at index (once; a gradient array adds to what is there).");

REGISTER_OP("TensorArrayReadV3")
    .Input("handle: resource")
    .Input("index: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(TensorArrayReadShape)
    .SetIsStateful()
    .Doc("The element at index.");

REGISTER_OP("TensorArrayGatherV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Attr("dtype: type")
    .Attr("element_shape: shape = { unknown_rank: true }")
    .SetShapeFn(TensorArrayGatherShape)
    .SetIsStateful()
    .Doc("The elements at indices, stacked along a new first dimension.");

REGISTER_OP("TensorArrayScatterV3")
    .Input("handle: resource")
    .Input("indices: int32")
    .Input("value: T")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetShapeFn(TensorArrayScatterShape)
    .SetIsStateful()
    .Doc("Writes value[i] at indices[i] for every i.");

REGISTER_OP("TensorArrayConcatV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("value: dtype")
    .Output("lengths: int64")
    .Attr("dtype: type")
    .Attr("element_shape_except0: shape = { unknown_rank: true }")
    .SetShapeFn(TensorArrayConcatShape)
    .SetIsStateful()
    .Doc("Every element concatenated along dimension 0, and each element's length there.");

REGISTER_OP("TensorArraySplitV3")
    .Input("handle: resource")
    .Input("value: T")
    .Input("lengths: int64")
    .Input("flow_in: float")
    .Output("flow_out: float")
    .Attr("T: type")
    .SetShapeFn(TensorArraySplitShape)
    .SetIsStateful()
    .Doc("Splits value along dimension 0 into pieces of the given lengths, one per element.");

REGISTER_OP("TensorArraySizeV3")
    .Input("handle: resource")
    .Input("flow_in: float")
    .Output("size: int32")
    .SetShapeFn(TensorArraySizeShape)
    .SetIsStateful()
    .Doc("The current number of elements.");

REGISTER_OP("TensorArrayCloseV3")
    .Input("handle: resource")
    .SetShapeFn(TensorArrayCloseShape)
    .SetIsStateful()
    .Doc("Frees the elements; later use of the array is an error.");

REGISTER_OP("StackV2")
    .Input("max_size: int32")
    .Output("handle: resource")
    .Attr("elem_type: type")
    .Attr("stack_name: string = ''")
    .SetShapeFn(StackShape)
    .SetIsStateful()
    .Doc("A stack of at most max_size tensors (no limit when negative) living for the step.");

REGISTER_OP("StackPushV2")
    .Input("handle: resource")
    .Input("elem: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("swap_memory: bool = false")
    .SetShapeFn(StackPushShape)
    .SetIsStateful()
    .Doc("Pushes elem and outputs it.");

REGISTER_OP("StackPopV2")
    .Input("handle: resource")
    .Output("elem: elem_type")
    .Attr("elem_type: type")
    .SetShapeFn(shape_fns::UnknownShape)
    .SetIsStateful()
    .Doc("Pops the top element.");

REGISTER_OP("StackCloseV2")
    .Input("handle: resource")
    .SetShapeFn(shape_fns::UnknownShape)
    .SetIsStateful()
    .Doc("Frees the stack; later use of it is an error.");

}  // namespace tensorweave
