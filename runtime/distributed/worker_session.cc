#include "runtime/distributed/worker_session.h"

namespace tensorweave {

WorkerSession::WorkerSession(std::string handle, std::vector<std::unique_ptr<Device>> own_devices,
                             std::vector<Device*> devices,
                             std::shared_ptr<WorkerCacheInterface> worker_cache)
    : handle_(std::move(handle)),
      own_devices_(std::move(own_devices)),
      devices_(std::move(devices)),
      worker_cache_(std::move(worker_cache)),
      graphs_(std::make_unique<GraphMgr>(devices_)) {}

void WorkerSession::Create(const std::string& handle, const std::vector<Device*>& shared_devices,
                           bool isolate_state, std::shared_ptr<WorkerCacheInterface> worker_cache,
                           std::shared_ptr<WorkerSession>* session) {
  std::vector<std::unique_ptr<Device>> own_devices;
  std::vector<Device*> devices = shared_devices;
  if (isolate_state) {
    // The same devices (names and incarnations, so rendezvous keys and
    // GetStatus agree) with variable stores of their own.
    devices.clear();
    for (Device* shared : shared_devices) {
      own_devices.push_back(std::make_unique<Device>(shared->name(), shared->device_type(),
                                                     shared->eigen_cpu_device(),
                                                     shared->incarnation()));
      devices.push_back(own_devices.back().get());
    }
  }
  session->reset(new WorkerSession(handle, std::move(own_devices), std::move(devices),
                                   std::move(worker_cache)));
}

}  // namespace tensorweave
