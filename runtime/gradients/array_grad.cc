// Gradients of the array ops: reshaping, transposing, joining and
// splitting, slicing, tiling, gathering and broadcasting. Shape, index and
// axis inputs get no gradient.
#include "runtime/gradients/gradient_registry.h"

namespace tensorweave {
namespace {

using Grads = std::vector<NodeOutput>;

NodeOutput OutputOfOp(const Node& op, int index) { return {const_cast<Node*>(&op), index}; }

// Reshape, ExpandDims, Squeeze: the gradient takes x's shape back.
Status ReshapeLikeInputGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput x = ForwardInput(op, 0);
  out->push_back(scope.Reshape(grads[0], scope.Shape(x)));
  for (int i = 1; i < op.num_inputs(); ++i) out->push_back(NoGradient());
  return scope.status();
}

Status TransposeGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput inverse = scope.Op("InvertPermutation", {ForwardInput(op, 1)});
  out->push_back(scope.Op("Transpose", {grads[0], inverse}));
  out->push_back(NoGradient());
  return scope.status();
}

Status PackGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  int64_t count = 0, axis = 0;
  TW_RETURN_IF_ERROR(GetNodeAttr(op.def(), "N", &count));
  TW_RETURN_IF_ERROR(GetNodeAttr(op.def(), "axis", &axis));
  Node* pieces = scope.AddNode("Unpack", {grads[0]}, {Attr("num", count), Attr("axis", axis)});
  for (int i = 0; i < count; ++i) out->push_back(GradientScope::OutputOf(pieces, i));
  return scope.status();
}

Status UnpackGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  int64_t axis = 0;
  TW_RETURN_IF_ERROR(GetNodeAttr(op.def(), "axis", &axis));
  out->push_back(scope.Op("Pack", {GradientArg::List(grads)}, {Attr("axis", axis)}));
  return scope.status();
}

// ConcatV2: each input gets its slice of the gradient along the axis; the
// sizes come from the inputs' shapes at run time.
Status ConcatGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  const int count = op.num_inputs() - 1;
  NodeOutput axis = ForwardInput(op, count);
  NodeOutput first = ForwardInput(op, 0);
  NodeOutput at = scope.Op(
      "FloorMod", {scope.Op("Cast", {axis}, {Attr("DstT", DT_INT32)}), scope.Op("Rank", {first})});
  NodeOutput begin = scope.Reshape(at, scope.Int32s({1}));
  std::vector<NodeOutput> sizes;
  for (int i = 0; i < count; ++i) {
    sizes.push_back(
        scope.Op("Slice", {scope.Shape(ForwardInput(op, i)), begin, scope.Int32s({1})}));
  }
  NodeOutput size_splits = scope.Op("ConcatV2", {GradientArg::List(sizes), scope.Int32(0)});
  Node* pieces = scope.AddNode("SplitV", {grads[0], size_splits, at},
                               {Attr("num_split", static_cast<int64_t>(count))});
  for (int i = 0; i < count; ++i) out->push_back(GradientScope::OutputOf(pieces, i));
  out->push_back(NoGradient());
  return scope.status();
}

Status SplitGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  out->push_back(NoGradient());
  out->push_back(scope.Op("ConcatV2", {GradientArg::List(grads), ForwardInput(op, 0)}));
  return scope.status();
}

Status SplitVGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  out->push_back(scope.Op("ConcatV2", {GradientArg::List(grads), ForwardInput(op, 2)}));
  out->push_back(NoGradient());
  out->push_back(NoGradient());
  return scope.status();
}

// Slice: the gradient padded back to x's shape, `begin` before and the rest
// after.
Status SliceGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput x = ForwardInput(op, 0), begin = ForwardInput(op, 1);
  const DataType index_type = GradientScope::DType(begin);
  NodeOutput input_shape = scope.Shape(x, index_type);
  NodeOutput output_shape = scope.Shape(OutputOfOp(op, 0), index_type);
  NodeOutput after = scope.Op("Sub", {scope.Op("Sub", {input_shape, output_shape}), begin});
  NodeOutput paddings =
      scope.Op("Pack", {GradientArg::List({begin, after})}, {Attr("axis", int64_t{1})});
  out->push_back(scope.Op("Pad", {grads[0], paddings}));
  out->push_back(NoGradient());
  out->push_back(NoGradient());
  return scope.status();
}

Status StridedSliceGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput begin = ForwardInput(op, 1);
  GradientAttrs attrs;
  for (const char* mask :
       {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    attrs.push_back(CopiedAttr(op, mask));
  }
  NodeOutput shape = scope.Shape(ForwardInput(op, 0), GradientScope::DType(begin));
  out->push_back(scope.Op("StridedSliceGrad",
                          {shape, begin, ForwardInput(op, 2), ForwardInput(op, 3), grads[0]},
                          attrs));
  out->push_back(NoGradient());
  out->push_back(NoGradient());
  out->push_back(NoGradient());
  return scope.status();
}

// Tile: view the gradient as [m0, d0, m1, d1, ...] (multiple, size per dim)
// and sum over the multiples.
Status TileGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput x = ForwardInput(op, 0), multiples = ForwardInput(op, 1);
  NodeOutput x_shape = scope.Shape(x, GradientScope::DType(multiples));
  NodeOutput pairs =
      scope.Op("Pack", {GradientArg::List({multiples, x_shape})}, {Attr("axis", int64_t{1})});
  NodeOutput interleaved = scope.Reshape(pairs, scope.Int32s({-1}));
  NodeOutput even_axes =
      scope.Op("Range", {scope.Int32(0), scope.Op("Size", {interleaved}), scope.Int32(2)});
  NodeOutput summed = scope.Sum(scope.Reshape(grads[0], interleaved), even_axes);
  out->push_back(scope.Reshape(summed, scope.Shape(x)));
  out->push_back(NoGradient());
  return scope.status();
}

