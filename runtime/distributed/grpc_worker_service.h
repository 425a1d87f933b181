// GrpcWorkerService: the worker side of TensorFlow's distributed protocol,
// served at "/tensorflow.WorkerService/<Method>" (tensorflow_services.proto).
//
// Implemented: GetStatus, which answers with this worker's devices
// ("/job:<job>/replica:0/task:<task>/device:CPU:<n>", as DirectSession
// names its own through runtime/common_runtime/local_devices.h), each with
// a random non-zero incarnation drawn once when the service is created, so
// a peer can tell a restarted worker from the one it knew.
//
// Not implemented yet: every other WorkerService method (CreateWorkerSession,
// RegisterGraph, RunGraph, RecvTensor, ...). They are left unregistered, so
// gRPC itself answers them with UNIMPLEMENTED.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "tensorweave/proto/config.pb.h"
#include "tensorweave/proto/device_attributes.pb.h"
#include "tensorweave/proto/tensorflow_services.grpc.pb.h"

namespace tensorweave {

// Where a worker sits in its cluster and what devices it offers.
struct WorkerOptions {
  std::string job_name = "localhost";
  int task_index = 0;
  // device_count["CPU"] sets how many CPU devices the worker offers.
  ConfigProto config;
};

class GrpcWorkerService final : public tensorflow::WorkerService::Service {
 public:
  // INVALID_ARGUMENT for an empty or malformed job name, a negative task
  // index or a device count beyond the limit.
  static Status Create(const WorkerOptions& options, std::unique_ptr<GrpcWorkerService>* service);

  // The devices GetStatus reports, in device-index order.
  const std::vector<proto::DeviceAttributes>& devices() const { return devices_; }

  ::grpc::Status GetStatus(::grpc::ServerContext* context, const GetStatusRequest* request,
                           GetStatusResponse* response) override;

 private:
  explicit GrpcWorkerService(std::vector<proto::DeviceAttributes> devices)
      : devices_(std::move(devices)) {}

  // Written once by Create, then only read (by any number of RPC threads).
  const std::vector<proto::DeviceAttributes> devices_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_SERVICE_H_
