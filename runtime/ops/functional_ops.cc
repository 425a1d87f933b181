// Ops that run functions of the graph's library: calls (PartitionedCall,
// StatefulPartitionedCall) and functional control flow (If, StatelessIf,
// Case, While, StatelessWhile), with TensorFlow's names, attrs and defaults
// (tensorflow/core/ops/functional_ops.cc). A node whose op is a function's
// name needs no registration: the graph's library resolves it.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// The outputs have the shapes in `output_shapes` when it is given (one per
// output), else none known: If and Case cannot tell which branch runs.
Status ShapesFromOutputShapesAttr(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  TW_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (shapes.empty()) return shape_fns::UnknownShape(c);
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return c->Error("output_shapes has ", shapes.size(), " shapes but the op has ",
                    c->num_outputs(), " outputs");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return Status::OK();
}

// As TensorFlow: the loop variables keep their input shapes unless
// `output_shapes` says otherwise.
Status WhileShape(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  TW_RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (!shapes.empty()) return ShapesFromOutputShapesAttr(c);
  for (int i = 0; i < c->num_outputs() && i < c->num_inputs(); ++i) c->set_output(i, c->input(i));
  return Status::OK();
}

}  // namespace

REGISTER_OP("PartitionedCall")
    .Input("args: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("f: func")
    .Attr("config: string = ''")
    .Attr("config_proto: string = ''")
    .Attr("executor_type: string = ''")
    .SetShapeFn(shape_fns::UnknownShape)
    .Doc("Calls function `f` with `args`; its results are the outputs.");

REGISTER_OP("StatefulPartitionedCall")
    .Input("args: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("f: func")
    .Attr("config: string = ''")
    .Attr("config_proto: string = ''")
    .Attr("executor_type: string = ''")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape)
    .Doc("Calls function `f`, which may have side effects, with `args`.");

REGISTER_OP("If")
    .Input("cond: Tcond")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tcond: type")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("then_branch: func")
    .Attr("else_branch: func")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .SetShapeFn(ShapesFromOutputShapesAttr)
    .Doc(
        "Runs then_branch(input) when `cond` is true (a non-bool converts as TensorFlow does), "
        "else else_branch(input).");

REGISTER_OP("StatelessIf")
    .Input("cond: Tcond")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tcond: type")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("then_branch: func")
    .Attr("else_branch: func")
    .Attr("output_shapes: list(shape) = []")
    .SetShapeFn(ShapesFromOutputShapesAttr)
    .Doc("If whose branches have no side effects.");

REGISTER_OP("Case")
    .Input("branch_index: int32")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("branches: list(func) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .SetIsStateful()
    .SetShapeFn(ShapesFromOutputShapesAttr)
    .Doc("Runs branches[branch_index](input); an index out of range runs the last branch.");

REGISTER_OP("StatelessCase")
    .Input("branch_index: int32")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .Attr("branches: list(func) >= 1")
    .Attr("output_shapes: list(shape) = []")
    .SetShapeFn(ShapesFromOutputShapesAttr)
    .Doc("Case whose branches have no side effects.");

REGISTER_OP("While")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 0")
    .Attr("cond: func")
    .Attr("body: func")
    .Attr("output_shapes: list(shape) = []")
    .Attr("parallel_iterations: int = 10")
    .SetIsStateful()
    .SetShapeFn(WhileShape)
    .Doc("output = input; while cond(output): output = body(output).");

REGISTER_OP("StatelessWhile")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 0")
    .Attr("cond: func")
    .Attr("body: func")
    .Attr("output_shapes: list(shape) = []")
    .Attr("parallel_iterations: int = 10")
    .SetShapeFn(WhileShape)
    .Doc("While whose cond and body have no side effects.");

}  // namespace tensorweave
