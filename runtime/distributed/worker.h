// Worker: one task's side of TensorFlow's distributed protocol, transport
// free. GrpcWorkerService serves it over gRPC; tests may call it directly.
//
//   WorkerOptions options;
//   options.job_name = "worker";
//   options.task_index = 1;
//   std::unique_ptr<Worker> worker;
//   TW_RETURN_IF_ERROR(Worker::Create(options, &worker));
//   worker->RegisterGraph(request, &response);          // blocking forms, or
//   worker->RunGraphAsync(&call, &run, &result, done);  // the async ones
//
// State, as in TensorFlow:
// - The process's devices ("/job:J/replica:0/task:T/device:CPU:N") with
//   incarnations drawn once in Create. GetStatus reports them; every
//   rendezvous key a device sends under carries its incarnation, and
//   RecvTensor refuses a key with another one (ABORTED: the asker knew a
//   previous instance of this worker).
// - Worker sessions by handle (CreateWorkerSession). The empty handle, and
//   every request with create_worker_session_called unset, means the legacy
//   session every older master shares. Sessions share the devices and their
//   variables unless created with isolate_session_state.
// - One rendezvous per step id, shared by the sessions: RunGraph feeds and
//   fetches through it, peers pull from it with RecvTensor, CleanupGraph
//   drops it.
#ifndef TENSORWEAVE_DISTRIBUTED_WORKER_H_
#define TENSORWEAVE_DISTRIBUTED_WORKER_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common_runtime/executor.h"
#include "runtime/distributed/rendezvous_mgr.h"
#include "runtime/distributed/worker_cache.h"
#include "runtime/distributed/worker_interface.h"
#include "runtime/distributed/worker_session.h"
#include "tensorweave/proto/cluster.pb.h"
#include "tensorweave/proto/config.pb.h"
#include "tensorweave/proto/device_attributes.pb.h"

namespace tensorweave {

// Where a worker sits in its cluster and what devices it offers.
struct WorkerOptions {
  std::string job_name = "localhost";
  int task_index = 0;
  // device_count["CPU"] sets how many CPU devices the worker offers; the
  // inter- and intra-op thread counts size the pools its steps run on.
  ConfigProto config;
  // The cluster the legacy session reaches its peers in (sessions made by
  // CreateWorkerSession use their ServerDef's cluster instead). Empty: the
  // legacy session reaches no other task.
  ClusterDef cluster;
};

// TensorFlow's rule for job names: a letter, then letters, digits and '_'.
bool IsValidJobName(const std::string& name);

class Worker : public WorkerInterface {
 public:
  // INVALID_ARGUMENT for an invalid job name, a negative task index, a
  // device count beyond the limit or a malformed cluster.
  static Status Create(const WorkerOptions& options, std::unique_ptr<Worker>* worker);
  // Cancels the steps still waiting in a rendezvous.
  ~Worker() override;

  // "/job:J/replica:0/task:T".
  const std::string& task_name() const { return task_name_; }
  // The devices GetStatus reports, in device-index order.
  const std::vector<proto::DeviceAttributes>& device_attributes() const {
    return device_attributes_;
  }
  RendezvousMgr* rendezvous_mgr() { return &rendezvous_mgr_; }

  // WorkerInterface. Each finishes through `done`; RunGraph and RecvTensor
  // may wait (for the step, for the value) and honour call->StartCancel()
  // (`call` may be null: the call cannot be cancelled then).
  //
  // Errors, as TensorFlow's: an unknown session or graph handle is ABORTED
  // (the master then knows the worker restarted and lost them); a request
  // that can never succeed (malformed key or tensor, a node on a device of
  // another task, feeds or fetches the graph does not have) is
  // INVALID_ARGUMENT. RunGraph must send every client-terminated _Recv of
  // the graph and may fetch any client-terminated _Send, both by the
  // rendezvous key of the node's attrs.
  //
  // Partial runs (request.is_partial, TensorFlow's protocol): the first
  // call of a step_id and graph starts its executors, which then wait for
  // the feeds; every call (the first too) sends some feeds and waits for
  // the fetches it names; the call with is_last_partial_run also waits for
  // the executors to finish and forgets the step. CleanupGraph of the
  // step, DeleteWorkerSession of its session and a cancelled call cancel
  // a partial run that is still going.
  void GetStatusAsync(CallOptions* call, const GetStatusRequest* request,
                      GetStatusResponse* response, StatusCallback done) override;
  void CreateWorkerSessionAsync(CallOptions* call, const CreateWorkerSessionRequest* request,
                                CreateWorkerSessionResponse* response,
                                StatusCallback done) override;
  void DeleteWorkerSessionAsync(CallOptions* call, const DeleteWorkerSessionRequest* request,
                                DeleteWorkerSessionResponse* response,
                                StatusCallback done) override;
  void RegisterGraphAsync(CallOptions* call, const RegisterGraphRequest* request,
                          RegisterGraphResponse* response, StatusCallback done) override;
  void DeregisterGraphAsync(CallOptions* call, const DeregisterGraphRequest* request,
                            DeregisterGraphResponse* response, StatusCallback done) override;
  // With input->caller_waits the step's last executor starts on the
  // calling thread (the call may then return only when its kernels that
  // ran inline are done).
  void RunGraphAsync(CallOptions* call, const RunGraphInput* input, RunGraphOutput* output,
                     StatusCallback done) override;
  void CleanupGraphAsync(CallOptions* call, const CleanupGraphRequest* request,
                         CleanupGraphResponse* response, StatusCallback done) override;
  void CleanupAllAsync(CallOptions* call, const CleanupAllRequest* request,
                       CleanupAllResponse* response, StatusCallback done) override;
  void RecvTensorAsync(CallOptions* call, const RecvTensorRequest* request,
                       RecvTensorResponse* response, StatusCallback done) override;

