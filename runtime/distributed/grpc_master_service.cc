#include "runtime/distributed/grpc_master_service.h"

namespace tensorweave {

namespace {

// Both sides number their codes as TensorFlow's error.Code.
::grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return ::grpc::Status::OK;
  return ::grpc::Status(static_cast<::grpc::StatusCode>(status.code()), status.message());
}

}  // namespace

Status GrpcMasterService::Create(const MasterOptions& options,
                                 std::unique_ptr<GrpcMasterService>* service) {
  std::unique_ptr<Master> master;
  TW_RETURN_IF_ERROR(Master::Create(options, &master));
  service->reset(new GrpcMasterService(std::move(master)));
  return Status::OK();
}

::grpc::Status GrpcMasterService::CreateSession(::grpc::ServerContext* context,
                                                const CreateSessionRequest* request,
                                                CreateSessionResponse* response) {
  return ToGrpc(master_->CreateSession(*request, response));
}

::grpc::Status GrpcMasterService::ExtendSession(::grpc::ServerContext* context,
                                                const ExtendSessionRequest* request,
                                                ExtendSessionResponse* response) {
  return ToGrpc(master_->ExtendSession(*request, response));
}

::grpc::Status GrpcMasterService::PartialRunSetup(::grpc::ServerContext* context,
                                                  const PartialRunSetupRequest* request,
                                                  PartialRunSetupResponse* response) {
  return ToGrpc(master_->PartialRunSetup(*request, response));
}

::grpc::Status GrpcMasterService::RunStep(::grpc::ServerContext* context,
                                          const RunStepRequest* request,
                                          RunStepResponse* response) {
  Status status = master_->RunStep(*request, response);
  if (status.ok() || !request->store_errors_in_response_body()) return ToGrpc(status);
  response->clear_tensor();
  response->set_status_code(static_cast<int>(status.code()));
  response->set_status_error_message(status.message());
  return ::grpc::Status::OK;
}

::grpc::Status GrpcMasterService::CloseSession(::grpc::ServerContext* context,
                                               const CloseSessionRequest* request,
                                               CloseSessionResponse* response) {
  return ToGrpc(master_->CloseSession(*request, response));
}

::grpc::Status GrpcMasterService::ListDevices(::grpc::ServerContext* context,
                                              const ListDevicesRequest* request,
                                              ListDevicesResponse* response) {
  return ToGrpc(master_->ListDevices(*request, response));
}

::grpc::Status GrpcMasterService::Reset(::grpc::ServerContext* context, const ResetRequest* request,
                                        ResetResponse* response) {
  return ToGrpc(master_->Reset(*request, response));
}

::grpc::Status GrpcMasterService::MakeCallable(::grpc::ServerContext* context,
                                               const MakeCallableRequest* request,
                                               MakeCallableResponse* response) {
  return ToGrpc(master_->MakeCallable(*request, response));
}

::grpc::Status GrpcMasterService::RunCallable(::grpc::ServerContext* context,
                                              const RunCallableRequest* request,
                                              RunCallableResponse* response) {
  return ToGrpc(master_->RunCallable(*request, response));
}

::grpc::Status GrpcMasterService::ReleaseCallable(::grpc::ServerContext* context,
                                                  const ReleaseCallableRequest* request,
                                                  ReleaseCallableResponse* response) {
  return ToGrpc(master_->ReleaseCallable(*request, response));
}

}  // namespace tensorweave
