// Math ops: elementwise arithmetic, comparisons and logic (numpy
// broadcasting), Select, unary functions and their gradient ops,
// reductions, ArgMax/ArgMin, Cast, AddN, MatMul and BroadcastGradientArgs. Attr names
// and defaults follow TensorFlow so its GraphDefs validate; the allowed dtypes
// are the ones the kernels implement (type_lists.h).
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// Equal/NotEqual with incompatible_shape_error=false produce a scalar for
// shapes that do not broadcast, so the output is only known when they do.
Status EqualityShape(InferenceContext* c) {
  bool incompatible_shape_error = true;
  TW_RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
  if (incompatible_shape_error) return shape_fns::BroadcastBinaryOp(c);
  PartialTensorShape out;
  if (!shape_fns::BroadcastShapes(c->input(0), c->input(1), &out).ok()) out = PartialTensorShape();
  c->set_output(0, out);
  return Status::OK();
}

// Sum, Mean, Max, Min, Prod, All, Any: drops (or, with keep_dims, sets to 1) each reduced dim.
Status ReductionShape(InferenceContext* c) {
  if (c->input(1).dims() > 1) {
    return c->Error("reduction_indices must be a scalar or vector, got shape ",
                    c->input(1).DebugString());
  }
  bool keep_dims = false;
  TW_RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const PartialTensorShape& input = c->input(0);
  const Tensor* axes_tensor = c->input_tensor(1);
  if (input.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  const int rank = input.dims();
  if (axes_tensor == nullptr) {
    c->set_output(0, keep_dims ? PartialTensorShape::UnknownDims(rank) : PartialTensorShape());
    return Status::OK();
  }
  std::vector<int64_t> axes;
  Status status = ReadIndexVector(*axes_tensor, "reduction_indices", &axes);
  if (!status.ok()) return c->Error(status.message());
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return c->Error("Invalid reduction dimension ", axis, " for input with ", rank,
                      " dimensions");
    }
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      dims.push_back(input.dim_size(i));
    } else if (keep_dims) {
      dims.push_back(1);
    }
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

Status ArgMaxShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(1, 0, &unused));
  const PartialTensorShape& input = c->input(0);
  if (input.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  const int rank = input.dims();
  if (rank == 0) return c->Error("ArgMax and ArgMin need an input of rank at least 1");
  const Tensor* dimension = c->input_tensor(1);
  if (dimension == nullptr) {
    c->set_output(0, PartialTensorShape::UnknownDims(rank - 1));
    return Status::OK();
  }
  std::vector<int64_t> values;
  Status status = ReadIndexVector(*dimension, "dimension", &values);
  if (!status.ok()) return c->Error(status.message());
  int64_t axis = values.empty() ? 0 : values[0];
  if (axis < -rank || axis >= rank) {
    return c->Error("Dimension (", axis, ") must be in the range [", -rank, ", ", rank, "), where ",
                    rank, " is the number of dimensions in the input");
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (i != axis) dims.push_back(input.dim_size(i));
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

Status AddNShape(InferenceContext* c) {
  PartialTensorShape merged = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    PartialTensorShape next;
    if (!merged.MergeWith(c->input(i), &next).ok()) {
      return c->Error("All inputs to AddN must have the same shape; input ", i, " has shape ",
                      c->input(i).DebugString(), ", expected ", merged.DebugString());
    }
    merged = next;
  }
  c->set_output(0, merged);
  return Status::OK();
}

Status MatMulShape(InferenceContext* c) {
  PartialTensorShape a, b;
  TW_RETURN_IF_ERROR(c->WithRank(0, 2, &a));
  TW_RETURN_IF_ERROR(c->WithRank(1, 2, &b));
  bool transpose_a = false, transpose_b = false;
  TW_RETURN_IF_ERROR(c->GetAttr("transpose_a", &transpose_a));
  TW_RETURN_IF_ERROR(c->GetAttr("transpose_b", &transpose_b));
  const int64_t a_inner = a.dim_size(transpose_a ? 0 : 1);
  const int64_t b_inner = b.dim_size(transpose_b ? 1 : 0);
  if (a_inner >= 0 && b_inner >= 0 && a_inner != b_inner) {
    return c->Error("Matrix size-incompatible: In[0]: ", a.DebugString(),
                    ", In[1]: ", b.DebugString(), " (transpose_a=", transpose_a,
                    ", transpose_b=", transpose_b, ")");
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(
      {a.dim_size(transpose_a ? 1 : 0), b.dim_size(transpose_b ? 0 : 1)}, &out));
  c->set_output(0, out);
  return Status::OK();
}

// Select: t and e have one shape; the condition is a scalar, that shape, or
// (TensorFlow 1.x) a vector running along dim 0 of it.
Status SelectShape(InferenceContext* c) {
  PartialTensorShape value;
  if (!c->input(1).MergeWith(c->input(2), &value).ok()) {
    return c->Error("Inputs t and e must have the same shape, got ", c->input(1).DebugString(),
                    " and ", c->input(2).DebugString());
  }
  const PartialTensorShape& condition = c->input(0);
  if (!condition.unknown_rank() && !value.unknown_rank() && condition.dims() != 0) {
    PartialTensorShape unused;
    const bool same = condition.MergeWith(value, &unused).ok();
    const bool leading_vector = condition.dims() == 1 && value.dims() >= 1 &&
                                (condition.dim_size(0) < 0 || value.dim_size(0) < 0 ||
                                 condition.dim_size(0) == value.dim_size(0));
    if (!same && !leading_vector) {
      return c->Error(
          "condition must be a scalar, a vector of size dim 0 of t, or have t's "
          "shape; got ",
          condition.DebugString(), " for t of shape ", value.DebugString());
    }
  }
  c->set_output(0, value);
  return Status::OK();
}

// SelectV2: all three inputs broadcast together.
Status SelectV2Shape(InferenceContext* c) {
  PartialTensorShape values, out;
  TW_RETURN_IF_ERROR(shape_fns::BroadcastShapes(c->input(1), c->input(2), &values));
  TW_RETURN_IF_ERROR(shape_fns::BroadcastShapes(c->input(0), values, &out));
  c->set_output(0, out);
  return Status::OK();
}

// BroadcastGradientArgs: two shape vectors in, two index vectors of
// unknown length out.
Status BroadcastGradientArgsShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(0, 1, &unused));
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &unused));
  c->set_output(0, PartialTensorShape::UnknownDims(1));
  c->set_output(1, PartialTensorShape::UnknownDims(1));
  return Status::OK();
}

