#include "runtime/distributed/grpc_master_service.h"

#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_util.h"

namespace tensorweave {

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
                                          const RunStepRequest* request,
                                          RunStepResponse* response) {
  Status status = master_->RunStep(*request, response);
  if (status.ok() || !request->store_errors_in_response_body()) return ToGrpcStatus(status);
  response->clear_tensor();
  response->set_status_code(static_cast<int>(status.code()));
  response->set_status_error_message(status.message());
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
                                              const RunCallableRequest* request,
                                              RunCallableResponse* response) {
  return ToGrpcStatus(master_->RunCallable(*request, response));
}

::grpc::Status GrpcMasterService::ReleaseCallable(::grpc::ServerContext* context,
                                                  const ReleaseCallableRequest* request,
                                                  ReleaseCallableResponse* response) {
  return ToGrpcStatus(master_->ReleaseCallable(*request, response));
}

}  // namespace tensorweave
