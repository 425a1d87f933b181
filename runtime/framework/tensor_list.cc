#include "runtime/framework/tensor_list.h"

#include <unistd.h>

#include <algorithm>
#include <new>

#include "runtime/framework/str_util.h"

namespace tensorweave {

std::string TensorList::DebugString() const {
  return StrCat("TensorList<element_dtype: ", DataTypeString(element_dtype),
                " element_shape: ", element_shape.DebugString(), " length: ", tensors.size(), ">");
}

Status TensorList::Resize(int64_t size) {
  if (size < 0) return errors::InvalidArgument("A list cannot have ", size, " elements");
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page_size > 0
                              ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                              : UINT64_MAX / 2;
  // A quarter of memory: a changed list is a copy of its slots.
  if (static_cast<uint64_t>(size) > memory / 4 / sizeof(Tensor)) {
    return errors::ResourceExhausted("A list of ", size, " elements would need more than ", memory,
                                     " bytes of element slots");
  }
  try {
    tensors.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("Out of memory growing a list to ", size, " elements");
  }
  return Status::OK();
}

Status TensorListToTensor(std::shared_ptr<TensorList> list, Tensor* out) {
  TW_RETURN_IF_ERROR(Tensor::Allocate(DT_VARIANT, TensorShape(), out));
  out->data<Variant>()[0] = Variant(std::move(list));
  return Status::OK();
}

Status TensorListFromHandle(const Tensor& handle, const std::string& input_name,
                            const TensorList** list) {
  if (handle.dtype() != DT_VARIANT || handle.NumElements() != 1) {
    return errors::InvalidArgument(
        "Input ", input_name, " must be a scalar variant tensor holding a TensorList, but is ",
        DataTypeString(handle.dtype()), " of shape ", handle.shape().DebugString());
  }
  const Variant& value = handle.data<Variant>()[0];
  *list = value.get<TensorList>();
  if (*list == nullptr) {
    return errors::InvalidArgument("Input ", input_name,
                                   " expected to be a TensorList but is a variant holding ",
                                   value.TypeName());
  }
  return Status::OK();
}

namespace {
template <typename T>
Status ShapeFromValues(const Tensor& shape, PartialTensorShape* out) {
  const T* values = shape.data<T>();
  if (shape.dims() == 0) {
    if (values[0] != -1) {
      return errors::InvalidArgument(
          "The only valid scalar shape tensor is the fully unknown shape specified as -1, got ",
          static_cast<int64_t>(values[0]));
    }
    *out = PartialTensorShape();
    return Status::OK();
  }
  std::vector<int64_t> dims;
  dims.reserve(shape.NumElements());
  for (int64_t i = 0; i < shape.NumElements(); ++i) {
    if (values[i] < -1) {
      return errors::InvalidArgument("Dimension ", static_cast<int64_t>(values[i]),
                                     " must be >= -1 in shape tensor");
    }
    dims.push_back(static_cast<int64_t>(values[i]));
  }
  return PartialTensorShape::Build(dims, out);
}
}  // namespace

Status PartialShapeFromShapeTensor(const Tensor& shape, PartialTensorShape* out) {
  if (shape.dims() > 1) {
    return errors::InvalidArgument("Shape tensor must be a scalar or a vector, but has shape ",
                                   shape.shape().DebugString());
  }
  if (shape.dtype() == DT_INT32) return ShapeFromValues<int32_t>(shape, out);
  if (shape.dtype() == DT_INT64) return ShapeFromValues<int64_t>(shape, out);
  return errors::InvalidArgument("Shape tensor must be int32 or int64, but is ",
                                 DataTypeString(shape.dtype()));
}

namespace {
template <typename T>
void FillShapeValues(const PartialTensorShape& shape, Tensor* out) {
  T* values = out->data<T>();
  if (shape.unknown_rank()) {
    values[0] = -1;
    return;
  }
  for (int i = 0; i < shape.dims(); ++i) values[i] = static_cast<T>(shape.dim_size(i));
}
}  // namespace

Status ShapeTensorFromPartialShape(const PartialTensorShape& shape, DataType dtype, Tensor* out) {
  if (dtype != DT_INT32 && dtype != DT_INT64) {
    return errors::InvalidArgument("Shape tensors are int32 or int64, not ", DataTypeString(dtype));
  }
  const TensorShape tensor_shape =
      shape.unknown_rank() ? TensorShape() : TensorShape({static_cast<int64_t>(shape.dims())});
  TW_RETURN_IF_ERROR(Tensor::Allocate(dtype, tensor_shape, out));
  if (dtype == DT_INT32) {
    FillShapeValues<int32_t>(shape, out);
  } else {
    FillShapeValues<int64_t>(shape, out);
  }
  return Status::OK();
}

}  // namespace tensorweave
