// Resource variable ops (TensorFlow 2.x's variables, and TF1 programs with
// use_resource=True): VarHandleOp outputs a DT_RESOURCE handle naming a
// variable in the device's ResourceMgr; the other ops take that handle and
// read, assign, update, gather from, inspect or destroy the variable. None
// of them passes references: a read outputs a value (see
// runtime/kernels/resource_variable.h for the copy-on-write rule that keeps
// a read value from changing later). Names, inputs, attrs and defaults are
// TensorFlow's, so GraphDefs TensorFlow writes import unchanged.
//
// Handles carry no shape information here (TensorFlow keeps the declared
// dtype and shape beside the handle as "handle data"), so the outputs of
// ReadVariableOp and ResourceGather have unknown shapes in the graph; the
// Python front end states the shape it knows on the read tensors.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// Input 0 is a handle, which is a scalar.
Status CheckHandle(InferenceContext* c) {
  PartialTensorShape unused;
  if (!c->WithRank(0, 0, &unused).ok()) {
    return c->Error("The resource handle must be a scalar, got shape ", c->input(0).DebugString());
  }
  return Status::OK();
}

Status HandleOnlyShape(InferenceContext* c) { return CheckHandle(c); }

Status ReadShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckHandle(c));
  c->set_output(0, PartialTensorShape());
  return Status::OK();
}

Status VariableShapeShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckHandle(c));
  c->set_output(0, PartialTensorShape::UnknownDims(1));
  return Status::OK();
}

// The output keeps the first batch_dims dims of indices, then indices'
// other dims, then the variable's dims after the gathered one; without the
// variable's shape only the rank's lower bound is known, so it is unknown.
Status ResourceGatherShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckHandle(c));
  c->set_output(0, PartialTensorShape());
  return Status::OK();
}

}  // namespace

REGISTER_OP("VarHandleOp")
    .Output("resource: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("debug_name: string = ''")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .Attr("allowed_devices: list(string) = []")
    .SetShapeFn(shape_fns::ScalarShape)
    .SetIsStateful()
    .Doc(
        "A handle to the variable named shared_name in container (the device's default one, "
        "'localhost', when empty). The variable exists from its first assignment on.");

REGISTER_OP("ReadVariableOp")
    .Input("resource: resource")
    .Output("value: dtype")
    .Attr("dtype: type")
    .SetShapeFn(ReadShape)
    .SetIsStateful()
    .Doc("The variable's current value; FAILED_PRECONDITION when it is not initialized.");

REGISTER_OP("AssignVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: type")
    .Attr("validate_shape: bool = false")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc(
        "Sets the variable to value, creating it when absent. With validate_shape an initialized "
        "variable only takes values of its own shape.");

REGISTER_OP("AssignAddVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {" TW_NUMBER_TYPES "}")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc("variable += value (same shape).");

REGISTER_OP("AssignSubVariableOp")
    .Input("resource: resource")
    .Input("value: dtype")
    .Attr("dtype: {" TW_NUMBER_TYPES "}")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc("variable -= value (same shape).");

REGISTER_OP("VarIsInitializedOp")
    .Input("resource: resource")
    .Output("is_initialized: bool")
    .SetShapeFn(shape_fns::ScalarShape)
    .SetIsStateful()
    .Doc("Whether the variable exists and holds a value.");

REGISTER_OP("DestroyResourceOp")
    .Input("resource: resource")
    .Attr("ignore_lookup_error: bool = true")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc("Deletes the resource; NOT_FOUND when absent unless ignore_lookup_error.");

REGISTER_OP("DisableCopyOnRead")
    .Input("resource: resource")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc(
        "Turns off a variable's copy-on-read mode; TensorFlow 2.x savers emit it before reading "
        "a variable to save. Reads here never copy, so it only checks the variable exists.");

REGISTER_OP("VariableShape")
    .Input("input: resource")
    .Output("output: out_type")
    .Attr("out_type: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(VariableShapeShape)
    .SetIsStateful()
    .Doc("The shape of the variable's value.");

REGISTER_OP("ResourceGather")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Output("output: dtype")
    .Attr("batch_dims: int = 0")
    .Attr("validate_indices: bool = true")
    .Attr("dtype: type")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .SetShapeFn(ResourceGatherShape)
    .SetIsStateful()
    .Doc(
        "Slices of the variable along dimension batch_dims at indices (per batch when batch_dims "
        "> 0); indices out of range are an error.");

REGISTER_OP("ResourceScatterAdd")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Input("updates: dtype")
    .Attr("dtype: {" TW_NUMBER_TYPES "}")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc("variable[indices, ...] += updates; repeated indices add up.");

REGISTER_OP("ResourceScatterUpdate")
    .Input("resource: resource")
    .Input("indices: Tindices")
    .Input("updates: dtype")
    .Attr("dtype: type")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .SetShapeFn(HandleOnlyShape)
    .SetIsStateful()
    .Doc("variable[indices, ...] = updates.");

}  // namespace tensorweave
