// CPU kernels of the optimizer update ops (ApplyGradientDescent,
// ApplyMomentum, ApplyAdam, ApplyRMSProp, ApplyCenteredRMSProp,
// ApplyAdagrad) for float and double, and of their ResourceApply* twins.
//
// A twin takes resource handles where its Apply op takes references and
// has no output; both find the same Variable state (a resource variable's
// Var holds one, resource_variable.h), so one kernel class per update
// serves both, told apart by the dtype of input 0. The SparseApply* and
// ResourceSparseApply* ops (Momentum, Adagrad, RMSProp, CenteredRMSProp,
// registered in sparse_update_ops.cc and training_ops.cc) run the same update on
// the rows `indices` names, one row after another (repeated rows update
// twice, as TensorFlow's), with grad holding one row per index.
//
// Every kernel runs one pass over the elements: ParallelFor splits the
// variable into blocks, and each block is walked in chunks small enough to
// stay in L1, on which the op's Eigen expressions (slots first, then the
// variable) run back to back. Each element is therefore read from and
// written to memory once per step, however many expressions the update
// has. The expressions multiply in the order TensorFlow's kernels do, so
// both round alike.
//
// Variables follow the copy-on-write rule of Assign (variable_ops.cc): a
// buffer is updated in place only while its variable is the sole holder;
// when a reader still holds the value, the update is written to a fresh
// buffer that then replaces it, so a value someone fetched never changes.
// The kernels always hold the variables' mutexes while they update (even
// when use_locking is false) because replacing a buffer swaps the
// variable's Tensor, which a concurrent reader must never see half-done.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/eigen_helpers.h"
#include "runtime/kernels/resource_variable.h"
#include "runtime/ops/index_vector.h"

namespace tensorweave {
namespace {

// Chunk length of the fused loop: with up to five streams (variable,
// three slots, gradient) of doubles a chunk stays within 40 KB.
constexpr int64_t kChunk = 1024;
constexpr int kMaxRefs = 4;
constexpr int kMaxScalars = 6;

// What one op's update sees for one chunk: the old values of each ref
// input (`in`), where their new values go (`out`, equal to `in` when
// updated in place), the gradient and the scalar hyperparameters in input
// order.
template <typename T>
struct Chunk {
  std::array<const T*, kMaxRefs> in;
  std::array<T*, kMaxRefs> out;
  const T* grad;
  const T* scalars;
  int64_t length;

  ConstEigenVector<T> Old(int ref) const { return ConstEigenVector<T>(in[ref], length); }
  EigenVector<T> New(int ref) const { return EigenVector<T>(out[ref], length); }
  ConstEigenVector<T> Grad() const { return ConstEigenVector<T>(grad, length); }
};

// Shared by every Apply kernel: finds, locks and validates the variables,
// checks the gradient and the scalars, picks in-place or fresh buffers and
// runs the op's chunk update over all elements in parallel.
template <typename T>
class ApplyOpBase : public OpKernel {
 public:
  // Inputs [0, num_refs) are variables, `grad_index` the gradient, every
  // other input a scalar hyperparameter.
  // A sparse op has its indices right after the gradient.
  ApplyOpBase(OpKernelConstruction* c, int num_refs, int grad_index, double cycles_per_element)
      : OpKernel(c),
        num_refs_(num_refs),
        grad_index_(grad_index),
        cycles_per_element_(cycles_per_element),
        resource_(c->input_type(0) == DT_RESOURCE),
        indices_index_(c->num_inputs() > grad_index + 1 &&
                               c->op_def().inputs[grad_index + 1].name == "indices"
                           ? grad_index + 1
                           : -1) {
    for (int i = 0; i < c->num_inputs(); ++i) input_names_.push_back(c->op_def().inputs[i].name);
  }

