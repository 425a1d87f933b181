#include "runtime/distributed/grpc_worker_service.h"

#include <cctype>

#include "runtime/common_runtime/local_devices.h"

namespace tensorweave {
namespace {

// Job names are what TensorFlow accepts in a device name: a letter, then
// letters, digits and underscores.
bool IsValidJobName(const std::string& name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

Status GrpcWorkerService::Create(const WorkerOptions& options,
                                 std::unique_ptr<GrpcWorkerService>* service) {
  if (!IsValidJobName(options.job_name)) {
    return errors::InvalidArgument("worker job name '", options.job_name,
                                   "' is not a letter followed by letters, digits or '_'");
  }
  if (options.task_index < 0) {
    return errors::InvalidArgument("worker task index ", options.task_index, " is negative");
  }
  int num_cpus = 1;
  TW_RETURN_IF_ERROR(LocalCpuDeviceCount(options.config, &num_cpus));
  std::vector<proto::DeviceAttributes> devices;
  for (int i = 0; i < num_cpus; ++i) {
    DeviceAttributes local =
        LocalCpuDeviceAttributes(LocalCpuDeviceName(options.job_name, options.task_index, i));
    proto::DeviceAttributes device;
    device.set_name(local.name);
    device.set_device_type(local.device_type);
    device.set_memory_limit(local.memory_limit_bytes);
    device.set_incarnation(NewDeviceIncarnation());
    device.set_xla_global_id(-1);  // TensorFlow's "unknown"
    devices.push_back(std::move(device));
  }
  service->reset(new GrpcWorkerService(std::move(devices)));
  return Status::OK();
}

::grpc::Status GrpcWorkerService::GetStatus(::grpc::ServerContext* context,
                                            const GetStatusRequest* request,
                                            GetStatusResponse* response) {
  for (const proto::DeviceAttributes& device : devices_)
    *response->add_device_attributes() = device;
  return ::grpc::Status::OK;
}

}  // namespace tensorweave
