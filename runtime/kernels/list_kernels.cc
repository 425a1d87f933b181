// Kernels of the TensorList ops (runtime/ops/list_ops.cc). A list travels
// as a scalar DT_VARIANT tensor holding a TensorList
// (runtime/framework/tensor_list.h). Every op that changes a list outputs a
// new handle: it copies the list (a vector of shared tensors, so cheap)
// unless the kernel holds the only reference to the input handle and its
// list, in which case it changes the list in place — the common case of a
// loop body that sets one item per iteration.
//
// Errors follow TensorFlow (core/kernels/list_kernels.h/.cc): a wrong
// element dtype, an incompatible element shape and an index out of range
// are INVALID_ARGUMENT; the executor adds the node's name.
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor_list.h"
#include "runtime/kernels/tensor_array.h"

namespace tensorweave {
namespace {

Status CheckElementDtype(DataType op_dtype, const TensorList& list) {
  if (op_dtype != list.element_dtype) {
    return errors::InvalidArgument("Invalid data types; op elements ", DataTypeString(op_dtype),
                                   " but list elements ", DataTypeString(list.element_dtype));
  }
  return Status::OK();
}

// The list kernels copy and zero-fill elements of these types; a list of
// lists or of resources is not supported here.
Status CheckSupportedElementDtype(DataType dtype) {
  if (!DataTypeIsSupported(dtype)) {
    return errors::Unimplemented("TensorList element_dtype ", DataTypeString(dtype),
                                 " is not supported");
  }
  return Status::OK();
}

Status ReadList(OpKernelContext* ctx, int input, const TensorList** list) {
  return TensorListFromHandle(ctx->input(input), "input_handle", list);
}

Status ReadInt32Scalar(const Tensor& tensor, const char* what, int32_t* value) {
  if (tensor.dtype() != DT_INT32 || tensor.NumElements() != 1 || tensor.dims() != 0) {
    return errors::InvalidArgument(what, " must be an int32 scalar, but has shape ",
                                   tensor.shape().DebugString());
  }
  *value = tensor.scalar<int32_t>();
  return Status::OK();
}

// A list the kernel may change (input 0's, when nothing else can see it;
// else a copy) and the handle that holds it, to output.
Status ListForUpdate(OpKernelContext* ctx, std::shared_ptr<TensorList>* list, Tensor* handle) {
  const TensorList* current = nullptr;
  TW_RETURN_IF_ERROR(ReadList(ctx, 0, &current));
  const Tensor& input = ctx->input(0);
  const Variant& value = input.data<Variant>()[0];
  if (input.RefCountIsOne() && value.use_count() == 1) {
    *list = std::static_pointer_cast<TensorList>(value.value());
    *handle = input;
    return Status::OK();
  }
  *list = std::make_shared<TensorList>(*current);
  return TensorListToTensor(*list, handle);
}

// The list's element shape merged with the op's element_shape input.
Status MergedElementShape(const TensorList& list, const Tensor& shape_input,
                          PartialTensorShape* out) {
  PartialTensorShape requested;
  TW_RETURN_IF_ERROR(PartialShapeFromShapeTensor(shape_input, &requested));
  Status merged = list.element_shape.MergeWith(requested, out);
  if (!merged.ok()) {
    return errors::InvalidArgument("Incompatible shapes: the list's element shape ",
                                   list.element_shape.DebugString(), " and the op's ",
                                   requested.DebugString());
  }
  return Status::OK();
}

// The shape every element read from `list` has: `partial` if fully defined,
// else the shape of the first element set (which must fit it).
Status ResolveElementShape(const TensorList& list, const PartialTensorShape& partial,
                           TensorShape* out) {
  if (partial.IsFullyDefined()) return partial.AsTensorShape(out);
  for (const Tensor& element : list.tensors) {
    if (element.dtype() == DT_INVALID) continue;
    if (!partial.IsCompatibleWith(element.shape())) {
      return errors::InvalidArgument("Incompatible element shape ", element.shape().DebugString(),
                                     " for element shape ", partial.DebugString());
    }
    *out = element.shape();
    return Status::OK();
  }
  if (list.tensors.empty()) {
    return errors::InvalidArgument(
        "Tried to stack elements of an empty list with non-fully-defined element_shape: ",
        partial.DebugString());
  }
  return errors::InvalidArgument(
      "Trying to read an uninitialized tensor but element_shape is not fully defined: ",
      partial.DebugString(), " and no list element is set.");
}

// Element `index` of `list` (zeros of `shape` when never set), which must
// have `shape`.
Status ElementWithShape(const TensorList& list, int64_t index, const TensorShape& shape,
                        Tensor* out) {
  const Tensor& element = list.tensors[index];
  if (element.dtype() == DT_INVALID) return MakeZeros(list.element_dtype, shape, out);
  if (element.shape() != shape) {
    return errors::InvalidArgument("Tried to stack elements with different shapes: element ", index,
                                   " has shape ", element.shape().DebugString(), " but expected ",
                                   shape.DebugString());
  }
  *out = element;
  return Status::OK();
}

// Stacks `list`'s elements at `indices` into out[len(indices)] + shape.
Status StackElements(const TensorList& list, const std::vector<int64_t>& indices,
                     const TensorShape& shape, Tensor* out) {
  TensorShape stacked = shape;
  TW_RETURN_IF_ERROR(stacked.InsertDim(0, static_cast<int64_t>(indices.size())));
  TW_RETURN_IF_ERROR(Tensor::Allocate(list.element_dtype, stacked, out));
  const int64_t per_element = shape.num_elements();
  for (size_t i = 0; i < indices.size(); ++i) {
    Tensor element;
    TW_RETURN_IF_ERROR(ElementWithShape(list, indices[i], shape, &element));
    CopyElementsInto(element, static_cast<int64_t>(i) * per_element, out);
  }
  return Status::OK();
}

// Checks that `item` may be stored in `list`.
Status CheckItem(const TensorList& list, const Tensor& item, const char* action) {
  if (item.dtype() != list.element_dtype) {
    return errors::InvalidArgument("Invalid data types; op elements ", DataTypeString(item.dtype()),
                                   " but list elements ", DataTypeString(list.element_dtype));
  }
  if (!list.element_shape.IsCompatibleWith(item.shape())) {
    return errors::InvalidArgument("Tried to ", action, " a tensor with incompatible shape ",
                                   item.shape().DebugString(), " into a list with element shape ",
                                   list.element_shape.DebugString());
  }
  return Status::OK();
}

// Base of kernels with an element_dtype attr.
class ListKernel : public OpKernel {
 public:
  explicit ListKernel(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("element_dtype", &element_dtype_));
    OP_REQUIRES_OK(c, CheckSupportedElementDtype(element_dtype_));
  }
  bool IsExpensive() const override { return false; }

