// LocalMaster: the masters that GrpcServers of this process serve, by
// target, so a session whose target is one of them calls the master
// directly, as TensorFlow's LocalMaster does: no RPC, no serialization, the
// fed and fetched tensors not copied. (A session asks for RPC anyway with
// ConfigProto.rpc_options.use_rpc_for_inprocess_master.)
//
//   // GrpcServer::Start, while serving:
//   registration_ = LocalMaster::Register("grpc://localhost:2222", master);
//   // GrpcSession::Create:
//   std::unique_ptr<MasterInterface> master = LocalMaster::Lookup(target);
//   if (master == nullptr) ...  // no server of this process serves it: RPC
//
// A server that stops (its Registration destroyed) waits for the direct
// calls in flight; later calls of sessions that found it fail with
// UNAVAILABLE, as RPCs to a stopped server do. A direct call is trusted as
// the process itself: the transport security of RPCs (TLS, token) does not
// apply to it.
#ifndef TENSORWEAVE_DISTRIBUTED_LOCAL_MASTER_H_
#define TENSORWEAVE_DISTRIBUTED_LOCAL_MASTER_H_

#include <memory>
#include <string>

#include "runtime/distributed/master.h"
#include "runtime/distributed/master_interface.h"

namespace tensorweave {

class LocalMaster {
 public:
  // Keeps a master registered while it lives.
  class Registration {
   public:
    virtual ~Registration() = default;
  };

  // Registers `master` (not owned; it outlives the registration) under
  // `target`, replacing an earlier registration of the same target.
  static std::unique_ptr<Registration> Register(const std::string& target, Master* master);

  // The master registered under `target`, or nullptr.
  static std::unique_ptr<MasterInterface> Lookup(const std::string& target);
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_LOCAL_MASTER_H_
