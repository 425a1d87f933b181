// GrpcMasterService: the master side of TensorFlow's distributed protocol,
// served at "/tensorflow.MasterService/<Method>" (tensorflow_services.proto)
// over a Master (master.h). It only translates: requests go to the Master,
// its Status becomes the gRPC status (same code numbers).
//
//   MasterOptions options;  options.server_def = ...;
//   options.worker_cache_factory = NewGrpcWorkerCache;
//   std::unique_ptr<GrpcMasterService> service;
//   TW_RETURN_IF_ERROR(GrpcMasterService::Create(options, &service));
//   builder.RegisterService(service.get());   // a grpc::ServerBuilder
//
// RunStep honours store_errors_in_response_body, which TensorFlow's client
// sets: a failed step then answers OK with the error's code and message in
// RunStepResponse.status_code / status_error_message.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_

#include <memory>

#include "runtime/distributed/master.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {

class GrpcMasterService final : public tensorflow::MasterService::Service {
 public:
  // Fails as Master::Create does.
  static Status Create(const MasterOptions& options, std::unique_ptr<GrpcMasterService>* service);

  Master* master() { return master_.get(); }

  ::grpc::Status CreateSession(::grpc::ServerContext* context, const CreateSessionRequest* request,
                               CreateSessionResponse* response) override;
  ::grpc::Status ExtendSession(::grpc::ServerContext* context, const ExtendSessionRequest* request,
                               ExtendSessionResponse* response) override;
  ::grpc::Status PartialRunSetup(::grpc::ServerContext* context,
                                 const PartialRunSetupRequest* request,
                                 PartialRunSetupResponse* response) override;
  ::grpc::Status RunStep(::grpc::ServerContext* context, const RunStepRequest* request,
                         RunStepResponse* response) override;
  ::grpc::Status CloseSession(::grpc::ServerContext* context, const CloseSessionRequest* request,
                              CloseSessionResponse* response) override;
  ::grpc::Status ListDevices(::grpc::ServerContext* context, const ListDevicesRequest* request,
                             ListDevicesResponse* response) override;
  ::grpc::Status Reset(::grpc::ServerContext* context, const ResetRequest* request,
                       ResetResponse* response) override;
  ::grpc::Status MakeCallable(::grpc::ServerContext* context, const MakeCallableRequest* request,
                              MakeCallableResponse* response) override;
  ::grpc::Status RunCallable(::grpc::ServerContext* context, const RunCallableRequest* request,
                             RunCallableResponse* response) override;
  ::grpc::Status ReleaseCallable(::grpc::ServerContext* context,
                                 const ReleaseCallableRequest* request,
                                 ReleaseCallableResponse* response) override;

 private:
  explicit GrpcMasterService(std::unique_ptr<Master> master) : master_(std::move(master)) {}

  const std::unique_ptr<Master> master_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_
