// Arithmetic simplification, one walk in topological order:
// - constant push-down: (x + c1) + c2 → x + (c1 + c2), and the Sub and Mul
//   forms of it, so a chain of n additions of constants becomes one
//   addition and a chain of n - 1 constant additions that constant folding
//   then folds. Only when c1 and c2 have known shapes that broadcast
//   together (the new node then fails exactly where the old one would have
//   been the first to fail or not at all) and only for numeric dtypes
//   (string Add is concatenation and does not commute);
// - Identity removal: consumers read the Identity's input directly, unless
//   the Identity is fetched, preserved, waits on control inputs, reads a ref
//   (it snapshots a variable), follows a control-flow op (cond pivots), or
//   moves a tensor to another requested device;
// - x * 1, x + 0, x - 0 with a scalar constant, Cast to the same dtype,
//   Transpose by the identity permutation or by two permutations that
//   compose to it, Reshape to the shape the input already has (when the
//   shape functions know it): the node is bypassed like an Identity, or,
//   when fetched, becomes an Identity under its own name;
// - AddN with two or more constant inputs among others adds those in one
//   new constant AddN.
// RemoveRelayNoOps (TensorFlow's dependency optimization) is here too: a
// NoOp that nothing names and that joins few control edges is replaced by
// direct control edges; before that, control edges out of Consts without
// inputs go (such a Const runs as the step starts and changes nothing, so
// waiting for it orders nothing), and the Consts left unread with them.
#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/control_flow.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {
namespace {

bool IsPushDownType(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_HALF:
    case DT_BFLOAT16:
    case DT_INT32:
    case DT_INT64:
    case DT_INT16:
    case DT_INT8:
    case DT_UINT8:
    case DT_COMPLEX64:
    case DT_COMPLEX128:
      return true;
    default:
      return false;
  }
}

bool IsAdditive(const std::string& type) {
  return type == "Add" || type == "AddV2" || type == "Sub";
}

// Broadcast of two known shapes; false when they do not broadcast.
bool BroadcastShapes(const TensorShape& a, const TensorShape& b, TensorShape* out) {
  const int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    const int64_t da = ia < 0 ? 1 : a.dim_size(ia), db = ib < 0 ? 1 : b.dim_size(ib);
    if (da != db && da != 1 && db != 1) return false;
    dims[i] = da == 1 ? db : da;
  }
  return TensorShape::Build(dims, out).ok();
}

class ArithmeticSimplifier {
 public:
  ArithmeticSimplifier(const GraphOptimizerOptions& options, Graph* graph)
      : options_(options), graph_(graph) {}

