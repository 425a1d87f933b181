#include "runtime/distributed/graph_mgr.h"

#include <cinttypes>
#include <cstdio>

#include "runtime/common_runtime/local_devices.h"
#include "runtime/common_runtime/partition.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/rendezvous.h"
#include "runtime/graph/graph_def_import.h"

namespace tensorweave {
namespace {

// A handle nobody can guess or reuse by accident: a master that talks to a
// restarted worker must not hit a different graph under an old handle.
std::string NewGraphHandle() {
  char handle[17];
  std::snprintf(handle, sizeof(handle), "%016" PRIx64, NewDeviceIncarnation());
  return handle;
}

// The rendezvous key of a _Send or _Recv node, from its attrs (as the
// kernels compute it).
Status KeyOfTransferNode(const NodeDef& node, std::string* key) {
  std::string send_device, recv_device, tensor_name;
  int64_t incarnation = 0;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "send_device", &send_device));
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "send_device_incarnation", &incarnation));
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "recv_device", &recv_device));
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "tensor_name", &tensor_name));
  *key = Rendezvous::CreateKey(send_device, static_cast<uint64_t>(incarnation), recv_device,
                               tensor_name);
  return Status::OK();
}

}  // namespace

void RegisteredGraph::RunAsync(const Executor::Args& args, const Executor::Runner& runner,
                               bool run_last_inline, Executor::DoneCallback done) const {
  struct Barrier {
    std::mutex mu;
    int pending = 0;
    Status status;
    Executor::DoneCallback done;
    // The step's per-step resources, freed with the barrier: after every
    // executor of this RunGraph has finished, however the step ended.
    std::unique_ptr<ScopedStepContainer> step_container;
  };
  auto barrier = std::make_shared<Barrier>();
  barrier->pending = static_cast<int>(executors_.size());
  barrier->done = std::move(done);
  if (executors_.empty()) {
    barrier->done(Status::OK());
    return;
  }
  Executor::Args step_args = args;
  if (step_args.step_container == nullptr) {
    barrier->step_container = std::make_unique<ScopedStepContainer>(args.step_id);
    step_args.step_container = barrier->step_container.get();
  }
  for (size_t i = 0; i < executors_.size(); ++i) {
    Executor* raw = executors_[i].get();
    auto start = [raw, step_args, barrier] {
      raw->RunAsync(step_args, [barrier](const Status& status) {
        Executor::DoneCallback finished;
        Status result;
        std::unique_ptr<ScopedStepContainer> ended_step;
        {
          std::lock_guard<std::mutex> lock(barrier->mu);
          barrier->status.Update(status);
          if (--barrier->pending > 0) return;
          finished = std::move(barrier->done);
          result = barrier->status;
          ended_step = std::move(barrier->step_container);
        }
        ended_step.reset();  // the step's resources go before it reports done
        finished(result);
      });
    };
    if (run_last_inline && i + 1 == executors_.size()) {
      start();
    } else {
      // Kernels that run inline would otherwise run on the caller's thread
      // (an RPC thread) one executor after another.
      runner(std::move(start));
    }
  }
}

GraphMgr::GraphMgr(std::vector<Device*> devices) : devices_(std::move(devices)) {
  for (Device* device : devices_) devices_by_name_[device->name()] = device;
}

