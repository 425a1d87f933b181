// CPU kernels of the resource variable ops (runtime/ops/
// resource_variable_ops.cc). The variable is a Var in the device's
// ResourceMgr (resource_variable.h); every kernel looks it up through the
// handle in input 0 and works under the variable's mutex. Error codes and
// messages follow TensorFlow's kernels (core/kernels/
// resource_variable_ops.cc), which tests compare against TensorFlow 2.21.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/framework/device.h"
#include "runtime/kernels/eigen_helpers.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/resource_variable.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {

std::string Var::DebugString() const { return StrCat("Var[", variable.name, "]"); }

Status Var::CheckInitialized() const {
  if (variable.tensor.IsInitialized()) return Status::OK();
  return errors::FailedPrecondition("Attempting to use uninitialized value ", variable.name);
}

Status LookupExistingVar(OpKernelContext* ctx, int input, std::shared_ptr<Var>* var) {
  ResourceHandle handle;
  TW_RETURN_IF_ERROR(HandleFromInput(ctx, input, &handle));
  return LookupResource(ctx, handle, var);
}

Status LookupVar(OpKernelContext* ctx, int input, std::shared_ptr<Var>* var) {
  ResourceHandle handle;
  TW_RETURN_IF_ERROR(HandleFromInput(ctx, input, &handle));
  Status status = LookupResource(ctx, handle, var);
  if (errors::IsNotFound(status)) {
    return errors::FailedPrecondition(
        "Could not find variable ", handle.name(),
        ". This could mean that the variable has been deleted. In TF1, it can also mean the "
        "variable is uninitialized. Debug info: container=",
        handle.container(), ", status error message=", status.message());
  }
  return status;
}

namespace {

// Copies the elements of `from` into `to` (same dtype and element count).
void CopyElements(const Tensor& from, int64_t from_offset, Tensor* to, int64_t to_offset,
                  int64_t count) {
  if (count == 0) return;
  if (from.dtype() == DT_STRING) {
    const std::string* source = from.data<std::string>() + from_offset;
    std::copy(source, source + count, to->data<std::string>() + to_offset);
    return;
  }
  const size_t size = DataTypeSize(from.dtype());
  std::memcpy(static_cast<char*>(to->raw_data()) + to_offset * size,
              static_cast<const char*>(from.raw_data()) + from_offset * size, count * size);
}

// Makes the variable's buffer safe to change in place: when someone else
// (a reader's output, a Const the value came from) still holds it, the
// variable switches to a private copy first. Call with variable.mu held.
Status MakeBufferPrivate(Variable* variable) {
  Tensor& current = variable->tensor;
  if (current.RefCountIsOne() || current.NumElements() == 0) return Status::OK();
  Tensor copy;
  TW_RETURN_IF_ERROR(Tensor::Allocate(current.dtype(), current.shape(), &copy));
  CopyElements(current, 0, &copy, 0, current.NumElements());
  current = std::move(copy);
  return Status::OK();
}

class VarHandleOp : public CheapKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &shared_name_));
    if (container_.empty()) container_ = VariableStore::kDefaultContainer;
  }

  // As TensorFlow's VarHandleOp in a graph, an empty shared_name names the
  // variable "" (the Python front end always writes the variable's name).
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->device() != nullptr,
                errors::Internal("VarHandleOp needs a device to hold its variable"));
    ResourceHandle handle;
    handle.set_device(ctx->device()->name());
    handle.set_container(container_);
    handle.set_name(shared_name_);
    handle.set_hash_code(ResourceTypeHash(Var::TypeName()));
    handle.set_maybe_type_name(Var::TypeName());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<ResourceHandle>()[0] = std::move(handle);
  }

 private:
  std::string container_;
  std::string shared_name_;
};

class ReadVariableOp : public CheapKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupVar(ctx, 0, &var));
    Tensor value;
    {
      std::lock_guard<std::mutex> lock(var->variable.mu);
      OP_REQUIRES_OK(ctx, var->CheckInitialized());
      value = var->variable.tensor;
    }
    OP_REQUIRES(
        ctx, value.dtype() == dtype_,
        errors::InvalidArgument("Trying to read variable with wrong dtype. Expected ",
                                DataTypeString(dtype_), " got ", DataTypeString(value.dtype())));
    // Shares the buffer: later updates write elsewhere (copy-on-write).
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType dtype_;
};