  Status Run(bool* changed) {
    std::vector<Node*> order;
    TW_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));
    PrepareShapes(order);
    std::vector<int> ids;
    for (Node* node : order) {
      if (node->IsOp()) ids.push_back(node->id());
    }
    // Nodes are replaced as the walk goes, so it goes by id: a replaced
    // node's id no longer resolves, and its replacement needs no second look.
    for (int id : ids) {
      Node* node = graph_->FindNodeId(id);
      if (node == nullptr || MustKeep(node, options_)) continue;
      bool done = false;
      TW_RETURN_IF_ERROR(Simplify(node, &done));
      if (done) *changed = true;
    }
    if (!dead_candidates_.empty()) RemoveDeadNodes(graph_, options_, dead_candidates_);
    return Status::OK();
  }

 private:
  Status Simplify(Node* node, bool* done) {
    const std::string& type = node->type_string();
    if (type == "Identity") return RemoveIdentity(node, done);
    if (IsAdditive(type) || type == "Mul") {
      TW_RETURN_IF_ERROR(BypassNeutralConstant(node, done));
      if (*done) return Status::OK();
      return PushDownConstant(node, done);
    }
    if (type == "Cast") return BypassCast(node, done);
    if (type == "Transpose") return BypassTranspose(node, done);
    if (type == "Reshape") return BypassReshape(node, done);
    if (type == "AddN") return CombineAddNConstants(node, done);
    return Status::OK();
  }

  // --- constants --------------------------------------------------------------

  // A constant whose shape is known without evaluating it: a Const, or a
  // constant expression this pass built.
  bool ConstantShape(const Node* node, TensorShape* shape) const {
    auto built = built_shapes_.find(node->id());
    if (built != built_shapes_.end()) {
      *shape = built->second;
      return true;
    }
    if (!IsConstOp(node)) return false;
    const AttrValue* value = FindNodeAttr(node->def(), "value");
    return value != nullptr && TensorShape::FromProto(value->tensor().tensor_shape(), shape).ok();
  }

  // A scalar Const all of whose value is `number`.
  static bool IsScalarConstEqualTo(const Node* node, double number) {
    if (!IsConstOp(node)) return false;
    const AttrValue* attr = FindNodeAttr(node->def(), "value");
    if (attr == nullptr || attr->tensor().tensor_shape().dim_size() != 0) return false;
    Tensor value;
    if (!ConstValue(node, &value).ok() || value.NumElements() != 1) return false;
    switch (value.dtype()) {
      case DT_FLOAT:
        return value.scalar<float>() == static_cast<float>(number);
      case DT_DOUBLE:
        return value.scalar<double>() == number;
      case DT_INT32:
        return value.scalar<int32_t>() == static_cast<int32_t>(number);
      case DT_INT64:
        return value.scalar<int64_t>() == static_cast<int64_t>(number);
      default:
        return false;
    }
  }

  // --- bypassing -------------------------------------------------------------

  // `node` computes the same value as `input`: consumers read `input`
  // directly, or (fetched, or waiting on control inputs) `node` becomes an
  // Identity of it under its own name.
  Status Bypass(Node* node, NodeOutput input, bool* done) {
    if (node->output_type(0) != BaseType(input.node->output_type(input.index))) {
      return Status::OK();
    }
    if (MustKeepName(node) || !ControlInputs(node).empty()) {
      if (node->type_string() == "Identity") return Status::OK();
      NodeDef def;
      def.set_name(node->name());
      def.set_op("Identity");
      def.set_device(node->requested_device());
      SetAttrValue(node->output_type(0), &(*def.mutable_attr())["T"]);
      std::vector<int> inputs_of_node = InputIds(node);
      TW_RETURN_IF_ERROR(ReplaceNode(graph_, node, def, {input}, ControlInputs(node)));
      dead_candidates_.insert(dead_candidates_.end(), inputs_of_node.begin(), inputs_of_node.end());
      *done = true;
      return Status::OK();
    }
    std::vector<int> inputs_of_node = InputIds(node);
    TW_RETURN_IF_ERROR(ForwardConsumers(graph_, NodeOutput{node, 0}, input));
    graph_->RemoveNode(node);
    dead_candidates_.insert(dead_candidates_.end(), inputs_of_node.begin(), inputs_of_node.end());
    *done = true;
    return Status::OK();
  }

  static std::vector<int> InputIds(const Node* node) {
    std::vector<int> ids;
    for (const Edge* edge : node->in_edges()) {
      if (edge->src()->IsOp()) ids.push_back(edge->src()->id());
    }
    return ids;
  }

  Status RemoveIdentity(Node* node, bool* done) {
    NodeOutput input = DataInput(node, 0);
    if (input.node == nullptr || MustKeepName(node) || !ControlInputs(node).empty() ||
        IsRefType(input.node->output_type(input.index)) || IsControlFlowOp(input.node) ||
        input.node->requested_device() != node->requested_device()) {
      return Status::OK();
    }
    return Bypass(node, input, done);
  }

  Status BypassNeutralConstant(Node* node, bool* done) {
    const std::string& type = node->type_string();
    if (!IsPushDownType(node->output_type(0))) return Status::OK();
    const double neutral = type == "Mul" ? 1.0 : 0.0;
    NodeOutput a = DataInput(node, 0), b = DataInput(node, 1);
    if (a.node == nullptr || b.node == nullptr) return Status::OK();
    if (IsScalarConstEqualTo(b.node, neutral) && !IsConstOp(a.node)) return Bypass(node, a, done);
    if (type != "Sub" && IsScalarConstEqualTo(a.node, neutral) && !IsConstOp(b.node)) {
      return Bypass(node, b, done);
    }
    return Status::OK();
  }

  Status BypassCast(Node* node, bool* done) {
    if (node->input_type(0) != node->output_type(0)) return Status::OK();
    NodeOutput input = DataInput(node, 0);
    if (input.node == nullptr || IsRefType(input.node->output_type(input.index))) {
      return Status::OK();
    }
    return Bypass(node, input, done);
  }

  // The int permutation a Const holds; false otherwise.
  static bool Permutation(const Node* node, std::vector<int64_t>* perm) {
    if (node == nullptr || !IsConstOp(node)) return false;
    Tensor value;
    if (!ConstValue(node, &value).ok() || value.dims() != 1) return false;
    for (int64_t i = 0; i < value.NumElements(); ++i) {
      if (value.dtype() == DT_INT32) {
        perm->push_back(value.data<int32_t>()[i]);
      } else if (value.dtype() == DT_INT64) {
        perm->push_back(value.data<int64_t>()[i]);
      } else {
        return false;
      }
    }
    return true;
  }

  int KnownRank(NodeOutput output) const {
    PartialTensorShape shape;
    if (refiner_ == nullptr || !refiner_->GetShape(output.node, output.index, &shape).ok()) {
      return -1;
    }
    return shape.dims();
  }

  Status BypassTranspose(Node* node, bool* done) {
    NodeOutput input = DataInput(node, 0);
    std::vector<int64_t> perm;
    if (input.node == nullptr || !Permutation(DataInput(node, 1).node, &perm)) {
      return Status::OK();
    }
    const int rank = static_cast<int>(perm.size());
    bool identity = true;
    for (int i = 0; i < rank; ++i) identity = identity && perm[i] == i;
    if (identity) {
      if (KnownRank(input) != rank) return Status::OK();
      return Bypass(node, input, done);
    }
    // Transpose(Transpose(x, inner), perm) is x when inner[perm[i]] == i.
    std::vector<int64_t> inner;
    if (input.node->type_string() != "Transpose" ||
        !Permutation(DataInput(input.node, 1).node, &inner) ||
        static_cast<int>(inner.size()) != rank) {
      return Status::OK();
    }
    for (int i = 0; i < rank; ++i) {
      if (perm[i] < 0 || perm[i] >= rank || inner[perm[i]] != i) return Status::OK();
    }
    NodeOutput source = DataInput(input.node, 0);
    if (source.node == nullptr || KnownRank(source) != rank ||
        input.node->requested_device() != node->requested_device()) {
      return Status::OK();
    }
    return Bypass(node, source, done);
  }

  Status BypassReshape(Node* node, bool* done) {
    NodeOutput input = DataInput(node, 0);
    if (input.node == nullptr || refiner_ == nullptr) return Status::OK();
    PartialTensorShape in_shape, out_shape;
    if (!refiner_->GetShape(input.node, input.index, &in_shape).ok() ||
        !refiner_->GetShape(node, 0, &out_shape).ok() || !in_shape.IsFullyDefined() ||
        !out_shape.IsFullyDefined() || !(in_shape == out_shape)) {
      return Status::OK();
    }
    return Bypass(node, input, done);
  }

  // --- building constant expressions ------------------------------------------

  // A new node `op`(a, b) of dtype `dtype` on `device`, known to be constant
  // with shape `shape`.
  Status BuildConstantExpression(const std::string& op, DataType dtype, const Node* near,
                                 NodeOutput a, NodeOutput b, const TensorShape& shape,
                                 Node** built) {
    NodeDef def;
    def.set_name(graph_->NewName(near->name()));
    def.set_op(op);
    def.set_device(near->requested_device());
    SetAttrValue(dtype, &(*def.mutable_attr())["T"]);
    TW_RETURN_IF_ERROR(graph_->AddNode(def, built));
    (*built)->set_assigned_device_name(near->assigned_device_name());
    TW_RETURN_IF_ERROR(graph_->AddEdge(a.node, a.index, *built, 0));
    TW_RETURN_IF_ERROR(graph_->AddEdge(b.node, b.index, *built, 1));
    built_shapes_[(*built)->id()] = shape;
    return Status::OK();
  }

  // `node` = op(x, c) or op(c, x) with c constant of known shape.
  struct Split {
    NodeOutput x, c;
    TensorShape c_shape;
    bool constant_first = false;
  };
  bool SplitConstant(const Node* node, Split* split) const {
    NodeOutput a = DataInput(node, 0), b = DataInput(node, 1);
    if (a.node == nullptr || b.node == nullptr) return false;
    TensorShape shape_a, shape_b;
    const bool a_constant = ConstantShape(a.node, &shape_a);
    const bool b_constant = ConstantShape(b.node, &shape_b);
    if (a_constant == b_constant) return false;
    split->constant_first = a_constant;
    split->x = a_constant ? b : a;
    split->c = a_constant ? a : b;
    split->c_shape = a_constant ? shape_a : shape_b;
    return true;
  }

  Status PushDownConstant(Node* node, bool* done) {
    const std::string& type = node->type_string();
    const DataType dtype = node->output_type(0);
    if (!IsPushDownType(dtype)) return Status::OK();
    Split outer;
    if (!SplitConstant(node, &outer)) return Status::OK();
    Node* inner_node = outer.x.node;
    const std::string& inner_type = inner_node->type_string();
    const bool additive = IsAdditive(type);
    if (additive != IsAdditive(inner_type) || (!additive && inner_type != "Mul") ||
        inner_node->output_type(0) != dtype ||
        inner_node->requested_device() != node->requested_device() || inner_node->IsStateful()) {
      return Status::OK();
    }
    Split inner;
    if (!SplitConstant(inner_node, &inner)) return Status::OK();
    TensorShape combined_shape;
    if (!BroadcastShapes(inner.c_shape, outer.c_shape, &combined_shape)) return Status::OK();

    // inner = x*s_in + k_in; node = inner*s_out + k_out (additive), so
    // node = x*(s_in*s_out) + K with K built from c1 (inner) and c2 (outer).
    std::string result_op = "Mul", constant_op = "Mul";
    NodeOutput first = inner.c, second = outer.c;
    bool constant_minus_x = false;
    if (additive) {
      const bool inner_sub = inner_type == "Sub", outer_sub = type == "Sub";
      const int inner_sign = inner_sub && inner.constant_first ? -1 : 1;  // c1 - x
      const bool inner_minus_c = inner_sub && !inner.constant_first;      // x - c1
      const bool outer_minus_c = outer_sub && !outer.constant_first;      // X - c2
      const bool outer_c_minus = outer_sub && outer.constant_first;       // c2 - X
      // The constant part of `node`: k_in*s_out + k_out.
      if (outer_c_minus) {
        // c2 - (x*s + k1) = -s*x + (c2 - k1)
        constant_op = inner_minus_c ? "AddV2" : "Sub";  // k1 = -c1 or c1
        first = outer.c;
        second = inner.c;
        constant_minus_x = inner_sign == 1;
      } else if (outer_minus_c) {
        // (x*s + k1) - c2
        if (inner_minus_c) {
          constant_op = "AddV2";  // x - (c1 + c2)
          constant_minus_x = false;
        } else {
          constant_op = "Sub";  // k1 - c2
          constant_minus_x = inner_sign == -1;
        }
      } else {
        // (x*s + k1) + c2
        if (inner_minus_c) {
          constant_op = "Sub";  // c2 - c1
          first = outer.c;
          second = inner.c;
        } else {
          constant_op = "AddV2";
        }
        constant_minus_x = inner_sign == -1;
      }
      result_op = constant_minus_x ? "Sub" : "AddV2";
      if (!constant_minus_x && outer_minus_c && inner_minus_c) result_op = "Sub";
    }
    Node* constant = nullptr;
    TW_RETURN_IF_ERROR(BuildConstantExpression(constant_op, dtype, node, first, second,
                                               combined_shape, &constant));
    std::vector<NodeOutput> inputs = {inner.x, NodeOutput{constant, 0}};
    if (constant_minus_x) std::swap(inputs[0], inputs[1]);
    dead_candidates_.push_back(inner_node->id());
    if (result_op == type) {
      TW_RETURN_IF_ERROR(Rewire(node, inputs));
    } else {
      NodeDef def;
      def.set_name(node->name());
      def.set_op(result_op);
      def.set_device(node->requested_device());
      SetAttrValue(dtype, &(*def.mutable_attr())["T"]);
      TW_RETURN_IF_ERROR(ReplaceNode(graph_, node, def, inputs, ControlInputs(node)));
    }
    *done = true;
    return Status::OK();
  }

  // `node` reads `inputs` instead of its data inputs. When a push-down keeps
  // the op (the usual (x + c1) + c2 → x + c), the node stays as it is, with
  // its consumers and control inputs, rather than being removed and added
  // again: in a chain of n such steps that was most of the pass.
  Status Rewire(Node* node, const std::vector<NodeOutput>& inputs) {
    for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
      const Edge* old_edge = nullptr;
      TW_RETURN_IF_ERROR(node->input_edge(i, &old_edge));
      graph_->RemoveEdge(old_edge);
      TW_RETURN_IF_ERROR(graph_->AddEdge(inputs[i].node, inputs[i].index, node, i));
    }
    return Status::OK();
  }

  Status CombineAddNConstants(Node* node, bool* done) {
    if (!IsPushDownType(node->output_type(0)) || node->num_inputs() < 3) return Status::OK();
    std::vector<NodeOutput> constants, others;
    TensorShape shape, first_shape;
    for (int i = 0; i < node->num_inputs(); ++i) {
      NodeOutput input = DataInput(node, i);
      if (input.node == nullptr) return Status::OK();
      if (ConstantShape(input.node, &shape)) {
        if (!constants.empty() && shape != first_shape) return Status::OK();
        first_shape = shape;
        constants.push_back(input);
      } else {
        others.push_back(input);
      }
    }
    if (constants.size() < 2 || others.empty()) return Status::OK();
    NodeDef sum_def;
    sum_def.set_name(graph_->NewName(node->name()));
    sum_def.set_op("AddN");
    sum_def.set_device(node->requested_device());
    SetAttrValue(node->output_type(0), &(*sum_def.mutable_attr())["T"]);
    SetAttrValue(static_cast<int64_t>(constants.size()), &(*sum_def.mutable_attr())["N"]);
    Node* sum = nullptr;
    TW_RETURN_IF_ERROR(graph_->AddNode(sum_def, &sum));
    sum->set_assigned_device_name(node->assigned_device_name());
    for (size_t i = 0; i < constants.size(); ++i) {
      TW_RETURN_IF_ERROR(
          graph_->AddEdge(constants[i].node, constants[i].index, sum, static_cast<int>(i)));
    }
    built_shapes_[sum->id()] = first_shape;
    others.push_back(NodeOutput{sum, 0});
    NodeDef def = node->def();
    def.clear_input();
    SetAttrValue(static_cast<int64_t>(others.size()), &(*def.mutable_attr())["N"]);
    TW_RETURN_IF_ERROR(ReplaceNode(graph_, node, def, others, ControlInputs(node)));
    *done = true;
    return Status::OK();
  }

  void PrepareShapes(const std::vector<Node*>& order) {
    bool wanted = false;
    for (Node* node : order) {
      const std::string& type = node->type_string();
      if (type == "Reshape" || type == "Transpose") wanted = true;
    }
    if (!wanted) return;
    refiner_ = std::make_unique<ShapeRefiner>(*graph_);
    for (Node* node : order) {
      if (node->IsOp()) (void)refiner_->AddNode(node);  // an unknown shape only means less folds
    }
  }

  const GraphOptimizerOptions& options_;
  Graph* graph_;
  std::unique_ptr<ShapeRefiner> refiner_;
  std::unordered_map<int, TensorShape> built_shapes_;  // constant expressions built here
  std::vector<int> dead_candidates_;
};

}  // namespace

