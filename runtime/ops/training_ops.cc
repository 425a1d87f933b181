// Optimizer update ops (TensorFlow 1.x's Apply* family). Each takes the
// variable and its slot variables by reference, updates them in place and
// outputs the variable's reference. Each ResourceApply* twin takes them as
// resource handles (resource variables) and outputs nothing. Input order,
// attr names and defaults are TensorFlow's, so GraphDefs written by
// TensorFlow import unchanged.
#include <initializer_list>

#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// The variable (input 0), its slots and the gradient must all have one
// shape, which the output takes; hyperparameters must be scalars. Known
// mismatches fail when the node is built, not only on the first step.
Status ApplyShape(InferenceContext* c, std::initializer_list<int> same_as_var,
                  std::initializer_list<int> scalars) {
  PartialTensorShape merged = c->input(0);
  for (int i : same_as_var) {
    PartialTensorShape next;
    if (!merged.MergeWith(c->input(i), &next).ok()) {
      return c->Error("Shapes of var and ", c->op_def().inputs[i].name,
                      " must match: ", c->input(0).DebugString(), " vs. ",
                      c->input(i).DebugString());
    }
    merged = next;
  }
  for (int i : scalars) {
    PartialTensorShape unused;
    if (!c->WithRank(i, 0, &unused).ok()) {
      return c->Error(c->op_def().inputs[i].name, " must be a scalar, got shape ",
                      c->input(i).DebugString());
    }
  }
  c->set_output(0, merged);
  return Status::OK();
}

// The ResourceApply* ops: handles (inputs [0, num_handles)) are scalars,
// and so are the hyperparameters. The variables' shapes are not known
// from their handles, so the gradient's is checked when the op runs.
Status ResourceApplyShape(InferenceContext* c, int num_handles,
                          std::initializer_list<int> scalars) {
  PartialTensorShape unused;
  for (int i = 0; i < num_handles; ++i) {
    if (!c->WithRank(i, 0, &unused).ok()) {
      return c->Error(c->op_def().inputs[i].name, " must be a scalar resource handle, got shape ",
                      c->input(i).DebugString());
    }
  }
  for (int i : scalars) {
    if (!c->WithRank(i, 0, &unused).ok()) {
      return c->Error(c->op_def().inputs[i].name, " must be a scalar, got shape ",
                      c->input(i).DebugString());
    }
  }
  return Status::OK();
}

// ResourceSparseApply*: as ResourceApplyShape, and indices is a vector.
Status ResourceSparseApplyShape(InferenceContext* c, int num_handles, int indices,
                                std::initializer_list<int> scalars) {
  TW_RETURN_IF_ERROR(ResourceApplyShape(c, num_handles, scalars));
  PartialTensorShape unused;
  if (!c->WithRank(indices, 1, &unused).ok()) {
    return c->Error("indices must be a vector, got shape ", c->input(indices).DebugString());
  }
  return Status::OK();
}

}  // namespace

REGISTER_OP("ApplyGradientDescent")
    .Input("var: Ref(T)")
    .Input("alpha: T")
    .Input("delta: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) { return ApplyShape(c, {2}, {1}); })
    .SetIsStateful()
    .Doc("var -= alpha * delta.");

REGISTER_OP("ApplyMomentum")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ApplyShape(c, {1, 3}, {2, 4});
    })
    .SetIsStateful()
    .Doc(
        "accum = accum * momentum + grad; var -= lr * accum (Nesterov: "
        "var -= lr * (grad + momentum * accum)).");

REGISTER_OP("ApplyAdam")
    .Input("var: Ref(T)")
    .Input("m: Ref(T)")
    .Input("v: Ref(T)")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ApplyShape(c, {1, 2, 9}, {3, 4, 5, 6, 7, 8});
    })
    .SetIsStateful()
    .Doc(
        "Adam: m and v track the gradient's first and second moments; var moves by "
        "lr * sqrt(1 - beta2_power) / (1 - beta1_power) * m / (sqrt(v) + epsilon).");

REGISTER_OP("ApplyRMSProp")
    .Input("var: Ref(T)")
    .Input("ms: Ref(T)")
    .Input("mom: Ref(T)")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ApplyShape(c, {1, 2, 7}, {3, 4, 5, 6});
    })
    .SetIsStateful()
    .Doc(
        "ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / "
        "sqrt(ms + epsilon); var -= mom.");

