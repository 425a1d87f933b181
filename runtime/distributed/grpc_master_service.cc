#include "runtime/distributed/grpc_master_service.h"

#include <grpcpp/impl/rpc_service_method.h>
#include <grpcpp/support/method_handler.h>

#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_util.h"
#include "runtime/distributed/tensor_coding.h"

namespace tensorweave {

namespace {

// A synchronous method at `path` (a literal: gRPC keeps the pointer) served
// by `handler`, reading Request and writing Response (generated messages,
// or ::grpc::ByteBuffer for raw bytes).
template <typename Request, typename Response>
::grpc::internal::RpcServiceMethod* SyncMethod(
    const char* path, GrpcMasterService* service,
    ::grpc::Status (GrpcMasterService::*handler)(::grpc::ServerContext*, const Request*,
                                                 Response*)) {
  return new ::grpc::internal::RpcServiceMethod(
      path, ::grpc::internal::RpcMethod::NORMAL_RPC,
      new ::grpc::internal::RpcMethodHandler<GrpcMasterService, Request, Response>(
          [handler](GrpcMasterService* self, ::grpc::ServerContext* context, const Request* request,
                    Response* response) { return (self->*handler)(context, request, response); },
          service));
}

}  // namespace

GrpcMasterService::GrpcMasterService(std::unique_ptr<Master> master) : master_(std::move(master)) {
  // In the order of tensorflow_services.proto.
  using Self = GrpcMasterService;
  AddMethod(SyncMethod("/tensorflow.MasterService/CreateSession", this, &Self::CreateSession));
  AddMethod(SyncMethod("/tensorflow.MasterService/ExtendSession", this, &Self::ExtendSession));
  AddMethod(SyncMethod("/tensorflow.MasterService/PartialRunSetup", this, &Self::PartialRunSetup));
  AddMethod(SyncMethod("/tensorflow.MasterService/RunStep", this, &Self::RunStep));
  AddMethod(SyncMethod("/tensorflow.MasterService/CloseSession", this, &Self::CloseSession));
  AddMethod(SyncMethod("/tensorflow.MasterService/ListDevices", this, &Self::ListDevices));
  AddMethod(SyncMethod("/tensorflow.MasterService/Reset", this, &Self::Reset));
  AddMethod(SyncMethod("/tensorflow.MasterService/MakeCallable", this, &Self::MakeCallable));
  AddMethod(SyncMethod("/tensorflow.MasterService/RunCallable", this, &Self::RunCallable));
  AddMethod(SyncMethod("/tensorflow.MasterService/ReleaseCallable", this, &Self::ReleaseCallable));
}

Status GrpcMasterService::Create(const MasterOptions& options,
                                 std::unique_ptr<GrpcMasterService>* service) {
  HoldGrpcCallbackQueue();  // see grpc_channel.h
  std::unique_ptr<Master> master;
  TW_RETURN_IF_ERROR(Master::Create(options, &master));
  service->reset(new GrpcMasterService(std::move(master)));
  return Status::OK();
}

::grpc::Status GrpcMasterService::CreateSession(::grpc::ServerContext* context,
                                                const CreateSessionRequest* request,
                                                CreateSessionResponse* response) {
  return ToGrpcStatus(master_->CreateSession(*request, response));
}

::grpc::Status GrpcMasterService::ExtendSession(::grpc::ServerContext* context,
                                                const ExtendSessionRequest* request,
                                                ExtendSessionResponse* response) {
  return ToGrpcStatus(master_->ExtendSession(*request, response));
}

::grpc::Status GrpcMasterService::PartialRunSetup(::grpc::ServerContext* context,
                                                  const PartialRunSetupRequest* request,
                                                  PartialRunSetupResponse* response) {
  return ToGrpcStatus(master_->PartialRunSetup(*request, response));
}

::grpc::Status GrpcMasterService::RunStep(::grpc::ServerContext* context,
                                          const ::grpc::ByteBuffer* request_bytes,
                                          ::grpc::ByteBuffer* response_bytes) {
  RunStepRequest request;
  NamedTensors feeds;
  Status decoded =
      DecodeWithTensors(*request_bytes, RunStepRequest::kFeedFieldNumber, &request, &feeds);
  if (!decoded.ok()) {
    return ToGrpcStatus(
        errors::InvalidArgument("RunStep request is malformed: ", decoded.message()));
  }
  RunStepResponse response;
  NamedTensors fetched;
  Status status = master_->RunStep(request, feeds, &response, &fetched);
  if (!status.ok()) {
    if (!request.store_errors_in_response_body()) return ToGrpcStatus(status);
    fetched.clear();
    response.set_status_code(static_cast<int>(status.code()));
    response.set_status_error_message(status.message());
  }
  EncodeWithTensors(response, RunStepResponse::kTensorFieldNumber, fetched, response_bytes);
  return ::grpc::Status::OK;
}

::grpc::Status GrpcMasterService::CloseSession(::grpc::ServerContext* context,
                                               const CloseSessionRequest* request,
                                               CloseSessionResponse* response) {
  return ToGrpcStatus(master_->CloseSession(*request, response));
}

::grpc::Status GrpcMasterService::ListDevices(::grpc::ServerContext* context,
                                              const ListDevicesRequest* request,
                                              ListDevicesResponse* response) {
  return ToGrpcStatus(master_->ListDevices(*request, response));
}

::grpc::Status GrpcMasterService::Reset(::grpc::ServerContext* context, const ResetRequest* request,
                                        ResetResponse* response) {
  return ToGrpcStatus(master_->Reset(*request, response));
}

::grpc::Status GrpcMasterService::MakeCallable(::grpc::ServerContext* context,
                                               const MakeCallableRequest* request,
                                               MakeCallableResponse* response) {
  return ToGrpcStatus(master_->MakeCallable(*request, response));
}

::grpc::Status GrpcMasterService::RunCallable(::grpc::ServerContext* context,
                                              const ::grpc::ByteBuffer* request_bytes,
                                              ::grpc::ByteBuffer* response_bytes) {
  RunCallableRequest request;
  std::vector<Tensor> feeds;
  Status decoded =
      DecodeWithTensors(*request_bytes, RunCallableRequest::kFeedFieldNumber, &request, &feeds);
  if (!decoded.ok()) {
    return ToGrpcStatus(
        errors::InvalidArgument("RunCallable request is malformed: ", decoded.message()));
  }
  RunCallableResponse response;
  std::vector<Tensor> fetched;
  Status status = master_->RunCallable(request, feeds, &response, &fetched);
  if (!status.ok()) return ToGrpcStatus(status);
  EncodeWithTensors(response, RunCallableResponse::kFetchFieldNumber, fetched, response_bytes);
  return ::grpc::Status::OK;
}

::grpc::Status GrpcMasterService::ReleaseCallable(::grpc::ServerContext* context,
                                                  const ReleaseCallableRequest* request,
                                                  ReleaseCallableResponse* response) {
  return ToGrpcStatus(master_->ReleaseCallable(*request, response));
}

}  // namespace tensorweave
