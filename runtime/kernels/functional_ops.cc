// Kernels that run functions of the graph's library through the executor's
// FunctionLibraryRuntime: PartitionedCall and StatefulPartitionedCall (and,
// through FunctionLibraryRuntime::CreateKernel, nodes whose op is a
// function), If and StatelessIf, Case and StatelessCase, While and
// StatelessWhile.
//
// All are asynchronous: while a body runs, no inter-op thread waits for it
// (with a small pool, a thread blocked per nested call would deadlock). A
// While whose iterations finish inline keeps looping on the same thread
// without growing the stack; one that finishes later continues on the
// thread that finished it. A body's error keeps its code and says which
// function and which calling node it came from.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/common_runtime/function_runtime.h"
#include "runtime/framework/op_kernel.h"

namespace tensorweave {
namespace {

using Handle = FunctionLibraryRuntime::Handle;
using Results = std::vector<Tensor>;

// TensorFlow's truth of a condition tensor: a scalar is its value (non-zero,
// a non-empty string); any other tensor is true when it has elements.
Status ToBool(const Tensor& value, bool* truth) {
  if (!value.IsScalar()) {
    *truth = value.NumElements() > 0;
    return Status::OK();
  }
  switch (value.dtype()) {
#define TW_SCALAR_TRUTH(DTYPE, TYPE)         \
  case DTYPE:                                \
    *truth = value.scalar<TYPE>() != TYPE(); \
    return Status::OK();
    TW_SCALAR_TRUTH(DT_BOOL, bool)
    TW_SCALAR_TRUTH(DT_FLOAT, float)
    TW_SCALAR_TRUTH(DT_DOUBLE, double)
    TW_SCALAR_TRUTH(DT_INT8, int8_t)
    TW_SCALAR_TRUTH(DT_INT16, int16_t)
    TW_SCALAR_TRUTH(DT_INT32, int32_t)
    TW_SCALAR_TRUTH(DT_INT64, int64_t)
    TW_SCALAR_TRUTH(DT_UINT8, uint8_t)
    TW_SCALAR_TRUTH(DT_UINT16, uint16_t)
    TW_SCALAR_TRUTH(DT_UINT32, uint32_t)
    TW_SCALAR_TRUTH(DT_UINT64, uint64_t)
#undef TW_SCALAR_TRUTH
    case DT_STRING:
      *truth = !value.scalar<std::string>().empty();
      return Status::OK();
    default:
      return errors::InvalidArgument("A condition of type ", DataTypeString(value.dtype()),
                                     " cannot be converted to bool");
  }
}

// A kernel that calls some of the functions named by its attrs. Handles are
// instantiated on first use and kept: the kernel belongs to one executor,
// which has one function library runtime.
class FunctionCallingKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

 protected:
  using Resume = std::function<void(const Status&)>;

  // The functions this kernel may call, by index.
  void set_functions(std::vector<NameAttrList> functions) {
    functions_ = std::move(functions);
    handles_.assign(functions_.size(), -1);
  }
  const NameAttrList& function(int which) const { return functions_[which]; }
  int num_functions() const { return static_cast<int>(functions_.size()); }

  // Runs function `which` with `args` into `results`. Returns true when the
  // call finished before returning, its status in *status; otherwise
  // `resume` gets the status later, on the thread that finished the body.
  // So a caller looping over inline calls does not grow the stack.
  bool CallFunction(OpKernelContext* ctx, int which, std::vector<Tensor> args, Results* results,
                    Status* status, Resume resume) {
    Handle handle = -1;
    *status = GetHandle(ctx, which, &handle);
    if (!status->ok()) return true;
    FunctionLibraryRuntime::Options options;
    options.step_id = ctx->step_id();
    options.rendezvous = ctx->rendezvous();
    options.cancellation_manager = ctx->cancellation_manager();
    options.runner = ctx->runner();
    options.step_container = ctx->step_container();
    // Whichever of the callback and this function gets there second goes on.
    struct Rendezvous {
      std::atomic<bool> one_arrived{false};
      Status status;
    };
    auto meeting = std::make_shared<Rendezvous>();
    ctx->function_library()->Run(
        options, handle, std::move(args), results,
        [this, ctx, which, meeting, resume = std::move(resume)](const Status& body_status) {
          meeting->status = WithCaller(body_status, ctx, which);
          if (meeting->one_arrived.exchange(true, std::memory_order_acq_rel)) {
            resume(meeting->status);
          }
        });
    if (meeting->one_arrived.exchange(true, std::memory_order_acq_rel)) {
      *status = meeting->status;
      return true;
    }
    return false;
  }

  // Calls function `which` once: its results become the node's outputs.
  void CallOnce(OpKernelContext* ctx, int which, std::vector<Tensor> args,
                const DoneCallback& done) {
    auto results = std::make_shared<Results>();
    auto finish = [this, ctx, which, results, done](const Status& status) {
      ctx->SetStatus(status.ok() ? SetOutputs(ctx, which, results.get()) : status);
      done();
    };
    Status status;
    if (CallFunction(ctx, which, std::move(args), results.get(), &status, finish)) finish(status);
  }

