// ZerosLike and AddN of DT_VARIANT tensors: what tf.gradients needs to
// backpropagate through TensorLists. A list's gradient is a list of its
// elements' gradients, so a gradient that must be made up (an output no y
// uses) is ZerosLike of the list, and the gradients of a list that feeds two
// consumers are summed by AddN, element by element.
//
//   ZerosLike(list [a, <unset>, c])              -> [zeros(a), <unset>, zeros(c)]
//   AddN(list [a, <unset>], list [b, d])         -> [a + b, d]
//
// TensorFlow dispatches these through its variant op registry
// (ZEROS_LIKE_VARIANT_UNARY_OP, ADD_VARIANT_BINARY_OP; core/kernels/
// list_kernels.h TensorListZerosLike and TensorListBinaryAdd). TensorList is
// the only value a Variant holds here, so the dispatch is a type check; any
// other value is INTERNAL with TensorFlow's message, as an unregistered
// variant type is there. Errors on the lists themselves (element dtypes,
// lengths, shapes) are INVALID_ARGUMENT as in TensorFlow.
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor_list.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor_array.h"

namespace tensorweave {
namespace {

// Element dtypes an addition is defined for (TensorFlow's number types).
#define TW_FOR_EACH_ADDABLE(M) TW_FOR_EACH_REAL_NUMBER(M) TW_FOR_EACH_SMALL_INT(M)

// Zeros shaped like one list element; an unset element stays unset.
Status ZerosLikeElement(const Tensor& element, Tensor* out) {
  switch (element.dtype()) {
    case DT_INVALID:
      *out = Tensor();
      return Status::OK();
#define TW_ZEROS_CASE(T) case DataTypeToEnum<T>::value:
      TW_FOR_EACH_POD(TW_ZEROS_CASE)
#undef TW_ZEROS_CASE
      return MakeZeros(element.dtype(), element.shape(), out);
    default:
      return errors::InvalidArgument("Trying to compute zeros_like for unsupported dtype ",
                                     DataTypeString(element.dtype()));
  }
}

template <typename T>
void AddInto(const Tensor& a, const Tensor& b, Tensor* out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* sum = out->data<T>();
  const int64_t n = a.NumElements();
  for (int64_t i = 0; i < n; ++i) sum[i] = x[i] + y[i];
}

// The sum of two elements at one position; an unset element adds nothing.
Status AddElements(const Tensor& a, const Tensor& b, Tensor* out) {
  if (a.dtype() == DT_INVALID) {
    *out = b;
    return Status::OK();
  }
  if (b.dtype() == DT_INVALID) {
    *out = a;
    return Status::OK();
  }
  if (a.dtype() != b.dtype()) {
    return errors::InvalidArgument(
        "Trying to add two tensors with incompatible element types. One is ",
        DataTypeString(a.dtype()), " and the other is ", DataTypeString(b.dtype()));
  }
  if (a.shape() != b.shape()) {
    return errors::InvalidArgument(
        "Trying to add two tensors with incompatible element shapes. One is ",
        a.shape().DebugString(), " and the other is ", b.shape().DebugString());
  }
  switch (a.dtype()) {
#define TW_ADD_CASE(T)                                               \
  case DataTypeToEnum<T>::value:                                     \
    TW_RETURN_IF_ERROR(Tensor::Allocate(a.dtype(), a.shape(), out)); \
    AddInto<T>(a, b, out);                                           \
    return Status::OK();
    TW_FOR_EACH_ADDABLE(TW_ADD_CASE)
#undef TW_ADD_CASE
    default:
      return errors::InvalidArgument("Trying to add unsupported dtype ", DataTypeString(a.dtype()));
  }
}

Status TensorListZerosLike(const TensorList& x, std::shared_ptr<TensorList>* y) {
  auto zeros = std::make_shared<TensorList>(x.element_dtype, x.element_shape);
  zeros->max_num_elements = x.max_num_elements;
  zeros->tensors.reserve(x.tensors.size());
  for (const Tensor& element : x.tensors) {
    Tensor zero;
    TW_RETURN_IF_ERROR(ZerosLikeElement(element, &zero));
    zeros->tensors.push_back(std::move(zero));
  }
  *y = std::move(zeros);
  return Status::OK();
}

// Adds `b` into `sum`, position by position (TensorFlow's
// TensorListBinaryAdd, written into a list the caller owns): an unset
// element of `b` leaves `sum`'s as it is.
Status AddListInto(const TensorList& b, TensorList* sum) {
  if (sum->element_dtype != b.element_dtype) {
    return errors::InvalidArgument(
        "Trying to add two lists of tensors of different dtypes. One is ",
        DataTypeString(sum->element_dtype), " and the other is ", DataTypeString(b.element_dtype));
  }
  PartialTensorShape element_shape;
  if (!sum->element_shape.MergeWith(b.element_shape, &element_shape).ok()) {
    return errors::InvalidArgument(
        "Trying to add two lists of tensors with incompatible element shapes. One is ",
        sum->element_shape.DebugString(), " and the other is ", b.element_shape.DebugString());
  }
  if (sum->tensors.size() != b.tensors.size()) {
    return errors::InvalidArgument(
        "Trying to add two lists of tensors with different lengths. One is ", sum->tensors.size(),
        " and the other is ", b.tensors.size());
  }
  for (size_t i = 0; i < b.tensors.size(); ++i) {
    if (b.tensors[i].dtype() == DT_INVALID) continue;
    Tensor element;
    TW_RETURN_IF_ERROR(AddElements(sum->tensors[i], b.tensors[i], &element));
    sum->tensors[i] = std::move(element);
  }
  sum->element_shape = std::move(element_shape);
  sum->max_num_elements = -1;  // a sum is a plain list, as in TensorFlow
  return Status::OK();
}

// The TensorList a variant holds, or null for any other value (then the
// caller fails as TensorFlow's registry lookup does: INTERNAL).
const TensorList* ListInVariant(const Variant& value) { return value.get<TensorList>(); }

Status NoZerosLikeFor(const Variant& value) {
  return errors::Internal("No unary variant unary_op function found for op ZEROS_LIKE ",
                          "Variant type_name: ", value.TypeName(), " for device type: CPU");
}

Status NoAddFor(const Variant& value) {
  return errors::Internal("No unary variant binary_op function found for op ADD ",
                          "Variant type_name: '", value.TypeName(), "' for device type: CPU");
}

// The list input `i` holds when nothing else can see it (the kernel holds
// the only reference to the tensor and to its list), so the sum may be
// written into it; else null. The backprop loop of a while loop adds each
// iteration's list gradient into its accumulator this way, without copying
// the accumulator's element slots every iteration.
TensorList* UnsharedList(OpKernelContext* ctx, int i) {
  const Tensor& input = ctx->input(i);
  if (!input.RefCountIsOne()) return nullptr;
  const Variant& value = input.data<Variant>()[0];
  return value.use_count() == 1 ? value.get<TensorList>() : nullptr;
}

class ZerosLikeVariantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 0,
                errors::InvalidArgument(
                    "ZerosLike non-scalar Tensor with dtype=DT_VARIANT is not supported."));
    const Variant& value = input.data<Variant>()[0];
    const TensorList* list = ListInVariant(value);
    OP_REQUIRES(ctx, list != nullptr, NoZerosLikeFor(value));
    std::shared_ptr<TensorList> zeros;
    OP_REQUIRES_OK(ctx, TensorListZerosLike(*list, &zeros));
    Tensor handle;
    OP_REQUIRES_OK(ctx, TensorListToTensor(std::move(zeros), &handle));
    ctx->set_output(0, std::move(handle));
  }
};

class AddNVariantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                  errors::InvalidArgument(
                      "Inputs to operation AddN must have the same size and shape. Input 0: ",
                      first.shape().DebugString(), " != input ", i, ": ",
                      ctx->input(i).shape().DebugString()));
    }
    if (n == 1) {
      ctx->set_output(0, first);
      return;
    }
    for (int i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  errors::InvalidArgument(
                      "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[",
                      i, " has shape: ", ctx->input(i).shape().DebugString(), "."));
    }
    std::vector<const TensorList*> lists(n);
    const Variant& first_value = first.data<Variant>()[0];
    for (int i = 0; i < n; ++i) {
      const Variant& value = ctx->input(i).data<Variant>()[0];
      OP_REQUIRES(ctx, value.TypeName() == first_value.TypeName(),
                  errors::Internal("BinaryOpVariants: Variants a and b have different type ids.  ",
                                   "Type names: '", first_value.TypeName(), "' vs. '",
                                   value.TypeName(), "'"));
      lists[i] = ListInVariant(value);
      OP_REQUIRES(ctx, lists[i] != nullptr, NoAddFor(value));
    }
    // The sum goes into an input's own list when one is unshared, else
    // into a copy of the first.
    int owner = 0;
    TensorList* sum = nullptr;
    Tensor out;
    for (int i = 0; i < n && sum == nullptr; ++i) {
      sum = UnsharedList(ctx, i);
      if (sum != nullptr) {
        owner = i;
        out = ctx->input(i);
      }
    }
    if (sum == nullptr) {
      auto copy = std::make_shared<TensorList>(*lists[0]);
      sum = copy.get();
      OP_REQUIRES_OK(ctx, TensorListToTensor(std::move(copy), &out));
    }
    for (int i = 0; i < n; ++i) {
      if (i != owner) OP_REQUIRES_OK(ctx, AddListInto(*lists[i], sum));
    }
    ctx->set_output(0, std::move(out));
  }
};

#undef TW_FOR_EACH_ADDABLE

}  // namespace

TW_REGISTER_CPU_KERNEL("ZerosLike", Variant, ZerosLikeVariantOp);
TW_REGISTER_CPU_KERNEL("AddN", Variant, AddNVariantOp);

}  // namespace tensorweave
