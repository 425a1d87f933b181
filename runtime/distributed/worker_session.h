// WorkerSession: what one master session owns on one worker: the devices
// its graphs run on, its registered graphs, and the workers of its cluster
// (for pulling tensors from peers).
//
//   std::shared_ptr<WorkerSession> session;
//   TW_RETURN_IF_ERROR(WorkerSession::Create(handle, shared_devices,
//                                            /*isolate_state=*/false, cache, &session));
//   session->graphs()->Register(graph_def, &graph_handle);
//
// Sessions share the worker's devices, and so their variables, as in
// TensorFlow (a ps task keeps the parameters of every trainer). A session
// created with isolate_session_state gets devices of its own: same names
// and incarnations, separate variable stores that die with the session.
#ifndef TENSORWEAVE_DISTRIBUTED_WORKER_SESSION_H_
#define TENSORWEAVE_DISTRIBUTED_WORKER_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/distributed/graph_mgr.h"
#include "runtime/distributed/worker_cache.h"
#include "runtime/framework/cpu_allocator.h"
#include "runtime/framework/device.h"

namespace tensorweave {

class WorkerSession {
 public:
  // `shared_devices` (not owned) outlive the session. `worker_cache` may be
  // null: the session then reaches no other task.
  static void Create(const std::string& handle, const std::vector<Device*>& shared_devices,
                     bool isolate_state, std::shared_ptr<WorkerCacheInterface> worker_cache,
                     std::shared_ptr<WorkerSession>* session);

  const std::string& handle() const { return handle_; }
  const std::vector<Device*>& devices() const { return devices_; }
  GraphMgr* graphs() { return graphs_.get(); }
  const std::shared_ptr<WorkerCacheInterface>& worker_cache() const { return worker_cache_; }

 private:
  WorkerSession(std::string handle, std::vector<std::unique_ptr<Device>> own_devices,
                std::vector<Device*> devices, std::shared_ptr<WorkerCacheInterface> worker_cache);

  // First, so destroyed last: large blocks its steps free are reused by its
  // next steps while it lives (cpu_allocator.h), and not kept after the
  // last session of the process has gone.
  CpuBufferCacheUser buffer_cache_user_;
  const std::string handle_;
  const std::vector<std::unique_ptr<Device>> own_devices_;  // isolated sessions only
  const std::vector<Device*> devices_;
  const std::shared_ptr<WorkerCacheInterface> worker_cache_;
  // Last: its executors refer to the devices above.
  const std::unique_ptr<GraphMgr> graphs_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_WORKER_SESSION_H_