  // The results match the node's outputs in number and dtype; they become
  // its outputs.
  Status SetOutputs(OpKernelContext* ctx, int which, Results* results) {
    if (static_cast<int>(results->size()) != ctx->num_outputs()) {
      return errors::InvalidArgument("Function '", function(which).name(), "' returned ",
                                     results->size(), " values but the node has ",
                                     ctx->num_outputs(), " outputs");
    }
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      if ((*results)[i].dtype() != ctx->expected_output_dtype(i)) {
        return errors::InvalidArgument("Function '", function(which).name(), "' returned a ",
                                       DataTypeString((*results)[i].dtype()), " as output ", i,
                                       ", where the node has ",
                                       DataTypeString(ctx->expected_output_dtype(i)));
      }
    }
    for (int i = 0; i < ctx->num_outputs(); ++i) ctx->set_output(i, std::move((*results)[i]));
    return Status::OK();
  }

  static std::vector<Tensor> Inputs(OpKernelContext* ctx, int first) {
    std::vector<Tensor> args;
    for (int i = first; i < ctx->num_inputs(); ++i) args.push_back(ctx->input(i));
    return args;
  }

 private:
  Status GetHandle(OpKernelContext* ctx, int which, Handle* handle) {
    FunctionLibraryRuntime* library = ctx->function_library();
    if (library == nullptr) {
      return errors::FailedPrecondition("Function '", function(which).name(),
                                        "' cannot run: this graph was given no function library");
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (library != library_) {  // only a test would hand one kernel two
      handles_.assign(functions_.size(), -1);
      library_ = library;
    }
    if (handles_[which] < 0) {
      TW_RETURN_IF_ERROR(
          library->Instantiate(function(which).name(), function(which).attr(), &handles_[which]));
    }
    *handle = handles_[which];
    return Status::OK();
  }

  Status WithCaller(const Status& status, OpKernelContext* ctx, int which) const {
    if (status.ok()) return status;
    return Status(
        status.code(),
        StrCat(status.message(), "\n\tin function '", function(which).name(), "' called by node '",
               ctx->op_kernel().name(), "' (op ", ctx->op_kernel().type_string(), ")"));
  }

  std::vector<NameAttrList> functions_;
  std::mutex mu_;
  FunctionLibraryRuntime* library_ = nullptr;  // guarded by mu_
  std::vector<Handle> handles_;                // guarded by mu_
};

NameAttrList FuncAttr(OpKernelConstruction* c, const char* name) {
  const AttrValue* value = FindNodeAttr(c->def(), name);
  if (value == nullptr || !value->has_func()) {
    c->SetStatus(errors::InvalidArgument("Attr '", name, "' must be a function"));
    return NameAttrList();
  }
  return value->func();
}

// PartitionedCall, StatefulPartitionedCall: outputs = f(args).
class CallOp : public FunctionCallingKernel {
 public:
  explicit CallOp(OpKernelConstruction* c) : FunctionCallingKernel(c) {
    set_functions({FuncAttr(c, "f")});
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CallOnce(ctx, 0, Inputs(ctx, 0), done);
  }
};

// If, StatelessIf: then_branch(input) when cond, else else_branch(input).
class IfOp : public FunctionCallingKernel {
 public:
  explicit IfOp(OpKernelConstruction* c) : FunctionCallingKernel(c) {
    set_functions({FuncAttr(c, "then_branch"), FuncAttr(c, "else_branch")});
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    bool take_then = false;
    OP_REQUIRES_OK_ASYNC(ctx, ToBool(ctx->input(0), &take_then), done);
    CallOnce(ctx, take_then ? 0 : 1, Inputs(ctx, 1), done);
  }
};

// Case, StatelessCase: branches[branch_index](input); an index out of range
// runs the last branch, as in TensorFlow.
class CaseOp : public FunctionCallingKernel {
 public:
  explicit CaseOp(OpKernelConstruction* c) : FunctionCallingKernel(c) {
    const AttrValue* branches = FindNodeAttr(c->def(), "branches");
    if (branches == nullptr || !branches->has_list() || branches->list().func_size() == 0) {
      c->SetStatus(errors::InvalidArgument("Attr 'branches' must list at least one function"));
      return;
    }
    set_functions({branches->list().func().begin(), branches->list().func().end()});
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    const Tensor& index = ctx->input(0);
    OP_REQUIRES_ASYNC(ctx, index.IsScalar(),
                      errors::InvalidArgument("branch_index must be a scalar, got shape ",
                                              index.shape().DebugString()),
                      done);
    const int32_t requested = index.scalar<int32_t>();
    const int last = num_functions() - 1;
    CallOnce(ctx, requested >= 0 && requested < last ? requested : last, Inputs(ctx, 1), done);
  }
};

// While, StatelessWhile: vars = input; while cond(vars): vars = body(vars).
class WhileOp : public FunctionCallingKernel {
 public:
  explicit WhileOp(OpKernelConstruction* c) : FunctionCallingKernel(c) {
    set_functions({FuncAttr(c, "cond"), FuncAttr(c, "body")});
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    if (num_functions() != 2) {  // the constructor failed
      done();
      return;
    }
    auto* loop = new Loop{this, ctx, std::move(done), Inputs(ctx, 0), {}};
    loop->Drive(kCond);
  }

