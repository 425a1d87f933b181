// DirectSession: the in-process Session (target ""). See session.h for the
// contract; this file says how it is met.
//
//   SessionOptions options;
//   (*options.config.mutable_device_count())["CPU"] = 2;  // two CPU devices
//   std::unique_ptr<Session> session;
//   TW_RETURN_IF_ERROR(NewSession(options, &session));   // a DirectSession
//
// Devices: config.device_count["CPU"] CPU devices (default 1) named
// "/job:localhost/replica:0/task:0/device:CPU:<n>", each with its own
// variables. Threads come from process-wide pools shared by sessions of the
// same sizes (inter_op_parallelism_threads, intra_op_parallelism_threads).
//
// Run and MakeCallable, per signature (feed names, fetch names, target
// names; see run_signature.h):
// - The first use of a signature copies the graph, replaces fed tensors by
//   _Arg nodes and adds a _Retval per fetch, prunes what is not needed,
//   places nodes, partitions per device with _Send/_Recv and builds one
//   executor per partition. The result is cached under the signature as
//   given and as sorted, so a permuted repeat is a cache hit too.
// - A cache hit does no graph work. A callable is a handle on a cache
//   entry: Run looks the entry up by its key, RunCallable by the handle, and
//   both then run the same prepared step: check the fed values' dtypes and
//   placeholder shapes, run the executors. Cheap kernels run on the calling
//   thread.
// - Each step has its own CancellationManager, rendezvous and call frame. A
//   step that outlives its timeout (RunOptions.timeout_in_ms, else
//   config.operation_timeout_in_ms; 0 means none) is cancelled and fails
//   with DEADLINE_EXCEEDED "Timed out after N ms". Close cancels running
//   steps, which fail with CANCELLED.
//
// - RunOptions.trace_level SOFTWARE_TRACE or above records every kernel run
//   (step_stats_collector.h) into RunMetadata.step_stats, one
//   DeviceStepStats per device; output_partition_graphs copies the
//   partition graphs into RunMetadata.partition_graphs. Untraced runs
//   record nothing.
//
// Thread-safety: every method may be called from any thread at any time;
// Run calls proceed concurrently.
#ifndef TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_H_
#define TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/common_runtime/executor.h"
#include "runtime/common_runtime/local_devices.h"
#include "runtime/common_runtime/run_signature.h"
#include "runtime/common_runtime/session.h"
#include "runtime/common_runtime/subgraph.h"
#include "runtime/framework/cpu_allocator.h"
#include "runtime/framework/device.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

class DirectSession : public Session {
 public:
  // Limits on what a ConfigProto may ask for: every CPU device is an object
  // with its own variables, and no timeout needs to outlast a century.
  static constexpr int kMaxCpuDevices = kMaxLocalCpuDevices;
  static constexpr int64_t kLongestTimeoutMs = int64_t{100} * 366 * 24 * 3600 * 1000;

  // Construct, then Init (the factory does both).
  explicit DirectSession(const SessionOptions& options);
  // Creates the devices and takes the thread pools the config asks for:
  // INVALID_ARGUMENT for counts beyond the limits, RESOURCE_EXHAUSTED when
  // the system gives no thread at all.
  Status Init();
  // Closes the session and waits for steps still running.
  ~DirectSession() override;

