#include "runtime/distributed/grpc_worker_service.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_util.h"
#include "runtime/distributed/tensor_coding.h"

namespace tensorweave {
namespace {

// One call being served. The Worker finishes it through `done`; gRPC's
// cancellation (the caller's, the deadline's, a stopping server's) reaches
// the Worker through the CallOptions. gRPC deletes it (OnDone) once the
// call is over, never before Finish.
class WorkerCall final : public ::grpc::ServerUnaryReactor {
 public:
  CallOptions* options() { return &options_; }
  WorkerInterface::StatusCallback Done() {
    return [this](const Status& status) { Finish(ToGrpcStatus(status)); };
  }

  void OnCancel() override { options_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CallOptions options_;
};

// Serves one call with Worker method `start`.
template <typename Request, typename Response, typename Start>
::grpc::ServerUnaryReactor* Serve(const Request* request, Response* response, Start start) {
  auto* call = new WorkerCall;
  start(call->options(), request, response, call->Done());
  return call;
}

}  // namespace

Status GrpcWorkerService::Create(const WorkerOptions& options,
                                 std::unique_ptr<GrpcWorkerService>* service) {
  HoldGrpcCallbackQueue();  // see grpc_channel.h
  std::unique_ptr<Worker> worker;
  TW_RETURN_IF_ERROR(Worker::Create(options, &worker));
  service->reset(new GrpcWorkerService(std::move(worker)));
  return Status::OK();
}

#define TW_SERVE_WITH_WORKER(Method)                                                        \
  ::grpc::ServerUnaryReactor* GrpcWorkerService::Method(                                    \
      Context* context, const Method##Request* request, Method##Response* response) {       \
    return Serve(request, response,                                                         \
                 [this](CallOptions* call, const Method##Request* request,                  \
                        Method##Response* response, WorkerInterface::StatusCallback done) { \
                   worker_->Method##Async(call, request, response, std::move(done));        \
                 });                                                                        \
  }

TW_SERVE_WITH_WORKER(GetStatus)
TW_SERVE_WITH_WORKER(CreateWorkerSession)
TW_SERVE_WITH_WORKER(DeleteWorkerSession)
TW_SERVE_WITH_WORKER(RegisterGraph)
TW_SERVE_WITH_WORKER(DeregisterGraph)
TW_SERVE_WITH_WORKER(CleanupGraph)
TW_SERVE_WITH_WORKER(CleanupAll)

#undef TW_SERVE_WITH_WORKER

namespace {

// A RecvTensor being served: the parsed request lives here until the value
// (or an error) arrives.
class RecvTensorCall final : public ::grpc::ServerUnaryReactor {
 public:
  CallOptions* options() { return &options_; }
  RecvTensorRequest* request() { return &request_; }

  void OnCancel() override { options_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CallOptions options_;
  RecvTensorRequest request_;
};

// A RunGraph being served: its decoded request and its result live here
// until the step has finished.
class RunGraphCall final : public ::grpc::ServerUnaryReactor {
 public:
  CallOptions* options() { return &options_; }
  RunGraphInput* input() { return &input_; }
  RunGraphOutput* output() { return &output_; }

  void OnCancel() override { options_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CallOptions options_;
  RunGraphInput input_;  // caller_waits stays false: kernels never run on gRPC's thread
  RunGraphOutput output_;
};

}  // namespace

::grpc::ServerUnaryReactor* GrpcWorkerService::RunGraph(Context* context,
                                                        const ::grpc::ByteBuffer* request,
                                                        ::grpc::ByteBuffer* response) {
  auto* call = new RunGraphCall;
  Status decoded = DecodeWithTensors(*request, RunGraphRequest::kSendFieldNumber,
                                     &call->input()->request, &call->input()->sends);
  if (!decoded.ok()) {
    call->Finish(ToGrpcStatus(
        errors::InvalidArgument("RunGraph request is malformed: ", decoded.message())));
    return call;
  }
  worker_->RunGraphAsync(
      call->options(), call->input(), call->output(), [call, response](const Status& status) {
        if (status.ok()) {
          EncodeWithTensors(call->output()->response, RunGraphResponse::kRecvFieldNumber,
                            call->output()->recvs, response);
        }
        call->Finish(ToGrpcStatus(status));
      });
  return call;
}

::grpc::ServerUnaryReactor* GrpcWorkerService::RecvTensor(Context* context,
                                                          const ::grpc::ByteBuffer* request,
                                                          ::grpc::ByteBuffer* response) {
  auto* call = new RecvTensorCall;
  ::grpc::ByteBuffer bytes(*request);  // shares the slices
  ::grpc::ProtoBufferReader reader(&bytes);
  if (!call->request()->ParseFromZeroCopyStream(&reader)) {
    call->Finish(ToGrpcStatus(errors::InvalidArgument("RecvTensor request is malformed")));
    return call;
  }
  worker_->RecvTensorValueAsync(call->options(), *call->request(),
                                [call, response](const Status& status, const Tensor& value,
                                                 bool is_dead, int64_t send_start_micros) {
                                  if (status.ok())
                                    EncodeRecvTensorResponse(value, is_dead, send_start_micros,
                                                             response);
                                  call->Finish(ToGrpcStatus(status));
                                });
  return call;
}

}  // namespace tensorweave
