// TensorList: the value TensorFlow's TensorList ops keep in a scalar
// DT_VARIANT tensor — a vector of tensors of one dtype whose shapes fit a
// (partial) element shape. An element never set is an uninitialized Tensor
// (dtype DT_INVALID); reading one gives zeros of the element shape.
//
//   auto list = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::UnknownDims(1));
//   list->tensors.push_back(Tensor(DT_FLOAT, TensorShape({3})));
//   Tensor handle;
//   TW_RETURN_IF_ERROR(TensorListToTensor(list, &handle));
//   const TensorList* same = nullptr;
//   TW_RETURN_IF_ERROR(TensorListFromHandle(handle, "input_handle", &same));
//
// The list ops are pure: an op that changes a list outputs a new handle and
// leaves its input as it was (copy on write; kernels in
// runtime/kernels/list_kernels.cc change a list in place only when nothing
// else can see it).
#ifndef TENSORWEAVE_FRAMEWORK_TENSOR_LIST_H_
#define TENSORWEAVE_FRAMEWORK_TENSOR_LIST_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/framework/variant.h"

namespace tensorweave {

class TensorList : public VariantValue {
 public:
  TensorList(DataType element_dtype, PartialTensorShape element_shape)
      : element_dtype(element_dtype), element_shape(std::move(element_shape)) {}

  std::string TypeName() const override { return "tensorflow::TensorList"; }
  std::string DebugString() const override;

  // Grows (with unset elements) or cuts the list to `size` elements.
  // RESOURCE_EXHAUSTED, changing nothing, when the element slots alone
  // would not fit in this machine's memory (a graph can ask for 2^31).
  Status Resize(int64_t size);

  DataType element_dtype;
  PartialTensorShape element_shape;
  std::vector<Tensor> tensors;
  // -1: no limit (only EmptyTensorList sets one; PushBack enforces it).
  int max_num_elements = -1;
};

// A scalar DT_VARIANT tensor holding `list`.
Status TensorListToTensor(std::shared_ptr<TensorList> list, Tensor* out);

// The list a handle input holds. INVALID_ARGUMENT (naming `input_name`)
// unless `handle` is a scalar DT_VARIANT tensor holding a TensorList.
Status TensorListFromHandle(const Tensor& handle, const std::string& input_name,
                            const TensorList** list);

// The element shape an op's shape input means, as TensorFlow reads it: an
// int32/int64 scalar -1 is an unknown rank, a vector lists the dimensions
// (-1 unknown). Anything else is INVALID_ARGUMENT.
Status PartialShapeFromShapeTensor(const Tensor& shape, PartialTensorShape* out);

// The element shape as an int32/int64 tensor, the inverse of the above.
Status ShapeTensorFromPartialShape(const PartialTensorShape& shape, DataType dtype, Tensor* out);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_TENSOR_LIST_H_