 private:
  enum Phase { kCond = 0, kBody = 1 };  // also the index of the function
  // Iterations run back to back on one thread before the loop hops.
  static constexpr int kInlineIterations = 64;

  // One run of the loop; deletes itself when it calls `done`.
  struct Loop {
    WhileOp* op;
    OpKernelContext* ctx;
    DoneCallback done;
    std::vector<Tensor> vars;
    Results results;

    // Runs cond and body in turn for as long as they finish inline; returns
    // when one will finish on another thread (its callback drives on) or
    // the loop has ended.
    void Drive(Phase phase) {
      for (int inline_iterations = 0;; ++inline_iterations) {
        Status status;
        if (phase == kCond) {
          CancellationManager* cancellation = ctx->cancellation_manager();
          if (cancellation != nullptr && cancellation->IsCancelled()) {
            Finish(errors::Cancelled("The while loop was cancelled"));
            return;
          }
          // Now and then the loop moves to the runner, giving back the
          // thread it was started on: that may be the step's caller, which
          // must get back to waiting for the step's deadline.
          if (inline_iterations >= kInlineIterations && ctx->runner() != nullptr) {
            (*ctx->runner())([this] { Drive(kCond); });
            return;
          }
          if (!op->CallFunction(ctx, kCond, vars, &results, &status, [this](const Status& s) {
                if (CondDone(s)) Drive(kBody);
              })) {
            return;
          }
          if (!CondDone(status)) return;
          phase = kBody;
        } else {
          if (!op->CallFunction(ctx, kBody, std::move(vars), &results, &status,
                                [this](const Status& s) {
                                  if (BodyDone(s)) Drive(kCond);
                                })) {
            return;
          }
          if (!BodyDone(status)) return;
          phase = kCond;
        }
      }
    }

    // True when the body should run; otherwise the loop has finished.
    bool CondDone(const Status& status) {
      if (!status.ok()) return Finish(status);
      if (results.size() != 1) {
        return Finish(errors::InvalidArgument("The while loop's cond '", op->function(kCond).name(),
                                              "' must return one value, returned ",
                                              results.size()));
      }
      bool go_on = false;
      const Status truth = ToBool(results[0], &go_on);
      results.clear();
      if (!truth.ok()) return Finish(truth);
      if (!go_on) return Finish(op->SetOutputs(ctx, kBody, &vars));
      return true;
    }

    // True when cond should run again; otherwise the loop has finished.
    bool BodyDone(const Status& status) {
      if (!status.ok()) return Finish(status);
      const DataTypeVector& types = op->output_types();
      if (results.size() != types.size()) {
        return Finish(errors::InvalidArgument("The while loop's body '", op->function(kBody).name(),
                                              "' returned ", results.size(), " values for ",
                                              types.size(), " loop variables"));
      }
      for (size_t i = 0; i < types.size(); ++i) {
        if (results[i].dtype() != types[i]) {
          return Finish(errors::InvalidArgument(
              "The while loop's body '", op->function(kBody).name(), "' returned a ",
              DataTypeString(results[i].dtype()), " for loop variable ", i, ", which is a ",
              DataTypeString(types[i])));
        }
      }
      vars = std::move(results);
      results.clear();
      return true;
    }

    // Ends the loop with `status` (its outputs already set when OK).
    bool Finish(const Status& status) {
      ctx->SetStatus(status);
      DoneCallback finished = std::move(done);
      delete this;
      finished();
      return false;
    }
  };
};

REGISTER_KERNEL_BUILDER(Name("PartitionedCall").Device(DEVICE_CPU), CallOp);
REGISTER_KERNEL_BUILDER(Name("StatefulPartitionedCall").Device(DEVICE_CPU), CallOp);
REGISTER_KERNEL_BUILDER(Name("If").Device(DEVICE_CPU), IfOp);
REGISTER_KERNEL_BUILDER(Name("StatelessIf").Device(DEVICE_CPU), IfOp);
REGISTER_KERNEL_BUILDER(Name("Case").Device(DEVICE_CPU), CaseOp);
REGISTER_KERNEL_BUILDER(Name("StatelessCase").Device(DEVICE_CPU), CaseOp);
REGISTER_KERNEL_BUILDER(Name("While").Device(DEVICE_CPU), WhileOp);
REGISTER_KERNEL_BUILDER(Name("StatelessWhile").Device(DEVICE_CPU), WhileOp);

}  // namespace
}  // namespace tensorweave
