// MasterInterface: how a GrpcSession reaches its master, the calls of
// TensorFlow's MasterService with the step tensors kept as Tensors.
//
//   std::unique_ptr<MasterInterface> master;
//   TW_RETURN_IF_ERROR(NewMasterFor(options, &master));  // grpc_session.cc
//   CallOptions call;
//   call.SetTimeout(timeout_ms);
//   RunStepRequest request;  // session handle, fetches, targets; no feed
//   NamedTensors fetched;
//   TW_RETURN_IF_ERROR(master->RunStep(&call, request, {{"x:0", x}}, &response, &fetched));
//
// Two implementations, as in TensorFlow:
// - GrpcRemoteMaster (grpc_remote_master.h): the MasterService RPCs of a
//   master in another process (or this one, when asked to use RPC);
// - LocalMaster (local_master.h): a master served by a GrpcServer of this
//   process, called directly: no RPC, no serialization, no tensor copies.
//
// Every call blocks until the master answered. `call` carries the timeout
// (0: none) and lets another thread cancel the call (CallOptions'
// StartCancel: CANCELLED). The master's own errors come back with their
// codes unchanged; a master that cannot be reached is UNAVAILABLE.
#ifndef TENSORWEAVE_DISTRIBUTED_MASTER_INTERFACE_H_
#define TENSORWEAVE_DISTRIBUTED_MASTER_INTERFACE_H_

#include <string>
#include <utility>
#include <vector>

#include "runtime/distributed/tensor_coding.h"  // NamedTensors
#include "runtime/distributed/worker_interface.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "tensorweave/proto/master.pb.h"

namespace tensorweave {

class MasterInterface {
 public:
  virtual ~MasterInterface() = default;

  virtual Status CreateSession(CallOptions* call, const CreateSessionRequest& request,
                               CreateSessionResponse* response) = 0;
  virtual Status ExtendSession(CallOptions* call, const ExtendSessionRequest& request,
                               ExtendSessionResponse* response) = 0;
  // Declares a partial run's feeds, fetches and targets; RunStep with the
  // handle it returns then feeds and fetches some of them per call.
  virtual Status PartialRunSetup(CallOptions* call, const PartialRunSetupRequest& request,
                                 PartialRunSetupResponse* response) = 0;
  // `request` carries no feed (they are `feeds`) and `response` gets no
  // tensor (they go to `fetched`, one per distinct fetch name of the
  // request, in the request's order).
  virtual Status RunStep(CallOptions* call, const RunStepRequest& request,
                         const NamedTensors& feeds, RunStepResponse* response,
                         NamedTensors* fetched) = 0;
  virtual Status CloseSession(CallOptions* call, const CloseSessionRequest& request,
                              CloseSessionResponse* response) = 0;
  virtual Status ListDevices(CallOptions* call, const ListDevicesRequest& request,
                             ListDevicesResponse* response) = 0;
  virtual Status Reset(CallOptions* call, const ResetRequest& request, ResetResponse* response) = 0;
  virtual Status MakeCallable(CallOptions* call, const MakeCallableRequest& request,
                              MakeCallableResponse* response) = 0;
  // As RunStep: `request` carries no feed, `response` gets no fetch.
  virtual Status RunCallable(CallOptions* call, const RunCallableRequest& request,
                             const std::vector<Tensor>& feeds, RunCallableResponse* response,
                             std::vector<Tensor>* fetched) = 0;
  virtual Status ReleaseCallable(CallOptions* call, const ReleaseCallableRequest& request,
                                 ReleaseCallableResponse* response) = 0;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_MASTER_INTERFACE_H_
