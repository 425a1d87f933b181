// MasterSession: one client session on a distributed master (TensorFlow's
// MasterSession). It holds the session's graph and, per run signature, the
// partitions registered on the workers.
//
//   MasterSessionOptions options;      // handle, config, cluster, devices...
//   auto session = std::make_shared<MasterSession>(std::move(options));
//   TW_RETURN_IF_ERROR(session->Create(graph_def));
//   RunStepRequest request;  ... fetch "y:0" ...
//   RunStepResponse response;
//   NamedTensors fetched;
//   TW_RETURN_IF_ERROR(session->Run(request, {{"x:0", x}}, &response, &fetched));
//   session->Close();                  // deregisters everything on the workers
//
// The first step of a signature (feeds, fetches, targets) copies the graph,
// rewrites it with client-terminated _Recv/_Send on the client device
// (subgraph.h), prunes, places nodes on the cluster's devices (placer.h;
// nodes without a request go to the client device's task), partitions per
// task (partition.h) and registers each partition on its worker
// (CreateWorkerSession first, once per worker). It is cached under the
// signature as spelled and as sorted, so a repeat does no graph work and
// no registration.
//
// Each step gets a fresh random step_id and runs every partition at once
// (RunGraph): feeds go to the partition holding their _Recv, fetches come
// back from the one holding their _Send. When one fails, the others are
// cancelled and the first real error is returned (not the CANCELLED of the
// others). A step that outlives RunOptions.timeout_in_ms (else
// config.operation_timeout_in_ms) fails with DEADLINE_EXCEEDED. Each step
// ends with CleanupGraph(step_id) on every worker it ran on, sent without
// waiting for the answer (Close waits for those still out).
//
// RunOptions.trace_level SOFTWARE_TRACE or above asks every partition's
// worker for its step stats (ExecutorOpts.record_timeline), and
// output_partition_graphs for the graphs its devices ran; the response's
// metadata gets them all. An untraced step asks for and copies nothing.
//
// Partial runs (master_session_partial_run.cc, TensorFlow's protocol):
// PartialRunSetup builds (or reuses) the partitions of the declared feeds,
// fetches and targets and picks the step's id; each Run with the handle
// sends RunGraph with is_partial to the partitions (the first call starts
// them all; later ones reach only the client task's, which holds every
// feed and fetch), and the call that uses the last declared feed and fetch
// sends is_last_partial_run to all of them and waits for the step to end.
// A failed call ends the step everywhere (CleanupGraph), as does Close.
//
// Thread-safe: steps run concurrently; Close cancels running steps.
#ifndef TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_H_
#define TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/distributed/worker_cache.h"
#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"
#include "tensorweave/proto/master.pb.h"
#include "tensorweave/proto/tensorflow_server.pb.h"

namespace tensorweave {

// A random 64-bit number for handles and step ids.
uint64_t NewRandomId();

struct MasterSessionOptions {
  std::string handle;
  ConfigProto config;
  // The cluster the session runs on and the master's own task in it
  // ("/job:J/replica:0/task:T"), whose first device is the client device.
  ClusterDef cluster;
  std::string master_task;
  // This master's instance (drawn once per Master): a worker drops the
  // sessions an earlier instance of the same master task left behind.
  int64_t master_incarnation = 0;
  // Reaches the cluster's workers; not owned unless `owned_worker_cache`
  // holds it (a session with its own ClusterDef in its config).
  WorkerCacheInterface* worker_cache = nullptr;
  std::unique_ptr<WorkerCacheInterface> owned_worker_cache;
  // Every device of the session's tasks (GetStatus).
  std::vector<proto::DeviceAttributes> devices;
};

class MasterSession {
 public:
  // How long a call that sets up or tears down state on a worker may take
  // when the config sets no operation timeout.
  static constexpr int64_t kDefaultControlCallTimeoutMs = 60 * 1000;

  // INVALID_ARGUMENT when the devices include none of the master's task.
  static Status New(MasterSessionOptions options, std::shared_ptr<MasterSession>* session);
  ~MasterSession();

  MasterSession(const MasterSession&) = delete;
  MasterSession& operator=(const MasterSession&) = delete;

  const std::string& handle() const { return options_.handle; }
  int64_t graph_version() const;
  const std::string& client_device() const { return client_device_.name(); }

  // Imports the client's graph: INVALID_ARGUMENT for an invalid one.
  Status Create(const GraphDef& graph);
  // ABORTED when current_graph_version is not the session's version.
  Status Extend(const ExtendSessionRequest& request, ExtendSessionResponse* response);
  // Feeds and fetches as Tensors (Master::RunStep): request.feed and
  // response->tensor stay empty; `fetched` gets one value per fetch, named
  // as spelled. With request.partial_run_handle, one call of that partial
  // run: INVALID_ARGUMENT for an unknown handle, a feed or fetch not
  // declared at setup or already used, a fetch the feeds given so far
  // cannot compute.
  Status Run(const RunStepRequest& request, const NamedTensors& feeds, RunStepResponse* response,
             NamedTensors* fetched);
  // INVALID_ARGUMENT without fetches and targets, or as Run for names.
  Status PartialRunSetup(const PartialRunSetupRequest& request, PartialRunSetupResponse* response);
  Status MakeCallable(const MakeCallableRequest& request, MakeCallableResponse* response);
  Status RunCallable(const RunCallableRequest& request, const std::vector<Tensor>& feeds,
                     RunCallableResponse* response, std::vector<Tensor>* fetched);
  Status ReleaseCallable(const ReleaseCallableRequest& request);
  // local_device: the master task's devices; remote_device: the others.
  void ListDevices(ListDevicesResponse* response) const;
  // Cancels running steps, waits for them, deregisters every graph and
  // deletes every worker session. Later calls fail; a second Close is a
  // no-op.
  Status Close();