 protected:
  DataType element_dtype_ = DT_INVALID;
};

// EmptyTensorList and TensorListReserve.
class NewListOp : public ListKernel {
 public:
  explicit NewListOp(OpKernelConstruction* c)
      : ListKernel(c), reserve_(type_string() != "EmptyTensorList") {}

  void Compute(OpKernelContext* ctx) override {
    PartialTensorShape element_shape;
    OP_REQUIRES_OK(ctx, PartialShapeFromShapeTensor(ctx->input(0), &element_shape));
    int32_t count = 0;
    OP_REQUIRES_OK(ctx, ReadInt32Scalar(ctx->input(1),
                                        reserve_ ? "num_elements" : "max_num_elements", &count));
    auto list = std::make_shared<TensorList>(element_dtype_, element_shape);
    if (reserve_) {
      OP_REQUIRES(
          ctx, count >= 0,
          errors::InvalidArgument(
              "The num_elements to reserve must be a non negative number, but got ", count));
      OP_REQUIRES_OK(ctx, list->Resize(count));
    } else {
      OP_REQUIRES(ctx, count >= -1,
                  errors::InvalidArgument(
                      "max_num_elements must be non-negative or -1 (unbounded), but got ", count));
      list->max_num_elements = count;
    }
    Tensor handle;
    OP_REQUIRES_OK(ctx, TensorListToTensor(std::move(list), &handle));
    ctx->set_output(0, std::move(handle));
  }

