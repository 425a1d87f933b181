// Kernels of the TensorArrayV3 ops (runtime/ops/data_flow_ops.cc). The
// array itself and its rules are in tensor_array.h; these kernels check
// their inputs, find the array through its handle in the step container
// and pass the flow input through as flow output, which is what orders the
// ops of one array in a graph.
#include <atomic>
#include <limits>
#include <vector>

#include "runtime/framework/resource_mgr.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/tensor_array.h"

namespace tensorweave {
namespace {

// Names of arrays made without tensor_array_name get a process-wide
// counter, as TensorFlow's do ("<node name>_<n>").
std::atomic<int64_t> tensor_array_counter{0};

Status ScalarInput(OpKernelContext* ctx, int i, const char* what, int64_t* value) {
  const Tensor& t = ctx->input(i);
  if (!t.IsScalar()) {
    return errors::InvalidArgument(what,
                                   " must be a scalar, but had shape: ", t.shape().DebugString());
  }
  *value = t.dtype() == DT_INT64 ? t.scalar<int64_t>() : t.scalar<int32_t>();
  return Status::OK();
}

Status VectorInput(OpKernelContext* ctx, int i, const char* what, std::vector<int64_t>* values) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 1) {
    return errors::InvalidArgument(
        "Expected ", what, " to be a vector, but received shape: ", t.shape().DebugString());
  }
  values->resize(t.NumElements());
  for (int64_t k = 0; k < t.NumElements(); ++k) {
    (*values)[k] = t.dtype() == DT_INT64 ? t.data<int64_t>()[k] : t.data<int32_t>()[k];
  }
  return Status::OK();
}

Status LookupTensorArray(OpKernelContext* ctx, std::shared_ptr<TensorArray>* array) {
  ResourceHandle handle;
  TW_RETURN_IF_ERROR(HandleFromInput(ctx, 0, &handle));
  return LookupResource(ctx, handle, array);
}

Status OutputHandle(OpKernelContext* ctx, int i, const ResourceHandle& handle) {
  Tensor* out = nullptr;
  TW_RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape(), &out));
  out->data<ResourceHandle>()[0] = handle;
  return Status::OK();
}

Status CheckHoldable(OpKernelConstruction* c, DataType dtype) {
  if (!TensorCanHold(dtype)) {
    return errors::InvalidArgument("A TensorArray cannot hold ", DataTypeString(dtype));
  }
  return Status::OK();
}

class TensorArrayCreateOp : public OpKernel {
 public:
  explicit TensorArrayCreateOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &options_.dtype));
    OP_REQUIRES_OK(c, CheckHoldable(c, options_.dtype));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape", &options_.element_shape));
    OP_REQUIRES_OK(c, c->GetAttr("dynamic_size", &options_.dynamic_size));
    OP_REQUIRES_OK(c, c->GetAttr("clear_after_read", &options_.clear_after_read));
    OP_REQUIRES_OK(c, c->GetAttr("identical_element_shapes", &options_.identical_element_shapes));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_array_name", &array_name_));
    if (array_name_.empty()) array_name_ = name();
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    int64_t size = 0;
    OP_REQUIRES_OK(ctx, ScalarInput(ctx, 0, "TensorArray size", &size));
    OP_REQUIRES(ctx, size >= 0, errors::InvalidArgument("Size should be >= 0."));
    TensorArray::Options options = options_;
    options.size = size;
    const std::string unique_name = StrCat(array_name_, "_", tensor_array_counter.fetch_add(1));
    ResourceHandle handle;
    OP_REQUIRES_OK(ctx, MakeStepResourceHandle<TensorArray>(ctx, unique_name, &handle));
    OP_REQUIRES_OK(
        ctx, CreateResource(ctx, handle, std::make_shared<TensorArray>(unique_name, options)));
    OP_REQUIRES_OK(ctx, OutputHandle(ctx, 0, handle));
    Tensor* flow = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape(), &flow));
    flow->data<float>()[0] = 0;
  }

 private:
  TensorArray::Options options_;
  std::string array_name_;
};

