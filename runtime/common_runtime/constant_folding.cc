// Constant folding: every node whose data inputs are all constant runs once,
// here, on a CPU device of the optimizer's own, and the nodes that consume
// its results read a Const instead.
//
// What is never folded: stateful ops (variables, queues, random ops, Print,
// Assert), nodes without inputs other than Const, random ops even when stateless, signature
// endpoints and placeholders, control-flow ops and every node downstream of one (so nothing inside
// a loop frame or a cond branch), function calls, nodes with ref/resource/variant outputs, nodes
// asking for a non-CPU device, async kernels, and results larger than
// options.max_folded_constant_bytes. A kernel that fails here leaves its node as it was, to fail at
// run time with the same error as without the optimizer.
//
// A folded node that something outside the folded set consumes becomes a
// Const under its own name (single-output nodes; a multi-output node's
// consumed outputs become new Consts "<name>/_N"), waiting on every control
// input that reached any node folded into it, so ordering against stateful
// nodes survives. Folded nodes nothing reads any more are removed.
//
// Folding stops starting kernels after options.max_folding_millis (1 s by
// default): the rest runs at run time, where a step can be cancelled or
// time out.
//
// Shape, Size and Rank of a non-constant input whose shape the shape
// functions fully know fold too (the Const keeps a control edge from that
// input's node, so it still runs after it, dead or alive alike).
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/common_runtime/thread_pools.h"
#include "runtime/framework/device.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {
namespace {

// The device folded kernels run on: one per process, on the shared intra-op
// pool. Null when no pool could be made (then nothing folds).
Device* FoldingDevice() {
  static Device* device = []() -> Device* {
    const Eigen::ThreadPoolDevice* eigen = nullptr;
    if (!IntraOpDevice(0, &eigen).ok()) return nullptr;
    return new Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", eigen);
  }();
  return device;
}

bool IsRandomOp(const std::string& type) {
  return type.find("Random") != std::string::npos ||
         type.find("Multinomial") != std::string::npos ||
         type.find("TruncatedNormal") != std::string::npos ||
         type.find("CandidateSampler") != std::string::npos;
}

bool IsFunctionCallOp(const Graph& graph, const Node* node) {
  static const std::unordered_set<std::string> kCalls = {"If",
                                                         "StatelessIf",
                                                         "While",
                                                         "StatelessWhile",
                                                         "Case",
                                                         "StatelessCase",
                                                         "PartitionedCall",
                                                         "StatefulPartitionedCall",
                                                         "SymbolicGradient",
                                                         "RemoteCall"};
  return kCalls.count(node->type_string()) > 0 || graph.flib_def().Contains(node->type_string());
}

bool IsPlaceholder(const std::string& type) {
  return type == "Placeholder" || type == "PlaceholderV2" || type == "PlaceholderWithDefault";
}

// Nodes reachable forward (data or control) from a control-flow op: inside
// a loop frame or a cond branch, or after one.
std::vector<bool> ControlFlowTainted(const Graph& graph, const std::vector<Node*>& order) {
  std::vector<bool> tainted(graph.num_node_ids(), false);
  for (Node* node : order) {
    if (!node->IsOp()) continue;
    if (IsControlFlowOp(node)) {
      tainted[node->id()] = true;
      continue;
    }
    for (const Edge* edge : node->in_edges()) {
      if (tainted[edge->src()->id()]) {
        tainted[node->id()] = true;
        break;
      }
    }
  }
  return tainted;
}

// What folding knows about one constant-valued node.
struct Folded {
  bool evaluated = false;  // outputs hold the values
  std::vector<Tensor> outputs;
  // Control inputs from outside the folded set that the node's value waited for.
  std::vector<Node*> controls;
};

class ConstantFolder {
 public:
  ConstantFolder(const GraphOptimizerOptions& options, Graph* graph)
      : options_(options), graph_(graph) {}

