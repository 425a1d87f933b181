// GrpcWorkerService: the worker side of TensorFlow's distributed protocol,
// served at "/tensorflow.WorkerService/<Method>" (tensorflow_services.proto)
// on top of a Worker (worker.h), which holds the devices, sessions, graphs
// and rendezvous.
//
//   std::unique_ptr<GrpcWorkerService> service;
//   TW_RETURN_IF_ERROR(GrpcWorkerService::Create(options, &service));
//   ::grpc::ServerBuilder builder;
//   builder.RegisterService(service.get());
//
// Served: GetStatus, CreateWorkerSession, DeleteWorkerSession,
// RegisterGraph, DeregisterGraph, RunGraph, CleanupGraph, CleanupAll and
// RecvTensor. Logging, Tracing and MarkRecvFinished answer UNIMPLEMENTED.
//
// Every method uses gRPC's callback API: RunGraph (waiting for its step) and
// RecvTensor (waiting for a value) hold no gRPC thread while they wait, and
// a call the caller cancels, or whose deadline passes, or that a stopping
// server cuts short, cancels its step or stops its wait.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/distributed/worker.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/device_attributes.pb.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {

// RunGraph and RecvTensor are served on raw bytes, so tensors go out from
// their own buffers and come in straight into tensors, never copied into a
// TensorProto (tensor_coding.h); the bytes are still exactly the messages
// of worker.proto.
using WorkerCallbackService = tensorflow::WorkerService::WithRawCallbackMethod_RunGraph<
    tensorflow::WorkerService::WithRawCallbackMethod_RecvTensor<
        tensorflow::WorkerService::CallbackService>>;

class GrpcWorkerService final : public WorkerCallbackService {
 public:
  // Errors as Worker::Create.
  static Status Create(const WorkerOptions& options, std::unique_ptr<GrpcWorkerService>* service);

  // The devices GetStatus reports, in device-index order.
  const std::vector<proto::DeviceAttributes>& devices() const {
    return worker_->device_attributes();
  }
  Worker* worker() const { return worker_.get(); }

  using Context = ::grpc::CallbackServerContext;
  using Reactor = ::grpc::ServerUnaryReactor;
  Reactor* GetStatus(Context* context, const GetStatusRequest* request,
                     GetStatusResponse* response) override;
  Reactor* CreateWorkerSession(Context* context, const CreateWorkerSessionRequest* request,
                               CreateWorkerSessionResponse* response) override;
  Reactor* DeleteWorkerSession(Context* context, const DeleteWorkerSessionRequest* request,
                               DeleteWorkerSessionResponse* response) override;
  Reactor* RegisterGraph(Context* context, const RegisterGraphRequest* request,
                         RegisterGraphResponse* response) override;
  Reactor* DeregisterGraph(Context* context, const DeregisterGraphRequest* request,
                           DeregisterGraphResponse* response) override;
  Reactor* RunGraph(Context* context, const ::grpc::ByteBuffer* request,
                    ::grpc::ByteBuffer* response) override;
  Reactor* CleanupGraph(Context* context, const CleanupGraphRequest* request,
                        CleanupGraphResponse* response) override;
  Reactor* CleanupAll(Context* context, const CleanupAllRequest* request,
                      CleanupAllResponse* response) override;
  Reactor* RecvTensor(Context* context, const ::grpc::ByteBuffer* request,
                      ::grpc::ByteBuffer* response) override;

 private:
  explicit GrpcWorkerService(std::unique_ptr<Worker> worker) : worker_(std::move(worker)) {}

  const std::unique_ptr<Worker> worker_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_