// TanhGrad and friends: y and dy have one shape.
Status MergedPairShape(InferenceContext* c) {
  PartialTensorShape merged;
  if (!c->input(0).MergeWith(c->input(1), &merged).ok()) {
    return c->Error("y and dy must have the same shape, got ", c->input(0).DebugString(), " and ",
                    c->input(1).DebugString());
  }
  c->set_output(0, merged);
  return Status::OK();
}

}  // namespace

// --- Binary elementwise ----------------------------------------------------

REGISTER_OP("Add")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_SIGNED_NUMBER_TYPES ", uint8, string}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x + y with numpy broadcasting (strings concatenate).");

REGISTER_OP("AddV2")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x + y with numpy broadcasting.");

REGISTER_OP("Sub")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x - y with numpy broadcasting.");

REGISTER_OP("Mul")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x * y with numpy broadcasting.");

REGISTER_OP("RealDiv")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x / y with numpy broadcasting; integer division truncates and rejects zero divisors.");

REGISTER_OP("Div")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x / y with numpy broadcasting; integer division truncates toward zero.");

REGISTER_OP("FloorDiv")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("floor(x / y) with numpy broadcasting (Python's //).");

REGISTER_OP("FloorMod")
    .Input("x: T")
    .Input("y: T")
    .Output("z: T")
    .Attr("T: {" TW_NUMBER_TYPES "}")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x - floor(x / y) * y with numpy broadcasting (Python's %: the sign of y).");

#define TW_REGISTER_BINARY(NAME, TYPES, DOC)    \
  REGISTER_OP(NAME)                             \
      .Input("x: T")                            \
      .Input("y: T")                            \
      .Output("z: T")                           \
      .Attr("T: {" TYPES "}")                   \
      .SetShapeFn(shape_fns::BroadcastBinaryOp) \
      .Doc(DOC)

TW_REGISTER_BINARY("Maximum", TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES,
                   "max(x, y) elementwise with numpy broadcasting.");
TW_REGISTER_BINARY("Minimum", TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES,
                   "min(x, y) elementwise with numpy broadcasting.");
TW_REGISTER_BINARY("Pow", TW_SIGNED_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES,
                   "x ** y elementwise with numpy broadcasting.");
TW_REGISTER_BINARY("SquaredDifference", TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES,
                   "(x - y) * (x - y) elementwise with numpy broadcasting.");

#undef TW_REGISTER_BINARY

REGISTER_OP("LogicalAnd")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x AND y elementwise with numpy broadcasting.");

REGISTER_OP("LogicalOr")
    .Input("x: bool")
    .Input("y: bool")
    .Output("z: bool")
    .SetShapeFn(shape_fns::BroadcastBinaryOp)
    .Doc("x OR y elementwise with numpy broadcasting.");

REGISTER_OP("LogicalNot")
    .Input("x: bool")
    .Output("y: bool")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("NOT x elementwise.");

REGISTER_OP("Select")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: {" TW_ALL_TYPES "}")
    .SetShapeFn(SelectShape)
    .Doc(
        "Elements of t where condition holds, else of e (TensorFlow 1.x rules: condition is a "
        "scalar, t's shape, or a vector along t's first dim).");

REGISTER_OP("SelectV2")
    .Input("condition: bool")
    .Input("t: T")
    .Input("e: T")
    .Output("output: T")
    .Attr("T: {" TW_ALL_TYPES "}")
    .SetShapeFn(SelectV2Shape)
    .Doc("Elements of t where condition holds, else of e, all three broadcast together.");

REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShape)
    .Doc(
        "The axes of broadcast(s0, s1) along which a gradient sums back to s0 (r0) and to s1 "
        "(r1).");

