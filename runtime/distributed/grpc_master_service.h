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
//
// RunStep and RunCallable are served on raw bytes, so fed and fetched
// tensors are read straight into tensors and sent from their own buffers
// (tensor_coding.h); the bytes are still exactly the messages of
// master.proto, so any client of the protocol (a generated stub,
// TensorFlow's own) calls them as before.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_

#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/byte_buffer.h>

#include <memory>

#include "runtime/distributed/master.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {

// The service lists its methods itself (as the generated Service would,
// synchronous, at the same paths) because gRPC's generated code has no
// synchronous raw form, and RunStep blocks for a whole step, which a gRPC
// callback thread must not do.
class GrpcMasterService final : public ::grpc::Service {
 public:
  // Fails as Master::Create does.
  static Status Create(const MasterOptions& options, std::unique_ptr<GrpcMasterService>* service);

  Master* master() { return master_.get(); }

  ::grpc::Status CreateSession(::grpc::ServerContext* context, const CreateSessionRequest* request,
                               CreateSessionResponse* response);
  ::grpc::Status ExtendSession(::grpc::ServerContext* context, const ExtendSessionRequest* request,
                               ExtendSessionResponse* response);
  ::grpc::Status PartialRunSetup(::grpc::ServerContext* context,
                                 const PartialRunSetupRequest* request,
                                 PartialRunSetupResponse* response);
  ::grpc::Status RunStep(::grpc::ServerContext* context, const ::grpc::ByteBuffer* request,
                         ::grpc::ByteBuffer* response);
  ::grpc::Status CloseSession(::grpc::ServerContext* context, const CloseSessionRequest* request,
                              CloseSessionResponse* response);
  ::grpc::Status ListDevices(::grpc::ServerContext* context, const ListDevicesRequest* request,
                             ListDevicesResponse* response);
  ::grpc::Status Reset(::grpc::ServerContext* context, const ResetRequest* request,
                       ResetResponse* response);
  ::grpc::Status MakeCallable(::grpc::ServerContext* context, const MakeCallableRequest* request,
                              MakeCallableResponse* response);
  ::grpc::Status RunCallable(::grpc::ServerContext* context, const ::grpc::ByteBuffer* request,
                             ::grpc::ByteBuffer* response);
  ::grpc::Status ReleaseCallable(::grpc::ServerContext* context,
                                 const ReleaseCallableRequest* request,
                                 ReleaseCallableResponse* response);

 private:
  explicit GrpcMasterService(std::unique_ptr<Master> master);

  const std::unique_ptr<Master> master_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_MASTER_SERVICE_H_
