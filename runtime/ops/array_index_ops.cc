// Ops that compute or follow indices: Range, GatherV2, OneHot, Where and
// UnsortedSegmentSum (the dense gradient of GatherV2). Names and attrs
// follow TensorFlow; the allowed dtypes are the ones the kernels implement.
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/ops/array_shape_ops.h"
#include "runtime/ops/checked_count.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using array_shape_fns::KnownValues;
using array_shape_fns::NormalizeAxis;
using array_shape_fns::SetOutputDims;
using shape_inference::InferenceContext;

// The count of Range(start, limit, delta) for constant inputs of type T,
// by the kernel's own rule (RangeCount), so the two never disagree.
template <typename T>
Status KnownRangeShape(InferenceContext* c, const Tensor& start, const Tensor& limit,
                       const Tensor& delta) {
  int64_t count = 0;
  Status status = RangeCount<T>(start.data<T>()[0], limit.data<T>()[0], delta.data<T>()[0], &count);
  if (!status.ok()) return c->Error(status.message());
  return SetOutputDims(c, 0, {count});
}

Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    PartialTensorShape unused;
    TW_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  }
  const Tensor* start = c->input_tensor(0);
  const Tensor* limit = c->input_tensor(1);
  const Tensor* delta = c->input_tensor(2);
  const bool known = start != nullptr && limit != nullptr && delta != nullptr;
  if (known) {
    for (const Tensor* t : {start, limit, delta}) {
      if (t->NumElements() != 1 || t->dtype() != start->dtype()) {
        return c->Error("start, limit and delta must be scalars of one type, got ",
                        DataTypeString(t->dtype()), " ", t->shape().DebugString());
      }
    }
    switch (start->dtype()) {
      case DT_FLOAT:
        return KnownRangeShape<float>(c, *start, *limit, *delta);
      case DT_DOUBLE:
        return KnownRangeShape<double>(c, *start, *limit, *delta);
      case DT_INT32:
        return KnownRangeShape<int32_t>(c, *start, *limit, *delta);
      case DT_INT64:
        return KnownRangeShape<int64_t>(c, *start, *limit, *delta);
      default:
        break;  // no kernel counts these: leave the length unknown
    }
  }
  c->set_output(0, PartialTensorShape::UnknownDims(1));
  return Status::OK();
}

Status GatherV2Shape(InferenceContext* c) {
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  int64_t batch_dims;
  TW_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  if (batch_dims != 0) return c->Error("GatherV2 supports batch_dims = 0 only, got ", batch_dims);
  std::vector<int64_t> axis;
  bool known = false;
  TW_RETURN_IF_ERROR(KnownValues(c, 2, "axis", &axis, &known));
  if (params.unknown_rank() || indices.unknown_rank() || !known) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  if (axis.size() != 1) return c->Error("axis must be a scalar");
  if (params.dims() == 0) return c->Error("params must be at least 1 dimensional");
  int64_t at;
  TW_RETURN_IF_ERROR(NormalizeAxis(c, axis[0], params.dims(), "Gather axis", &at));
  std::vector<int64_t> dims(params.dim_sizes().begin(), params.dim_sizes().begin() + at);
  dims.insert(dims.end(), indices.dim_sizes().begin(), indices.dim_sizes().end());
  dims.insert(dims.end(), params.dim_sizes().begin() + at + 1, params.dim_sizes().end());
  return SetOutputDims(c, 0, dims);
}

Status OneHotShape(InferenceContext* c) {
  const PartialTensorShape& indices = c->input(0);
  int64_t axis;
  TW_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1) return c->Error("Expected axis to be -1 or between [0, rank), got ", axis);
  for (int i = 1; i < 4; ++i) {
    PartialTensorShape unused;
    TW_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  }
  if (indices.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  std::vector<int64_t> depth;
  bool known = false;
  TW_RETURN_IF_ERROR(KnownValues(c, 1, "depth", &depth, &known));
  if (known && depth.size() != 1) {
    return c->Error("depth must be a scalar, got ", depth.size(), " values");
  }
  if (known && depth[0] < 0) return c->Error("depth must be non-negative, got: ", depth[0]);
  const int rank = indices.dims();
  if (axis > rank) {
    return c->Error("Expected axis to be -1 or between [0, ", rank + 1, "), got ", axis);
  }
  std::vector<int64_t> dims = indices.dim_sizes();
  dims.insert(dims.begin() + (axis < 0 ? rank : axis), known ? depth[0] : -1);
  return SetOutputDims(c, 0, dims);
}

Status WhereShape(InferenceContext* c) {
  const int rank = c->input(0).dims();
  return SetOutputDims(c, 0, {-1, rank});
}

Status UnsortedSegmentSumShape(InferenceContext* c) {
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& ids = c->input(1);
  PartialTensorShape unused;
  TW_RETURN_IF_ERROR(c->WithRank(2, 0, &unused));
  std::vector<int64_t> count;
  bool known = false;
  TW_RETURN_IF_ERROR(KnownValues(c, 2, "num_segments", &count, &known));
  if (known && count.size() != 1) {
    return c->Error("num_segments must be a scalar, got ", count.size(), " values");
  }
  if (known && count[0] < 0) return c->Error("num_segments must be non-negative, got ", count[0]);
  if (data.unknown_rank() || ids.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  if (ids.dims() > data.dims()) {
    return c->Error("segment_ids.shape ", ids.DebugString(), " must be a prefix of data.shape ",
                    data.DebugString());
  }
  for (int d = 0; d < ids.dims(); ++d) {
    if (ids.dim_size(d) >= 0 && data.dim_size(d) >= 0 && ids.dim_size(d) != data.dim_size(d)) {
      return c->Error("segment_ids.shape ", ids.DebugString(), " must be a prefix of data.shape ",
                      data.DebugString());
    }
  }
  std::vector<int64_t> dims = {known ? count[0] : -1};
  dims.insert(dims.end(), data.dim_sizes().begin() + ids.dims(), data.dim_sizes().end());
  return SetOutputDims(c, 0, dims);
}

}  // namespace

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {" TW_ARITHMETIC_TYPES "} = DT_INT32")
    .SetShapeFn(RangeShape)
    .Doc("start, start + delta, ... up to but excluding limit.");

REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Output("output: Tparams")
    .Attr("batch_dims: int = 0")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, " TW_INDEX_TYPES "}")
    .Attr("Taxis: {" TW_INDEX_TYPES "}")
    .SetShapeFn(GatherV2Shape)
    .Doc("Slices of params along axis at indices; indices out of range are an error.");

REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Output("output: T")
    .Attr("axis: int = -1")
    .Attr("T: {" TW_ALL_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("TI: {uint8, int8, int32, int64} = DT_INT64")
    .SetShapeFn(OneHotShape)
    .Doc("on_value where the new depth index equals indices, off_value elsewhere.");

REGISTER_OP("Where")
    .Input("input: T")
    .Output("index: int64")
    .Attr("T: {" TW_NUMBER_TYPES ", bool} = DT_BOOL")
    .SetShapeFn(WhereShape)
    .Doc("The coordinates of the true (non-zero) elements, one row each, in row-major order.");

REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: {" TW_NUMBER_TYPES "}")
    .Attr("Tindices: {int16, " TW_INDEX_TYPES "}")
    .Attr("Tnumsegments: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(UnsortedSegmentSumShape)
    .Doc("output[i] = sum of the data rows whose segment id is i; negative ids are dropped.");

}  // namespace tensorweave
