#include "runtime/distributed/grpc_remote_worker.h"

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <mutex>

#include "runtime/distributed/grpc_util.h"
#include "runtime/distributed/tensor_coding.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {
namespace {

using Stub = tensorflow::WorkerService::Stub;

// The state of one call, shared by its completion callback and the cancel
// callback it leaves in the caller's CallOptions: whichever runs last frees
// the ClientContext, so a late StartCancel never touches a finished call.
struct ClientCall {
  std::mutex mu;
  bool finished = false;  // guarded by mu
  ::grpc::ClientContext context;
};

// A call on raw bytes (RecvTensor, RunGraph: tensor_coding.h): the request
// and response buffers live with the call.
struct RawCall : ClientCall {
  ::grpc::ByteBuffer request;
  ::grpc::ByteBuffer response;
};

class GrpcRemoteWorker final : public WorkerInterface, public TensorReceiverInterface {
 public:
  explicit GrpcRemoteWorker(std::shared_ptr<::grpc::Channel> channel)
      : stub_(tensorflow::WorkerService::NewStub(channel)), raw_stub_(std::move(channel)) {}

  void RecvTensorValueAsync(CallOptions* options, const RecvTensorRequest* request, Tensor* value,
                            bool* is_dead, StatusCallback done) override {
    auto call = StartCall<RawCall>(options);
    bool own_buffer = false;
    ::grpc::Status serialized = ::grpc::SerializationTraits<RecvTensorRequest>::Serialize(
        *request, &call->request, &own_buffer);
    if (!serialized.ok()) {
      FinishCall(call.get(), options);
      done(FromGrpcStatus(serialized));
      return;
    }
    IssueRaw(
        std::move(call), options, "/tensorflow.WorkerService/RecvTensor",
        [value, is_dead](const ::grpc::ByteBuffer& response) {
          return DecodeRecvTensorResponse(response, value, is_dead);
        },
        std::move(done));
  }

  // The sends go out from their own buffers and the recvs are read straight
  // into tensors (tensor_coding.h).
  void RunGraphAsync(CallOptions* options, const RunGraphInput* input, RunGraphOutput* output,
                     StatusCallback done) override {
    auto call = StartCall<RawCall>(options);
    EncodeWithTensors(input->request, RunGraphRequest::kSendFieldNumber, input->sends,
                      &call->request);
    IssueRaw(
        std::move(call), options, "/tensorflow.WorkerService/RunGraph",
        [output](const ::grpc::ByteBuffer& response) {
          return DecodeWithTensors(response, RunGraphResponse::kRecvFieldNumber, &output->response,
                                   &output->recvs);
        },
        std::move(done));
  }

  void GetStatusAsync(CallOptions* call, const GetStatusRequest* request,
                      GetStatusResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->GetStatus(args...); });
  }
  void CreateWorkerSessionAsync(CallOptions* call, const CreateWorkerSessionRequest* request,
                                CreateWorkerSessionResponse* response,
                                StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->CreateWorkerSession(args...); });
  }
  void DeleteWorkerSessionAsync(CallOptions* call, const DeleteWorkerSessionRequest* request,
                                DeleteWorkerSessionResponse* response,
                                StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->DeleteWorkerSession(args...); });
  }
  void RegisterGraphAsync(CallOptions* call, const RegisterGraphRequest* request,
                          RegisterGraphResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->RegisterGraph(args...); });
  }
  void DeregisterGraphAsync(CallOptions* call, const DeregisterGraphRequest* request,
                            DeregisterGraphResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->DeregisterGraph(args...); });
  }
  void CleanupGraphAsync(CallOptions* call, const CleanupGraphRequest* request,
                         CleanupGraphResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->CleanupGraph(args...); });
  }
  void CleanupAllAsync(CallOptions* call, const CleanupAllRequest* request,
                       CleanupAllResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->CleanupAll(args...); });
  }
  void RecvTensorAsync(CallOptions* call, const RecvTensorRequest* request,
                       RecvTensorResponse* response, StatusCallback done) override {
    Issue(call, request, response, std::move(done),
          [](Stub::async_interface* async, auto... args) { async->RecvTensor(args...); });
  }

 private:
  // Starts raw `method` with the call's request bytes; `decode` reads the
  // response bytes when the call succeeded.
  void IssueRaw(std::shared_ptr<RawCall> call, CallOptions* options, const char* method,
                std::function<Status(const ::grpc::ByteBuffer&)> decode, StatusCallback done) {
    RawCall* raw = call.get();
    raw_stub_.UnaryCall(&raw->context, method, ::grpc::StubOptions(), &raw->request, &raw->response,
                        [call = std::move(call), options, decode = std::move(decode),
                         done = std::move(done)](::grpc::Status status) {
                          FinishCall(call.get(), options);
                          Status result = FromGrpcStatus(status);
                          if (result.ok()) result = decode(call->response);
                          done(result);
                        });
  }

  // Starts `method` (one of the stub's callback-API calls) with the call's
  // timeout as deadline and its cancellation wired to TryCancel.
  template <typename Request, typename Response, typename Method>
  void Issue(CallOptions* options, const Request* request, Response* response, StatusCallback done,
             Method method) {
    auto call = StartCall<ClientCall>(options);
    std::function<void(::grpc::Status)> on_done = [call, options,
                                                   done = std::move(done)](::grpc::Status status) {
      FinishCall(call.get(), options);
      done(FromGrpcStatus(status));
    };
    method(stub_->async(), &call->context, request, response, std::move(on_done));
  }

  // A call's state with the options' timeout as deadline and their
  // cancellation wired to TryCancel.
  template <typename Call>
  static std::shared_ptr<Call> StartCall(CallOptions* options) {
    auto call = std::make_shared<Call>();
    const int64_t timeout_ms = options == nullptr ? 0 : options->GetTimeout();
    if (timeout_ms > 0) {
      call->context.set_deadline(std::chrono::system_clock::now() +
                                 std::chrono::milliseconds(timeout_ms));
    }
    if (options != nullptr) {
      // Cancelled before the call started: gRPC cancels it as it starts.
      options->SetCancelCallback([call] {
        std::lock_guard<std::mutex> lock(call->mu);
        if (!call->finished) call->context.TryCancel();
      });
    }
    return call;
  }

  // Before `done`: no later StartCancel reaches the finished call.
  static void FinishCall(ClientCall* call, CallOptions* options) {
    {
      std::lock_guard<std::mutex> lock(call->mu);
      call->finished = true;
    }
    if (options != nullptr) options->ClearCancelCallback();
  }

  std::unique_ptr<Stub> stub_;
  ::grpc::GenericStub raw_stub_;
};

}  // namespace

std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(std::shared_ptr<::grpc::Channel> channel) {
  return std::make_unique<GrpcRemoteWorker>(std::move(channel));
}

}  // namespace tensorweave
