// OpKernel: the code that computes one node on one device type, and the
// registry that finds it.
//
//   template <typename T>
//   class SquareOp : public OpKernel {
//    public:
//     explicit SquareOp(OpKernelConstruction* c) : OpKernel(c) {}
//     void Compute(OpKernelContext* c) override {
//       const Tensor& x = c->input(0);
//       Tensor* y = nullptr;
//       OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &y));
//       ...
//     }
//   };
//   REGISTER_KERNEL_BUILDER(Name("Square").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                           SquareOp<float>);
//
// A kernel reports bad input with OP_REQUIRES(c, cond, errors::InvalidArgument(...)).
// It need not name its node: the executor appends " (node 'NAME', op OP)" to
// every error a kernel reports.
#ifndef TENSORWEAVE_FRAMEWORK_OP_KERNEL_H_
#define TENSORWEAVE_FRAMEWORK_OP_KERNEL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/call_frame.h"
#include "runtime/framework/cancellation.h"
#include "runtime/framework/device.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/rendezvous.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "tensorweave/proto/node_def.pb.h"

namespace tensorweave {

class FunctionLibraryRuntime;

// Appends " (node 'NAME', op OP)" unless the message already names a node.
Status AttachNodeName(const Status& status, const std::string& node_name, const std::string& op);

// What flows along an edge: a value, or (for ref edges out of VariableV2,
// Assign, ...) the variable itself.
struct TensorValue {
  Tensor tensor;            // the value; unused when `ref` is set
  Variable* ref = nullptr;  // non-null for a reference input/output
  bool is_ref() const { return ref != nullptr; }
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(Device* device, const NodeDef& node, const OpDef& op_def,
                       DataTypeVector input_types, DataTypeVector output_types)
      : device_(device),
        node_(node),
        op_def_(op_def),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}

  const NodeDef& def() const { return node_; }
  const OpDef& op_def() const { return op_def_; }
  Device* device() const { return device_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  template <typename T>
  Status GetAttr(const std::string& name, T* value) const {
    return GetNodeAttr(node_, name, value);
  }

  void SetStatus(const Status& status) { status_.Update(status); }
  const Status& status() const { return status_; }
  void CtxFailure(const Status& status) { SetStatus(status); }

 private:
  Device* device_;
  const NodeDef& node_;
  const OpDef& op_def_;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  Status status_;
};

class OpKernel;

// A loop frame instance and an iteration of it. The frame id is the same
// for the corresponding frame in every partition of a step (a hash of the
// frame's name and the iterations of the frames around it), so a _Send and a
// _Recv inside a loop that spans devices meet per iteration.
struct FrameAndIter {
  uint64_t frame_id = 0;
  int64_t iter_id = 0;
  bool IsRoot() const { return frame_id == 0 && iter_id == 0; }
};

class OpKernelContext {
 public:
  // Everything one kernel invocation can reach; owned by the executor.
  struct Params {
    int64_t step_id = 0;
    Device* device = nullptr;
    OpKernel* op_kernel = nullptr;
    // One per input. The kernel may move from a non-ref input's tensor
    // (forwarding its buffer to an output).
    std::vector<TensorValue>* inputs = nullptr;
    Rendezvous* rendezvous = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    CallFrameInterface* call_frame = nullptr;
    // Schedules a closure on the inter-op thread pool.
    std::function<void(std::function<void()>)>* runner = nullptr;
    // The node is dead (an input came from the untaken branch of a
    // conditional); only _Send and _Recv run then, to pass that on.
    bool is_input_dead = false;
    // Which loop frame and iteration this invocation belongs to ({0, 0}
    // outside loops); _Send/_Recv put it into their rendezvous keys.
    FrameAndIter frame_iter;
    // The step's per-step resources (TensorArrays, Stacks); null when the
    // caller of the executor gave none.
    ScopedStepContainer* step_container = nullptr;
    // Runs the functions of the graph's library (call ops, If, While, Case);
    // null when the executor was given none.
    FunctionLibraryRuntime* function_library = nullptr;
    // When the step runs out of time (max(): never).
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  };

