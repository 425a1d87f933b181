// The string ops of tf.strings, with TensorFlow's names, inputs, attrs and
// defaults: StringJoin, ReduceJoin, StringLength, Substr, StringStrip,
// StringLower, StringUpper, AsString, StringToNumber, StringSplit,
// StringSplitV2, RegexReplace, StaticRegexReplace, RegexFullMatch,
// StaticRegexFullMatch and StringToHashBucketFast. Kernels:
// runtime/kernels/string_ops.cc, string_convert_ops.cc, string_split_ops.cc,
// regex_ops.cc and string_hash_ops.cc. (StringFormat is with the logging
// ops.)
#include <vector>

#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// StringJoin: scalars broadcast; every other input has one common shape.
Status StringJoinShape(InferenceContext* c) {
  PartialTensorShape out = PartialTensorShape::FromShape(TensorShape());
  bool all_scalars = true;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialTensorShape& input = c->input(i);
    if (input.dims() == 0) continue;
    if (input.unknown_rank()) {
      c->set_output(0, PartialTensorShape());
      return Status::OK();
    }
    if (all_scalars) {
      out = input;
      all_scalars = false;
      continue;
    }
    if (input.dims() != out.dims()) {
      return c->Error("Shapes must be equal rank, but are ", out.dims(), " and ", input.dims());
    }
    if (!out.MergeWith(input, &out).ok()) {
      return c->Error("Input shapes do not match: ", out.DebugString(), " vs. ",
                      input.DebugString());
    }
  }
  c->set_output(0, out);
  return Status::OK();
}

// ReduceJoin's inputs and attrs are those of Sum (input, reduction_indices,
// keep_dims), so it shares the reductions' shape rule, registered with Sum.
Status ReduceJoinShape(InferenceContext* c) {
  const OpDef* sum = OpRegistry::Global()->LookUp("Sum");
  if (sum == nullptr || !sum->shape_fn) return shape_fns::UnknownShape(c);
  return sum->shape_fn(c);
}

// Substr: pos and len share a shape; the output is input broadcast with pos.
Status SubstrShape(InferenceContext* c) {
  PartialTensorShape positions;
  if (!c->input(1).MergeWith(c->input(2), &positions).ok()) {
    return c->Error("pos and len should have the same shape, got: ", c->input(1).DebugString(),
                    " vs. ", c->input(2).DebugString());
  }
  PartialTensorShape out;
  Status status = shape_fns::BroadcastShapes(c->input(0), positions, &out);
  if (!status.ok()) return c->Error(status.message());
  c->set_output(0, out);
  return Status::OK();
}

// StringSplit and StringSplitV2: a SparseTensor's indices [n, 2], values
// [n] and dense_shape [2] from a vector of strings and a scalar separator.
Status StringSplitShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(0, 1, &unused));
  TW_RETURN_IF_ERROR(c->WithRank(1, 0, &unused));
  PartialTensorShape indices;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({-1, 2}, &indices));
  c->set_output(0, indices);
  c->set_output(1, PartialTensorShape::UnknownDims(1));
  c->set_output(2, PartialTensorShape::FromShape(TensorShape({2})));
  return Status::OK();
}

// Ops whose pattern (and rewrite) inputs are scalars and whose output has
// the shape of input 0.
Status ScalarOperandsShape(InferenceContext* c) {
  PartialTensorShape unused;
  for (int i = 1; i < c->num_inputs(); ++i) TW_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  return shape_fns::UnchangedShape(c);
}

}  // namespace

REGISTER_OP("StringJoin")
    .Input("inputs: N * string")
    .Output("output: string")
    .Attr("N: int")
    .Attr("separator: string = ''")
    .SetShapeFn(StringJoinShape)
    .Doc(
        "Joins the strings of `inputs` elementwise with `separator` between them; scalar "
        "inputs are repeated, all others must have one shape.");

REGISTER_OP("ReduceJoin")
    .Input("inputs: string")
    .Input("reduction_indices: int32")
    .Output("output: string")
    .Attr("keep_dims: bool = false")
    .Attr("separator: string = ''")
    .SetShapeFn(ReduceJoinShape)
    .Doc(
        "Joins the strings of `inputs` along `reduction_indices` (negative from the end), the "
        "first listed dimension varying fastest; reduced dimensions are dropped, or kept as 1 "
        "with keep_dims.");