Status GraphMgr::Build(const GraphDef& graph_def, RegisteredGraph* registered) const {
  for (const NodeDef& node : graph_def.node()) {
    if (devices_by_name_.count(node.device()) == 0) {
      return errors::InvalidArgument("Node '", node.name(), "' is placed on '", node.device(),
                                     "', which is not a device of this worker (",
                                     devices_.empty() ? "none" : devices_.front()->name(),
                                     devices_.size() > 1 ? ", ..." : "", ")");
    }
    if (node.op() == "_Arg" || node.op() == "_Retval") {
      return errors::InvalidArgument("Node '", node.name(), "' is a ", node.op(),
                                     ": worker graphs are fed and fetched by rendezvous keys");
    }
  }
  Graph graph(OpRegistry::Global());
  ShapeRefiner refiner(graph);
  ImportGraphDefOptions import_options;
  // A master's partitions carry the runtime's own _Send/_Recv nodes and
  // names; everything else (ops, attrs, edges, shapes) is still checked.
  import_options.user_graph = false;
  TW_RETURN_IF_ERROR(ImportGraphDef(import_options, graph_def, &graph, &refiner));
  for (Node* node : graph.op_nodes()) {
    node->set_assigned_device_name(node->requested_device());
    const std::string& op = node->type_string();
    if (op != "_Send" && op != "_Recv") continue;
    bool client_terminated = false;
    TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "client_terminated", &client_terminated));
    if (!client_terminated) continue;
    std::string key;
    TW_RETURN_IF_ERROR(KeyOfTransferNode(node->def(), &key));
    Rendezvous::ParsedKey parsed;
    Status valid = Rendezvous::ParseKey(key, &parsed);
    if (!valid.ok()) {
      return errors::InvalidArgument("Node '", node->name(),
                                     "' has attrs that make no valid key: ", valid.message());
    }
    if (op == "_Send") {
      registered->fetch_keys_.insert(key);
      continue;
    }
    DataType dtype = DT_INVALID;
    TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "tensor_type", &dtype));
    registered->feed_keys_[key] = dtype;
  }

  PartitionOptions partition_options;
  partition_options.device_incarnation = [this](const std::string& device) {
    auto found = devices_by_name_.find(device);  // every node was checked to be local
    return found == devices_by_name_.end() ? uint64_t{1} : found->second->incarnation();
  };
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  TW_RETURN_IF_ERROR(PartitionGraph(partition_options, graph, &partitions));
  if (!graph.flib_def().empty()) {
    registered->library_ = std::make_unique<FunctionLibraryDefinition>(OpRegistry::Global());
    TW_RETURN_IF_ERROR(registered->library_->AddLibrary(graph.flib_def().ToProto()));
  }
  for (const auto& partition : partitions) {
    auto device = devices_by_name_.find(partition.first);
    if (device == devices_by_name_.end()) {
      return errors::Internal("Partition for unknown device ", partition.first);
    }
    LocalExecutorParams params;
    params.device = device->second;
    if (registered->library_ != nullptr) {
      registered->function_runtimes_.push_back(
          std::make_unique<FunctionLibraryRuntime>(registered->library_.get(), device->second));
      params.function_library = registered->function_runtimes_.back().get();
    }
    std::unique_ptr<Executor> executor;
    TW_RETURN_IF_ERROR(NewLocalExecutor(params, *partition.second, &executor));
    registered->executors_.push_back(std::move(executor));
    partition.second->ToGraphDef(&registered->partition_graphs_.emplace_back());
  }
  return Status::OK();
}

Status GraphMgr::Register(const GraphDef& graph_def, std::string* handle) {
  auto registered = std::make_shared<RegisteredGraph>();
  TW_RETURN_IF_ERROR(Build(graph_def, registered.get()));
  std::lock_guard<std::mutex> lock(mu_);
  std::string new_handle;
  do {
    new_handle = NewGraphHandle();
  } while (graphs_.count(new_handle) != 0);
  graphs_.emplace(new_handle, std::move(registered));
  *handle = std::move(new_handle);
  return Status::OK();
}

Status GraphMgr::Deregister(const std::string& handle) {
  std::shared_ptr<const RegisteredGraph> graph;  // freed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto found = graphs_.find(handle);
  if (found == graphs_.end()) return errors::Aborted("Graph handle is not found: ", handle);
  graph = std::move(found->second);
  graphs_.erase(found);
  return Status::OK();
}

Status GraphMgr::Lookup(const std::string& handle, std::shared_ptr<const RegisteredGraph>* graph) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = graphs_.find(handle);
  if (found == graphs_.end()) return errors::Aborted("Graph handle is not found: ", handle);
  *graph = found->second;
  return Status::OK();
}

size_t GraphMgr::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return graphs_.size();
}

}  // namespace tensorweave
