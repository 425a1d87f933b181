#include "runtime/common_runtime/evaluate_constant.h"

#include <climits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// Ops whose value is never a constant of the graph: they read feeds or
// belong to v1 loops and conditionals (whose frames a lone run cannot
// reproduce). Stateful ops are refused through their OpDef.
bool IsNeverConstant(const Node& node) {
  static const std::set<std::string> kOps = {"Placeholder",
                                             "PlaceholderV2",
                                             "PlaceholderWithDefault",
                                             "Enter",
                                             "RefEnter",
                                             "Exit",
                                             "RefExit",
                                             "Merge",
                                             "RefMerge",
                                             "Switch",
                                             "RefSwitch",
                                             "NextIteration",
                                             "RefNextIteration",
                                             "LoopCond"};
  return node.IsStateful() || kOps.count(node.type_string()) > 0;
}

// A Shape, Size or Rank node as the Const its input's known shape makes it
// (same name and device); false when the shape leaves the value open.
bool ShapeOpAsConst(const Node& node, const ShapeRefiner* refiner, NodeDef* as_const) {
  const std::string& op = node.type_string();
  if (refiner == nullptr || (op != "Shape" && op != "Size" && op != "Rank")) return false;
  const Edge* input = nullptr;
  PartialTensorShape shape;
  if (!node.input_edge(0, &input).ok() ||
      !refiner->GetShape(input->src(), input->src_output(), &shape).ok()) {
    return false;
  }
  Tensor value;
  if (op == "Rank") {
    if (shape.unknown_rank()) return false;
    value = Tensor(DT_INT32, TensorShape({}));
    value.data<int32_t>()[0] = shape.dims();
  } else {
    TensorShape known;
    if (!shape.AsTensorShape(&known).ok()) return false;
    const DataType out_type = node.output_type(0);
    std::vector<int64_t> numbers;
    if (op == "Shape") {
      for (int i = 0; i < shape.dims(); ++i) numbers.push_back(shape.dim_size(i));
    } else {
      numbers.push_back(known.num_elements());
    }
    value = Tensor(out_type, op == "Shape" ? TensorShape({static_cast<int64_t>(numbers.size())})
                                           : TensorShape({}));
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (out_type == DT_INT64) {
        value.data<int64_t>()[i] = numbers[i];
      } else if (out_type == DT_INT32 && numbers[i] <= INT32_MAX) {
        value.data<int32_t>()[i] = static_cast<int32_t>(numbers[i]);
      } else {
        return false;  // too big for int32: the op itself reports that
      }
    }
  }
  as_const->set_name(node.name());
  as_const->set_op("Const");
  as_const->set_device(node.requested_device());
  SetAttrValue(value.dtype(), &(*as_const->mutable_attr())["dtype"]);
  SetAttrValue(value, &(*as_const->mutable_attr())["value"]);
  return true;
}

// The NodeDefs that compute `start`: its ancestors (itself included) in id
// order, a Shape/Size/Rank of known value standing as a Const without its
// inputs. False when one of them is never constant or there are too many.
bool ConstantSubgraph(const Node* start, const ShapeRefiner* refiner,
                      std::map<int, NodeDef>* nodes) {
  std::set<int> seen{start->id()};
  std::vector<const Node*> stack{start};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    NodeDef as_const;
    if (ShapeOpAsConst(*node, refiner, &as_const)) {
      (*nodes)[node->id()] = std::move(as_const);
      continue;
    }
    if (IsNeverConstant(*node)) return false;
    (*nodes)[node->id()] = Graph::NodeDefWithInputs(node);
    if (static_cast<int>(nodes->size()) > kMaxConstantSubgraphNodes) return false;
    for (const Edge* edge : node->in_edges()) {
      const Node* source = edge->src();
      if (source->IsOp() && seen.insert(source->id()).second) stack.push_back(source);
    }
  }
  return true;
}

}  // namespace

Status TryEvaluateConstant(const Graph& graph, const ShapeRefiner* refiner, NodeOutput output,
                           bool* evaluated, Tensor* result) {
  *evaluated = false;
  if (output.node == nullptr || output.index < 0 || output.index >= output.node->num_outputs()) {
    return errors::InvalidArgument("TryEvaluateConstant: no such output");
  }
  std::map<int, NodeDef> nodes;
  if (!ConstantSubgraph(output.node, refiner, &nodes)) return Status::OK();

  GraphDef subgraph;
  *subgraph.mutable_versions() = graph.versions();
  for (auto& [id, node_def] : nodes) *subgraph.add_node() = std::move(node_def);
  if (!graph.flib_def().empty()) *subgraph.mutable_library() = graph.flib_def().ToProto();

  std::unique_ptr<Session> session;
  TW_RETURN_IF_ERROR(NewSession(SessionOptions(), &session));
  TW_RETURN_IF_ERROR(session->Create(subgraph));
  std::vector<Tensor> outputs;
  Status run = session->Run({}, {StrCat(output.node->name(), ":", output.index)}, {}, &outputs);
  Status closed = session->Close();
  TW_RETURN_IF_ERROR(run);
  TW_RETURN_IF_ERROR(closed);
  *result = std::move(outputs.at(0));
  *evaluated = true;
  return Status::OK();
}

}  // namespace tensorweave