  void Compute(OpKernelContext* ctx) override {
    std::array<Variable*, kMaxRefs> variables{};
    // Keeps looked-up resource variables alive while they are updated.
    std::array<std::shared_ptr<Var>, kMaxRefs> vars;
    for (int i = 0; i < num_refs_; ++i) {
      if (resource_) {
        OP_REQUIRES_OK(ctx, LookupVar(ctx, i, &vars[i]));
        variables[i] = &vars[i]->variable;
      } else {
        variables[i] = ctx->input_ref(i);
      }
      OP_REQUIRES(ctx, variables[i] != nullptr,
                  errors::InvalidArgument("Input '", input_names_[i],
                                          "' must be a reference to a variable"));
      for (int j = 0; j < i; ++j) {
        OP_REQUIRES(ctx, variables[j] != variables[i],
                    errors::InvalidArgument("'", input_names_[j], "' and '", input_names_[i],
                                            "' must be different variables, both are ",
                                            variables[i]->name));
      }
    }
    // Every kernel locks in address order, so two updates that share
    // variables cannot deadlock.
    std::array<Variable*, kMaxRefs> lock_order = variables;
    for (int i = 1; i < num_refs_; ++i) {  // insertion sort of at most four
      for (int j = i; j > 0 && std::less<Variable*>()(lock_order[j], lock_order[j - 1]); --j) {
        std::swap(lock_order[j], lock_order[j - 1]);
      }
    }
    std::array<std::unique_lock<std::mutex>, kMaxRefs> locks;
    for (int i = 0; i < num_refs_; ++i) locks[i] = std::unique_lock<std::mutex>(lock_order[i]->mu);

    const Tensor& var = variables[0]->tensor;
    for (int i = 0; i < num_refs_; ++i) {
      const Tensor& value = variables[i]->tensor;
      OP_REQUIRES(
          ctx, value.IsInitialized(),
          errors::FailedPrecondition("Attempting to use uninitialized value ", variables[i]->name));
      OP_REQUIRES(ctx, value.dtype() == DataTypeToEnum<T>::value,
                  errors::InvalidArgument("Variable ", variables[i]->name, " holds ",
                                          DataTypeString(value.dtype()), ", not ",
                                          DataTypeString(DataTypeToEnum<T>::value)));
      OP_REQUIRES(
          ctx, value.shape() == var.shape(),
          errors::InvalidArgument("var and ", input_names_[i], " do not have the same shape: ",
                                  var.shape().DebugString(), " vs. ", value.shape().DebugString()));
    }
    // The graph's types guarantee T; a kernel driven directly must not read
    // a narrower buffer as T.
    for (int i = num_refs_; i < ctx->num_inputs(); ++i) {
      if (i == indices_index_) continue;
      OP_REQUIRES(ctx, ctx->input(i).dtype() == DataTypeToEnum<T>::value,
                  errors::InvalidArgument(input_names_[i], " must be ",
                                          DataTypeString(DataTypeToEnum<T>::value), ", not ",
                                          DataTypeString(ctx->input(i).dtype())));
    }
    const Tensor& grad = ctx->input(grad_index_);
    std::vector<int64_t> rows;  // sparse ops: the rows to update, checked
    if (indices_index_ >= 0) {
      OP_REQUIRES_OK(ctx, CheckSparseUpdate(ctx, var, grad, &rows));
    } else {
      OP_REQUIRES(
          ctx, grad.shape() == var.shape(),
          errors::InvalidArgument("var and ", input_names_[grad_index_],
                                  " do not have the same shape: ", var.shape().DebugString(),
                                  " vs. ", grad.shape().DebugString()));
    }
    std::array<T, kMaxScalars> scalars{};
    int num_scalars = 0;
    for (int i = num_refs_; i < ctx->num_inputs(); ++i) {
      if (i == grad_index_ || i == indices_index_) continue;
      const Tensor& scalar = ctx->input(i);
      OP_REQUIRES(ctx, scalar.shape().dims() == 0,
                  errors::InvalidArgument(input_names_[i],
                                          " is not a scalar: ", scalar.shape().DebugString()));
      scalars[num_scalars++] = scalar.data<T>()[0];
    }

    if (indices_index_ >= 0) {
      OP_REQUIRES_OK(ctx, UpdateRows(variables, grad, scalars.data(), rows));
      if (!resource_) ctx->set_output_ref(0, variables[0]);
      return;
    }

    // In place when the variable alone holds its buffer; else a fresh one.
    std::array<Tensor, kMaxRefs> fresh;
    Chunk<T> whole{};
    for (int i = 0; i < num_refs_; ++i) {
      Tensor& value = variables[i]->tensor;
      whole.in[i] = value.data<T>();
      if (!UpdatesRef(i) || value.RefCountIsOne()) {
        whole.out[i] = value.data<T>();
      } else {
        OP_REQUIRES_OK(ctx, Tensor::Allocate(value.dtype(), value.shape(), &fresh[i]));
        whole.out[i] = fresh[i].data<T>();
      }
    }
    whole.grad = grad.data<T>();
    whole.scalars = scalars.data();

    const int64_t bytes_per_element = (2 * num_refs_ + 1) * sizeof(T);
    ParallelFor(ctx, var.NumElements(), bytes_per_element, cycles_per_element_,
                [&](int64_t begin, int64_t end) {
                  for (int64_t start = begin; start < end; start += kChunk) {
                    Chunk<T> chunk = whole;
                    chunk.length = std::min(kChunk, end - start);
                    for (int i = 0; i < num_refs_; ++i) {
                      chunk.in[i] += start;
                      chunk.out[i] += start;
                    }
                    chunk.grad += start;
                    UpdateChunk(chunk);
                  }
                });
    for (int i = 0; i < num_refs_; ++i) {
      if (fresh[i].IsInitialized()) variables[i]->tensor = std::move(fresh[i]);
    }
    if (!resource_) ctx->set_output_ref(0, variables[0]);
  }

