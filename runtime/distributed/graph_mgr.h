// GraphMgr: the graphs a master registered with one worker session, each
// split per device and compiled to one executor per device.
//
//   GraphMgr graphs(session_devices);
//   std::string handle;
//   TW_RETURN_IF_ERROR(graphs.Register(request.graph_def(), &handle));
//   std::shared_ptr<const RegisteredGraph> graph;
//   TW_RETURN_IF_ERROR(graphs.Lookup(handle, &graph));
//   graph->RunAsync(args, runner, false, [](const Status& s) { ... });   // one step
//   TW_RETURN_IF_ERROR(graphs.Deregister(handle));
//
// A registered graph holds only nodes placed on this worker's devices (the
// master partitioned the client's graph per task). Nodes on different local
// devices are connected again by local _Send/_Recv pairs. The master feeds
// the graph through its client-terminated _Recv nodes and fetches through its
// client-terminated _Send nodes, by the rendezvous keys of those nodes.
// A graph with a function library (call ops, functional If/While/Case) runs
// its functions on the device of each caller.
#ifndef TENSORWEAVE_DISTRIBUTED_GRAPH_MGR_H_
#define TENSORWEAVE_DISTRIBUTED_GRAPH_MGR_H_

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/common_runtime/executor.h"
#include "runtime/common_runtime/function_runtime.h"
#include "runtime/framework/device.h"
#include "runtime/framework/function_library.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/graph.pb.h"

namespace tensorweave {

// One registered graph: its executors and the keys the master may feed and
// fetch. Immutable once registered; a step in flight keeps it alive even
// after Deregister.
class RegisteredGraph {
 public:
  // Keys of the client-terminated _Recv nodes (what RunGraph must send,
  // with the dtype each receives) and of the client-terminated _Send nodes
  // (what it may ask to receive).
  const std::map<std::string, DataType>& feed_keys() const { return feed_keys_; }
  const std::set<std::string>& fetch_keys() const { return fetch_keys_; }
  // The graph each device runs, in device name order (what RunGraph returns
  // when exec_opts.record_partition_graphs is set).
  const std::vector<GraphDef>& partition_graphs() const { return partition_graphs_; }

  // Runs one step on every device's executor, each started through
  // `runner` except, with `run_last_inline`, the last, which starts on the
  // calling thread (for a caller that would only block waiting: a hop to
  // the pool and back costs a thread wake-up each way). `done` runs once,
  // after all of them finished, with the first error. With
  // args.stats_collector set every device's kernels are recorded there.
  void RunAsync(const Executor::Args& args, const Executor::Runner& runner, bool run_last_inline,
                Executor::DoneCallback done) const;

 private:
  friend class GraphMgr;
  // The functions the graph calls (the master sends the session's library
  // with each partition), and a runtime of them per device; declared before
  // the executors, which use them, so they are destroyed after.
  std::unique_ptr<FunctionLibraryDefinition> library_;
  std::vector<std::unique_ptr<FunctionLibraryRuntime>> function_runtimes_;
  std::vector<std::unique_ptr<Executor>> executors_;
  std::map<std::string, DataType> feed_keys_;
  std::set<std::string> fetch_keys_;
  std::vector<GraphDef> partition_graphs_;
};

class GraphMgr {
 public:
  // `devices` (not owned) outlive the manager; every registered node must be
  // placed on one of them.
  explicit GraphMgr(std::vector<Device*> devices);

  // Imports, partitions and compiles `graph_def`. INVALID_ARGUMENT naming
  // the node for a node placed elsewhere (or not at all), a node using a
  // call frame (_Arg/_Retval: worker graphs are fed by rendezvous keys) and
  // for everything ImportGraphDef refuses.
  Status Register(const GraphDef& graph_def, std::string* handle);
  // ABORTED for a handle this manager does not hold (as TensorFlow).
  Status Deregister(const std::string& handle);
  Status Lookup(const std::string& handle, std::shared_ptr<const RegisteredGraph>* graph);
  size_t size();

 private:
  Status Build(const GraphDef& graph_def, RegisteredGraph* graph) const;

  std::vector<Device*> devices_;
  std::map<std::string, Device*> devices_by_name_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const RegisteredGraph>> graphs_;  // guarded by mu_
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_GRAPH_MGR_H_
