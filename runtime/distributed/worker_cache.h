// WorkerCache: the workers of one cluster, by task name, for a master (to
// register and run partitions) and for workers (to pull tensors from their
// peers with RecvTensor).
//
//   std::unique_ptr<WorkerCacheInterface> cache;
//   TW_RETURN_IF_ERROR(NewGrpcWorkerCache(server_def.cluster(), &cache));
//   std::vector<std::string> tasks;
//   cache->ListWorkers(&tasks);           // "/job:ps/replica:0/task:0", ...
//   WorkerInterface* ps0 = cache->GetOrCreateWorker(tasks[0]);
//
// Thread-safe; a worker returned lives as long as the cache.
#ifndef TENSORWEAVE_DISTRIBUTED_WORKER_CACHE_H_
#define TENSORWEAVE_DISTRIBUTED_WORKER_CACHE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/distributed/worker_interface.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/cluster.pb.h"

namespace tensorweave {

class WorkerCacheInterface {
 public:
  virtual ~WorkerCacheInterface() = default;

  // Every task of the cluster as "/job:J/replica:0/task:T", sorted.
  virtual void ListWorkers(std::vector<std::string>* tasks) const = 0;

  // The worker of `task` ("/job:J/replica:0/task:T"; a longer device name
  // is cut to its task), or null when the cluster has no such task. Owned
  // by the cache.
  virtual WorkerInterface* GetOrCreateWorker(const std::string& task) = 0;
};

// A cache reaching the tasks of `cluster` over gRPC; channels are made on
// first use. INVALID_ARGUMENT for a malformed cluster (an empty job name, a
// task without an address).
Status NewGrpcWorkerCache(const ClusterDef& cluster, std::unique_ptr<WorkerCacheInterface>* cache);

// `cache`, except that calls to `local_task` ("/job:J/replica:0/task:T") go
// straight to `local_worker` in this process instead of through gRPC, as
// TensorFlow's servers call their own worker: a master sharing a process
// with its worker saves a round trip per call. `local_worker` is not owned
// and must outlive the returned cache.
std::unique_ptr<WorkerCacheInterface> WithLocalWorker(std::unique_ptr<WorkerCacheInterface> cache,
                                                      const std::string& local_task,
                                                      WorkerInterface* local_worker);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_WORKER_CACHE_H_
