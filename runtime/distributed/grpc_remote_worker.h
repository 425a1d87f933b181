// GrpcRemoteWorker: WorkerInterface over a gRPC channel to one task, for a
// master and for peer workers (RecvTensor).
//
//   auto channel = ::grpc::CreateChannel("127.0.0.1:2222", ::grpc::InsecureChannelCredentials());
//   std::unique_ptr<WorkerInterface> worker = NewGrpcRemoteWorker(channel);
//   CallOptions call;
//   call.SetTimeout(5000);                  // the RPC's deadline
//   worker->RunGraphAsync(&call, &input, &output, done);   // tensors: tensor_coding.h
//   call.StartCancel();                     // TryCancel: done gets CANCELLED
//
// Each call uses the stub's callback API, so no thread waits for a reply.
// gRPC errors arrive as the Status of the same code and message.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_

#include <grpcpp/channel.h>

#include <memory>

#include "runtime/distributed/worker_interface.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

// What a worker offers beyond WorkerInterface when it can hand a received
// tensor over without a TensorProto in between: the bytes go from the
// transport straight into the tensor's buffer (tensor_coding.h). The
// remote rendezvous uses it when the worker has it.
class TensorReceiverInterface {
 public:
  virtual ~TensorReceiverInterface() = default;
  // As WorkerInterface::RecvTensorAsync; *value and *is_dead are set when
  // `done` gets OK.
  virtual void RecvTensorValueAsync(CallOptions* call, const RecvTensorRequest* request,
                                    Tensor* value, bool* is_dead,
                                    WorkerInterface::StatusCallback done) = 0;
};

// The worker also implements TensorReceiverInterface.
std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(std::shared_ptr<::grpc::Channel> channel);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_WORKER_H_