REGISTER_OP("Equal")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetShapeFn(EqualityShape)
    .Doc("x == y elementwise with numpy broadcasting.");

REGISTER_OP("NotEqual")
    .Input("x: T")
    .Input("y: T")
    .Output("z: bool")
    .Attr("T: type")
    .Attr("incompatible_shape_error: bool = true")
    .SetShapeFn(EqualityShape)
    .Doc("x != y elementwise with numpy broadcasting.");

#define TW_REGISTER_COMPARISON(NAME, SYMBOL)    \
  REGISTER_OP(NAME)                             \
      .Input("x: T")                            \
      .Input("y: T")                            \
      .Output("z: bool")                        \
      .Attr("T: {" TW_NUMBER_TYPES "}")         \
      .SetShapeFn(shape_fns::BroadcastBinaryOp) \
      .Doc("x " SYMBOL " y elementwise with numpy broadcasting.")

TW_REGISTER_COMPARISON("Greater", ">");
TW_REGISTER_COMPARISON("GreaterEqual", ">=");
TW_REGISTER_COMPARISON("Less", "<");
TW_REGISTER_COMPARISON("LessEqual", "<=");

#undef TW_REGISTER_COMPARISON

// --- Unary elementwise -----------------------------------------------------

#define TW_REGISTER_UNARY(NAME, TYPES, DOC)  \
  REGISTER_OP(NAME)                          \
      .Input("x: T")                         \
      .Output("y: T")                        \
      .Attr("T: {" TYPES "}")                \
      .SetShapeFn(shape_fns::UnchangedShape) \
      .Doc(DOC)

TW_REGISTER_UNARY("Neg", TW_SIGNED_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES, "-x elementwise.");
TW_REGISTER_UNARY("Square", TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES, "x * x elementwise.");
TW_REGISTER_UNARY("Abs", TW_SIGNED_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES, "|x| elementwise.");
TW_REGISTER_UNARY("Sign", TW_SIGNED_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "-1, 0 or 1 elementwise by the sign of x (NaN stays NaN).");
TW_REGISTER_UNARY("Round", TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "x rounded to the nearest integer, halves to even (banker's rounding).");
TW_REGISTER_UNARY("Sqrt", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES, "Square root elementwise.");
TW_REGISTER_UNARY("Rsqrt", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES, "1 / sqrt(x) elementwise.");
TW_REGISTER_UNARY("Exp", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES, "e^x elementwise.");
TW_REGISTER_UNARY("Expm1", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "e^x - 1 elementwise, exact near 0.");
TW_REGISTER_UNARY("Log", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES, "Natural logarithm elementwise.");
TW_REGISTER_UNARY("Log1p", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "log(1 + x) elementwise, exact near 0.");
TW_REGISTER_UNARY("Tanh", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "Hyperbolic tangent elementwise.");
TW_REGISTER_UNARY("Sigmoid", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "1 / (1 + e^-x) elementwise.");
TW_REGISTER_UNARY("Reciprocal", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES, "1 / x elementwise.");
TW_REGISTER_UNARY("Inv", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "1 / x elementwise (the old name of Reciprocal).");
TW_REGISTER_UNARY("Floor", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "Largest integer <= x elementwise.");
TW_REGISTER_UNARY("Ceil", TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES,
                  "Smallest integer >= x elementwise.");

