// GrpcRemoteMaster: MasterInterface over the MasterService RPCs
// ("/tensorflow.MasterService/<Method>") of a master in another process,
// TensorFlow's or tensorweave's.
//
//   std::shared_ptr<::grpc::Channel> channel;
//   TW_RETURN_IF_ERROR(NewGrpcChannel("localhost:2222", &channel));  // grpc_channel.h
//   std::unique_ptr<MasterInterface> master = NewGrpcRemoteMaster(channel);
//
// - Timeouts: a call's deadline is its CallOptions timeout plus a second,
//   so a master that enforces the timeout itself (a step's timeout_in_ms)
//   says what was pending; past the deadline the call fails with
//   DEADLINE_EXCEEDED "Timed out after N ms". No timeout: no deadline
//   (keepalive still notices a dead master; grpc_channel.h).
// - Cancellation: CallOptions::StartCancel cancels the RPC (CANCELLED).
// - RunStep returns an error the master put in the response body (the
//   request's store_errors_in_response_body) with its code.
// - Waiting: the calling thread polls for the answer for a short while
//   before it sleeps, so a quick step's answer is taken without a thread
//   wake-up (which costs more than the whole call on small machines).
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_MASTER_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_MASTER_H_

#include <grpcpp/channel.h>

#include <memory>

#include "runtime/distributed/master_interface.h"

namespace tensorweave {

std::unique_ptr<MasterInterface> NewGrpcRemoteMaster(std::shared_ptr<::grpc::Channel> channel);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_REMOTE_MASTER_H_
