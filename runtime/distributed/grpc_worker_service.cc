#include "runtime/distributed/grpc_worker_service.h"

#include "runtime/distributed/grpc_util.h"

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
TW_SERVE_WITH_WORKER(RunGraph)
TW_SERVE_WITH_WORKER(CleanupGraph)
TW_SERVE_WITH_WORKER(CleanupAll)
TW_SERVE_WITH_WORKER(RecvTensor)

#undef TW_SERVE_WITH_WORKER

}  // namespace tensorweave