REGISTER_OP("StringLength")
    .Input("input: string")
    .Output("output: int32")
    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("The length of each string in bytes, or in UTF-8 characters.");

REGISTER_OP("Substr")
    .Input("input: string")
    .Input("pos: T")
    .Input("len: T")
    .Output("output: string")
    .Attr("T: {int32, int64}")
    .Attr("unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'")
    .SetShapeFn(SubstrShape)
    .Doc(
        "The `len` bytes (or UTF-8 characters) of each string from `pos` (negative: from the "
        "end; a negative `len`: to the end); a `pos` past either end is INVALID_ARGUMENT. pos "
        "and len have one shape, which broadcasts with input's.");

REGISTER_OP("StringStrip")
    .Input("input: string")
    .Output("output: string")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Each string without its leading and trailing ASCII whitespace.");

REGISTER_OP("StringLower")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Each string with ASCII letters lowercased (encoding '' only).");

REGISTER_OP("StringUpper")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Each string with ASCII letters uppercased (encoding '' only).");

REGISTER_OP("AsString")
    .Input("input: T")
    .Output("output: string")
    .Attr("T: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES ", string}")
    .Attr("precision: int = -1")
    .Attr("scientific: bool = false")
    .Attr("shortest: bool = false")
    .Attr("width: int = -1")
    .Attr("fill: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "Each element as text, printf-style: floats with %f (%e with scientific, %g with "
        "shortest) and `precision` digits, integers in decimal, bools as true/false; padded "
        "to `width` with `fill` (one of ' ', '0', '-', '+', '#': printf's flags).");

REGISTER_OP("StringToNumber")
    .Input("string_tensor: string")
    .Output("output: out_type")
    .Attr("out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "Each string parsed as a number of out_type (surrounding whitespace allowed; floats "
        "also as hex integers, inf and nan); anything else, or an integer out of range, is "
        "INVALID_ARGUMENT.");

REGISTER_OP("StringSplit")
    .Input("input: string")
    .Input("delimiter: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("skip_empty: bool = true")
    .SetShapeFn(StringSplitShape)
    .Doc(
        "Splits each string of the vector `input` at every byte of `delimiter` (into single "
        "bytes when it is empty), dropping empty tokens with skip_empty; a SparseTensor.");

REGISTER_OP("StringSplitV2")
    .Input("input: string")
    .Input("sep: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("maxsplit: int = -1")
    .SetShapeFn(StringSplitShape)
    .Doc(
        "Splits each string of the vector `input` as Python's str.split(sep, maxsplit): at "
        "each occurrence of `sep`, or at runs of ASCII whitespace when it is empty; a "
        "SparseTensor.");

REGISTER_OP("RegexReplace")
    .Input("input: string")
    .Input("pattern: string")
    .Input("rewrite: string")
    .Output("output: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(ScalarOperandsShape)
    .Doc(
        "Replaces the matches of the RE2 `pattern` (every one, or the first without "
        "replace_global) in each string with `rewrite` (\\1 .. \\9 name groups).");

REGISTER_OP("StaticRegexReplace")
    .Input("input: string")
    .Output("output: string")
    .Attr("pattern: string")
    .Attr("rewrite: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("RegexReplace with the pattern and rewrite as attrs, compiled once.");

REGISTER_OP("RegexFullMatch")
    .Input("input: string")
    .Input("pattern: string")
    .Output("output: bool")
    .SetShapeFn(ScalarOperandsShape)
    .Doc("Whether each whole string matches the RE2 `pattern`.");

REGISTER_OP("StaticRegexFullMatch")
    .Input("input: string")
    .Output("output: bool")
    .Attr("pattern: string")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("RegexFullMatch with the pattern as an attr, compiled once.");

REGISTER_OP("StringToHashBucketFast")
    .Input("input: string")
    .Output("output: int64")
    .Attr("num_buckets: int >= 1")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "Each string's bucket: TensorFlow's Fingerprint64 (FarmHash) of it modulo "
        "num_buckets.");

}  // namespace tensorweave