 protected:
  // Writes the new values of the chunk's refs from their old values.
  virtual void UpdateChunk(const Chunk<T>& chunk) const = 0;
  // False for a ref the update only reads.
  virtual bool UpdatesRef(int ref) const { return true; }

 private:
  // A sparse update's indices must be a vector of rows of var, and grad
  // must hold one row of var per index.
  Status CheckSparseUpdate(OpKernelContext* ctx, const Tensor& var, const Tensor& grad,
                           std::vector<int64_t>* rows) const {
    const Tensor& indices = ctx->input(indices_index_);
    if (var.dims() < 1) return errors::InvalidArgument("var must be at least 1 dimensional");
    if (indices.dims() != 1) {
      return errors::InvalidArgument("indices must be one-dimensional, got shape ",
                                     indices.shape().DebugString());
    }
    bool rows_fit = grad.dims() == var.dims() && grad.dim_size(0) == indices.dim_size(0);
    for (int d = 1; rows_fit && d < var.dims(); ++d) rows_fit = grad.dim_size(d) == var.dim_size(d);
    if (!rows_fit) {
      return errors::InvalidArgument(
          "grad must hold one row of var per index: var ", var.shape().DebugString(), ", grad ",
          grad.shape().DebugString(), ", indices ", indices.shape().DebugString());
    }
    TW_RETURN_IF_ERROR(ReadIndexVector(indices, "indices", rows));
    for (size_t i = 0; i < rows->size(); ++i) {
      if ((*rows)[i] < 0 || (*rows)[i] >= var.dim_size(0)) {
        return errors::InvalidArgument("Index ", (*rows)[i], " at offset ", i,
                                       " in indices is out of range");
      }
    }
    return Status::OK();
  }

  // Runs the update on each row of `rows` in turn, in place (after making
  // each updated buffer the variable's own: rows not named keep their
  // values, and a reader's value must not change).
  Status UpdateRows(const std::array<Variable*, kMaxRefs>& variables, const Tensor& grad,
                    const T* scalars, const std::vector<int64_t>& rows) const {
    const Tensor& var = variables[0]->tensor;
    const int64_t inner = var.dim_size(0) == 0 ? 0 : var.NumElements() / var.dim_size(0);
    Chunk<T> row{};
    for (int i = 0; i < num_refs_; ++i) {
      Tensor& value = variables[i]->tensor;
      if (UpdatesRef(i) && !value.RefCountIsOne() && value.NumElements() > 0) {
        Tensor copy;
        TW_RETURN_IF_ERROR(Tensor::Allocate(value.dtype(), value.shape(), &copy));
        std::copy(value.data<T>(), value.data<T>() + value.NumElements(), copy.data<T>());
        value = std::move(copy);
      }
    }
    row.scalars = scalars;
    row.length = inner;
    for (size_t r = 0; r < rows.size(); ++r) {
      for (int i = 0; i < num_refs_; ++i) {
        T* base = variables[i]->tensor.template data<T>() + rows[r] * inner;
        row.in[i] = base;
        row.out[i] = base;
      }
      row.grad = grad.data<T>() + r * inner;
      UpdateChunk(row);
    }
    return Status::OK();
  }

  const int num_refs_;
  const int grad_index_;
  const double cycles_per_element_;
  const bool resource_;      // the ResourceApply* twin: handles in, no output
  const int indices_index_;  // a (Resource)SparseApply* op's indices, else -1
  std::vector<std::string> input_names_;
};

// var -= alpha * delta
template <typename T>
class ApplyGradientDescentOp : public ApplyOpBase<T> {
 public:
  explicit ApplyGradientDescentOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/1, /*grad_index=*/2, /*cycles=*/2) {}