  explicit OpKernelContext(Params* params);

  const OpKernel& op_kernel() const { return *params_->op_kernel; }
  int64_t step_id() const { return params_->step_id; }
  Device* device() const { return params_->device; }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const {
    return *params_->device->eigen_cpu_device();
  }
  Rendezvous* rendezvous() const { return params_->rendezvous; }
  CancellationManager* cancellation_manager() const { return params_->cancellation_manager; }
  CallFrameInterface* call_frame() const { return params_->call_frame; }
  std::function<void(std::function<void()>)>* runner() const { return params_->runner; }
  bool is_input_dead() const { return params_->is_input_dead; }
  const FrameAndIter& frame_iter() const { return params_->frame_iter; }
  ScopedStepContainer* step_container() const { return params_->step_container; }
  FunctionLibraryRuntime* function_library() const { return params_->function_library; }
  // Not OK once the step is cancelled (CANCELLED) or past its deadline
  // (DEADLINE_EXCEEDED). The executor checks between kernels; a kernel whose
  // work is not bounded by its inputs' sizes polls this between chunks so
  // that Close and timeouts are not held up by it.
  Status CheckNotInterrupted() const;

  int num_inputs() const { return static_cast<int>(params_->inputs->size()); }
  // The value of input i. For a ref input this is the variable's tensor,
  // read without the lock; kernels that mutate use mutable_input_ref.
  const Tensor& input(int i) const;
  bool input_is_ref(int i) const { return (*params_->inputs)[i].is_ref(); }
  // The variable behind a ref input (null for a value input).
  Variable* input_ref(int i) const { return (*params_->inputs)[i].ref; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Allocates output i with its registered dtype. RESOURCE_EXHAUSTED on
  // allocation failure.
  Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // Reuses the buffer of the first candidate input that has the output's
  // dtype and element count and that nobody else holds; else allocates.
  Status forward_input_or_allocate_output(std::initializer_list<int> candidate_inputs, int output,
                                          const TensorShape& shape, Tensor** out);
  // Sets output i to `value` (its dtype must match the registered one).
  void set_output(int i, Tensor value);
  // Sets output i to a reference to `variable`.
  void set_output_ref(int i, Variable* variable);
  DataType expected_output_dtype(int i) const;

  // For the executor: output i as produced.
  TensorValue* mutable_output(int i) { return &outputs_[i]; }

  void SetStatus(const Status& status) { status_.Update(status); }
  const Status& status() const { return status_; }
  void CtxFailure(const Status& status) { SetStatus(status); }

 private:
  Params* params_;
  std::vector<TensorValue> outputs_;
  Status status_;
};

class AsyncOpKernel;

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* context);
  virtual ~OpKernel() = default;

  // Runs synchronously; reports failure through context->SetStatus.
  virtual void Compute(OpKernelContext* context) = 0;
  // Non-null for kernels that finish later (Recv).
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // Cheap kernels run inline on the thread that made them ready; expensive
  // ones may be handed to the inter-op pool.
  virtual bool IsExpensive() const { return true; }

  const std::string& name() const { return name_; }
  const std::string& type_string() const { return type_; }
  const NodeDef& def() const { return def_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& output_types() const { return output_types_; }

 private:
  const NodeDef def_;
  const std::string name_;
  const std::string type_;
  const DataTypeVector input_types_;
  const DataTypeVector output_types_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;
  // Must call `done` exactly once, after setting outputs or status.
  virtual void ComputeAsync(OpKernelContext* context, DoneCallback done) = 0;
  AsyncOpKernel* AsAsync() final { return this; }
  void Compute(OpKernelContext* context) final;
};

// How the executor runs kernels: an exception a kernel lets escape (a
// container or Tensor constructor that could not allocate, a bug) fails the
// node with errors::FromCurrentException's status instead of terminating
// the process. The async form calls `done` exactly once either way.
void ComputeCatchingExceptions(OpKernel* kernel, OpKernelContext* context);
void ComputeAsyncCatchingExceptions(AsyncOpKernel* kernel, OpKernelContext* context,
                                    AsyncOpKernel::DoneCallback done);

// --- Kernel registration ------------------------------------------------

using KernelFactory = std::function<OpKernel*(OpKernelConstruction*)>;

class KernelDefBuilder {
 public:
  explicit KernelDefBuilder(const char* op_name) : op_(op_name) {}
  KernelDefBuilder& Device(const char* device_type) {
    device_type_ = device_type;
    return *this;
  }
  template <typename T>
  KernelDefBuilder& TypeConstraint(const char* attr_name) {
    return TypeConstraint(attr_name, DataTypeToEnum<T>::value);
  }
  KernelDefBuilder& TypeConstraint(const char* attr_name, DataType dtype) {
    constraints_.push_back({attr_name, dtype});
    return *this;
  }
  // Accepted for TensorFlow familiarity; CPU memory is host memory.
  KernelDefBuilder& HostMemory(const char*) { return *this; }