// TensorArrayGradV3 and TensorArrayGradWithShape (input 2: the shape to
// put in front of every element shape).
class TensorArrayGradOp : public OpKernel {
 public:
  explicit TensorArrayGradOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("source", &source_));
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle forward_handle;
    OP_REQUIRES_OK(ctx, HandleFromInput(ctx, 0, &forward_handle));
    std::shared_ptr<TensorArray> forward;
    OP_REQUIRES_OK(ctx, LookupResource(ctx, forward_handle, &forward));
    TensorShape prepend;
    if (ctx->num_inputs() > 2) {
      std::vector<int64_t> dims;
      OP_REQUIRES_OK(ctx, VectorInput(ctx, 2, "shape_to_prepend", &dims));
      OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &prepend));
    }
    TensorArray::Options options;
    OP_REQUIRES_OK(ctx, forward->GradientOptions(prepend, &options));
    ResourceHandle grad_handle = forward_handle;
    const std::string grad_name = StrCat(forward->name(), "@", source_);
    grad_handle.set_name(grad_name);
    std::shared_ptr<TensorArray> grad;
    // Every gradient op of one array for one source shares one gradient
    // array, so their writes add up.
    OP_REQUIRES_OK(ctx,
                   LookupOrCreateResource<TensorArray>(
                       ctx, grad_handle, &grad, [&](std::shared_ptr<TensorArray>* made) -> Status {
                         auto array = std::make_shared<TensorArray>(grad_name, options);
                         TW_RETURN_IF_ERROR(forward->CopyShapesTo(prepend, array.get()));
                         *made = std::move(array);
                         return Status::OK();
                       }));
    OP_REQUIRES_OK(ctx, OutputHandle(ctx, 0, grad_handle));
    ctx->set_output(1, ctx->input(1));
  }

 private:
  std::string source_;
};

class TensorArrayWriteOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    int64_t index = 0;
    OP_REQUIRES_OK(ctx, ScalarInput(ctx, 1, "TensorArray index", &index));
    OP_REQUIRES_OK(ctx, array->CheckDtype(input_type(2), /*writing=*/true));
    OP_REQUIRES_OK(ctx, array->Write(index, ctx->input(2)));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArrayReadOp : public OpKernel {
 public:
  explicit TensorArrayReadOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    int64_t index = 0;
    OP_REQUIRES_OK(ctx, ScalarInput(ctx, 1, "TensorArray index", &index));
    OP_REQUIRES_OK(ctx, array->CheckDtype(dtype_, /*writing=*/false));
    Tensor value;
    OP_REQUIRES_OK(ctx, array->Read(index, &value));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_;
};

class TensorArrayGatherOp : public OpKernel {
 public:
  explicit TensorArrayGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape", &element_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(ctx, VectorInput(ctx, 1, "indices", &indices));
    OP_REQUIRES_OK(ctx, array->CheckDtype(dtype_, /*writing=*/false));
    OP_REQUIRES_OK(ctx, array->MergeElementShape(element_shape_));
    Tensor value;
    OP_REQUIRES_OK(ctx, array->Gather(indices, &value));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_;
  PartialTensorShape element_shape_;
};

class TensorArrayScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(ctx, VectorInput(ctx, 1, "indices", &indices));
    const Tensor& value = ctx->input(2);
    OP_REQUIRES(ctx, value.dims() >= 1,
                errors::InvalidArgument("Expected value to be at least a vector, but received "
                                        "shape: ",
                                        value.shape().DebugString()));
    OP_REQUIRES(ctx, static_cast<int64_t>(indices.size()) == value.dim_size(0),
                errors::InvalidArgument("Expected len(indices) == values.shape[0], but saw: ",
                                        indices.size(), " vs. ", value.dim_size(0)));
    OP_REQUIRES_OK(ctx, array->CheckDtype(input_type(2), /*writing=*/true));
    std::vector<Tensor> pieces(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      Tensor row;
      OP_REQUIRES_OK(ctx, SliceRows(value, static_cast<int64_t>(i), 1, &row));
      TensorShape element_shape = row.shape();
      element_shape.RemoveDim(0);
      OP_REQUIRES(ctx, pieces[i].CopyFrom(row, element_shape),
                  errors::Internal("Could not reshape a row of the scattered value"));
    }
    OP_REQUIRES_OK(ctx, array->WriteMany(indices, pieces));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArrayConcatOp : public OpKernel {
 public:
  explicit TensorArrayConcatOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("element_shape_except0", &element_shape_except0_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    OP_REQUIRES_OK(ctx, array->CheckDtype(dtype_, /*writing=*/false));
    Tensor value, lengths;
    OP_REQUIRES_OK(ctx, array->Concat(element_shape_except0_, &value, &lengths));
    ctx->set_output(0, std::move(value));
    ctx->set_output(1, std::move(lengths));
  }

 private:
  DataType dtype_;
  PartialTensorShape element_shape_except0_;
};

class TensorArraySplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() >= 1,
                errors::InvalidArgument("Expected value to be at least a vector, but received "
                                        "shape: ",
                                        value.shape().DebugString()));
    std::vector<int64_t> lengths;
    OP_REQUIRES_OK(ctx, VectorInput(ctx, 2, "lengths", &lengths));
    int64_t total = 0;
    bool overflowed = false;
    for (size_t i = 0; i < lengths.size(); ++i) {
      OP_REQUIRES(ctx, lengths[i] >= 0,
                  errors::InvalidArgument("Expected lengths to be non-negative, but lengths[", i,
                                          "] is ", lengths[i]));
      overflowed = overflowed || __builtin_add_overflow(total, lengths[i], &total);
    }
    OP_REQUIRES(ctx, !overflowed && total == value.dim_size(0),
                errors::InvalidArgument("Expected sum of lengths to be equal to "
                                        "values.shape[0], but sum of lengths is: ",
                                        overflowed ? std::string("beyond int64") : StrCat(total),
                                        " and value's shape is: ", value.shape().DebugString()));
    OP_REQUIRES_OK(ctx, array->CheckDtype(input_type(1), /*writing=*/true));
    OP_REQUIRES_OK(ctx, array->CheckSplitCount(static_cast<int64_t>(lengths.size())));
    std::vector<int64_t> indices(lengths.size());
    std::vector<Tensor> pieces(lengths.size());
    int64_t begin = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      indices[i] = static_cast<int64_t>(i);
      OP_REQUIRES_OK(ctx, SliceRows(value, begin, lengths[i], &pieces[i]));
      begin += lengths[i];
    }
    OP_REQUIRES_OK(ctx, array->WriteMany(indices, pieces));
    ctx->set_output(0, ctx->input(3));
  }
};

class TensorArraySizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    int64_t size = 0;
    OP_REQUIRES_OK(ctx, array->Size(&size));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<int32_t>()[0] = static_cast<int32_t>(size);
  }
};

class TensorArrayCloseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<TensorArray> array;
    OP_REQUIRES_OK(ctx, LookupTensorArray(ctx, &array));
    array->Close();
  }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("TensorArrayV3").Device(DEVICE_CPU), TensorArrayCreateOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayGradV3").Device(DEVICE_CPU), TensorArrayGradOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayGradWithShape").Device(DEVICE_CPU), TensorArrayGradOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayWriteV3").Device(DEVICE_CPU), TensorArrayWriteOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayReadV3").Device(DEVICE_CPU), TensorArrayReadOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayGatherV3").Device(DEVICE_CPU), TensorArrayGatherOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayScatterV3").Device(DEVICE_CPU), TensorArrayScatterOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayConcatV3").Device(DEVICE_CPU), TensorArrayConcatOp);
REGISTER_KERNEL_BUILDER(Name("TensorArraySplitV3").Device(DEVICE_CPU), TensorArraySplitOp);
REGISTER_KERNEL_BUILDER(Name("TensorArraySizeV3").Device(DEVICE_CPU), TensorArraySizeOp);
REGISTER_KERNEL_BUILDER(Name("TensorArrayCloseV3").Device(DEVICE_CPU), TensorArrayCloseOp);

}  // namespace tensorweave