class AssignVariableOp : public CheapKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(
        ctx, value.dtype() == dtype_,
        errors::InvalidArgument("Trying to assign variable with wrong dtype. Expected ",
                                DataTypeString(dtype_), " got ", DataTypeString(value.dtype())));
    ResourceHandle handle;
    OP_REQUIRES_OK(ctx, HandleFromInput(ctx, 0, &handle));
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx,
                   LookupOrCreateResource<Var>(ctx, handle, &var, [&](std::shared_ptr<Var>* made) {
                     *made = std::make_shared<Var>(handle.name());
                     return Status::OK();
                   }));
    std::lock_guard<std::mutex> lock(var->variable.mu);
    Tensor& current = var->variable.tensor;
    if (current.IsInitialized()) {
      OP_REQUIRES(ctx, current.dtype() == value.dtype(),
                  errors::InvalidArgument("Trying to assign variable with wrong dtype. Expected ",
                                          DataTypeString(current.dtype()), " got ",
                                          DataTypeString(value.dtype())));
      OP_REQUIRES(ctx, !validate_shape_ || current.shape() == value.shape(),
                  errors::InvalidArgument(
                      "Trying to assign to variable with tensor with wrong shape. Expected ",
                      current.shape().DebugString(), " got ", value.shape().DebugString()));
    }
    // The variable shares the value's buffer; whoever else holds it keeps
    // its elements, since updates copy a buffer that is not theirs alone.
    current = value;
  }

 private:
  DataType dtype_;
  bool validate_shape_ = false;
};

// AssignAddVariableOp (kSubtract false) and AssignSubVariableOp (true).
template <typename T, bool kSubtract>
class AssignUpdateVariableOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupExistingVar(ctx, 0, &var));
    const Tensor& update = ctx->input(1);
    std::lock_guard<std::mutex> lock(var->variable.mu);
    OP_REQUIRES_OK(ctx, var->CheckInitialized());
    Tensor& current = var->variable.tensor;
    OP_REQUIRES(ctx, current.dtype() == update.dtype(),
                errors::InvalidArgument("Trying to update variable with wrong dtype. Expected ",
                                        DataTypeString(current.dtype()), " got ",
                                        DataTypeString(update.dtype())));
    OP_REQUIRES(
        ctx, current.shape() == update.shape(),
        errors::InvalidArgument("Cannot update variable with shape ", current.shape().DebugString(),
                                " using a Tensor with shape ", update.shape().DebugString(),
                                ", shapes must be equal."));
    Tensor result = current;
    if (!current.RefCountIsOne()) {
      // A reader holds the old value: the new one goes to a fresh buffer.
      OP_REQUIRES_OK(ctx, Tensor::Allocate(current.dtype(), current.shape(), &result));
    }
    const T* old_values = current.data<T>();
    const T* deltas = update.data<T>();
    T* new_values = result.data<T>();
    ParallelFor(ctx, current.NumElements(), 3 * sizeof(T), kCheapCycles,
                [&](int64_t begin, int64_t end) {
                  if constexpr (std::is_integral_v<T>) {
                    for (int64_t i = begin; i < end; ++i) {
                      new_values[i] = kSubtract ? WrappingSub(old_values[i], deltas[i])
                                                : WrappingAdd(old_values[i], deltas[i]);
                    }
                  } else {
                    const int64_t length = end - begin;
                    ConstEigenVector<T> a(old_values + begin, length), b(deltas + begin, length);
                    EigenVector<T> out(new_values + begin, length);
                    if (kSubtract) {
                      out = a - b;
                    } else {
                      out = a + b;
                    }
                  }
                });
    current = std::move(result);
  }
};

class VarIsInitializedOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    Status status = LookupExistingVar(ctx, 0, &var);
    OP_REQUIRES(ctx, status.ok() || errors::IsNotFound(status), status);
    bool initialized = false;
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(var->variable.mu);
      initialized = var->variable.tensor.IsInitialized();
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<bool>()[0] = initialized;
  }
};

class DestroyResourceOp : public CheapKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle handle;
    OP_REQUIRES_OK(ctx, HandleFromInput(ctx, 0, &handle));
    // Only variables are kept by name across steps; other handles (a
    // TensorArray's, a Stack's) end with their step or their close op.
    OP_REQUIRES(ctx, handle.hash_code() == ResourceTypeHash(Var::TypeName()),
                errors::Unimplemented("DestroyResourceOp destroys variables only, not ",
                                      handle.DebugString()));
    Status status = DeleteResource<Var>(ctx, handle);
    if (errors::IsNotFound(status) && ignore_lookup_error_) return;
    OP_REQUIRES_OK(ctx, status);
  }

 private:
  bool ignore_lookup_error_ = true;
};

// TensorFlow's variables can be in a copy-on-read mode (for sparse updates
// under tf.distribute); ours share buffers copy-on-write and have no such
// mode, so turning it off only requires the variable to exist, as there.
class DisableCopyOnReadOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupVar(ctx, 0, &var));
  }
};

