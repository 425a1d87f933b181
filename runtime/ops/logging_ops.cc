// Logging ops: Assert, Print, PrintV2, and StringFormat (which TensorFlow
// registers with its string ops; it is here because tf.print is its one
// user). Every op that prints or fails is stateful: the graph optimizer
// never folds, merges or drops it, and pruning keeps it whenever it is
// fetched or a control input of something fetched.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/framework/tensor_summary.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

Status NoOutputs(InferenceContext*) { return Status::OK(); }

// TensorFlow checks the input at graph construction, so a non-scalar
// string fails when the op is added, not when it runs.
Status PrintV2Shape(InferenceContext* c) {
  const PartialTensorShape& input = c->input(0);
  if (!input.unknown_rank() && input.dims() != 0) {
    return errors::InvalidArgument("input must be a scalar, but has rank: ", input.dims());
  }
  return Status::OK();
}

// The template must hold one placeholder per input.
Status StringFormatShape(InferenceContext* c) {
  std::string format_template, placeholder;
  TW_RETURN_IF_ERROR(c->GetAttr("template", &format_template));
  TW_RETURN_IF_ERROR(c->GetAttr("placeholder", &placeholder));
  const int64_t placeholders =
      static_cast<int64_t>(SplitFormatTemplate(format_template, placeholder).size()) - 1;
  if (placeholders != c->num_inputs()) {
    return errors::InvalidArgument("num placeholders in template and num inputs must match: ",
                                   placeholders, " vs. ", c->num_inputs());
  }
  return shape_fns::ScalarShape(c);
}

}  // namespace

REGISTER_OP("Assert")
    .Input("condition: bool")
    .Input("data: T")
    .Attr("T: list(type) >= 1")
    .Attr("summarize: int = 3")
    .SetShapeFn(NoOutputs)
    .SetIsStateful()
    .Doc(
        "Fails with INVALID_ARGUMENT, showing the first `summarize` values of each of `data`, "
        "when the scalar `condition` is false.");

REGISTER_OP("Print")
    .Input("input: T")
    .Input("data: U")
    .Output("output: T")
    .Attr("T: type")
    .Attr("U: list(type) >= 0")
    .Attr("message: string = ''")
    .Attr("first_n: int = -1")
    .Attr("summarize: int = 3")
    .SetShapeFn(shape_fns::UnchangedShape)
    .SetIsStateful()
    .Doc(
        "Passes `input` through and writes `message` and the first `summarize` values of each "
        "of `data` to stderr, on the first `first_n` runs only (-1: every run).");

REGISTER_OP("PrintV2")
    .Input("input: string")
    .Attr("output_stream: string = 'stderr'")
    .Attr("end: string = '\n'")
    .SetShapeFn(PrintV2Shape)
    .SetIsStateful()
    .Doc(
        "Writes the scalar string `input` followed by `end` to `output_stream`: 'stderr', "
        "'stdout', 'log(info)', 'log(warning)', 'log(error)' or 'file://<path>' (appended).");

REGISTER_OP("StringFormat")
    .Input("inputs: T")
    .Output("output: string")
    .Attr("T: list(type) >= 0")
    .Attr("template: string = '%s'")
    .Attr("placeholder: string = '%s'")
    .Attr("summarize: int = 3")
    .SetShapeFn(StringFormatShape)
    .Doc(
        "A scalar string: `template` with each `placeholder` replaced by the next input, "
        "summarized numpy-style with `summarize` values at each end of every dimension.");

}  // namespace tensorweave
