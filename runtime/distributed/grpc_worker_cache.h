// GrpcWorkerCache: the WorkerCacheInterface NewGrpcWorkerCache returns (see
// worker_cache.h): one gRPC channel and GrpcRemoteWorker per task of a
// ClusterDef, made on first use and kept for the cache's lifetime.
//
//   ClusterDef cluster;                    // job "worker": {0: "127.0.0.1:2222"}
//   std::unique_ptr<WorkerCacheInterface> cache;
//   TW_RETURN_IF_ERROR(NewGrpcWorkerCache(cluster, &cache));
//   WorkerInterface* worker = cache->GetOrCreateWorker("/job:worker/replica:0/task:0");
//
// Addresses are "host:port" (a leading "grpc://" is accepted). Channels
// accept messages of any size, as TensorFlow's do: tensors can be large.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_CACHE_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_CACHE_H_

#include <string>

#include "runtime/distributed/worker_cache.h"

namespace tensorweave {

// "/job:J/replica:R/task:T" of a task or device name ("/job:J/replica:R/
// task:T/device:CPU:0"); false when `name` does not start with those three
// parts.
bool TaskOfName(const std::string& name, std::string* task);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_WORKER_CACHE_H_