 protected:
  void UpdateChunk(const Chunk<T>& c) const override {
    const T alpha = c.scalars[0];
    c.New(0) = c.Old(0) - c.Grad() * alpha;
  }
};

// accum = accum * momentum + grad; var -= lr * accum, or with Nesterov's
// look-ahead var -= lr * grad + lr * momentum * accum.
template <typename T>
class ApplyMomentumOp : public ApplyOpBase<T> {
 public:
  explicit ApplyMomentumOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/2, /*grad_index=*/3, /*cycles=*/5) {
    OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &use_nesterov_));
  }

 protected:
  void UpdateChunk(const Chunk<T>& c) const override {
    const T lr = c.scalars[0], momentum = c.scalars[1];
    c.New(1) = c.Old(1) * momentum + c.Grad();
    if (use_nesterov_) {
      c.New(0) = c.Old(0) - (c.Grad() * lr + c.New(1) * momentum * lr);
    } else {
      c.New(0) = c.Old(0) - c.New(1) * lr;
    }
  }

 private:
  bool use_nesterov_ = false;
};

// m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
// var -= lr_t * m / (sqrt(v) + epsilon) with the bias correction
// lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t). Nesterov (NAdam) uses
// beta1 * m + (1 - beta1) * grad in place of m.
template <typename T>
class ApplyAdamOp : public ApplyOpBase<T> {
 public:
  explicit ApplyAdamOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/3, /*grad_index=*/9, /*cycles=*/12) {
    OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &use_nesterov_));
  }

 protected:
  void UpdateChunk(const Chunk<T>& c) const override {
    const T beta1_power = c.scalars[0], beta2_power = c.scalars[1], lr = c.scalars[2];
    const T beta1 = c.scalars[3], beta2 = c.scalars[4], epsilon = c.scalars[5];
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    if constexpr (std::is_same_v<T, float>) {
      // The same update from the CPU's kernel table (cpu_dispatch.h).
      const AdamChunk chunk{{c.in[0], c.in[1], c.in[2]},
                            {c.out[0], c.out[1], c.out[2]},
                            c.grad,
                            c.length,
                            lr_t,
                            beta1,
                            beta2,
                            epsilon,
                            use_nesterov_};
      ActiveFloatKernels().adam(chunk);
      return;
    }
    c.New(1) = c.Old(1) + (c.Grad() - c.Old(1)) * (T(1) - beta1);
    c.New(2) = c.Old(2) + (c.Grad().square() - c.Old(2)) * (T(1) - beta2);
    if (use_nesterov_) {
      c.New(0) = c.Old(0) - (c.New(1) * beta1 + c.Grad() * (T(1) - beta1)) * lr_t /
                                (c.New(2).sqrt() + epsilon);
    } else {
      c.New(0) = c.Old(0) - c.New(1) * lr_t / (c.New(2).sqrt() + epsilon);
    }
  }

 private:
  bool use_nesterov_ = false;
};

// ms += (grad^2 - ms) * (1 - rho); mom = mom * momentum + lr * grad /
// sqrt(ms + epsilon); var -= mom.
template <typename T>
class ApplyRMSPropOp : public ApplyOpBase<T> {
 public:
  explicit ApplyRMSPropOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/3, /*grad_index=*/7, /*cycles=*/12) {}

 protected:
  void UpdateChunk(const Chunk<T>& c) const override {
    const T lr = c.scalars[0], rho = c.scalars[1], momentum = c.scalars[2], epsilon = c.scalars[3];
    c.New(1) = c.Old(1) + (c.Grad().square() - c.Old(1)) * (T(1) - rho);
    c.New(2) = c.Old(2) * momentum + (c.New(1) + epsilon).rsqrt() * lr * c.Grad();
    c.New(0) = c.Old(0) - c.New(2);
  }
};

// As RMSProp, with ms - mg^2 (the gradient's variance, mg tracking its
// mean) in place of ms.
template <typename T>
class ApplyCenteredRMSPropOp : public ApplyOpBase<T> {
 public:
  explicit ApplyCenteredRMSPropOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/4, /*grad_index=*/8, /*cycles=*/14) {}

 protected:
  void UpdateChunk(const Chunk<T>& c) const override {
    const T lr = c.scalars[0], rho = c.scalars[1], momentum = c.scalars[2], epsilon = c.scalars[3];
    c.New(1) = c.Old(1) + (c.Grad() - c.Old(1)) * (T(1) - rho);
    c.New(2) = c.Old(2) + (c.Grad().square() - c.Old(2)) * (T(1) - rho);
    c.New(3) =
        c.Old(3) * momentum + c.Grad() * lr * (c.New(2) - c.New(1).square() + epsilon).rsqrt();
    c.New(0) = c.Old(0) - c.New(3);
  }
};

