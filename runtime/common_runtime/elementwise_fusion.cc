// The elementwise chain fusion pass (elementwise_fusion.h).
#include "runtime/common_runtime/elementwise_fusion.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/node_def_util.h"

namespace tensorweave {
namespace {

bool IsFunction(const std::string& op) {
  static const std::unordered_set<std::string> kFunctions = {"Exp",  "Log",   "Tanh", "Sigmoid",
                                                             "Sqrt", "Rsqrt", "Relu"};
  return kFunctions.count(op) != 0;
}

bool IsBinary(const std::string& op) {
  static const std::unordered_set<std::string> kBinary = {"Add", "AddV2",   "Sub",     "Mul",
                                                          "Div", "RealDiv", "Maximum", "Minimum"};
  return kBinary.count(op) != 0;
}

// A step of a chain: the node, the input the chain's tensor comes in at,
// and for a binary op its scalar and the name the fused op knows it by.
struct Step {
  Node* node = nullptr;
  int chain_input = 0;
  std::string op;
  float scalar = 0;
};

// A rank-0 float Const feeding `node` at `index`: its value.
bool ScalarConstInput(const Node* node, int index, float* value) {
  const NodeOutput input = DataInput(node, index);
  if (input.node == nullptr || !IsConstOp(input.node)) return false;
  Tensor tensor;
  if (!ConstValue(input.node, &tensor).ok() || tensor.dtype() != DT_FLOAT || tensor.dims() != 0) {
    return false;
  }
  *value = tensor.data<float>()[0];
  return true;
}

// `node` as a step of a chain (float, on the CPU; a binary op with a
// rank-0 Const on one side, so the output has the other input's shape).
bool AsStep(Node* node, Step* step) {
  const std::string& op = node->type_string();
  if ((!IsFunction(op) && !IsBinary(op)) || RequestsOtherThanCpu(node)) return false;
  DataType dtype = DT_INVALID;
  if (!GetNodeAttr(node->def(), "T", &dtype).ok() || dtype != DT_FLOAT) return false;
  *step = Step{node, 0, op, 0.0f};
  if (IsFunction(op)) return true;
  // Float Div is RealDiv; AddV2 is Add.
  const std::string name = op == "Div" ? "RealDiv" : op == "AddV2" ? "Add" : op;
  if (ScalarConstInput(node, 1, &step->scalar)) {
    step->op = name;
    return true;
  }
  if (ScalarConstInput(node, 0, &step->scalar)) {
    step->chain_input = 1;
    // Commutative operations take the scalar on either side.
    step->op = name == "Sub" ? "RSub" : name == "RealDiv" ? "RRealDiv" : name;
    return true;
  }
  return false;
}

// The next step of a chain through `node`: its only consumer, fed at its
// chain input, when `node` may disappear into the fused node.
bool NextStep(const Node* node, const GraphOptimizerOptions& options, Step* next) {
  if (MustKeep(node, options)) return false;
  const Edge* only = nullptr;
  for (const Edge* edge : node->out_edges()) {
    if (edge->IsControlEdge()) {
      if (edge->dst()->IsSink()) continue;
      return false;
    }
    if (only != nullptr) return false;
    only = edge;
  }
  return only != nullptr && AsStep(only->dst(), next) && next->chain_input == only->dst_input() &&
         only->dst()->requested_device() == node->requested_device();
}

// Whether `step` starts a chain: no step before it would take it in.
bool StartsChain(const Step& step, const GraphOptimizerOptions& options) {
  const NodeOutput input = DataInput(step.node, step.chain_input);
  Step before, after;
  return input.node == nullptr || !AsStep(input.node, &before) ||
         !NextStep(input.node, options, &after) || after.node != step.node;
}

Status Fuse(Graph* graph, const GraphOptimizerOptions& options, const std::vector<Step>& chain) {
  Node* last = chain.back().node;
  NodeDef def;
  def.set_name(last->name());
  def.set_op("_FusedUnaryChain");
  def.set_device(last->requested_device());
  auto& attrs = *def.mutable_attr();
  SetAttrValue(DT_FLOAT, &attrs["T"]);
  AttrValue::ListValue* ops = attrs["ops"].mutable_list();
  AttrValue::ListValue* scalars = attrs["scalars"].mutable_list();
  std::vector<Node*> controls;
  std::vector<int> scalar_consts;
  for (const Step& step : chain) {
    ops->add_s(step.op);
    scalars->add_f(step.scalar);
    for (Node* control : ControlInputs(step.node)) controls.push_back(control);
    if (IsBinary(step.node->type_string())) {
      scalar_consts.push_back(DataInput(step.node, 1 - step.chain_input).node->id());
    }
  }
  const NodeOutput input = DataInput(chain.front().node, chain.front().chain_input);
  TW_RETURN_IF_ERROR(ReplaceNode(graph, last, def, {input}, controls));
  // The rest fed only each other and the replaced last node.
  for (size_t i = 0; i + 1 < chain.size(); ++i) graph->RemoveNode(chain[i].node);
  // Scalars nothing else reads go too.
  RemoveDeadNodes(graph, options, scalar_consts);
  return Status::OK();
}

}  // namespace

Status FuseUnaryChains(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  *changed = false;
  // Chains are found first and fused after: fusing removes nodes.
  std::vector<std::vector<Step>> chains;
  for (Node* node : graph->op_nodes()) {
    Step step;
    if (!AsStep(node, &step) || !StartsChain(step, options)) continue;
    std::vector<Step> chain = {step};
    Step next;
    while (NextStep(chain.back().node, options, &next)) chain.push_back(next);
    // One step gains nothing; a chain of a constant is constant folding's
    // (and a pass that turned it off wants it left alone). Chains of
    // arithmetic alone (x * 2 + 1) stay as TensorFlow leaves them, node by
    // node in step stats and traces; the fusion is for chains that compute
    // a function.
    const NodeOutput input = DataInput(step.node, step.chain_input);
    bool has_function = false;
    for (const Step& s : chain) has_function |= IsFunction(s.node->type_string());
    if (chain.size() >= 2 && has_function && (input.node == nullptr || !IsConstOp(input.node))) {
      chains.push_back(std::move(chain));
    }
  }
  for (const std::vector<Step>& chain : chains) {
    TW_RETURN_IF_ERROR(Fuse(graph, options, chain));
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
