// Master: the sessions one server's master service holds, by handle
// (TensorFlow's Master). GrpcMasterService (grpc_master_service.h) puts it
// on the wire; tests may call it directly.
//
//   MasterOptions options;
//   options.server_def = server_def;                  // cluster, job_name, task_index
//   options.worker_cache_factory = NewGrpcWorkerCache;
//   std::unique_ptr<Master> master;
//   TW_RETURN_IF_ERROR(Master::Create(options, &master));
//   CreateSessionRequest create;  *create.mutable_graph_def() = graph;
//   CreateSessionResponse created;
//   TW_RETURN_IF_ERROR(master->CreateSession(create, &created));
//   ... RunStep, ExtendSession, CloseSession with created.session_handle() ...
//
//   RunStepRequest run;                  // feeds travel as Tensors:
//   run.set_session_handle(created.session_handle());
//   run.add_fetch("y:0");
//   NamedTensors fetched;                // {"y:0", value}, in fetch order
//   RunStepResponse ran;
//   TW_RETURN_IF_ERROR(master->RunStep(run, {{"x:0", x}}, &ran, &fetched));
//
// RunStep and RunCallable take the fed values and give the fetched ones as
// Tensors, never as TensorProtos: the request's `feed` and the response's
// `tensor` (RunCallable: `feed`, `fetch`) stay empty. GrpcMasterService
// puts them on the wire with tensor_coding.h; an in-process caller passes
// its tensors through without a copy.
//
// CreateSession finds the session's devices by asking every task of the
// cluster (GetStatus; see cluster_devices.h for filters and the wait for
// tasks still starting). The cluster is the server's, or the config's
// cluster_def when it names one (the session then gets its own worker
// cache, and the master's task is the one whose address is the target).
// A handle that names no session gives ABORTED "Session <h> is not found."
// as TensorFlow's master does (ListDevices: INVALID_ARGUMENT).
//
// Thread-safe.
#ifndef TENSORWEAVE_DISTRIBUTED_MASTER_H_
#define TENSORWEAVE_DISTRIBUTED_MASTER_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/distributed/master_session.h"
#include "runtime/distributed/worker_cache.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/master.pb.h"
#include "tensorweave/proto/tensorflow_server.pb.h"

namespace tensorweave {

struct MasterOptions {
  // The cluster and this server's place in it.
  ServerDef server_def;
  // Makes the worker cache of a cluster: NewGrpcWorkerCache in a server, a
  // fake in tests. Called once for the server's cluster and once per
  // session that brings its own cluster_def.
  std::function<Status(const ClusterDef& cluster, std::unique_ptr<WorkerCacheInterface>* cache)>
      worker_cache_factory;
};

class Master {
 public:
  // INVALID_ARGUMENT without a worker cache factory, or when the
  // ServerDef's cluster lacks its own job and task.
  static Status Create(MasterOptions options, std::unique_ptr<Master>* master);
  // Closes every session.
  ~Master();

  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  Status CreateSession(const CreateSessionRequest& request, CreateSessionResponse* response);
  Status ExtendSession(const ExtendSessionRequest& request, ExtendSessionResponse* response);
  Status PartialRunSetup(const PartialRunSetupRequest& request, PartialRunSetupResponse* response);
  // INVALID_ARGUMENT when request.feed is not empty (the feeds are
  // `feeds`), for a fed value of the wrong dtype or shape, and as
  // MasterSession::Run otherwise.
  Status RunStep(const RunStepRequest& request, const NamedTensors& feeds,
                 RunStepResponse* response, NamedTensors* fetched);
  Status CloseSession(const CloseSessionRequest& request, CloseSessionResponse* response);
  Status ListDevices(const ListDevicesRequest& request, ListDevicesResponse* response);
  // Closes every session of this master and clears the containers named
  // (the default one when none) on the workers the device filters select.
  Status Reset(const ResetRequest& request, ResetResponse* response);
  Status MakeCallable(const MakeCallableRequest& request, MakeCallableResponse* response);
  // As RunStep: the feeds in the callable's feed order, the fetches in its
  // fetch order; request.feed stays empty.
  Status RunCallable(const RunCallableRequest& request, const std::vector<Tensor>& feeds,
                     RunCallableResponse* response, std::vector<Tensor>* fetched);
  Status ReleaseCallable(const ReleaseCallableRequest& request, ReleaseCallableResponse* response);

  // "/job:J/replica:0/task:T" of this server.
  const std::string& task() const { return task_; }
  int num_sessions() const;

 private:
  Master(MasterOptions options, std::string task, std::unique_ptr<WorkerCacheInterface> cache)
      : options_(std::move(options)),
        task_(std::move(task)),
        incarnation_(static_cast<int64_t>(NewRandomId() >> 1)),
        worker_cache_(std::move(cache)) {}

  Status FindSession(const std::string& handle, std::shared_ptr<MasterSession>* session) const;
  // The options of a new session: its cluster, worker cache, master task
  // and devices.
  Status SessionOptionsFor(const CreateSessionRequest& request, MasterSessionOptions* options);

  const MasterOptions options_;
  const std::string task_;
  const int64_t incarnation_;  // positive, as TensorFlow's
  const std::unique_ptr<WorkerCacheInterface> worker_cache_;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<MasterSession>> sessions_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_MASTER_H_
