// TensorFlow 1.x control-flow ops: Switch/Merge route a value to one of two
// branches and back (tf.cond); Enter/Exit/NextIteration/LoopCond build the
// frames of tf.while_loop. The executor gives them their meaning (dead
// tensors, frames, iterations); the kernels only forward values.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

Status SwitchShape(InferenceContext* c) {
  PartialTensorShape pred;
  TW_RETURN_IF_ERROR(c->WithRank(1, 0, &pred));
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return Status::OK();
}

// The shape every input agrees on: a dim where they differ is unknown, and
// differing or unknown ranks make the rank unknown. In a loop the back-edge
// input is not refined yet, so a loop's Merge is usually unknown.
Status MergeShape(InferenceContext* c) {
  PartialTensorShape merged = c->input(0);
  for (int i = 1; i < c->num_inputs() && !merged.unknown_rank(); ++i) {
    const PartialTensorShape& next = c->input(i);
    if (next.unknown_rank() || next.dims() != merged.dims()) {
      merged = PartialTensorShape();
      break;
    }
    std::vector<int64_t> dims = merged.dim_sizes();
    for (int d = 0; d < next.dims(); ++d) {
      if (dims[d] != next.dim_size(d)) dims[d] = -1;
    }
    TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &merged));
  }
  c->set_output(0, merged);
  c->set_output(1, PartialTensorShape::FromShape(TensorShape()));
  return Status::OK();
}

// As TensorFlow: a constant Enter's value is the same in every iteration,
// so it keeps its shape; a loop variable's shape is unknown here, because
// tf.while_loop sets it to the loop variable's shape invariant, which may be
// less specific than the initial value's shape (set_shape only narrows).
Status EnterShape(InferenceContext* c) {
  bool is_constant = false;
  TW_RETURN_IF_ERROR(c->GetAttr("is_constant", &is_constant));
  c->set_output(0, is_constant ? c->input(0) : PartialTensorShape());
  return Status::OK();
}

Status LoopCondShape(InferenceContext* c) {
  PartialTensorShape scalar;
  TW_RETURN_IF_ERROR(c->WithRank(0, 0, &scalar));
  c->set_output(0, scalar);
  return Status::OK();
}

}  // namespace

REGISTER_OP("Switch")
    .Input("data: T")
    .Input("pred: bool")
    .Output("output_false: T")
    .Output("output_true: T")
    .Attr("T: type")
    .SetShapeFn(SwitchShape)
    .Doc(
        "Forwards data to output_true if pred is true, else to output_false; the other output "
        "is dead.");

REGISTER_OP("RefSwitch")
    .Input("data: Ref(T)")
    .Input("pred: bool")
    .Output("output_false: Ref(T)")
    .Output("output_true: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(SwitchShape)
    .Doc("Switch for a reference (a variable): forwards the reference itself.");

REGISTER_OP("Merge")
    .Input("inputs: N * T")
    .Output("output: T")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape)
    .Doc(
        "Forwards the first input that is alive, and its index; runs as soon as one input is "
        "alive, and is dead when all inputs are.");

REGISTER_OP("RefMerge")
    .Input("inputs: Ref(N * T)")
    .Output("output: Ref(T)")
    .Output("value_index: int32")
    .Attr("T: type")
    .Attr("N: int >= 1")
    .SetShapeFn(MergeShape)
    .Doc("Merge of references.");

REGISTER_OP("Enter")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(EnterShape)
    .Doc(
        "Makes data available in the child frame frame_name (a while loop's body). A constant "
        "Enter's value is seen by every iteration; parallel_iterations bounds how many "
        "iterations of the frame run at once.");

REGISTER_OP("RefEnter")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .Attr("frame_name: string")
    .Attr("is_constant: bool = false")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(EnterShape)
    .Doc("Enter for a reference.");

REGISTER_OP("Exit")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Hands data from a frame back to its parent frame.");

REGISTER_OP("RefExit")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Exit for a reference.");

REGISTER_OP("NextIteration")
    .Input("data: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Makes data available to the next iteration of the frame.");

REGISTER_OP("RefNextIteration")
    .Input("data: Ref(T)")
    .Output("output: Ref(T)")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("NextIteration for a reference.");

REGISTER_OP("LoopCond")
    .Input("input: bool")
    .Output("output: bool")
    .SetShapeFn(LoopCondShape)
    .Doc("Forwards the loop's continuation predicate (the Switch nodes of a while loop read it).");

REGISTER_OP("ControlTrigger")
    .SetShapeFn(shape_fns::UnknownShape)
    .Doc(
        "Does nothing; unlike other nodes it is never dead, so control edges from it fire even "
        "from an untaken branch.");

}  // namespace tensorweave