Status SimplifyArithmetic(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  ArithmeticSimplifier simplifier(options, graph);
  return simplifier.Run(changed);
}

namespace {

// Keras' frozen graphs hang every former variable read, now a Const, on the
// output's Identity by a control edge: 262 of MobileNetV2's Consts ran on
// each step only to release it. True when an edge went.
bool DropControlEdgesFromSourceConsts(const GraphOptimizerOptions& options, Graph* graph) {
  std::vector<const Edge*> edges;
  std::vector<int> freed;
  for (Node* node : graph->op_nodes()) {
    if (!IsConstOp(node)) continue;
    bool has_inputs = false;
    for (const Edge* edge : node->in_edges()) has_inputs |= !edge->src()->IsSource();
    if (has_inputs) continue;  // e.g. a loop's constant, which waits for its frame
    const size_t before = edges.size();
    for (const Edge* edge : node->out_edges()) {
      if (edge->IsControlEdge() && !edge->dst()->IsSink()) edges.push_back(edge);
    }
    if (edges.size() > before) freed.push_back(node->id());
  }
  for (const Edge* edge : edges) graph->RemoveEdge(edge);
  RemoveDeadNodes(graph, options, freed);
  return !edges.empty();
}

}  // namespace

Status RemoveRelayNoOps(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  if (DropControlEdgesFromSourceConsts(options, graph)) *changed = true;
  for (Node* node : graph->op_nodes()) {
    if (node->type_string() != "NoOp" || MustKeep(node, options)) continue;
    std::vector<Node*> sources = ControlInputs(node), sinks;
    for (const Edge* edge : node->out_edges()) {
      if (!edge->dst()->IsSink()) sinks.push_back(edge->dst());
    }
    if (sinks.empty()) continue;  // pruning kept it for a reason we cannot see
    // TensorFlow's rule: replacing is worth it when it adds no edges.
    const size_t before = sources.size() + sinks.size();
    if (sources.size() * sinks.size() > before) continue;
    bool same_device = true;
    for (Node* other : sources)
      same_device &= other->requested_device() == node->requested_device();
    for (Node* other : sinks) same_device &= other->requested_device() == node->requested_device();
    if (!same_device) continue;
    for (Node* source : sources) {
      for (Node* sink : sinks) graph->AddControlEdge(source, sink);
    }
    graph->RemoveNode(node);
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
