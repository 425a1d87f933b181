// GrpcSession: a Session whose graph lives in a master, reached over gRPC
// with TensorFlow's MasterService protocol (a TensorFlow server or a
// tensorweave one), or directly when the master is served by this very
// process (local_master.h; ConfigProto.rpc_options.
// use_rpc_for_inprocess_master forces RPC). NewSession makes one for
// targets "grpc://host:port".
//
//   SessionOptions options;
//   options.target = "grpc://localhost:2222";
//   std::unique_ptr<Session> session;
//   TW_RETURN_IF_ERROR(NewSession(options, &session));  // no RPC yet
//   TW_RETURN_IF_ERROR(session->Extend(graph_def));      // CreateSession
//   TW_RETURN_IF_ERROR(session->Run({{"x:0", x}}, {"y:0"}, {}, &outputs));  // RunStep
//   TW_RETURN_IF_ERROR(session->Close());                // CloseSession
//
// How each call maps onto the protocol (as TensorFlow's own GrpcSession):
// - Create/Extend: the master session is created by the first Create or
//   Extend that carries nodes (CreateSession: graph, config, target); later
//   Extends send only their (new) nodes with the graph version the master
//   last returned (ExtendSession), under one lock so versions advance in
//   order.
// - Run: RunStep with the feeds as NamedTensorProto, the fetches (each name
//   once) and targets, errors in the response body; the returned tensors are
//   put back in fetch order. The master's RunStepResponse.metadata (step
//   stats of every task, partition graphs, as RunOptions asked) replaces
//   the caller's RunMetadata, as in TensorFlow. MakeCallable, RunCallable and ReleaseCallable
//   use the master's callable RPCs; ListDevices the ListDevices RPC.
// - PRunSetup: the PartialRunSetup RPC; PRun: RunStep with the
//   partial_run_handle, the feeds and fetches of that call.
// - Timeouts: RunOptions.timeout_in_ms (for a callable, its run_options'),
//   else config.operation_timeout_in_ms, is sent to the master and also
//   bounds the RPC (grpc_remote_master.h), so a step that outlives it fails
//   with DEADLINE_EXCEEDED even when the master does not answer.
// - Errors: the master's status arrives with its code unchanged; a master
//   that cannot be reached, or dies, gives UNAVAILABLE within seconds
//   (channel keepalive; see grpc_channel.h).
// - Close: CloseSession once; calls in flight are cancelled (CANCELLED) and
//   every later call but ReleaseCallable fails with CANCELLED "Session has
//   been closed.".
//
// Thread-safety: every method may be called from any thread at any time.
#ifndef TENSORWEAVE_DISTRIBUTED_GRPC_SESSION_H_
#define TENSORWEAVE_DISTRIBUTED_GRPC_SESSION_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/distributed/master_interface.h"

namespace tensorweave {

class GrpcSession : public Session {
 public:
  // INVALID_ARGUMENT when options.target is not "grpc://host:port". Does
  // not connect: an unreachable master shows at the first call.
  static Status Create(const SessionOptions& options, std::unique_ptr<GrpcSession>* session);

  // Sends Reset to the master of options.target: it closes every session
  // and clears `containers` (the default one when empty) on its devices.
  static Status Reset(const SessionOptions& options, const std::vector<std::string>& containers);

  // Closes the master session if still open (errors ignored).
  ~GrpcSession() override;

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
  Status PRunSetup(const std::vector<std::string>& input_names,
                   const std::vector<std::string>& output_names,
                   const std::vector<std::string>& target_nodes, std::string* handle) override;
  Status PRun(const std::string& handle, const std::vector<std::pair<std::string, Tensor>>& inputs,
              const std::vector<std::string>& output_names, std::vector<Tensor>* outputs) override;
  Status MakeCallable(const CallableOptions& options, CallableHandle* handle) override;
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches) override;
  Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                     std::vector<Tensor>* fetches, RunMetadata* run_metadata) override;
  Status ReleaseCallable(CallableHandle handle) override;
  Status ListDevices(std::vector<DeviceAttributes>* devices) override;
  Status Close() override;
  SessionStats stats() const override;

 private:
  GrpcSession(const SessionOptions& options, std::unique_ptr<MasterInterface> master)
      : options_(options), master_(std::move(master)) {}

  // The master of options.target: this process's own (local_master.h)
  // unless the config asks for RPC, else a remote one.
  static Status NewMaster(const SessionOptions& options, std::unique_ptr<MasterInterface>* master);

  // A call registered for Close to cancel; unregistered when destroyed.
  class TrackedCall;

  // Create and Extend with extend_mu_ held.
  Status CreateLocked(const GraphDef& graph);
  // The master's session handle: CANCELLED once closed, INVALID_ARGUMENT
  // before the session was created.
  Status GetHandle(std::string* handle) const;
  // Sends `request` (session handle, options, targets or partial run
  // handle filled in) with `inputs` and `output_names` as RunStep and puts
  // the fetched values in `outputs`, in output_names' order. With
  // `fetch_each_once` a repeated name is asked for once and copied.
  Status RunStep(RunStepRequest* request, const std::vector<std::pair<std::string, Tensor>>& inputs,
                 const std::vector<std::string>& output_names, bool fetch_each_once,
                 std::vector<Tensor>* outputs, RunStepResponse* response);
  // The timeout for a step: `timeout_ms` when > 0, else the config's.
  int64_t StepTimeout(int64_t timeout_ms) const;

  const SessionOptions options_;
  const std::unique_ptr<MasterInterface> master_;

  // Serializes Create and Extend: each ExtendSession names the version the
  // previous one returned.
  std::mutex extend_mu_;

  mutable std::mutex mu_;  // guards what follows
  std::string handle_;     // empty until CreateSession succeeded
  int64_t graph_version_ = 0;
  bool closed_ = false;
  std::set<CallOptions*> calls_in_flight_;
  // What a callable's runs need to know. Released entries stay, so a
  // second release is OK and an unknown handle is an error.
  struct Callable {
    int64_t timeout_ms = 0;  // of each run: its run_options', else the config's
    int num_fetches = 0;
    bool released = false;
  };
  std::map<CallableHandle, Callable> callables_;

  std::atomic<int64_t> runs_{0};
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRPC_SESSION_H_
