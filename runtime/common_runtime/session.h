// Session: runs a graph. Lifecycle: Create once, Extend zero or more times,
// Run any number of times (from several threads at once), Close, delete.
//
//   std::unique_ptr<Session> session;
//   TW_RETURN_IF_ERROR(NewSession(options, &session));
//   TW_RETURN_IF_ERROR(session->Create(graph_def));
//   std::vector<Tensor> outputs;
//   TW_RETURN_IF_ERROR(session->Run({{"x:0", x}}, {"y:0"}, {}, &outputs));
//
// A step run many times is prepared once as a callable, whose runs do no
// name or graph work:
//   CallableOptions prepared;
//   prepared.add_feed("x:0");
//   prepared.add_fetch("y:0");
//   Session::CallableHandle y_of_x;
//   TW_RETURN_IF_ERROR(session->MakeCallable(prepared, &y_of_x));
//   TW_RETURN_IF_ERROR(session->RunCallable(y_of_x, {x}, &outputs));
//   TW_RETURN_IF_ERROR(session->ReleaseCallable(y_of_x));
//   TW_RETURN_IF_ERROR(session->Close());
#ifndef TENSORWEAVE_COMMON_RUNTIME_SESSION_H_
#define TENSORWEAVE_COMMON_RUNTIME_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "tensorweave/proto/config.pb.h"
#include "tensorweave/proto/graph.pb.h"

namespace tensorweave {

struct SessionOptions {
  // "" for an in-process DirectSession; "grpc://host:port" for a remote one.
  std::string target;
  ConfigProto config;
};

struct DeviceAttributes {
  std::string name;         // "/job:localhost/replica:0/task:0/device:CPU:0"
  std::string device_type;  // "CPU"
  int64_t memory_limit_bytes = 0;
  // Random per device object, so a restarted device is told apart from the
  // one before it (TF_DeviceListIncarnation, the keys of _Send/_Recv).
  uint64_t incarnation = 0;
};

// Counters tests and benchmarks can read.
struct SessionStats {
  int64_t runs = 0;             // Run and RunCallable calls that reached execution
  int64_t executors_built = 0;  // signatures compiled (prune/place/partition)
  // Runs that reused executors compiled for an earlier call. The first run
  // of a callable whose MakeCallable compiled its signature is not one.
  int64_t cache_hits = 0;
};

class Session {
 public:
  virtual ~Session() = default;

  // Installs the first graph. ALREADY_EXISTS if called twice; the graph is
  // validated and its shape functions run (see ImportGraphDef), and nothing
  // changes on error.
  virtual Status Create(const GraphDef& graph) = 0;
  // Adds nodes whose names are new; before Create acts as Create. A node
  // name already present is INVALID_ARGUMENT; nothing changes on error.
  virtual Status Extend(const GraphDef& graph) = 0;

  // Feeds `inputs` ("node:index" → value), computes `output_names` and runs
  // `target_nodes` (node names). At least one fetch or target is required.
  // A name that does not exist is NOT_FOUND; feeding a tensor twice, or
  // feeding and fetching the same tensor, is INVALID_ARGUMENT. `outputs`
  // gets one tensor per output name, in order.
  virtual Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names,
                     const std::vector<std::string>& target_nodes,
                     std::vector<Tensor>* outputs) = 0;
  // As above; `options.timeout_in_ms` > 0 bounds this step.
  virtual Status Run(const RunOptions& options,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names,
                     const std::vector<std::string>& target_nodes,
                     std::vector<Tensor>* outputs) = 0;

  // As above, and fills `run_metadata` (may be null) with what `options`
  // asks for: step_stats when options.trace_level is SOFTWARE_TRACE or
  // above, partition_graphs when options.output_partition_graphs is set. A
  // session that records nothing leaves it as it is (this default).
  virtual Status Run(const RunOptions& options,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names,
                     const std::vector<std::string>& target_nodes, std::vector<Tensor>* outputs,
                     RunMetadata* run_metadata) {
    return Run(options, inputs, output_names, target_nodes, outputs);
  }

  // Partial runs (TensorFlow's PRunSetup/PRun): a step whose feeds are
  // given, and fetches taken, over several calls. PRunSetup declares every
  // feed, fetch and target and starts the step; each PRun feeds some of the
  // declared feeds and fetches some of the declared fetches, waiting for
  // them. A session without them says UNIMPLEMENTED (this default).
  virtual Status PRunSetup(const std::vector<std::string>& input_names,
                           const std::vector<std::string>& output_names,
                           const std::vector<std::string>& target_nodes, std::string* handle) {
    return errors::Unimplemented("This session does not support partial runs");
  }
  virtual Status PRun(const std::string& handle,
                      const std::vector<std::pair<std::string, Tensor>>& inputs,
                      const std::vector<std::string>& output_names, std::vector<Tensor>* outputs) {
    return errors::Unimplemented("This session does not support partial runs");
  }

  // Prepared steps (TensorFlow's callable API). A handle names one
  // signature (options.feed, fetch, target) with options.run_options.
  using CallableHandle = int64_t;

  // Prepares the step `options` describes (compiling it unless an equal
  // signature was compiled before) and returns its handle. Errors are those
  // Run would give for the same names, reported here instead of at each
  // run; CallableOptions fields a session does not support are UNIMPLEMENTED;
  // a closed session is CANCELLED.
  virtual Status MakeCallable(const CallableOptions& options, CallableHandle* handle) = 0;
  // Runs the step of `handle`: `feeds[i]` is the value of options.feed[i];
  // `fetches` gets one tensor per options.fetch, in order (and is left empty
  // on failure). An unknown or released handle and a number of feeds other
  // than options.feed_size() are INVALID_ARGUMENT; a feed of the wrong dtype
  // or placeholder shape fails as in Run; a closed session is CANCELLED.
  // Callable runs, and Run, proceed concurrently.
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                             std::vector<Tensor>* fetches) = 0;
  // As above, and fills `run_metadata` (may be null) as Run does for the
  // callable's run_options. This default records nothing.
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                             std::vector<Tensor>* fetches, RunMetadata* run_metadata) {
    return RunCallable(handle, feeds, fetches);
  }
  // Forgets `handle`; runs of it already in flight finish normally. A handle
  // never returned by MakeCallable is INVALID_ARGUMENT; releasing one twice
  // is OK (as in TensorFlow). Works on a closed session too.
  virtual Status ReleaseCallable(CallableHandle handle) = 0;

  virtual Status ListDevices(std::vector<DeviceAttributes>* devices) = 0;

  // Cancels steps in flight (they end CANCELLED) and makes every later call
  // (ReleaseCallable excepted) fail with CANCELLED "Session has been
  // closed". Closing twice is OK.
  virtual Status Close() = 0;

  virtual SessionStats stats() const = 0;
};

// Creates the session the registered factory for `options` makes. NOT_FOUND
// listing the registered factories when none accepts the options;
// INTERNAL when more than one does.
Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* session);

// Clears the resource containers `containers` (the default one, "localhost",
// when empty; as TensorFlow) of the sessions the factory for `options`
// reaches: for a remote target, the master's (which also closes its
// sessions); for "", the variables of every live in-process session. Errors
// as NewSession's when no factory accepts the options; UNIMPLEMENTED when
// the factory cannot reset.
Status Reset(const SessionOptions& options, const std::vector<std::string>& containers);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_SESSION_H_