// accum += grad^2 (only when update_slots); var -= lr * grad / sqrt(accum).
template <typename T>
class ApplyAdagradOp : public ApplyOpBase<T> {
 public:
  explicit ApplyAdagradOp(OpKernelConstruction* c)
      : ApplyOpBase<T>(c, /*num_refs=*/2, /*grad_index=*/3, /*cycles=*/8) {
    OP_REQUIRES_OK(c, c->GetAttr("update_slots", &update_slots_));
  }

 protected:
  bool UpdatesRef(int ref) const override { return ref == 0 || update_slots_; }
  void UpdateChunk(const Chunk<T>& c) const override {
    const T lr = c.scalars[0];
    if (update_slots_) c.New(1) = c.Old(1) + c.Grad().square();
    // Without update_slots, out[1] is in[1]: the accumulator as it was.
    c.New(0) = c.Old(0) - c.Grad() * lr * c.New(1).rsqrt();
  }

 private:
  bool update_slots_ = true;
};

#define TW_REGISTER_APPLY(T)                                                                  \
  TW_REGISTER_CPU_KERNEL("ApplyGradientDescent", T, ApplyGradientDescentOp<T>);               \
  TW_REGISTER_CPU_KERNEL("ApplyMomentum", T, ApplyMomentumOp<T>);                             \
  TW_REGISTER_CPU_KERNEL("ApplyAdam", T, ApplyAdamOp<T>);                                     \
  TW_REGISTER_CPU_KERNEL("ApplyRMSProp", T, ApplyRMSPropOp<T>);                               \
  TW_REGISTER_CPU_KERNEL("ApplyCenteredRMSProp", T, ApplyCenteredRMSPropOp<T>);               \
  TW_REGISTER_CPU_KERNEL("ApplyAdagrad", T, ApplyAdagradOp<T>);                               \
  TW_REGISTER_CPU_KERNEL("ResourceApplyGradientDescent", T, ApplyGradientDescentOp<T>);       \
  TW_REGISTER_CPU_KERNEL("ResourceApplyMomentum", T, ApplyMomentumOp<T>);                     \
  TW_REGISTER_CPU_KERNEL("ResourceApplyAdam", T, ApplyAdamOp<T>);                             \
  TW_REGISTER_CPU_KERNEL("ResourceApplyRMSProp", T, ApplyRMSPropOp<T>);                       \
  TW_REGISTER_CPU_KERNEL("ResourceApplyCenteredRMSProp", T, ApplyCenteredRMSPropOp<T>);       \
  TW_REGISTER_CPU_KERNEL("ResourceApplyAdagrad", T, ApplyAdagradOp<T>);                       \
  TW_REGISTER_CPU_KERNEL("ResourceSparseApplyMomentum", T, ApplyMomentumOp<T>);               \
  TW_REGISTER_CPU_KERNEL("ResourceSparseApplyAdagrad", T, ApplyAdagradOp<T>);                 \
  TW_REGISTER_CPU_KERNEL("ResourceSparseApplyRMSProp", T, ApplyRMSPropOp<T>);                 \
  TW_REGISTER_CPU_KERNEL("ResourceSparseApplyCenteredRMSProp", T, ApplyCenteredRMSPropOp<T>); \
  TW_REGISTER_CPU_KERNEL("SparseApplyMomentum", T, ApplyMomentumOp<T>);                       \
  TW_REGISTER_CPU_KERNEL("SparseApplyAdagrad", T, ApplyAdagradOp<T>);                         \
  TW_REGISTER_CPU_KERNEL("SparseApplyRMSProp", T, ApplyRMSPropOp<T>);                         \
  TW_REGISTER_CPU_KERNEL("SparseApplyCenteredRMSProp", T, ApplyCenteredRMSPropOp<T>);
TW_REGISTER_APPLY(float)
TW_REGISTER_APPLY(double)
#undef TW_REGISTER_APPLY

}  // namespace
}  // namespace tensorweave
