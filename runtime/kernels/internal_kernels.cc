// Kernels of the runtime's own ops (see runtime/ops/internal_ops.cc). All are
// cheap: they move a Tensor handle, never its elements.
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/rendezvous.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("index", &index_));
  }

  void Compute(OpKernelContext* c) override {
    CallFrameInterface* frame = c->call_frame();
    OP_REQUIRES(c, frame != nullptr, errors::Internal("_Arg needs a call frame"));
    Tensor value;
    OP_REQUIRES_OK(c, frame->GetArg(index_, &value));
    OP_REQUIRES(c, value.dtype() == dtype_,
                errors::InvalidArgument("Argument ", index_, " is ", DataTypeString(value.dtype()),
                                        " but ", DataTypeString(dtype_), " was expected"));
    c->set_output(0, std::move(value));
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("index", &index_));
  }

  void Compute(OpKernelContext* c) override {
    CallFrameInterface* frame = c->call_frame();
    OP_REQUIRES(c, frame != nullptr, errors::Internal("_Retval needs a call frame"));
    const Tensor& value = c->input(0);
    OP_REQUIRES(
        c, value.dtype() == dtype_,
        errors::InvalidArgument("Return value ", index_, " is ", DataTypeString(value.dtype()),
                                " but ", DataTypeString(dtype_), " was expected"));
    OP_REQUIRES_OK(c, frame->SetRetval(index_, value));
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t index_ = 0;
};

// The rendezvous key both ends compute from their shared attrs and the
// frame and iteration they run in (loops spanning devices send once per
// iteration, each under its own key).
class TransferKey {
 public:
  Status Init(OpKernelConstruction* c) {
    std::string send_device, recv_device, tensor_name;
    int64_t send_device_incarnation = 0;
    TW_RETURN_IF_ERROR(c->GetAttr("send_device", &send_device));
    TW_RETURN_IF_ERROR(c->GetAttr("send_device_incarnation", &send_device_incarnation));
    TW_RETURN_IF_ERROR(c->GetAttr("recv_device", &recv_device));
    TW_RETURN_IF_ERROR(c->GetAttr("tensor_name", &tensor_name));
    root_key_ = Rendezvous::CreateKey(send_device, static_cast<uint64_t>(send_device_incarnation),
                                      recv_device, tensor_name, kRootFrameIter);
    prefix_ = root_key_.substr(0, root_key_.size() - (sizeof(kRootFrameIter) - 1));
    return Status::OK();
  }
  std::string For(const FrameAndIter& frame_iter) const {
    if (frame_iter.IsRoot()) return root_key_;
    return StrCat(prefix_, frame_iter.frame_id, ":", frame_iter.iter_id);
  }

 private:
  static constexpr char kRootFrameIter[] = "0:0";
  std::string root_key_;
  std::string prefix_;  // root_key_ without its frame and iteration
};

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, key_.Init(c)); }

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->rendezvous() != nullptr, errors::Internal("_Send needs a rendezvous"));
    // A dead input has no value: only its deadness is sent.
    OP_REQUIRES_OK(
        c, c->rendezvous()->Send(key_.For(c->frame_iter()),
                                 c->is_input_dead() ? Tensor() : c->input(0), c->is_input_dead()));
  }
  bool IsExpensive() const override { return false; }

 private:
  TransferKey key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    OP_REQUIRES_OK(c, key_.Init(c));
    OP_REQUIRES_OK(c, c->GetAttr("tensor_type", &dtype_));
  }

  void ComputeAsync(OpKernelContext* c, DoneCallback done) override {
    Rendezvous* rendezvous = c->rendezvous();
    OP_REQUIRES_ASYNC(c, rendezvous != nullptr, errors::Internal("_Recv needs a rendezvous"), done);
    // Cancelling the step aborts the rendezvous, which wakes this receiver
    // (and every other one of the step) with CANCELLED.
    CancellationManager* cancellation = c->cancellation_manager();
    CancellationManager::Token token = 0;
    if (cancellation != nullptr) {
      token = cancellation->get_cancellation_token();
      const bool registered = cancellation->RegisterCallback(token, [rendezvous] {
        rendezvous->StartAbort(errors::Cancelled("The step was cancelled"));
      });
      OP_REQUIRES_ASYNC(c, registered, errors::Cancelled("The step was cancelled"), done);
    }
    rendezvous->RecvAsync(
        key_.For(c->frame_iter()), [this, c, cancellation, token, done = std::move(done)](
                                       const Status& status, const Tensor& value, bool is_dead) {
          if (cancellation != nullptr) cancellation->DeregisterCallback(token);
          if (!status.ok()) {
            c->SetStatus(status);
          } else if (is_dead) {
            // No output: the executor makes this node's consumers dead. Only
            // an executor with dead-tensor support may meet a dead sender.
          } else if (value.dtype() != dtype_) {
            c->SetStatus(errors::Internal("Received a ", DataTypeString(value.dtype()), " where a ",
                                          DataTypeString(dtype_), " was expected"));
          } else {
            c->set_output(0, value);
          }
          done();
        });
  }
  // Waiting costs nothing: the kernel only leaves a callback.
  bool IsExpensive() const override { return false; }

 private:
  TransferKey key_;
  DataType dtype_ = DT_INVALID;
};

REGISTER_KERNEL_BUILDER(Name("_Arg").Device(DEVICE_CPU), ArgOp);
REGISTER_KERNEL_BUILDER(Name("_Retval").Device(DEVICE_CPU), RetvalOp);
REGISTER_KERNEL_BUILDER(Name("_Send").Device(DEVICE_CPU), SendOp);
REGISTER_KERNEL_BUILDER(Name("_Recv").Device(DEVICE_CPU), RecvOp);

}  // namespace
}  // namespace tensorweave