  Status Create(const GraphDef& graph) override;
  Status Extend(const GraphDef& graph) override;
  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) override;
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs) override;
  Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
             RunMetadata* run_metadata) override;
  Status MakeCallable(const CallableOptions& options, CallableHandle* handle) override;
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches) override;
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, RunMetadata* run_metadata) override;
  Status ReleaseCallable(CallableHandle handle) override;
  // Partial runs (session.h). PRunSetup builds (or reuses) executors whose
  // feeds and fetches pass through the step's rendezvous and starts them;
  // each PRun sends its feeds there and waits for its fetches. As in
  // TensorFlow: a feed or fetch not declared at setup, or fed or fetched a
  // second time, is INVALID_ARGUMENT; so is a fetch that needs a declared
  // feed not given yet ("... can't be computed from the feeds that have been
  // fed so far"), and an unknown handle. Once every declared feed was fed
  // and every fetch fetched, PRun waits for the step to end (targets
  // included) and forgets the handle. Close cancels unfinished ones.
  Status PRunSetup(const std::vector<std::string>& input_names,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::string* handle) override;
  Status PRun(const std::string& handle, const std::vector<std::pair<std::string, Tensor>>& inputs,
              const std::vector<std::string>& output_names, std::vector<Tensor>* outputs) override;
  Status ListDevices(std::vector<DeviceAttributes>* devices) override;
  Status Close() override;
  SessionStats stats() const override;

  // Makes the variables of `containers` (the default one when empty) on
  // this session's devices uninitialized (Reset, session.h).
  void ClearVariables(const std::vector<std::string>& containers);

  // For tests and debugging: the partition graphs (by device name) built
  // for a signature that has run. NOT_FOUND if it has not.
  Status GetPartitionGraphs(const std::vector<std::string>& feed_names,
                            const std::vector<std::string>& output_names,
                            const std::vector<std::string>& target_nodes,
                            std::map<std::string, GraphDef>* partitions);

 private:
  struct ExecutorsAndKeys;  // what one signature compiled to
  struct CacheEntry;        // a signature spelling → compiled executors
  struct Callable;          // what a callable handle stands for
  struct Step;              // one Run in flight
  struct PartialRun;        // one partial run between PRunSetup and its last PRun

  Status ExtendLocked(const GraphDef& graph);
  // The cache entry of `signature` (whose key is `key`), compiled if no
  // spelling of it was. *built_now tells whether this call compiled it.
  Status Prepare(const RunSignature& signature, const std::string& key, const CacheEntry** entry,
                 bool* built_now);
  Status LookUpOrBuild(const RunSignature& signature, const std::string& key,
                       const CacheEntry** entry, bool* built_now);
  // `endpoints`: empty for feeds and fetches through the call frame, the
  // client device for feeds and fetches through the rendezvous.
  Status Build(const std::vector<std::string>& feed_names,
               const std::vector<std::string>& output_names,
               const std::vector<std::string>& target_nodes, const SignatureEndpoints& endpoints,
               std::unique_ptr<ExecutorsAndKeys>* built, std::vector<int>* output_to_retval);
  // Splits a placed signature graph into one graph per device (the graph
  // itself when it is all on one device).
  Status PartitionSignatureGraph(std::unique_ptr<Graph> graph,
                                 std::map<std::string, std::unique_ptr<Graph>>* partitions);
  const CacheEntry* FindEntry(const std::string& key) const;
  const CacheEntry* InsertEntry(const std::string& key, std::unique_ptr<CacheEntry> entry);
  Status FindCallable(CallableHandle handle, std::shared_ptr<Callable>* callable) const;

  // Runs the prepared step `entry` with `feeds` in the order of its
  // spelling: the one path of Run and RunCallable.
  // `run_metadata` (may be null) gets what `options` asks for.
  Status RunPrepared(const RunOptions& options, const CacheEntry& entry,
                     const std::vector<Tensor>& feeds, bool cache_hit, std::vector<Tensor>* outputs,
                     RunMetadata* run_metadata);
  Status CheckFeeds(const CacheEntry& entry, const std::vector<Tensor>& feeds) const;

  // Starts every partition's executor and waits, cancelling the step once
  // `timeout_ms` (> 0) passed. Sets *timed_out when that happened.
  Status ExecuteAndWait(const ExecutorsAndKeys& executors, const Executor::Args& args, Step* step,
                        int64_t timeout_ms, bool* timed_out);
  // Makes the step stop: no kernel starts any more and waiting receivers
  // wake with `status`.
  static void CancelStep(Step* step, const Status& status);
  // False when the session is closed.
  bool RegisterStep(Step* step);
  // True when Close cancelled the step.
  bool UnregisterStep(Step* step);

  // Large blocks its steps free are kept for its next steps until Close
  // (cpu_allocator.h). First member, so destroyed last: what the other
  // members free as they go is not kept for a session that has gone.
  std::optional<CpuBufferCacheUser> buffer_cache_user_{std::in_place};
  const SessionOptions options_;
  const int64_t operation_timeout_ms_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unordered_map<std::string, Device*> devices_by_name_;
  Executor::Runner runner_;

  // Guards the graph and serializes signature builds (never taken by a Run
  // that hits the cache).
  std::mutex graph_mu_;
  std::unique_ptr<Graph> graph_;
  // Shapes of graph_'s outputs: Create/Extend run every new node's shape
  // function, so a session rejects the graphs TF_GraphImportGraphDef does.
  std::unique_ptr<ShapeRefiner> refiner_;
  bool graph_created_ = false;
  // Devices stateful nodes were placed on, so later signatures agree.
  std::unordered_map<std::string, std::string> stateful_placements_;
  std::vector<std::unique_ptr<ExecutorsAndKeys>> built_;  // guarded by graph_mu_

  // Signature key → entry. Entries are never removed before destruction,
  // so a Run may use its entry after dropping the lock.
  mutable std::shared_mutex cache_mu_;
  std::unordered_map<std::string, std::unique_ptr<CacheEntry>> cache_;

  // Callable handle → callable. Shared so a release does not pull a
  // callable from under a run using it.
  mutable std::shared_mutex callables_mu_;
  std::unordered_map<CallableHandle, std::shared_ptr<Callable>> callables_;
  CallableHandle next_callable_handle_ = 0;  // guarded by callables_mu_

  // Steps in flight, so Close can cancel them and the destructor can wait.
  std::mutex steps_mu_;
  std::condition_variable steps_cv_;
  Step* steps_ = nullptr;  // intrusive list, guarded by steps_mu_
  std::atomic<bool> closed_{false};

  // Partial runs: executors by signature key (guarded by graph_mu_, owned
  // by built_) and the runs in progress by handle.
  std::unordered_map<std::string, const ExecutorsAndKeys*> partial_run_executors_;
  std::mutex partial_runs_mu_;
  std::unordered_map<std::string, std::shared_ptr<PartialRun>> partial_runs_;
  Status FindPartialRun(const std::string& handle, std::shared_ptr<PartialRun>* run);
  // INVALID_ARGUMENT naming the feed when a fetch depends on a declared
  // feed that is neither fed yet nor in `feeding` (as TensorFlow).
  Status CheckFetchesComputable(const PartialRun& run, const std::vector<TensorId>& feeding,
                                const std::vector<TensorId>& fetches);

  std::atomic<int64_t> next_step_id_{1};
  std::atomic<int64_t> runs_{0};
  std::atomic<int64_t> executors_built_{0};
  std::atomic<int64_t> cache_hits_{0};
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_H_