  // How many signatures were compiled and registered (for tests).
  int64_t signatures_built() const { return signatures_built_.load(); }

 private:
  struct ClientGraph;  // one compiled signature, registered on its workers
  struct CacheEntry;   // one spelling of a signature
  struct Callable;
  struct Step;
  struct PartialRun;  // one partial run between its setup and its end

  explicit MasterSession(MasterSessionOptions options, const proto::DeviceAttributes& client);

  int64_t ControlCallTimeoutMs() const;
  Status Prepare(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                 const std::vector<std::string>& targets, std::shared_ptr<const CacheEntry>* entry);
  std::shared_ptr<const CacheEntry> FindEntry(const std::string& key) const;
  Status Build(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
               const std::vector<std::string>& targets, std::shared_ptr<ClientGraph>* built);
  Status Register(ClientGraph* graph, std::map<std::string, std::unique_ptr<Graph>>* partitions);
  Status EnsureWorkerSession(const std::string& task, WorkerInterface* worker);
  // Runs one step of `entry` with the fed values (in the entry's spelling
  // order); fetched values come back in the spelling's fetch order.
  // `metadata` gets what `run_options` asks for (step stats of every
  // partition's devices, the partition graphs), nothing when it asks for
  // nothing.
  Status RunStepOf(const CacheEntry& entry, const std::vector<const Tensor*>& feeds,
                   int64_t timeout_ms, const RunOptions& run_options, RunMetadata* metadata,
                   std::vector<Tensor>* fetched);
  // Registers `step` (Close cancels it), starts the calls of `partitions`
  // (their inputs filled in), waits for them (cancelling the others when
  // one fails or time is up) and returns the step's first real error. The
  // caller unregisters the step.
  Status RunCalls(const ClientGraph& graph, const std::vector<size_t>& partitions,
                  int64_t timeout_ms, Step* step);
  Status RunPartial(const RunStepRequest& request, const NamedTensors& feeds,
                    RunStepResponse* response, NamedTensors* fetched);
  // Checks one call's feeds and fetches against `run` and marks them used.
  Status UsePartialRunNames(PartialRun* run, const std::vector<std::string>& feed_names,
                            const NamedTensors& feeds, const std::vector<std::string>& fetch_names,
                            bool* last);
  // INVALID_ARGUMENT when a fetch needs a declared feed not fed so far (nor
  // in `feeding`): the step would wait for it forever.
  Status CheckFetchesComputable(const PartialRun& run, const std::set<std::string>& feeding,
                                const std::vector<std::string>& fetches) const;
  // Forgets the partial run and ends its step on every worker.
  void EndPartialRun(const std::string& handle);
  // Moves the step stats and partition graphs every partition returned
  // into `metadata`.
  static void CollectMetadata(Step* step, RunMetadata* metadata);
  void CleanupStep(const ClientGraph& graph, int64_t step_id);
  bool RegisterStep(Step* step);
  void UnregisterStep(Step* step);
  Status FindCallable(int64_t handle, std::shared_ptr<Callable>* callable) const;

  MasterSessionOptions options_;
  const proto::DeviceAttributes client_device_;
  const int64_t operation_timeout_ms_;

  // Guards the graph, the versions, the worker sessions and every build.
  mutable std::mutex graph_mu_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<ShapeRefiner> refiner_;
  int64_t graph_version_ = 0;
  std::unordered_map<std::string, std::string> stateful_placements_;
  std::set<std::string> worker_sessions_;  // tasks with a worker session
  std::vector<std::shared_ptr<ClientGraph>> built_;

  mutable std::shared_mutex cache_mu_;
  std::unordered_map<std::string, std::shared_ptr<const CacheEntry>> cache_;

  mutable std::shared_mutex callables_mu_;
  std::unordered_map<int64_t, std::shared_ptr<Callable>> callables_;
  int64_t next_callable_handle_ = 0;

  // Steps and cleanups in flight, so Close can cancel them and wait.
  std::mutex steps_mu_;
  std::condition_variable steps_cv_;
  std::set<Step*> steps_;
  int pending_cleanups_ = 0;  // CleanupGraph calls not answered yet
  bool closed_ = false;       // guarded by steps_mu_

  std::mutex partial_runs_mu_;
  std::map<std::string, std::shared_ptr<PartialRun>> partial_runs_;  // guarded by partial_runs_mu_
  int64_t next_partial_run_handle_ = 0;                              // guarded by partial_runs_mu_

  std::atomic<int64_t> signatures_built_{0};
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_H_