template <typename OutT>
class VariableShapeOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupExistingVar(ctx, 0, &var));
    TensorShape shape;
    {
      std::lock_guard<std::mutex> lock(var->variable.mu);
      OP_REQUIRES_OK(ctx, var->CheckInitialized());
      shape = var->variable.tensor.shape();
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({shape.dims()}), &out));
    for (int d = 0; d < shape.dims(); ++d) {
      const int64_t size = shape.dim_size(d);
      const bool fits = std::is_same_v<OutT, int64_t> || size <= INT32_MAX;
      OP_REQUIRES(ctx, fits,
                  errors::InvalidArgument("Shape dimension ", d, " (", size,
                                          ") does not fit in int32; use out_type int64"));
      out->data<OutT>()[d] = static_cast<OutT>(size);
    }
  }
};

// All elements of an int32/int64 tensor of any rank as int64.
Status ReadAllIndices(const Tensor& indices, std::vector<int64_t>* values) {
  Tensor flat;
  if (!flat.CopyFrom(indices, TensorShape({indices.NumElements()}))) {
    return errors::Internal("could not read indices");
  }
  return ReadIndexVector(flat, "indices", values);
}

// The variable viewed as [batch, limit, inner] and the indices as [batch,
// count]: output row (b, i) is the variable's row (b, indices[b, i]).
class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("batch_dims", &batch_dims_));
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupExistingVar(ctx, 0, &var));
    Tensor params;
    {
      std::lock_guard<std::mutex> lock(var->variable.mu);
      OP_REQUIRES_OK(ctx, var->CheckInitialized());
      params = var->variable.tensor;  // a reader's share: updates copy first
    }
    OP_REQUIRES(
        ctx, params.dtype() == dtype_,
        errors::InvalidArgument("Trying to read variable with wrong dtype. Expected ",
                                DataTypeString(dtype_), " got ", DataTypeString(params.dtype())));
    const Tensor& indices = ctx->input(1);
    int batch_dims = static_cast<int>(batch_dims_);
    if (batch_dims < 0) batch_dims += indices.dims();
    OP_REQUIRES(ctx, batch_dims >= 0 && batch_dims <= indices.dims(),
                errors::InvalidArgument("batch_dims (", batch_dims_, ") must be in [",
                                        -indices.dims(), ", ", indices.dims(), "]"));
    OP_REQUIRES(ctx, batch_dims < params.dims(),
                errors::InvalidArgument("batch_dims (", batch_dims_,
                                        ") must be less than the rank of the variable (",
                                        params.dims(), ")"));
    int64_t batch = 1;
    TensorShape shape;
    for (int d = 0; d < batch_dims; ++d) {
      OP_REQUIRES(ctx, params.dim_size(d) == indices.dim_size(d),
                  errors::InvalidArgument("params.shape[", d, "]: ", params.dim_size(d),
                                          " should be equal to indices.shape[", d,
                                          "]: ", indices.dim_size(d)));
      batch *= params.dim_size(d);
      OP_REQUIRES_OK(ctx, shape.AddDim(params.dim_size(d)));
    }
    int64_t count = 1;
    for (int d = batch_dims; d < indices.dims(); ++d) {
      count *= indices.dim_size(d);
      OP_REQUIRES_OK(ctx, shape.AddDim(indices.dim_size(d)));
    }
    int64_t inner = 1;
    for (int d = batch_dims + 1; d < params.dims(); ++d) {
      inner *= params.dim_size(d);
      OP_REQUIRES_OK(ctx, shape.AddDim(params.dim_size(d)));
    }
    const int64_t limit = params.dim_size(batch_dims);
    std::vector<int64_t> index;
    OP_REQUIRES_OK(ctx, ReadAllIndices(indices, &index));
    for (size_t i = 0; i < index.size(); ++i) {
      OP_REQUIRES(
          ctx, index[i] >= 0 && index[i] < limit,
          errors::InvalidArgument("indices[", i, "] = ", index[i], " is not in [0, ", limit, ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const int64_t rows = batch * count;
    ParallelFor(ctx, rows, static_cast<double>(inner * DataTypeSize(params.dtype())),
                static_cast<double>(inner), [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const int64_t source = r / count * limit + index[r];
                    CopyElements(params, source * inner, out, r * inner, inner);
                  }
                });
  }

 private:
  int64_t batch_dims_ = 0;
  DataType dtype_;
};