  Status Run(bool* changed) {
    Device* device = FoldingDevice();
    if (device == nullptr) return Status::OK();
    std::vector<Node*> order;
    TW_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));
    tainted_ = ControlFlowTainted(*graph_, order);
    folded_.resize(graph_->num_node_ids());
    PrepareShapes(order);
    for (Node* node : order) {
      if (!node->IsOp() || tainted_[node->id()]) continue;
      if (IsConstOp(node)) {
        auto entry = std::make_unique<Folded>();
        entry->controls = ExternalControls(node);
        folded_[node->id()] = std::move(entry);
        continue;
      }
      if (TryFold(device, node)) continue;
      TryFoldShape(node);
    }
    return Materialize(order, changed);
  }

 private:
  bool Foldable(const Node* node) const {
    const std::string& type = node->type_string();
    // A node without inputs (other than Const) is a source of values the
    // graph does not hold: a placeholder, a reader, a test op that waits.
    return node->num_outputs() > 0 && node->num_inputs() > 0 && !node->IsStateful() &&
           !IsSignatureEndpoint(node) && !IsPlaceholder(type) && !IsControlFlowOp(node) &&
           !IsRandomOp(type) && !IsFunctionCallOp(*graph_, node) && !HasNonValueOutput(node) &&
           !RequestsOtherThanCpu(node) && options_.preserved_nodes.count(node->name()) == 0;
  }

  // The union of the folded inputs' controls and the node's own control
  // inputs from outside the folded set.
  std::vector<Node*> ExternalControls(const Node* node) const {
    std::vector<Node*> controls;
    std::unordered_set<int> seen;
    auto add = [&](Node* control) {
      if (seen.insert(control->id()).second) controls.push_back(control);
    };
    for (const Edge* edge : node->in_edges()) {
      Node* src = edge->src();
      if (!src->IsOp()) continue;
      const Folded* input = folded_[src->id()].get();
      if (input != nullptr) {
        for (Node* control : input->controls) add(control);
      } else if (edge->IsControlEdge()) {
        add(src);
      }
    }
    return controls;
  }

  // The values of a folded node, parsing a Const's attr on first use.
  const std::vector<Tensor>* Values(Node* node) {
    Folded* entry = folded_[node->id()].get();
    if (entry == nullptr) return nullptr;
    if (!entry->evaluated) {
      Tensor value;
      if (!ConstValue(node, &value).ok()) return nullptr;
      entry->outputs = {value};
      entry->evaluated = true;
    }
    return &entry->outputs;
  }

  bool OutOfTime() const {
    return options_.max_folding_millis >= 0 &&
           std::chrono::steady_clock::now() - start_ >
               std::chrono::milliseconds(options_.max_folding_millis);
  }

  bool TryFold(Device* device, Node* node) {
    if (!Foldable(node) || OutOfTime()) return false;
    std::vector<TensorValue> inputs(node->num_inputs());
    for (int i = 0; i < node->num_inputs(); ++i) {
      NodeOutput input = DataInput(node, i);
      if (input.node == nullptr || folded_[input.node->id()] == nullptr) return false;
      const std::vector<Tensor>* values = Values(input.node);
      if (values == nullptr || input.index >= static_cast<int>(values->size())) return false;
      inputs[i].tensor = (*values)[input.index];
    }
    std::vector<Tensor> outputs;
    if (!Evaluate(device, node, &inputs, &outputs)) return false;
    auto entry = std::make_unique<Folded>();
    entry->evaluated = true;
    entry->outputs = std::move(outputs);
    entry->controls = ExternalControls(node);
    folded_[node->id()] = std::move(entry);
    return true;
  }

  // Runs the node's CPU kernel; false (and nothing kept) on any failure or
  // an output over the size cap.
  bool Evaluate(Device* device, Node* node, std::vector<TensorValue>* inputs,
                std::vector<Tensor>* outputs) const {
    if (!KernelExists("CPU", node->def())) return false;
    std::unique_ptr<OpKernel> kernel;
    if (!CreateOpKernel("CPU", device, node->def(), &kernel).ok()) return false;
    if (kernel->AsAsync() != nullptr) return false;
    OpKernelContext::Params params;
    params.device = device;
    params.op_kernel = kernel.get();
    params.inputs = inputs;
    OpKernelContext context(&params);
    ComputeCatchingExceptions(kernel.get(), &context);
    if (!context.status().ok()) return false;
    for (int i = 0; i < context.num_outputs(); ++i) {
      TensorValue* value = context.mutable_output(i);
      if (value->is_ref() || !value->tensor.IsInitialized() ||
          value->tensor.dtype() != node->output_type(i) ||
          static_cast<int64_t>(value->tensor.TotalBytes()) > options_.max_folded_constant_bytes) {
        return false;
      }
      outputs->push_back(value->tensor);
    }
    return true;
  }

  // Runs the shape functions over the graph when some Shape/Size/Rank could
  // use them (they cost a call per node, so only then).
  void PrepareShapes(const std::vector<Node*>& order) {
    bool wanted = false;
    for (Node* node : order) {
      const std::string& type = node->type_string();
      if (type == "Shape" || type == "Size" || type == "Rank") wanted = true;
    }
    if (!wanted) return;
    refiner_ = std::make_unique<ShapeRefiner>(*graph_);
    for (Node* node : order) {
      if (node->IsOp()) (void)refiner_->AddNode(node);  // an unknown shape only means less folds
    }
  }

  bool TryFoldShape(Node* node) {
    const std::string& type = node->type_string();
    if (refiner_ == nullptr || (type != "Shape" && type != "Size" && type != "Rank")) return false;
    if (!Foldable(node)) return false;
    NodeOutput input = DataInput(node, 0);
    // A ref or stateful input may be an uninitialized variable, whose shape
    // the kernel refuses at run time: leave that error where it was.
    if (input.node == nullptr || input.node->IsStateful() ||
        IsRefType(input.node->output_type(input.index)) || tainted_[input.node->id()]) {
      return false;
    }
    PartialTensorShape shape;
    if (!refiner_->GetShape(input.node, input.index, &shape).ok()) return false;
    if (type == "Rank" ? shape.unknown_rank() : !shape.IsFullyDefined()) return false;
    DataType out_type = node->output_type(0);
    Tensor value;
    if (type == "Shape") {
      if (!Tensor::Allocate(out_type, TensorShape({static_cast<int64_t>(shape.dims())}), &value)
               .ok()) {
        return false;
      }
      for (int i = 0; i < shape.dims(); ++i) {
        if (!StoreInteger(&value, i, shape.dim_size(i))) return false;
      }
    } else {
      int64_t number = shape.dims();
      if (type == "Size") {
        number = 1;
        for (int64_t dim : shape.dim_sizes()) {
          if (!MultiplyWithoutOverflow(number, dim, &number)) return false;
        }
      }
      if (!Tensor::Allocate(out_type, TensorShape(), &value).ok() ||
          !StoreInteger(&value, 0, number)) {
        return false;
      }
    }
    auto entry = std::make_unique<Folded>();
    entry->evaluated = true;
    entry->outputs = {value};
    entry->controls = ExternalControls(node);
    entry->controls.push_back(input.node);
    folded_[node->id()] = std::move(entry);
    return true;
  }

  static bool StoreInteger(Tensor* tensor, int64_t index, int64_t number) {
    if (tensor->dtype() == DT_INT32) {
      if (number > INT32_MAX) return false;
      tensor->data<int32_t>()[index] = static_cast<int32_t>(number);
      return true;
    }
    if (tensor->dtype() == DT_INT64) {
      tensor->data<int64_t>()[index] = number;
      return true;
    }
    return false;
  }

  // Whether a consumer outside the folded set reads `node`.
  bool NeededOutside(const Node* node, bool* control_only) const {
    bool data = false, control = false;
    for (const Edge* edge : node->out_edges()) {
      Node* dst = edge->dst();
      if (dst->IsSink()) continue;
      const bool dst_folded =
          dst->id() < static_cast<int>(folded_.size()) && folded_[dst->id()] != nullptr;
      if (edge->IsControlEdge()) {
        control = control || !dst_folded;
      } else {
        data = data || !dst_folded;
      }
    }
    *control_only = control && !data;
    return data || control;
  }

  Status Materialize(const std::vector<Node*>& order, bool* changed) {
    std::vector<int> replaced_inputs;
    for (Node* node : order) {
      if (!node->IsOp() || IsConstOp(node) || folded_[node->id()] == nullptr) continue;
      bool control_only = false;
      if (!NeededOutside(node, &control_only)) continue;
      Folded& entry = *folded_[node->id()];
      for (const Edge* edge : node->in_edges()) {
        if (edge->src()->IsOp()) replaced_inputs.push_back(edge->src()->id());
      }
      if (node->num_outputs() == 1) {
        TW_RETURN_IF_ERROR(ReplaceWithConst(graph_, node, entry.outputs[0], entry.controls));
        *changed = true;
        continue;
      }
      if (control_only) continue;  // a multi-output node kept for its control edges
      // One Const per consumed output; the node itself then goes as dead.
      for (int index = 0; index < node->num_outputs(); ++index) {
        if (NumConsumers(node, index) == 0) continue;
        Node* constant = nullptr;
        TW_RETURN_IF_ERROR(
            graph_->AddNode(ConstNodeDef(graph_->NewName(node->name()), node->requested_device(),
                                         entry.outputs[index]),
                            &constant));
        for (Node* control : entry.controls) graph_->AddControlEdge(control, constant);
        TW_RETURN_IF_ERROR(ForwardDataConsumers(node, index, constant));
      }
      replaced_inputs.push_back(node->id());
      *changed = true;
    }
    const int before = graph_->num_op_nodes();
    RemoveDeadNodes(graph_, options_, replaced_inputs);
    if (graph_->num_op_nodes() != before) *changed = true;
    return Status::OK();
  }

  Status ForwardDataConsumers(Node* node, int index, Node* constant) {
    std::vector<const Edge*> edges(node->out_edges().begin(), node->out_edges().end());
    for (const Edge* edge : edges) {
      if (edge->IsControlEdge() || edge->src_output() != index) continue;
      Node* dst = edge->dst();
      const int slot = edge->dst_input();
      graph_->RemoveEdge(edge);
      TW_RETURN_IF_ERROR(graph_->AddEdge(constant, 0, dst, slot));
    }
    return Status::OK();
  }

  const GraphOptimizerOptions& options_;
  Graph* graph_;
  std::vector<bool> tainted_;
  std::vector<std::unique_ptr<Folded>> folded_;  // by node id; null: not constant
  std::unique_ptr<ShapeRefiner> refiner_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

Status FoldConstants(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  ConstantFolder folder(options, graph);
  return folder.Run(changed);
}

}  // namespace tensorweave
