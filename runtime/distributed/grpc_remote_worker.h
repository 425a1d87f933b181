// GrpcRemoteWorker: WorkerInterface over a gRPC channel to one task, for a
// master and for peer workers (RecvTensor).
//
//   auto channel = ::grpc::CreateChannel("127.0.0.1:2222", ::grpc::InsecureChannelCredentials());
//   std::unique_ptr<WorkerInterface> worker = NewGrpcRemoteWorker(channel);
//   CallOptions call;
//   call.SetTimeout(5000);                  // the RPC's deadline
//   worker->RunGraphAsync(&call, &request, &response, done);
//   call.StartCancel();                     // TryCancel: done gets CANCELLED
//
// Each call uses the stub's callback API, so no thread waits for a reply.
// gRPC errors arrive as the Status of the same code and message.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_

#include <grpcpp/channel.h>

#include <memory>

#include "runtime/distributed/worker_interface.h"

namespace tensorweave {

std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(std::shared_ptr<::grpc::Channel> channel);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_
