// Elementwise math ops beyond arithmetic, with TensorFlow's names, input and
// attr names: trigonometric and hyperbolic functions and their inverses,
// the special functions (Erf, Erfc, Lgamma, Digamma, Polygamma, Zeta),
// IsNan/IsInf/IsFinite, Rint, Softsign, the C-style divisions (TruncateDiv,
// TruncateMod and its old name Mod), the guarded divisions DivNoNan, Xlogy
// and Xdivy, ClipByValue, and the Identity-like PreventGradient (Snapshot
// is registered with the array ops). Allowed dtypes are those the CPU kernels here run
// (runtime/kernels/cwise_trig_ops.cc, cwise_special_ops.cc,
// cwise_truncate_ops.cc, clip_snapshot_ops.cc); TensorFlow also admits
// half, bfloat16 and complex, which tensors here cannot hold.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

// Every fixed-size integer type: C-style integer division (TruncateDiv).
#define TW_ALL_INTEGER_TYPES "int32, int64, uint8, int8, int16, uint16, uint32, uint64"
// ClipByValue: TensorFlow's CPU kernel runs the real numbers and the
// integers up to 16 bits, not uint32/uint64.
#define TW_CLIP_TYPES TW_ARITHMETIC_TYPES ", uint8, int8, int16, uint16"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// ClipByValue: t's shape. Each bound must be a scalar or have t's shape
// (no other broadcasting, as TensorFlow's kernel); a bound of unknown rank
// or partly unknown shape is checked when the op runs.
Status ClipByValueShape(InferenceContext* c) {
  const PartialTensorShape& t = c->input(0);
  for (int i = 1; i <= 2; ++i) {
    const PartialTensorShape& bound = c->input(i);
    if (bound.unknown_rank() || bound.dims() == 0) continue;
    PartialTensorShape unused;
    if (!t.MergeWith(bound, &unused).ok()) {
      return c->Error(
          "clip_value_min and clip_value_max must be either of the same shape as input, or a "
          "scalar. input shape: ",
          t.DebugString(), " ", i == 1 ? "clip_value_min" : "clip_value_max",
          " shape: ", bound.DebugString());
    }
  }
  c->set_output(0, t);
  return Status::OK();
}

// SoftsignGrad: gradients and features have one shape.
Status SameShapePair(InferenceContext* c) {
  PartialTensorShape merged;
  if (!c->input(0).MergeWith(c->input(1), &merged).ok()) {
    return c->Error("gradients and features must have the same shape, got ",
                    c->input(0).DebugString(), " and ", c->input(1).DebugString());
  }
  c->set_output(0, merged);
  return Status::OK();
}

}  // namespace

#define TW_REGISTER_FLOAT_UNARY(NAME, DOC, TYPES) \
  REGISTER_OP(NAME)                               \
      .Input("x: T")                              \
      .Output("y: T")                             \
      .Attr("T: {" TYPES "}")                     \
      .SetShapeFn(shape_fns::UnchangedShape)      \
      .Doc(DOC)

TW_REGISTER_FLOAT_UNARY("Sin", "Sine elementwise (radians).",
                        TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Cos", "Cosine elementwise (radians).",
                        TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Tan", "Tangent elementwise (radians).", TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Asin", "Arcsine elementwise, in [-pi/2, pi/2]; NaN outside [-1, 1].",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Acos", "Arccosine elementwise, in [0, pi]; NaN outside [-1, 1].",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Atan", "Arctangent elementwise, in (-pi/2, pi/2).", TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Sinh", "Hyperbolic sine elementwise.", TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Cosh", "Hyperbolic cosine elementwise.", TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Asinh", "Inverse hyperbolic sine elementwise.", TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Acosh", "Inverse hyperbolic cosine elementwise; NaN below 1.",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Atanh", "Inverse hyperbolic tangent elementwise; NaN outside [-1, 1].",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Erf", "The error function elementwise.",
                        TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Erfc", "1 - erf(x) elementwise, without the cancellation for large x.",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Lgamma", "log|Gamma(x)| elementwise (inf at the poles 0, -1, -2, ...).",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Digamma",
                        "d/dx log Gamma(x) elementwise (NaN at the poles 0, -1, -2, ...).",
                        TW_FLOAT_TYPES);