  // RecvTensor handing over the tensor itself rather than a TensorProto, so
  // a transport can send its buffer without copying it (tensor_coding.h).
  // `send_start_micros` is when the value was handed over; `is_dead` that
  // the sender was dead (the value is then empty).
  using RecvTensorValueCallback = std::function<void(const Status& status, const Tensor& value,
                                                     bool is_dead, int64_t send_start_micros)>;
  void RecvTensorValueAsync(CallOptions* call, const RecvTensorRequest& request,
                            RecvTensorValueCallback done);

 private:
  struct Step;

  Worker(const WorkerOptions& options, std::vector<std::unique_ptr<Device>> devices,
         std::vector<proto::DeviceAttributes> attributes, Executor::Runner runner,
         std::shared_ptr<WorkerCacheInterface> default_cache);

  // The session a request names: the legacy session unless
  // create_worker_session_called; ABORTED for an unknown handle (the worker
  // may have restarted and lost it).
  Status FindSession(const std::string& handle, bool create_worker_session_called,
                     std::shared_ptr<WorkerSession>* session);
  Device* FindDevice(const std::string& name) const;
  // The cache reaching `cluster`'s tasks: the one made for an equal
  // cluster before, or a new one.
  Status CacheForCluster(const ClusterDef& cluster, std::shared_ptr<WorkerCacheInterface>* cache);
  Status StartRunGraph(CallOptions* call, const RunGraphInput& input, RunGraphOutput* output,
                       StatusCallback* done);
  // Checks a RunGraph's sends and recv keys against `graph`; a partial call
  // need not send every feed.
  static Status CheckRunGraphKeys(const RunGraphInput& input, const RegisteredGraph& graph,
                                  bool partial);

  // Partial runs (worker_partial_run.cc).
  struct PartialRun;
  Status StartPartialRunGraph(CallOptions* call, const RunGraphInput& input, RunGraphOutput* output,
                              StatusCallback* done);
  // Cancels and forgets the partial runs `matches` selects.
  void CancelPartialRuns(const std::function<bool(int64_t step_id, const PartialRun&)>& matches,
                         const Status& reason);

  const WorkerOptions options_;
  const std::string task_name_;
  const std::vector<std::unique_ptr<Device>> devices_;
  const std::vector<Device*> device_ptrs_;
  const std::map<std::string, Device*> devices_by_name_;
  const std::vector<proto::DeviceAttributes> device_attributes_;
  Executor::Runner runner_;  // never changed after construction
  const std::shared_ptr<WorkerCacheInterface> default_cache_;
  // Every cache a session was given, by cluster, kept until the worker is
  // destroyed: sessions of one master share one, and none is freed while
  // a remote receive may still run on its channels (rendezvous_mgr_, which
  // is destroyed first, waits for those).
  std::mutex caches_mu_;
  std::map<std::string, std::shared_ptr<WorkerCacheInterface>> caches_;  // guarded by caches_mu_
  RendezvousMgr rendezvous_mgr_;

  std::mutex mu_;
  std::shared_ptr<WorkerSession> legacy_session_;                   // guarded by mu_
  std::map<std::string, std::shared_ptr<WorkerSession>> sessions_;  // guarded by mu_
  // The sessions each master task created, and that master's incarnation.
  struct MasterSession {
    int64_t master_incarnation = 0;
    std::string session_handle;
  };
  std::multimap<std::string, MasterSession> sessions_of_master_;  // guarded by mu_

  // Partial runs going on, by step id and graph handle; executors of
  // partial runs still running (the destructor waits for them).
  std::mutex partial_runs_mu_;
  std::condition_variable partial_runs_cv_;
  std::map<std::pair<int64_t, std::string>, std::shared_ptr<PartialRun>>
      partial_runs_;                   // guarded by partial_runs_mu_
  int partial_executors_running_ = 0;  // guarded by partial_runs_mu_
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_WORKER_H_
