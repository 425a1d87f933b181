// Array ops: constants, placeholders, identity (Identity, IdentityN,
// Snapshot) and the ops that only move or describe elements (Reshape,
// Shape, ShapeN, Transpose, Fill, ZerosLike, OnesLike). Attr names, defaults and type sets follow
// TensorFlow.
#include <algorithm>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/array_shape_ops.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using array_shape_fns::DeclaredRank;
using shape_inference::InferenceContext;

// Reads the value's shape from the TensorProto without decoding its
// elements, which may be large.
Status ConstShape(InferenceContext* c) {
  const AttrValue* value = FindNodeAttr(c->node_def(), "value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return c->Error("Const needs a tensor attr 'value'");
  }
  DataType dtype;
  TW_RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (value->tensor().dtype() != dtype) {
    return c->Error("Type mismatch between value (", DataTypeString(value->tensor().dtype()),
                    ") and dtype (", DataTypeString(dtype), ")");
  }
  PartialTensorShape shape;
  Status status = PartialTensorShape::FromProto(value->tensor().tensor_shape(), &shape);
  if (!status.ok()) return c->Error(status.message());
  if (!shape.IsFullyDefined()) return c->Error("Const value must have a fully defined shape");
  c->set_output(0, shape);
  return Status::OK();
}

// The output is the declared shape; a default value that does not fit it
// is rejected now rather than surprising a later consumer.
Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialTensorShape declared, merged;
  TW_RETURN_IF_ERROR(c->GetAttr("shape", &declared));
  if (!c->input(0).MergeWith(declared, &merged).ok()) {
    return c->Error("The default value has shape ", c->input(0).DebugString(),
                    ", which is not compatible with the declared shape ", declared.DebugString());
  }
  c->set_output(0, declared);
  return Status::OK();
}

// Infers the -1 dim when the input's element count is known, and rejects
// element-count mismatches that are already certain.
Status ReshapeShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &unused));
  PartialTensorShape target;
  TW_RETURN_IF_ERROR(shape_fns::ShapeFromInputTensor(c, 1, &target));
  if (c->input_tensor(1) == nullptr || target.unknown_rank()) {
    c->set_output(0, target);
    return Status::OK();
  }
  std::vector<int64_t> dims = target.dim_sizes();
  int infer_at = -1;
  int64_t known_product = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == -1) {
      if (infer_at >= 0) {
        return c->Error("Only one input size may be -1, not both ", infer_at, " and ", i);
      }
      infer_at = i;
    } else if (!MultiplyWithoutOverflow(known_product, dims[i], &known_product)) {
      return c->Error("Requested shape ", target.DebugString(), " has too many elements");
    }
  }
  const PartialTensorShape& input = c->input(0);
  if (input.IsFullyDefined()) {
    TensorShape input_shape;
    TW_RETURN_IF_ERROR(input.AsTensorShape(&input_shape));
    const int64_t count = input_shape.num_elements();
    if (infer_at < 0 && known_product != count) {
      return c->Error("Cannot reshape a tensor with ", count, " elements to shape ",
                      target.DebugString(), " (", known_product, " elements)");
    }
    if (infer_at >= 0 && known_product > 0) {
      if (count % known_product != 0) {
        return c->Error("Input to reshape is a tensor with ", count,
                        " values, but the requested shape requires a multiple of ", known_product);
      }
      dims[infer_at] = count / known_product;
    }
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

Status ShapeShape(InferenceContext* c) {
  const int rank = c->input(0).dims();
  c->set_output(0, PartialTensorShape::UnknownDims(1));
  if (rank >= 0) {
    PartialTensorShape out;
    TW_RETURN_IF_ERROR(PartialTensorShape::Build({rank}, &out));
    c->set_output(0, out);
  }
  return Status::OK();
}

// ShapeN: output i is the shape of input i, as ShapeShape gives it.
Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    const int rank = c->input(i).dims();
    PartialTensorShape out = PartialTensorShape::UnknownDims(1);
    if (rank >= 0) TW_RETURN_IF_ERROR(PartialTensorShape::Build({rank}, &out));
    c->set_output(i, out);
  }
  return Status::OK();
}

// IdentityN: output i has the shape of input i.
Status PassThroughShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) c->set_output(i, c->input(i));
  return Status::OK();
}