  struct Constraint {
    std::string attr;
    DataType dtype;
  };
  const std::string& op() const { return op_; }
  const std::string& device_type() const { return device_type_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }

 private:
  std::string op_;
  std::string device_type_ = "CPU";
  std::vector<Constraint> constraints_;
};
inline KernelDefBuilder Name(const char* op_name) { return KernelDefBuilder(op_name); }

void RegisterKernel(const KernelDefBuilder& def, KernelFactory factory);

// Instantiates the kernel registered for `node` on `device_type`. NOT_FOUND
// when no registration matches, listing the dtypes that have kernels;
// otherwise the status of the kernel's constructor, naming the node.
Status CreateOpKernel(const std::string& device_type, Device* device, const NodeDef& node,
                      std::unique_ptr<OpKernel>* kernel);
// True when some kernel for `node` exists on `device_type`.
bool KernelExists(const std::string& device_type, const NodeDef& node);

struct KernelRegistrar {
  KernelRegistrar(const KernelDefBuilder& def, KernelFactory factory) {
    RegisterKernel(def, std::move(factory));
  }
};

#define TW_REGISTER_KERNEL_UNIQ(ctr, builder, ...)                             \
  static ::tensorweave::KernelRegistrar tw_kernel_registrar_##ctr(             \
      ::tensorweave::builder,                                                  \
      [](::tensorweave::OpKernelConstruction* c) -> ::tensorweave::OpKernel* { \
        return new __VA_ARGS__(c);                                             \
      })
#define TW_REGISTER_KERNEL_UNIQ_HELPER(ctr, builder, ...) \
  TW_REGISTER_KERNEL_UNIQ(ctr, builder, __VA_ARGS__)
#define REGISTER_KERNEL_BUILDER(builder, ...) \
  TW_REGISTER_KERNEL_UNIQ_HELPER(__COUNTER__, builder, __VA_ARGS__)

#define OP_REQUIRES(CTX, EXP, STATUS) \
  do {                                \
    if (!(EXP)) {                     \
      (CTX)->CtxFailure(STATUS);      \
      return;                         \
    }                                 \
  } while (0)

#define OP_REQUIRES_OK(CTX, ...)                 \
  do {                                           \
    ::tensorweave::Status _tw_s = (__VA_ARGS__); \
    if (!_tw_s.ok()) {                           \
      (CTX)->CtxFailure(_tw_s);                  \
      return;                                    \
    }                                            \
  } while (0)

#define OP_REQUIRES_ASYNC(CTX, EXP, STATUS, DONE) \
  do {                                            \
    if (!(EXP)) {                                 \
      (CTX)->CtxFailure(STATUS);                  \
      (DONE)();                                   \
      return;                                     \
    }                                             \
  } while (0)

#define OP_REQUIRES_OK_ASYNC(CTX, STATUS, DONE) \
  do {                                          \
    ::tensorweave::Status _tw_s = (STATUS);     \
    if (!_tw_s.ok()) {                          \
      (CTX)->CtxFailure(_tw_s);                 \
      (DONE)();                                 \
      return;                                   \
    }                                           \
  } while (0)

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_OP_KERNEL_H_