REGISTER_OP("ApplyCenteredRMSProp")
    .Input("var: Ref(T)")
    .Input("mg: Ref(T)")
    .Input("ms: Ref(T)")
    .Input("mom: Ref(T)")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ApplyShape(c, {1, 2, 3, 8}, {4, 5, 6, 7});
    })
    .SetIsStateful()
    .Doc(
        "RMSProp normalized by the centered second moment ms - mg^2, where mg tracks the "
        "gradient's mean.");

REGISTER_OP("ApplyAdagrad")
    .Input("var: Ref(T)")
    .Input("accum: Ref(T)")
    .Input("lr: T")
    .Input("grad: T")
    .Output("out: Ref(T)")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn([](InferenceContext* c) {
      return ApplyShape(c, {1, 3}, {2});
    })
    .SetIsStateful()
    .Doc("accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum).");

REGISTER_OP("ResourceApplyGradientDescent")
    .Input("var: resource")
    .Input("alpha: T")
    .Input("delta: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) { return ResourceApplyShape(c, 1, {1}); })
    .SetIsStateful()
    .Doc("ApplyGradientDescent on a resource variable.");

REGISTER_OP("ResourceApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("momentum: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceApplyShape(c, 2, {2, 4});
    })
    .SetIsStateful()
    .Doc("ApplyMomentum on resource variables.");

REGISTER_OP("ResourceApplyAdam")
    .Input("var: resource")
    .Input("m: resource")
    .Input("v: resource")
    .Input("beta1_power: T")
    .Input("beta2_power: T")
    .Input("lr: T")
    .Input("beta1: T")
    .Input("beta2: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceApplyShape(c, 3, {3, 4, 5, 6, 7, 8});
    })
    .SetIsStateful()
    .Doc("ApplyAdam on resource variables.");

REGISTER_OP("ResourceApplyRMSProp")
    .Input("var: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceApplyShape(c, 3, {3, 4, 5, 6});
    })
    .SetIsStateful()
    .Doc("ApplyRMSProp on resource variables.");

REGISTER_OP("ResourceApplyCenteredRMSProp")
    .Input("var: resource")
    .Input("mg: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceApplyShape(c, 4, {4, 5, 6, 7});
    })
    .SetIsStateful()
    .Doc("ApplyCenteredRMSProp on resource variables.");

REGISTER_OP("ResourceApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn([](InferenceContext* c) { return ResourceApplyShape(c, 2, {2}); })
    .SetIsStateful()
    .Doc("ApplyAdagrad on resource variables.");

REGISTER_OP("ResourceSparseApplyMomentum")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Input("momentum: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("use_nesterov: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceSparseApplyShape(c, 2, 4, {2, 5});
    })
    .SetIsStateful()
    .Doc("ApplyMomentum on the rows `indices` of resource variables; grad holds those rows.");

REGISTER_OP("ResourceSparseApplyAdagrad")
    .Input("var: resource")
    .Input("accum: resource")
    .Input("lr: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .Attr("use_locking: bool = false")
    .Attr("update_slots: bool = true")
    .SetShapeFn([](InferenceContext* c) { return ResourceSparseApplyShape(c, 2, 4, {2}); })
    .SetIsStateful()
    .Doc("ApplyAdagrad on the rows `indices` of resource variables; grad holds those rows.");

REGISTER_OP("ResourceSparseApplyRMSProp")
    .Input("var: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceSparseApplyShape(c, 3, 8, {3, 4, 5, 6});
    })
    .SetIsStateful()
    .Doc("ApplyRMSProp on the rows `indices` of resource variables; grad holds those rows.");

REGISTER_OP("ResourceSparseApplyCenteredRMSProp")
    .Input("var: resource")
    .Input("mg: resource")
    .Input("ms: resource")
    .Input("mom: resource")
    .Input("lr: T")
    .Input("rho: T")
    .Input("momentum: T")
    .Input("epsilon: T")
    .Input("grad: T")
    .Input("indices: Tindices")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .Attr("Tindices: {" TW_INDEX_TYPES "}")
    .Attr("use_locking: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      return ResourceSparseApplyShape(c, 4, 9, {4, 5, 6, 7});
    })
    .SetIsStateful()
    .Doc(
        "ApplyCenteredRMSProp on the rows `indices` of resource variables; grad holds those rows.");

}  // namespace tensorweave