 private:
  bool reserve_;
};

class FromTensorOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tensor = ctx->input(0);
    OP_REQUIRES(ctx, tensor.dims() >= 1,
                errors::InvalidArgument("Tensor must be at least a vector, but saw shape: ",
                                        tensor.shape().DebugString()));
    PartialTensorShape element_shape;
    OP_REQUIRES_OK(ctx, PartialShapeFromShapeTensor(ctx->input(1), &element_shape));
    std::vector<int64_t> rest(tensor.shape().dim_sizes().begin() + 1,
                              tensor.shape().dim_sizes().end());
    TensorShape row_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(rest, &row_shape));
    OP_REQUIRES(
        ctx, element_shape.IsCompatibleWith(row_shape),
        errors::InvalidArgument("Specified a list with shape ", element_shape.DebugString(),
                                " from a tensor with shape ", tensor.shape().DebugString()));
    auto list = std::make_shared<TensorList>(element_dtype_, element_shape);
    list->tensors.reserve(tensor.dim_size(0));
    for (int64_t i = 0; i < tensor.dim_size(0); ++i) {
      Tensor row;
      OP_REQUIRES_OK(ctx, SliceRows(tensor, i, 1, &row));
      Tensor element;
      element.CopyFrom(row, row_shape);
      list->tensors.push_back(std::move(element));
    }
    Tensor handle;
    OP_REQUIRES_OK(ctx, TensorListToTensor(std::move(list), &handle));
    ctx->set_output(0, std::move(handle));
  }
};

class GetItemOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *list));
    int32_t index = 0;
    OP_REQUIRES_OK(ctx, ReadInt32Scalar(ctx->input(1), "index", &index));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(ctx, index >= 0 && index < size,
                errors::InvalidArgument("Trying to access element ", index, " in a list with ",
                                        size, " elements."));
    const Tensor& element = list->tensors[index];
    if (element.dtype() != DT_INVALID) {
      ctx->set_output(0, element);
      return;
    }
    PartialTensorShape partial;
    OP_REQUIRES_OK(ctx, MergedElementShape(*list, ctx->input(2), &partial));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ResolveElementShape(*list, partial, &shape));
    Tensor zeros;
    OP_REQUIRES_OK(ctx, MakeZeros(element_dtype_, shape, &zeros));
    ctx->set_output(0, std::move(zeros));
  }
};

class SetItemOp : public ListKernel {
 public:
  explicit SetItemOp(OpKernelConstruction* c) : ListKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("resize_if_index_out_of_bounds", &resize_));
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorList* current = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &current));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *current));
    int32_t index = 0;
    OP_REQUIRES_OK(ctx, ReadInt32Scalar(ctx->input(1), "index", &index));
    const Tensor& item = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckItem(*current, item, "set"));
    const int64_t size = static_cast<int64_t>(current->tensors.size());
    OP_REQUIRES(ctx, index >= 0 && (index < size || resize_),
                errors::InvalidArgument("Trying to modify element ", index, " in a list with ",
                                        size, " elements."));
    std::shared_ptr<TensorList> list;
    Tensor handle;
    OP_REQUIRES_OK(ctx, ListForUpdate(ctx, &list, &handle));
    if (index >= size) OP_REQUIRES_OK(ctx, list->Resize(int64_t{index} + 1));
    list->tensors[index] = item;
    ctx->set_output(0, std::move(handle));
  }

 private:
  bool resize_ = false;
};

class StackOp : public ListKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : ListKernel(c) {
    if (type_string() == "TensorListStack") {
      OP_REQUIRES_OK(c, c->GetAttr("num_elements", &num_elements_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *list));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(ctx, num_elements_ == -1 || num_elements_ == size,
                errors::InvalidArgument("Operation expected a list with ", num_elements_,
                                        " elements but got a list with ", size, " elements."));
    PartialTensorShape partial;
    OP_REQUIRES_OK(ctx, MergedElementShape(*list, ctx->input(1), &partial));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ResolveElementShape(*list, partial, &shape));
    std::vector<int64_t> indices(size);
    for (int64_t i = 0; i < size; ++i) indices[i] = i;
    Tensor out;
    OP_REQUIRES_OK(ctx, StackElements(*list, indices, shape, &out));
    ctx->set_output(0, std::move(out));
  }

 private:
  int64_t num_elements_ = -1;
};

class GatherOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *list));
    const Tensor& indices_tensor = ctx->input(1);
    OP_REQUIRES(ctx, indices_tensor.dims() == 1 && indices_tensor.dtype() == DT_INT32,
                errors::InvalidArgument("indices must be an int32 vector, but has shape ",
                                        indices_tensor.shape().DebugString()));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    std::vector<int64_t> indices(indices_tensor.NumElements());
    for (int64_t i = 0; i < indices_tensor.NumElements(); ++i) {
      const int32_t index = indices_tensor.data<int32_t>()[i];
      OP_REQUIRES(ctx, index >= 0 && index < size,
                  errors::InvalidArgument("Trying to gather element ", index, " in a list with ",
                                          size, " elements."));
      indices[i] = index;
    }
    PartialTensorShape partial;
    OP_REQUIRES_OK(ctx, MergedElementShape(*list, ctx->input(2), &partial));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ResolveElementShape(*list, partial, &shape));
    Tensor out;
    OP_REQUIRES_OK(ctx, StackElements(*list, indices, shape, &out));
    ctx->set_output(0, std::move(out));
  }
};

class LengthOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<int32_t>()[0] = static_cast<int32_t>(list->tensors.size());
  }
};

class ElementShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    Tensor out;
    OP_REQUIRES_OK(
        ctx, ShapeTensorFromPartialShape(list->element_shape, ctx->expected_output_dtype(0), &out));
    ctx->set_output(0, std::move(out));
  }
};

class PushBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* current = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &current));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *current));
    const Tensor& item = ctx->input(1);
    OP_REQUIRES_OK(ctx, CheckItem(*current, item, "push"));
    const int64_t size = static_cast<int64_t>(current->tensors.size());
    OP_REQUIRES(ctx, current->max_num_elements == -1 || size < current->max_num_elements,
                errors::InvalidArgument("Tried to push item into a full list list size: ", size,
                                        " max_num_elements: ", current->max_num_elements));
    std::shared_ptr<TensorList> list;
    Tensor handle;
    OP_REQUIRES_OK(ctx, ListForUpdate(ctx, &list, &handle));
    list->tensors.push_back(item);
    ctx->set_output(0, std::move(handle));
  }
};

class PopBackOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* current = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &current));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *current));
    OP_REQUIRES(ctx, !current->tensors.empty(),
                errors::InvalidArgument("Trying to pop from an empty list."));
    Tensor item = current->tensors.back();
    if (item.dtype() == DT_INVALID) {
      PartialTensorShape partial;
      OP_REQUIRES_OK(ctx, MergedElementShape(*current, ctx->input(1), &partial));
      TensorShape shape;
      OP_REQUIRES_OK(ctx, ResolveElementShape(*current, partial, &shape));
      OP_REQUIRES_OK(ctx, MakeZeros(element_dtype_, shape, &item));
    }
    std::shared_ptr<TensorList> list;
    Tensor handle;
    OP_REQUIRES_OK(ctx, ListForUpdate(ctx, &list, &handle));
    list->tensors.pop_back();
    ctx->set_output(0, std::move(handle));
    ctx->set_output(1, std::move(item));
  }
};

class ConcatOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* list = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &list));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *list));
    PartialTensorShape partial;
    OP_REQUIRES_OK(ctx, MergedElementShape(*list, ctx->input(1), &partial));
    OP_REQUIRES(ctx, partial.unknown_rank() || partial.dims() >= 1,
                errors::InvalidArgument("Concat requires elements to be at least vectors, "
                                        "found scalars instead."));
    const Tensor& leading_dims = ctx->input(2);
    OP_REQUIRES(ctx, leading_dims.dtype() == DT_INT64 && leading_dims.dims() == 1,
                errors::InvalidArgument("leading_dims must be an int64 vector"));
    const int64_t size = static_cast<int64_t>(list->tensors.size());
    OP_REQUIRES(ctx, leading_dims.NumElements() == 0 || leading_dims.NumElements() == size,
                errors::InvalidArgument("leading_dims has ", leading_dims.NumElements(),
                                        " entries for a list with ", size, " elements"));
    // Each element's shape: its own, or for an element never set the
    // element shape with its first dimension from leading_dims.
    std::vector<Tensor> elements(size);
    std::vector<int64_t> rest;
    bool have_rest = false;
    int64_t rows = 0;
    for (int64_t i = 0; i < size; ++i) {
      Tensor element = list->tensors[i];
      if (element.dtype() == DT_INVALID) {
        PartialTensorShape shape = partial;
        if (leading_dims.NumElements() > 0 && !shape.unknown_rank()) {
          std::vector<int64_t> dims = shape.dim_sizes();
          dims[0] = leading_dims.data<int64_t>()[i];
          OP_REQUIRES_OK(ctx, PartialTensorShape::Build(dims, &shape));
        }
        TensorShape full;
        OP_REQUIRES(
            ctx, shape.IsFullyDefined(),
            errors::InvalidArgument("Trying to concat list with only uninitialized tensors but "
                                    "element_shape_except_first_dim is not fully defined: ",
                                    shape.DebugString()));
        OP_REQUIRES_OK(ctx, shape.AsTensorShape(&full));
        OP_REQUIRES_OK(ctx, MakeZeros(element_dtype_, full, &element));
      }
      OP_REQUIRES(ctx, element.dims() >= 1,
                  errors::InvalidArgument("Concat saw a scalar shape at index ", i,
                                          " but requires at least vectors."));
      std::vector<int64_t> tail(element.shape().dim_sizes().begin() + 1,
                                element.shape().dim_sizes().end());
      if (!have_rest) {
        rest = tail;
        have_rest = true;
      }
      OP_REQUIRES(ctx, tail == rest,
                  errors::InvalidArgument("Tried to concat tensors with unequal shapes: ",
                                          element.shape().DebugString(), " at index ", i));
      rows += element.dim_size(0);
      elements[i] = std::move(element);
    }
    if (!have_rest) {
      // An empty list: the shape after the first dimension must be known.
      OP_REQUIRES(ctx, !partial.unknown_rank(),
                  errors::InvalidArgument("All except the first dimension must be fully "
                                          "defined when concating an empty tensor list. "
                                          "element_shape: ",
                                          partial.DebugString()));
      rest.assign(partial.dim_sizes().begin() + 1, partial.dim_sizes().end());
      for (int64_t d : rest) {
        OP_REQUIRES(ctx, d >= 0,
                    errors::InvalidArgument("All except the first dimension must be fully "
                                            "defined when concating an empty tensor list. "
                                            "element_shape: ",
                                            partial.DebugString()));
      }
    }
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), rest.begin(), rest.end());
    TensorShape out_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &out_shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    Tensor* lengths = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({size}), &lengths));
    int64_t offset = 0;
    for (int64_t i = 0; i < size; ++i) {
      CopyElementsInto(elements[i], offset, out);
      offset += elements[i].NumElements();
      lengths->data<int64_t>()[i] = elements[i].dim_size(0);
    }
  }
};

class ScatterIntoExistingListOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const TensorList* current = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &current));
    OP_REQUIRES_OK(ctx, CheckElementDtype(element_dtype_, *current));
    const Tensor& tensor = ctx->input(1);
    const Tensor& indices = ctx->input(2);
    OP_REQUIRES(ctx, tensor.dims() >= 1,
                errors::InvalidArgument("Tensor must be at least a vector, but saw shape: ",
                                        tensor.shape().DebugString()));
    OP_REQUIRES(ctx, indices.dims() == 1 && indices.dtype() == DT_INT32,
                errors::InvalidArgument("Expected indices to be a vector, but received shape: ",
                                        indices.shape().DebugString()));
    OP_REQUIRES(ctx, indices.NumElements() == tensor.dim_size(0),
                errors::InvalidArgument("Expected len(indices) == tensor.shape[0], but saw: ",
                                        indices.NumElements(), " vs. ", tensor.dim_size(0)));
    std::vector<int64_t> rest(tensor.shape().dim_sizes().begin() + 1,
                              tensor.shape().dim_sizes().end());
    TensorShape row_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(rest, &row_shape));
    OP_REQUIRES(ctx, current->element_shape.IsCompatibleWith(row_shape),
                errors::InvalidArgument("Tried to scatter tensors of shape ",
                                        row_shape.DebugString(), " into a list with element shape ",
                                        current->element_shape.DebugString()));
    const int64_t size = static_cast<int64_t>(current->tensors.size());
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      const int32_t index = indices.data<int32_t>()[i];
      OP_REQUIRES(ctx, index >= 0,
                  errors::InvalidArgument("Indices in TensorListScatter must all be "
                                          "non-negative."));
      OP_REQUIRES(ctx, index < size,
                  errors::InvalidArgument("Trying to scatter at index ", index,
                                          " in list with size ", size));
    }
    std::shared_ptr<TensorList> list;
    Tensor handle;
    OP_REQUIRES_OK(ctx, ListForUpdate(ctx, &list, &handle));
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      Tensor row;
      OP_REQUIRES_OK(ctx, SliceRows(tensor, i, 1, &row));
      Tensor element;
      element.CopyFrom(row, row_shape);
      list->tensors[indices.data<int32_t>()[i]] = std::move(element);
    }
    ctx->set_output(0, std::move(handle));
  }
};