// ResourceScatterUpdate (kAdd false) and ResourceScatterAdd (true):
// variable[indices[i], ...] (=|+=) updates[i, ...], where updates has
// shape indices.shape + variable.shape[1:] or is a scalar for every row.
template <typename T, bool kAdd>
class ResourceScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Var> var;
    OP_REQUIRES_OK(ctx, LookupExistingVar(ctx, 0, &var));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    std::lock_guard<std::mutex> lock(var->variable.mu);
    OP_REQUIRES_OK(ctx, var->CheckInitialized());
    Tensor& params = var->variable.tensor;
    OP_REQUIRES(ctx, params.dtype() == updates.dtype(),
                errors::InvalidArgument("Trying to update variable with wrong dtype. Expected ",
                                        DataTypeString(params.dtype()), " got ",
                                        DataTypeString(updates.dtype())));
    OP_REQUIRES(ctx, params.dims() >= 1,
                errors::InvalidArgument("params must be at least 1-D, got shape ",
                                        params.shape().DebugString()));
    bool shapes_fit = updates.dims() == 0;
    if (!shapes_fit && updates.dims() == indices.dims() + params.dims() - 1) {
      shapes_fit = true;
      for (int d = 0; d < indices.dims(); ++d) {
        shapes_fit &= updates.dim_size(d) == indices.dim_size(d);
      }
      for (int d = 1; d < params.dims(); ++d) {
        shapes_fit &= updates.dim_size(indices.dims() + d - 1) == params.dim_size(d);
      }
    }
    OP_REQUIRES(
        ctx, shapes_fit,
        errors::InvalidArgument("Must have updates.shape = indices.shape + params.shape[1:] or "
                                "updates.shape = [], got updates.shape ",
                                updates.shape().DebugString(), ", indices.shape ",
                                indices.shape().DebugString(), ", params.shape ",
                                params.shape().DebugString()));
    std::vector<int64_t> index;
    OP_REQUIRES_OK(ctx, ReadAllIndices(indices, &index));
    const int64_t limit = params.dim_size(0);
    for (size_t i = 0; i < index.size(); ++i) {
      OP_REQUIRES(
          ctx, index[i] >= 0 && index[i] < limit,
          errors::InvalidArgument("indices[", i, "] = ", index[i], " is not in [0, ", limit, ")"));
    }
    OP_REQUIRES_OK(ctx, MakeBufferPrivate(&var->variable));
    const int64_t inner = limit == 0 ? 0 : params.NumElements() / limit;
    const bool scalar = updates.dims() == 0;
    // Sequential: repeated indices must add up (or the last one win).
    for (size_t i = 0; i < index.size(); ++i) {
      const int64_t row = index[i] * inner;
      if constexpr (kAdd) {
        T* to = params.data<T>() + row;
        const T* from = updates.data<T>();
        for (int64_t j = 0; j < inner; ++j) {
          const T delta = scalar ? from[0] : from[i * inner + j];
          if constexpr (std::is_integral_v<T>) {
            to[j] = WrappingAdd(to[j], delta);
          } else {
            to[j] += delta;
          }
        }
      } else if (scalar) {
        for (int64_t j = 0; j < inner; ++j) CopyElements(updates, 0, &params, row + j, 1);
      } else {
        CopyElements(updates, i * inner, &params, row, inner);
      }
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("VarHandleOp").Device(DEVICE_CPU), VarHandleOp);
REGISTER_KERNEL_BUILDER(Name("ReadVariableOp").Device(DEVICE_CPU), ReadVariableOp);
REGISTER_KERNEL_BUILDER(Name("AssignVariableOp").Device(DEVICE_CPU), AssignVariableOp);
REGISTER_KERNEL_BUILDER(Name("VarIsInitializedOp").Device(DEVICE_CPU), VarIsInitializedOp);
REGISTER_KERNEL_BUILDER(Name("DestroyResourceOp").Device(DEVICE_CPU), DestroyResourceOp);
REGISTER_KERNEL_BUILDER(Name("DisableCopyOnRead").Device(DEVICE_CPU), DisableCopyOnReadOp);
REGISTER_KERNEL_BUILDER(
    Name("VariableShape").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
    VariableShapeOp<int32_t>);
REGISTER_KERNEL_BUILDER(
    Name("VariableShape").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
    VariableShapeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("ResourceGather").Device(DEVICE_CPU), ResourceGatherOp);

// An update copies elements whatever their type: one kernel for all.
REGISTER_KERNEL_BUILDER(Name("ResourceScatterUpdate").Device(DEVICE_CPU),
                        ResourceScatterOp<uint8_t, false>);

#define TW_REGISTER_ARITHMETIC_UPDATES(T)                                        \
  REGISTER_KERNEL_BUILDER(                                                       \
      Name("AssignAddVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"), \
      AssignUpdateVariableOp<T, false>);                                         \
  REGISTER_KERNEL_BUILDER(                                                       \
      Name("AssignSubVariableOp").Device(DEVICE_CPU).TypeConstraint<T>("dtype"), \
      AssignUpdateVariableOp<T, true>);                                          \
  REGISTER_KERNEL_BUILDER(                                                       \
      Name("ResourceScatterAdd").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),  \
      ResourceScatterOp<T, true>);
TW_FOR_EACH_NUMBER(TW_REGISTER_ARITHMETIC_UPDATES)
#undef TW_REGISTER_ARITHMETIC_UPDATES

}  // namespace
}  // namespace tensorweave
