#include "runtime/distributed/grpc_remote_master.h"

#include <grpc/support/time.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <mutex>

#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_util.h"
#include "runtime/distributed/tensor_coding.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {
namespace {

using Stub = tensorflow::MasterService::Stub;

// How long past its CallOptions timeout a call's deadline is: the master
// enforces a step's timeout itself and says what was still pending; the
// deadline only covers a master that cannot answer.
constexpr int64_t kMasterFirstGraceMs = 1000;

// How long a caller polls for its answer before it sleeps. A thread
// wake-up costs tens of microseconds on small (virtual) machines, as much
// as a quick step's whole round trip; polling a little longer than such a
// round trip takes the answer without one. Longer calls sleep after the
// budget, so a slow step costs this much CPU once.
constexpr std::chrono::microseconds kPollBudget{300};

// The context of one call, shared with the cancel callback the call leaves
// in its CallOptions: a StartCancel that races the call's end never
// touches a freed context.
struct CallState {
  std::mutex mu;
  bool finished = false;  // guarded by mu
  ::grpc::ClientContext context;
};

// Waits for the single event of `queue` (the call's completion), polling
// for up to kPollBudget first.
void AwaitCompletion(::grpc::CompletionQueue* queue) {
  void* tag = nullptr;
  bool ok = false;
  const auto poll_until = std::chrono::steady_clock::now() + kPollBudget;
  do {
    if (queue->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC)) ==
        ::grpc::CompletionQueue::GOT_EVENT) {
      return;
    }
  } while (std::chrono::steady_clock::now() < poll_until);
  queue->Next(&tag, &ok);
}

class GrpcRemoteMaster final : public MasterInterface {
 public:
  explicit GrpcRemoteMaster(std::shared_ptr<::grpc::Channel> channel)
      : stub_(tensorflow::MasterService::NewStub(channel)), raw_stub_(std::move(channel)) {}

  Status CreateSession(CallOptions* call, const CreateSessionRequest& request,
                       CreateSessionResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncCreateSession);
  }
  Status ExtendSession(CallOptions* call, const ExtendSessionRequest& request,
                       ExtendSessionResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncExtendSession);
  }
  Status PartialRunSetup(CallOptions* call, const PartialRunSetupRequest& request,
                         PartialRunSetupResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncPartialRunSetup);
  }
  Status RunStep(CallOptions* call, const RunStepRequest& request, const NamedTensors& feeds,
                 RunStepResponse* response, NamedTensors* fetched) override {
    ::grpc::ByteBuffer sent, received;
    EncodeWithTensors(request, RunStepRequest::kFeedFieldNumber, feeds, &sent);
    TW_RETURN_IF_ERROR(CallRaw(call, "/tensorflow.MasterService/RunStep", sent, &received));
    Status decoded =
        DecodeWithTensors(received, RunStepResponse::kTensorFieldNumber, response, fetched);
    if (!decoded.ok()) {
      return errors::InvalidArgument("Cannot parse the master's RunStep response: ",
                                     decoded.message());
    }
    return FromCodeAndMessage(response->status_code(), response->status_error_message());
  }
  Status CloseSession(CallOptions* call, const CloseSessionRequest& request,
                      CloseSessionResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncCloseSession);
  }
  Status ListDevices(CallOptions* call, const ListDevicesRequest& request,
                     ListDevicesResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncListDevices);
  }
  Status Reset(CallOptions* call, const ResetRequest& request, ResetResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncReset);
  }
  Status MakeCallable(CallOptions* call, const MakeCallableRequest& request,
                      MakeCallableResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncMakeCallable);
  }
  Status RunCallable(CallOptions* call, const RunCallableRequest& request,
                     const std::vector<Tensor>& feeds, RunCallableResponse* response,
                     std::vector<Tensor>* fetched) override {
    ::grpc::ByteBuffer sent, received;
    EncodeWithTensors(request, RunCallableRequest::kFeedFieldNumber, feeds, &sent);
    TW_RETURN_IF_ERROR(CallRaw(call, "/tensorflow.MasterService/RunCallable", sent, &received));
    Status decoded =
        DecodeWithTensors(received, RunCallableResponse::kFetchFieldNumber, response, fetched);
    if (!decoded.ok()) {
      return errors::InvalidArgument("Cannot parse the master's RunCallable response: ",
                                     decoded.message());
    }
    return Status::OK();
  }
  Status ReleaseCallable(CallOptions* call, const ReleaseCallableRequest& request,
                         ReleaseCallableResponse* response) override {
    return Call(call, request, response, &Stub::PrepareAsyncReleaseCallable);
  }

 private:
  // One unary call: `prepare` is the stub's PrepareAsync<Method>.
  template <typename Request, typename Response, typename Prepare>
  Status Call(CallOptions* call, const Request& request, Response* response, Prepare prepare) {
    return Run(call, [&](::grpc::ClientContext* context, ::grpc::CompletionQueue* queue,
                         ::grpc::Status* status) {
      auto rpc = ((*stub_).*prepare)(context, request, queue);
      rpc->StartCall();
      rpc->Finish(response, status, nullptr);
    });
  }

  // One unary call on raw bytes (the tensors' own buffers go out as they
  // are; tensor_coding.h).
  Status CallRaw(CallOptions* call, const char* method, const ::grpc::ByteBuffer& request,
                 ::grpc::ByteBuffer* response) {
    return Run(call, [&](::grpc::ClientContext* context, ::grpc::CompletionQueue* queue,
                         ::grpc::Status* status) {
      auto rpc = raw_stub_.PrepareUnaryCall(context, method, request, queue);
      rpc->StartCall();
      rpc->Finish(response, status, nullptr);
    });
  }

  // Starts a call with `start` (which asks for its completion on the queue
  // it is given, tagged nullptr) and waits for it: the deadline, the
  // cancellation and the status as the header says.
  template <typename Start>
  Status Run(CallOptions* call, Start start) {
    auto state = std::make_shared<CallState>();
    const int64_t timeout_ms = call->GetTimeout();
    SetTimeout(&state->context, timeout_ms > 0 ? timeout_ms + kMasterFirstGraceMs : 0);
    call->SetCancelCallback([state] {
      std::lock_guard<std::mutex> lock(state->mu);
      if (!state->finished) state->context.TryCancel();
    });
    ::grpc::Status grpc_status;
    {
      ::grpc::CompletionQueue queue;
      start(&state->context, &queue, &grpc_status);
      AwaitCompletion(&queue);
      queue.Shutdown();
      void* tag = nullptr;
      bool ok = false;
      while (queue.Next(&tag, &ok)) {
      }
    }
    call->ClearCancelCallback();
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->finished = true;
    }
    Status status = FromGrpcStatus(grpc_status);
    // Our own deadline passed (not a DEADLINE_EXCEEDED the master sent).
    if (errors::IsDeadlineExceeded(status) && timeout_ms > 0 &&
        std::chrono::system_clock::now() >= state->context.deadline()) {
      return errors::DeadlineExceeded("Timed out after ", timeout_ms, " ms: ", status.message());
    }
    return status;
  }

  const std::unique_ptr<Stub> stub_;
  ::grpc::GenericStub raw_stub_;
};

}  // namespace

std::unique_ptr<MasterInterface> NewGrpcRemoteMaster(std::shared_ptr<::grpc::Channel> channel) {
  return std::make_unique<GrpcRemoteMaster>(std::move(channel));
}

}  // namespace tensorweave