class SplitOp : public ListKernel {
 public:
  using ListKernel::ListKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tensor = ctx->input(0);
    OP_REQUIRES(ctx, tensor.dims() >= 1,
                errors::InvalidArgument("Tensor must be at least a vector, but saw shape: ",
                                        tensor.shape().DebugString()));
    PartialTensorShape element_shape;
    OP_REQUIRES_OK(ctx, PartialShapeFromShapeTensor(ctx->input(1), &element_shape));
    OP_REQUIRES(ctx, element_shape.unknown_rank() || element_shape.dims() >= 1,
                errors::InvalidArgument("TensorListSplit requires element_shape to be at least "
                                        "of rank 1, but saw: ",
                                        element_shape.DebugString()));
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES(ctx, lengths.dims() == 1 && lengths.dtype() == DT_INT64,
                errors::InvalidArgument("Expected lengths to be a vector, received shape: ",
                                        lengths.shape().DebugString()));
    auto list = std::make_shared<TensorList>(element_dtype_, element_shape);
    int64_t begin = 0;
    for (int64_t i = 0; i < lengths.NumElements(); ++i) {
      const int64_t length = lengths.data<int64_t>()[i];
      OP_REQUIRES(ctx, length >= 0 && length <= tensor.dim_size(0) - begin,
                  errors::InvalidArgument("Invalid value in lengths: ", length, " (the tensor has ",
                                          tensor.dim_size(0) - begin, " rows left of ",
                                          tensor.dim_size(0), ")"));
      Tensor piece;
      OP_REQUIRES_OK(ctx, SliceRows(tensor, begin, length, &piece));
      OP_REQUIRES(
          ctx, element_shape.IsCompatibleWith(piece.shape()),
          errors::InvalidArgument("Tried to split a piece of shape ", piece.shape().DebugString(),
                                  " into a list with element shape ", element_shape.DebugString()));
      list->tensors.push_back(std::move(piece));
      begin += length;
    }
    OP_REQUIRES(ctx, begin == tensor.dim_size(0),
                errors::InvalidArgument("Unused values in tensor. Length of tensor: ",
                                        tensor.dim_size(0), " Values used: ", begin));
    Tensor handle;
    OP_REQUIRES_OK(ctx, TensorListToTensor(std::move(list), &handle));
    ctx->set_output(0, std::move(handle));
  }
};

class ResizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const TensorList* current = nullptr;
    OP_REQUIRES_OK(ctx, ReadList(ctx, 0, &current));
    int32_t size = 0;
    OP_REQUIRES_OK(ctx, ReadInt32Scalar(ctx->input(1), "size", &size));
    OP_REQUIRES(
        ctx, size >= 0,
        errors::InvalidArgument("TensorListSlice expects size to be non-negative. Got: ", size));
    std::shared_ptr<TensorList> list;
    Tensor handle;
    OP_REQUIRES_OK(ctx, ListForUpdate(ctx, &list, &handle));
    OP_REQUIRES_OK(ctx, list->Resize(size));
    ctx->set_output(0, std::move(handle));
  }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("EmptyTensorList").Device(DEVICE_CPU), NewListOp);
REGISTER_KERNEL_BUILDER(Name("TensorListReserve").Device(DEVICE_CPU), NewListOp);
REGISTER_KERNEL_BUILDER(Name("TensorListFromTensor").Device(DEVICE_CPU), FromTensorOp);
REGISTER_KERNEL_BUILDER(Name("TensorListGetItem").Device(DEVICE_CPU), GetItemOp);
REGISTER_KERNEL_BUILDER(Name("TensorListSetItem").Device(DEVICE_CPU), SetItemOp);
REGISTER_KERNEL_BUILDER(Name("TensorListStack").Device(DEVICE_CPU), StackOp);
REGISTER_KERNEL_BUILDER(Name("TensorListGather").Device(DEVICE_CPU), GatherOp);
REGISTER_KERNEL_BUILDER(Name("TensorListLength").Device(DEVICE_CPU), LengthOp);
REGISTER_KERNEL_BUILDER(Name("TensorListElementShape").Device(DEVICE_CPU), ElementShapeOp);
REGISTER_KERNEL_BUILDER(Name("TensorListPushBack").Device(DEVICE_CPU), PushBackOp);
REGISTER_KERNEL_BUILDER(Name("TensorListPopBack").Device(DEVICE_CPU), PopBackOp);
REGISTER_KERNEL_BUILDER(Name("TensorListConcatV2").Device(DEVICE_CPU), ConcatOp);
REGISTER_KERNEL_BUILDER(Name("TensorListScatterIntoExistingList").Device(DEVICE_CPU),
                        ScatterIntoExistingListOp);
REGISTER_KERNEL_BUILDER(Name("TensorListSplit").Device(DEVICE_CPU), SplitOp);
REGISTER_KERNEL_BUILDER(Name("TensorListResize").Device(DEVICE_CPU), ResizeOp);

}  // namespace tensorweave