#undef TW_REGISTER_UNARY

// The gradients of unary functions written in terms of their output y:
// dx = dy * f'(x) expressed through y.
#define TW_REGISTER_UNARY_GRAD(NAME, DOC)                       \
  REGISTER_OP(NAME)                                             \
      .Input("y: T")                                            \
      .Input("dy: T")                                           \
      .Output("z: T")                                           \
      .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}") \
      .SetShapeFn(MergedPairShape)                              \
      .Doc(DOC)

TW_REGISTER_UNARY_GRAD("TanhGrad", "dy * (1 - y * y) for y = tanh(x).");
TW_REGISTER_UNARY_GRAD("SigmoidGrad", "dy * y * (1 - y) for y = sigmoid(x).");
TW_REGISTER_UNARY_GRAD("SqrtGrad", "dy * 0.5 / y for y = sqrt(x).");
TW_REGISTER_UNARY_GRAD("RsqrtGrad", "dy * -0.5 * y^3 for y = rsqrt(x).");
TW_REGISTER_UNARY_GRAD("ReciprocalGrad", "-dy * y * y for y = 1 / x.");
TW_REGISTER_UNARY_GRAD("InvGrad", "-dy * y * y for y = 1 / x (the old name of ReciprocalGrad).");

#undef TW_REGISTER_UNARY_GRAD

REGISTER_OP("Cast")
    .Input("x: SrcT")
    .Output("y: DstT")
    .Attr("SrcT: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("DstT: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Truncate: bool = false")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Converts x to DstT elementwise.");

// --- Reductions -------------------------------------------------------------

REGISTER_OP("Sum")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Sum over the given axes.");

REGISTER_OP("Mean")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Mean over the given axes.");

REGISTER_OP("Max")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Maximum over the given axes.");

REGISTER_OP("Min")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Minimum over the given axes.");

REGISTER_OP("Prod")
    .Input("input: T")
    .Input("reduction_indices: Tidx")
    .Output("output: T")
    .Attr("keep_dims: bool = false")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Product over the given axes.");

REGISTER_OP("All")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Logical AND over the given axes (true over nothing).");

REGISTER_OP("Any")
    .Input("input: bool")
    .Input("reduction_indices: Tidx")
    .Output("output: bool")
    .Attr("keep_dims: bool = false")
    .Attr("Tidx: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReductionShape)
    .Doc("Logical OR over the given axes (false over nothing).");

REGISTER_OP("ArgMin")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {" TW_INDEX_TYPES "} = DT_INT64")
    .SetShapeFn(ArgMaxShape)
    .Doc("Index of the smallest value along one dimension (the first one on ties).");

REGISTER_OP("ArgMax")
    .Input("input: T")
    .Input("dimension: Tidx")
    .Output("output: output_type")
    .Attr("T: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tidx: {int16, int32, int64} = DT_INT32")
    .Attr("output_type: {" TW_INDEX_TYPES ", int16, uint16} = DT_INT64")
    .SetShapeFn(ArgMaxShape)
    .Doc("Index of the largest value along one dimension (the first one on ties).");

REGISTER_OP("AddN")
    .Input("inputs: N * T")
    .Output("sum: T")
    .Attr("N: int >= 1")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES ", variant}")
    .SetShapeFn(AddNShape)
    .Doc(
        "Elementwise sum of N tensors of one shape; for variants (TensorLists, in gradients) "
        "the elementwise sum of the lists (runtime/kernels/list_arithmetic.cc).");

REGISTER_OP("MatMul")
    .Input("a: T")
    .Input("b: T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {" TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    // Hints TensorFlow's gradient code writes; they do not change the result.
    .Attr("grad_a: bool = false")
    .Attr("grad_b: bool = false")
    .SetShapeFn(MatMulShape)
    .Doc("Matrix product of a and b (each optionally transposed).");

}  // namespace tensorweave