Status TransposeShape(InferenceContext* c) {
  PartialTensorShape perm_shape;
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &perm_shape));
  const PartialTensorShape& input = c->input(0);
  const Tensor* perm_tensor = c->input_tensor(1);
  int perm_length;
  TW_RETURN_IF_ERROR(DeclaredRank(c, 1, &perm_length));
  int rank = input.dims();
  if (rank < 0) rank = perm_length;
  if (rank >= 0 && perm_length >= 0 && perm_length != rank) {
    return c->Error("Transpose of a rank-", rank, " tensor needs a permutation of size ", rank,
                    ", got ", perm_length);
  }
  if (perm_tensor == nullptr) {
    c->set_output(0, rank >= 0 ? PartialTensorShape::UnknownDims(rank) : PartialTensorShape());
    return Status::OK();
  }
  std::vector<int64_t> perm;
  Status status = ReadIndexVector(*perm_tensor, "perm", &perm);
  if (!status.ok()) return c->Error(status.message());
  // The value is checked too: a graph may declare a shape its value lacks.
  if (rank >= 0 && static_cast<int>(perm.size()) != rank) {
    return c->Error("Transpose of a rank-", rank, " tensor needs a permutation of size ", rank,
                    ", got perm [", StrJoin(perm, ","), "]");
  }
  if (perm.size() > static_cast<size_t>(kMaxRank)) {
    return c->Error("perm has ", perm.size(), " elements, more than the largest rank (", kMaxRank,
                    ")");
  }
  rank = static_cast<int>(perm.size());
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) {
      return c->Error("perm [", StrJoin(perm, ","), "] is not a permutation of 0..", rank - 1);
    }
    seen[p] = true;
  }
  std::vector<int64_t> dims(rank, -1);
  if (!input.unknown_rank()) {
    for (int i = 0; i < rank; ++i) dims[i] = input.dim_size(static_cast<int>(perm[i]));
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

Status FillShape(InferenceContext* c) {
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(0, 1, &unused));
  TW_RETURN_IF_ERROR(c->WithRank(1, 0, &unused));
  if (const Tensor* dims = c->input_tensor(0)) {
    std::vector<int64_t> values;
    Status status = ReadIndexVector(*dims, "dims", &values);
    if (!status.ok()) return c->Error(status.message());
    for (int64_t v : values) {
      if (v < 0) return c->Error("Fill dimensions must be >= 0, got [", StrJoin(values, ","), "]");
    }
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(shape_fns::ShapeFromInputTensor(c, 0, &out));
  c->set_output(0, out);
  return Status::OK();
}

}  // namespace

REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(ConstShape)
    .Doc("A constant tensor: the value attr.");

// Placeholders are stateful so that graph optimizations never merge two of
// them (identical attrs, no inputs) or fold one into a constant: a feed
// replaces each by name.
REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn(shape_fns::ShapeFromAttr)
    .SetIsStateful()
    .Doc("A value that must be fed; running it unfed is an error.");

REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn(PlaceholderWithDefaultShape)
    .SetIsStateful()
    .Doc("Passes input through unless a value is fed for the output.");

REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Returns its input, sharing the buffer.");

REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .SetShapeFn(PassThroughShapes)
    .Doc("Returns each of its inputs, sharing the buffers (one node for many tensors).");

// TensorFlow's Snapshot copies so that a later in-place update of a ref
// variable's buffer cannot change the value already read.
REGISTER_OP("Snapshot")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("A copy of its input with its own buffer.");

REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ReshapeShape)
    .Doc("The same elements with a new shape; one size may be -1 and is inferred.");

REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ShapeShape)
    .Doc("The shape of a tensor as a 1-D tensor.");

REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("out_type: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(ShapeNShape)
    .Doc("The shapes of N tensors as N 1-D tensors.");

REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(TransposeShape)
    .Doc("Permutes dimensions: output dim i is input dim perm[i].");

REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(FillShape)
    .Doc("A tensor of shape dims with every element equal to the scalar value.");

REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Zeros with the shape and dtype of x.");

REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {" TW_PLAIN_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("Ones with the shape and dtype of x.");

}  // namespace tensorweave