TW_REGISTER_FLOAT_UNARY("Rint", "x rounded to the nearest integer, halves to even.",
                        TW_FLOAT_TYPES);

#undef TW_REGISTER_FLOAT_UNARY

#define TW_REGISTER_CLASSIFIER(NAME, DOC)    \
  REGISTER_OP(NAME)                          \
      .Input("x: T")                         \
      .Output("y: bool")                     \
      .Attr("T: {" TW_FLOAT_TYPES "}")       \
      .SetShapeFn(shape_fns::UnchangedShape) \
      .Doc(DOC)

TW_REGISTER_CLASSIFIER("IsNan", "Whether each element is NaN.");
TW_REGISTER_CLASSIFIER("IsInf", "Whether each element is +inf or -inf.");
TW_REGISTER_CLASSIFIER("IsFinite", "Whether each element is neither infinite nor NaN.");

#undef TW_REGISTER_CLASSIFIER

#define TW_REGISTER_BINARY(NAME, X, Y, TYPES, DOC) \
  REGISTER_OP(NAME)                                \
      .Input(X ": T")                              \
      .Input(Y ": T")                              \
      .Output("z: T")                              \
      .Attr("T: {" TYPES "}")                      \
      .SetShapeFn(shape_fns::BroadcastBinaryOp)    \
      .Doc(DOC)

TW_REGISTER_BINARY("Atan2", "y", "x", TW_FLOAT_TYPES,
                   "The angle of the point (x, y), in [-pi, pi], with numpy broadcasting.");
TW_REGISTER_BINARY("Polygamma", "a", "x", TW_FLOAT_TYPES,
                   "The a-th derivative of digamma at x (a a whole number >= 0), with numpy "
                   "broadcasting.");
TW_REGISTER_BINARY("Zeta", "x", "q", TW_FLOAT_TYPES,
                   "The Hurwitz zeta function sum_k (k + q)^-x, with numpy broadcasting.");
TW_REGISTER_BINARY("TruncateDiv", "x", "y", TW_FLOAT_TYPES ", " TW_ALL_INTEGER_TYPES,
                   "x / y rounded toward zero (C's integer division), with numpy broadcasting; "
                   "integer division by zero is INVALID_ARGUMENT.");
TW_REGISTER_BINARY("TruncateMod", "x", "y", TW_ARITHMETIC_TYPES,
                   "The remainder of TruncateDiv (C's % and fmod: the sign of x), with numpy "
                   "broadcasting; integer division by zero is INVALID_ARGUMENT.");
TW_REGISTER_BINARY("Mod", "x", "y", TW_ARITHMETIC_TYPES, "TruncateMod under its older name.");
TW_REGISTER_BINARY("DivNoNan", "x", "y", TW_FLOAT_TYPES,
                   "x / y, but 0 where y is 0, with numpy broadcasting.");
TW_REGISTER_BINARY("Xlogy", "x", "y", TW_FLOAT_TYPES,
                   "x * log(y), but 0 where x is 0, with numpy broadcasting.");
TW_REGISTER_BINARY("Xdivy", "x", "y", TW_FLOAT_TYPES,
                   "x / y, but 0 where x is 0, with numpy broadcasting.");

#undef TW_REGISTER_BINARY

REGISTER_OP("Softsign")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("features / (|features| + 1) elementwise.");

REGISTER_OP("SoftsignGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .SetShapeFn(SameShapePair)
    .Doc("gradients / (|features| + 1)^2.");

REGISTER_OP("ClipByValue")
    .Input("t: T")
    .Input("clip_value_min: T")
    .Input("clip_value_max: T")
    .Output("output: T")
    .Attr("T: {" TW_CLIP_TYPES "}")
    .SetShapeFn(ClipByValueShape)
    .Doc(
        "max(min(t, clip_value_max), clip_value_min) elementwise; each bound is a scalar or has "
        "t's shape.");

REGISTER_OP("PreventGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("message: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "Returns its input; building a gradient through it is an error that quotes `message` "
        "(the Python gradient of the op).");

#undef TW_CLIP_TYPES
#undef TW_ALL_INTEGER_TYPES

}  // namespace tensorweave