// Fill: every element is the value, whose gradient is their sum.
Status FillGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput all_axes =
      scope.Op("Range", {scope.Int32(0), scope.Op("Rank", {grads[0]}), scope.Int32(1)});
  out->push_back(NoGradient());
  out->push_back(scope.Sum(grads[0], all_axes));
  return scope.status();
}

// BroadcastTo: sums over the dims that were broadcast.
Status BroadcastToGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput x = ForwardInput(op, 0), shape = ForwardInput(op, 1);
  NodeOutput x_shape = scope.Shape(x, GradientScope::DType(shape));
  Node* axes = scope.AddNode("BroadcastGradientArgs", {x_shape, shape});
  out->push_back(scope.Reshape(scope.Sum(grads[0], GradientScope::OutputOf(axes, 0)), x_shape));
  out->push_back(NoGradient());
  return scope.status();
}

// GatherV2: a dense gradient (TensorFlow's is IndexedSlices; the values are
// the same): the gradient rows, each summed into the params row its index
// named, with UnsortedSegmentSum. For axis > 0 the gathered dim is moved to
// the front first and back after.
Status GatherGrad(GradientScope& scope, const Node& op, const Grads& grads, Grads* out) {
  NodeOutput params = ForwardInput(op, 0), indices = ForwardInput(op, 1);
  NodeOutput axis_input = ForwardInput(op, 2);
  Tensor axis_value;
  int64_t axis = 0;
  const int rank = scope.KnownShape(params).dims();
  if (!ConstantValue(axis_input, &axis_value) || axis_value.NumElements() != 1) {
    return errors::Unimplemented("The gradient of ", op.name(),
                                 " (GatherV2) needs a constant axis");
  }
  axis = axis_value.dtype() == DT_INT64 ? axis_value.data<int64_t>()[0]
                                        : axis_value.data<int32_t>()[0];
  if (axis < 0) {
    if (rank < 0) {
      return errors::Unimplemented("The gradient of ", op.name(),
                                   " (GatherV2) needs params of known rank for a negative axis");
    }
    axis += rank;
  }
  const int32_t at = static_cast<int32_t>(axis);
  NodeOutput params_shape = scope.Shape(params);
  NodeOutput count = scope.Reshape(scope.Op("Size", {indices}), scope.Int32s({1}));
  NodeOutput flat_indices = scope.Reshape(indices, scope.Int32s({-1}));
  NodeOutput leading = scope.Op("Slice", {params_shape, scope.Int32s({0}), scope.Int32s({at})});
  NodeOutput limit = scope.Reshape(
      scope.Op("Slice", {params_shape, scope.Int32s({at}), scope.Int32s({1})}), scope.Int32s({}));
  // [p_0 .. p_{at-1}, count, inner]
  NodeOutput values = scope.Reshape(
      grads[0], scope.Op("ConcatV2", {GradientArg::List({leading, count, scope.Int32s({-1})}),
                                      scope.Int32(0)}));
  std::vector<int32_t> to_front = {at}, to_back;
  for (int32_t i = 0; i < at; ++i) to_front.push_back(i);
  to_front.push_back(at + 1);
  for (int32_t i = 1; i <= at; ++i) to_back.push_back(i);
  to_back.push_back(0);
  to_back.push_back(at + 1);
  if (at > 0) values = scope.Op("Transpose", {values, scope.Int32s(to_front)});
  NodeOutput sums = scope.Op("UnsortedSegmentSum", {values, flat_indices, limit});
  if (at > 0) sums = scope.Op("Transpose", {sums, scope.Int32s(to_back)});
  out->push_back(scope.Reshape(sums, params_shape));
  out->push_back(NoGradient());
  out->push_back(NoGradient());
  return scope.status();
}

TW_REGISTER_GRADIENT("Reshape", ReshapeLikeInputGrad);
TW_REGISTER_GRADIENT("ExpandDims", ReshapeLikeInputGrad);
TW_REGISTER_GRADIENT("Squeeze", ReshapeLikeInputGrad);
TW_REGISTER_GRADIENT("Transpose", TransposeGrad);
TW_REGISTER_GRADIENT("Pack", PackGrad);
TW_REGISTER_GRADIENT("Unpack", UnpackGrad);
TW_REGISTER_GRADIENT("ConcatV2", ConcatGrad);
TW_REGISTER_GRADIENT("Split", SplitGrad);
TW_REGISTER_GRADIENT("SplitV", SplitVGrad);
TW_REGISTER_GRADIENT("Slice", SliceGrad);
TW_REGISTER_GRADIENT("StridedSlice", StridedSliceGrad);
TW_REGISTER_GRADIENT("Tile", TileGrad);
TW_REGISTER_GRADIENT("Fill", FillGrad);
TW_REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);
TW_REGISTER_GRADIENT("GatherV2", GatherGrad);
// Shapes, indices and constants carry no gradient.
TW_REGISTER_NO_GRADIENT("Const");
TW_REGISTER_NO_GRADIENT("Shape");
TW_REGISTER_NO_GRADIENT("Size");
TW_REGISTER_NO_GRADIENT("Rank");
TW_REGISTER_NO_GRADIENT("ZerosLike");
TW_REGISTER_NO_GRADIENT("OnesLike");
TW_REGISTER_NO_GRADIENT("StopGradient");
TW_REGISTER_NO_GRADIENT("InvertPermutation");
TW_REGISTER_NO_GRADIENT("Range");
TW_REGISTER_NO_GRADIENT("OneHot");
TW_REGISTER_NO_GRADIENT("Where");

}  // namespace
}  // namespace tensorweave
