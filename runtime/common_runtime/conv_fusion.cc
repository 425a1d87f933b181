// The Conv2D / MatMul + BiasAdd (+ Add) (+ activation) fusion pass
// (conv_fusion.h).
#include "runtime/common_runtime/conv_fusion.h"

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {
namespace {

bool IsActivation(const Node* node) {
  const std::string& op = node->type_string();
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu";
}

std::string AttrString(const Node* node, const char* name, const std::string& otherwise) {
  std::string value;
  return GetNodeAttr(node->def(), name, &value).ok() ? value : otherwise;
}

// The only edge out of `node` when the node can disappear into a fusion:
// one data edge out (from output 0), no control edges out other than the
// graph's SINK hookup, not protected. Null otherwise.
const Edge* SoleConsumerEdge(const Node* node,
                             const std::unordered_set<std::string>& protected_nodes) {
  if (protected_nodes.count(node->name()) != 0) return nullptr;
  const Edge* only = nullptr;
  for (const Edge* edge : node->out_edges()) {
    if (edge->IsControlEdge()) {
      if (edge->dst()->IsSink()) continue;
      return nullptr;
    }
    if (only != nullptr || edge->src_output() != 0) return nullptr;
    only = edge;
  }
  return only;
}

// The consumer of that edge when it reads the node as its input 0.
Node* SoleConsumer(const Node* node, const std::unordered_set<std::string>& protected_nodes) {
  const Edge* only = SoleConsumerEdge(node, protected_nodes);
  return only != nullptr && only->dst_input() == 0 ? only->dst() : nullptr;
}

// A chain to fuse: the Conv2D, DepthwiseConv2dNative or MatMul, its
// BiasAdd, a Conv2D's AddV2/Add of another tensor (or null) with the input
// slot that tensor comes in on, the activation (or null).
struct Chain {
  Node* head;
  Node* bias_add;
  Node* add = nullptr;
  int addend_slot = -1;
  Node* activation = nullptr;
  Node* last() const {
    return activation != nullptr ? activation : add != nullptr ? add : bias_add;
  }
};

bool SameType(const Node* a, const Node* b) {
  DataType ta = DT_INVALID, tb = DT_INVALID;
  return GetNodeAttr(a->def(), "T", &ta).ok() && GetNodeAttr(b->def(), "T", &tb).ok() && ta == tb;
}

// The chain starting at `head` when it can be fused.
bool FindChain(Node* head, const std::unordered_set<std::string>& protected_nodes, Chain* chain) {
  const bool depthwise = head->type_string() == "DepthwiseConv2dNative";
  const bool conv = head->type_string() == "Conv2D" || depthwise;
  if (!conv && head->type_string() != "MatMul") return false;
  DataType dtype = DT_INVALID;
  // The fused ops' types: float and double convolutions, float products.
  if (!GetNodeAttr(head->def(), "T", &dtype).ok() ||
      !(dtype == DT_FLOAT || (conv && dtype == DT_DOUBLE))) {
    return false;
  }
  Node* bias_add = SoleConsumer(head, protected_nodes);
  if (bias_add == nullptr || bias_add->type_string() != "BiasAdd" || !SameType(head, bias_add)) {
    return false;
  }
  // The bias runs over the convolution's channel dimension.
  const std::string bias_format = AttrString(bias_add, "data_format", "NHWC");
  const std::string conv_format = conv ? AttrString(head, "data_format", "NHWC") : "NHWC";
  if (bias_format != conv_format) return false;
  *chain = Chain{head, bias_add};
  const Edge* out = SoleConsumerEdge(bias_add, protected_nodes);
  Node* next = out != nullptr ? out->dst() : nullptr;
  // TensorFlow's contraction + bias + add (+ activation), for Conv2D: the
  // other operand's shape is checked later (AddsOfSameShape).
  const bool add =
      next != nullptr && (next->type_string() == "AddV2" || next->type_string() == "Add");
  if (add && head->type_string() == "Conv2D" && SameType(head, next)) {
    chain->add = next;
    chain->addend_slot = 1 - out->dst_input();
    next = SoleConsumer(next, protected_nodes);
  } else if (out == nullptr || out->dst_input() != 0) {
    next = nullptr;
  }
  if (next != nullptr && IsActivation(next) && SameType(head, next)) chain->activation = next;
  return true;
}

// Ops whose output 0 has the batch (dimension 0) of their input 0.
bool KeepsBatch(const std::string& op) {
  static const std::unordered_set<std::string> kOps = {
      "Identity",       "Relu",
      "Relu6",          "Elu",
      "LeakyRelu",      "Sigmoid",
      "Tanh",           "BiasAdd",
      "Conv2D",         "DepthwiseConv2dNative",
      "MaxPool",        "AvgPool",
      "FusedBatchNorm", "FusedBatchNormV3",
      "_FusedConv2D",   "_FusedDepthwiseConv2dNative"};
  return kOps.count(op) != 0;
}

// The tensor whose dimension 0 `output` provably shares, a symbolic stand-in
// for an unknown batch size (TensorFlow's remapper compares shapes
// symbolically, so a graph fed [?, h, w, c] still fuses): followed back
// through ops that keep the batch, and through a binary op whose two inputs
// lead to the same tensor (broadcasting d with d gives d). `memo` by node.
NodeOutput BatchSource(NodeOutput output, std::unordered_map<const Node*, NodeOutput>* memo) {
  if (output.node == nullptr || output.index != 0) return output;
  const auto found = memo->find(output.node);
  if (found != memo->end()) return found->second;
  NodeOutput source = output;
  const std::string& op = output.node->type_string();
  if (KeepsBatch(op)) {
    source = BatchSource(DataInput(output.node, 0), memo);
  } else if (op == "AddV2" || op == "Add" || op == "Mul" || op == "Sub") {
    const NodeOutput a = BatchSource(DataInput(output.node, 0), memo);
    const NodeOutput b = BatchSource(DataInput(output.node, 1), memo);
    if (a.node != nullptr && a.node == b.node && a.index == b.index) source = a;
  }
  (*memo)[output.node] = source;
  return source;
}

// Whether the shapes are equal: the same rank, every dimension known and
// equal, except a dimension 0 unknown in both whose tensors share it
// (BatchSource).
bool SameShape(const PartialTensorShape& a, NodeOutput a_output, const PartialTensorShape& b,
               NodeOutput b_output, std::unordered_map<const Node*, NodeOutput>* memo) {
  if (a.dims() < 0 || a.dims() != b.dims()) return false;
  for (int i = 0; i < a.dims(); ++i) {
    if (a.dim_size(i) >= 0 && a.dim_size(i) == b.dim_size(i)) continue;
    if (i != 0 || a.dim_size(i) >= 0 || b.dim_size(i) >= 0) return false;
    const NodeOutput a_source = BatchSource(a_output, memo);
    const NodeOutput b_source = BatchSource(b_output, memo);
    if (a_source.node == nullptr || a_source.node != b_source.node ||
        a_source.index != b_source.index) {
      return false;
    }
  }
  return true;
}

// Keeps the Add of the chains whose two operands have the same shape in
// the graph (SameShape: the fused kernel adds without broadcasting), each
// Add in one chain only; the others stop at their BiasAdd. Shapes are inferred once, before any
// fusion, and only when some chain has an Add.
void KeepAddsOfSameShape(const Graph& graph, std::vector<Chain>* chains) {
  bool any = false;
  for (const Chain& chain : *chains) any |= chain.add != nullptr;
  if (!any) return;
  std::vector<Node*> order;
  std::unique_ptr<ShapeRefiner> refiner;
  if (TopologicalOrder(graph, &order).ok()) {
    refiner = std::make_unique<ShapeRefiner>(graph);
    // A node whose shape fails to infer only leaves its consumers unknown.
    for (Node* node : order) {
      if (node->IsOp()) (void)refiner->AddNode(node);
    }
  }
  std::unordered_map<const Node*, NodeOutput> batch_sources;
  // An Add of two convolutions' BiasAdds (a ResNet block whose shortcut is
  // a convolution) ends both chains: only the first takes it in, the other
  // becomes its addend.
  std::unordered_set<const Node*> taken;
  for (Chain& chain : *chains) {
    if (chain.add == nullptr) continue;
    const NodeOutput addend = DataInput(chain.add, chain.addend_slot);
    PartialTensorShape sum_shape, addend_shape;
    const bool same =
        refiner != nullptr && addend.node != nullptr &&
        refiner->GetShape(chain.bias_add, 0, &sum_shape).ok() &&
        refiner->GetShape(addend.node, addend.index, &addend_shape).ok() &&
        SameShape(sum_shape, NodeOutput{chain.bias_add, 0}, addend_shape, addend, &batch_sources) &&
        taken.insert(chain.add).second;
    if (!same) {
      chain.add = nullptr;
      chain.addend_slot = -1;
      chain.activation = nullptr;
    }
  }
}

// The fused node's NodeDef: the head's attrs, the fused ops, the last
// node's name and device. A convolution whose filter is a Const is marked
// _filter_is_const, so that its kernel reorders the filter for oneDNN once
// (kernels/fused_conv_ops.cc); the signature's feeds were rewritten before
// the optimizer runs, so a Const here is never fed.
NodeDef FusedNodeDef(const Chain& chain) {
  const std::string& head_op = chain.head->type_string();
  const bool conv = head_op == "Conv2D";
  const bool depthwise = head_op == "DepthwiseConv2dNative";
  NodeDef def;
  def.set_name(chain.last()->name());
  def.set_op(conv ? "_FusedConv2D" : depthwise ? "_FusedDepthwiseConv2dNative" : "_FusedMatMul");
  def.set_device(chain.last()->requested_device());
  const char* const kConvAttrs[] = {
      "T",           "strides",   "padding",         "explicit_paddings",
      "data_format", "dilations", "use_cudnn_on_gpu"};
  const char* const kDepthwiseAttrs[] = {"T",           "strides",  "padding", "explicit_paddings",
                                         "data_format", "dilations"};
  const char* const kMatMulAttrs[] = {"T", "transpose_a", "transpose_b"};
  auto copy = [&](const char* name) {
    const AttrValue* value = FindNodeAttr(chain.head->def(), name);
    if (value != nullptr) (*def.mutable_attr())[name] = *value;
  };
  if (conv) {
    for (const char* name : kConvAttrs) copy(name);
  } else if (depthwise) {
    for (const char* name : kDepthwiseAttrs) copy(name);
  } else {
    for (const char* name : kMatMulAttrs) copy(name);
  }
  auto& attrs = *def.mutable_attr();
  SetAttrValue(int64_t{chain.add != nullptr ? 2 : 1}, &attrs["num_args"]);
  if (conv) {
    attrs["TArgs"].mutable_list()->add_type(attrs["T"].type());
    if (chain.add != nullptr) attrs["TArgs"].mutable_list()->add_type(attrs["T"].type());
    const Edge* filter = nullptr;
    if (chain.head->input_edge(1, &filter).ok() && IsConstOp(filter->src())) {
      SetAttrValue(true, &attrs["_filter_is_const"]);
    }
  }
  AttrValue::ListValue* fused_ops = attrs["fused_ops"].mutable_list();
  fused_ops->add_s("BiasAdd");
  if (chain.add != nullptr) fused_ops->add_s("Add");
  float alpha = 0.2f;
  if (chain.activation != nullptr) {
    fused_ops->add_s(chain.activation->type_string());
    if (chain.activation->type_string() == "LeakyRelu") {
      GetNodeAttr(chain.activation->def(), "alpha", &alpha).ok();
    }
  }
  SetAttrValue(alpha, &attrs["leakyrelu_alpha"]);
  SetAttrValue(0.0001f, &attrs["epsilon"]);
  return def;
}

struct Endpoint {
  Node* node;
  int slot;
};

Status Fuse(Graph* graph, const Chain& chain) {
  const NodeDef def = FusedNodeDef(chain);
  // What feeds the chain and what the last node feeds, before any removal.
  const Edge* input = nullptr;
  const Edge* filter = nullptr;
  const Edge* bias = nullptr;
  TW_RETURN_IF_ERROR(chain.head->input_edge(0, &input));
  TW_RETURN_IF_ERROR(chain.head->input_edge(1, &filter));
  TW_RETURN_IF_ERROR(chain.bias_add->input_edge(1, &bias));
  std::vector<Endpoint> inputs = {{input->src(), input->src_output()},
                                  {filter->src(), filter->src_output()},
                                  {bias->src(), bias->src_output()}};
  if (chain.add != nullptr) {
    // Read now, not when the chain was found: an earlier fusion may have
    // replaced its source (the previous residual block's last node).
    const Edge* addend = nullptr;
    TW_RETURN_IF_ERROR(chain.add->input_edge(chain.addend_slot, &addend));
    inputs.push_back({addend->src(), addend->src_output()});
  }
  std::vector<Node*> control_inputs;
  for (Node* node : {chain.head, chain.bias_add, chain.add, chain.activation}) {
    if (node == nullptr) continue;
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge() && !edge->src()->IsSource()) control_inputs.push_back(edge->src());
    }
  }
  std::vector<Endpoint> data_consumers;
  std::vector<Node*> control_consumers;
  for (const Edge* edge : chain.last()->out_edges()) {
    if (edge->IsControlEdge()) {
      if (!edge->dst()->IsSink()) control_consumers.push_back(edge->dst());
    } else {
      data_consumers.push_back({edge->dst(), edge->dst_input()});
    }
  }
  graph->RemoveNode(chain.head);
  graph->RemoveNode(chain.bias_add);
  if (chain.add != nullptr) graph->RemoveNode(chain.add);
  if (chain.activation != nullptr) graph->RemoveNode(chain.activation);
  Node* fused = nullptr;
  TW_RETURN_IF_ERROR(graph->AddNode(def, &fused));
  for (size_t i = 0; i < inputs.size(); ++i) {
    TW_RETURN_IF_ERROR(graph->AddEdge(inputs[i].node, inputs[i].slot, fused, static_cast<int>(i)));
  }
  for (Node* node : control_inputs) graph->AddControlEdge(node, fused);
  for (const Endpoint& consumer : data_consumers) {
    TW_RETURN_IF_ERROR(graph->AddEdge(fused, 0, consumer.node, consumer.slot));
  }
  for (Node* node : control_consumers) graph->AddControlEdge(fused, node);
  return Status::OK();
}

// The spatial paddings [top, bottom, left, right] of a Pad whose paddings
// are a Const [4, 2] that pads neither the batch nor the channels (NHWC).
bool SpatialPaddings(const Node* pad, std::vector<int64_t>* spatial) {
  const NodeOutput paddings = DataInput(pad, 1);
  Tensor value;
  if (paddings.node == nullptr || !IsConstOp(paddings.node) ||
      !ConstValue(paddings.node, &value).ok() || value.dims() != 2 || value.dim_size(0) != 4 ||
      value.dim_size(1) != 2) {
    return false;
  }
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 8; ++i) {
    all.push_back(value.dtype() == DT_INT64   ? value.data<int64_t>()[i]
                  : value.dtype() == DT_INT32 ? value.data<int32_t>()[i]
                                              : -1);
    if (all.back() < 0) return false;
  }
  if (all[0] != 0 || all[1] != 0 || all[6] != 0 || all[7] != 0) return false;
  *spatial = {all[2], all[3], all[4], all[5]};
  return true;
}

// Pad (zeros, spatial only) -> Conv2D or DepthwiseConv2dNative with VALID
// padding, NHWC, the Pad read by nothing else: the convolution takes the
// Pad's input with EXPLICIT padding instead (the zeros it would have read
// are the ones explicit padding supplies), saving a copy of the whole
// input (MobileNetV2's stride-2 depthwise blocks, ResNet50's stem).
Status FoldPadsIntoConvolutions(Graph* graph,
                                const std::unordered_set<std::string>& protected_nodes,
                                bool* changed) {
  std::vector<int> ids;  // by id: folding removes nodes
  for (const Node* node : graph->op_nodes()) ids.push_back(node->id());
  for (int id : ids) {
    Node* conv = graph->FindNodeId(id);
    if (conv == nullptr) continue;
    const std::string& type = conv->type_string();
    if (type != "Conv2D" && type != "DepthwiseConv2dNative") continue;
    DataType dtype = DT_INVALID;
    if (!GetNodeAttr(conv->def(), "T", &dtype).ok() || (dtype != DT_FLOAT && dtype != DT_DOUBLE)) {
      continue;
    }
    if (AttrString(conv, "padding", "") != "VALID" ||
        AttrString(conv, "data_format", "NHWC") != "NHWC") {
      continue;
    }
    const NodeOutput padded = DataInput(conv, 0);
    Node* pad = padded.node;
    std::vector<int64_t> spatial;
    if (pad == nullptr || pad->type_string() != "Pad" ||
        SoleConsumer(pad, protected_nodes) != conv || !SpatialPaddings(pad, &spatial)) {
      continue;
    }
    const NodeOutput source = DataInput(pad, 0);
    if (source.node == nullptr) continue;
    // The convolution again under its name, with the new padding, reading
    // the Pad's input (Node attrs are not edited in place: rebuilt).
    NodeDef def = conv->def();
    def.clear_input();
    AttrValue& explicit_paddings = (*def.mutable_attr())["explicit_paddings"];
    explicit_paddings.mutable_list()->Clear();
    for (int64_t value : {int64_t{0}, int64_t{0}, spatial[0], spatial[1], spatial[2], spatial[3],
                          int64_t{0}, int64_t{0}}) {
      explicit_paddings.mutable_list()->add_i(value);
    }
    SetAttrValue(std::string("EXPLICIT"), &(*def.mutable_attr())["padding"]);
    const NodeOutput filter = DataInput(conv, 1);
    if (filter.node == nullptr) continue;
    std::vector<Node*> controls = ControlInputs(pad);
    for (Node* control : ControlInputs(conv)) controls.push_back(control);
    std::vector<Endpoint> consumers;
    std::vector<Node*> control_consumers;
    for (const Edge* edge : conv->out_edges()) {
      if (edge->IsControlEdge()) {
        if (!edge->dst()->IsSink()) control_consumers.push_back(edge->dst());
      } else {
        consumers.push_back({edge->dst(), edge->dst_input()});
      }
    }
    const NodeOutput paddings = DataInput(pad, 1);
    graph->RemoveNode(conv);
    graph->RemoveNode(pad);
    Node* folded = nullptr;
    TW_RETURN_IF_ERROR(graph->AddNode(def, &folded));
    TW_RETURN_IF_ERROR(graph->AddEdge(source.node, source.index, folded, 0));
    TW_RETURN_IF_ERROR(graph->AddEdge(filter.node, filter.index, folded, 1));
    for (Node* control : controls) graph->AddControlEdge(control, folded);
    for (const Endpoint& consumer : consumers) {
      TW_RETURN_IF_ERROR(graph->AddEdge(folded, 0, consumer.node, consumer.slot));
    }
    for (Node* node : control_consumers) graph->AddControlEdge(folded, node);
    if (paddings.node != nullptr && protected_nodes.count(paddings.node->name()) == 0) {
      bool read = false;
      for (const Edge* edge : paddings.node->out_edges()) read |= !edge->dst()->IsSink();
      if (!read) graph->RemoveNode(paddings.node);
    }
    *changed = true;
  }
  return Status::OK();
}

}  // namespace

Status FuseConvBiasActivation(Graph* graph, const std::unordered_set<std::string>& protected_nodes,
                              bool* changed) {
  *changed = false;
  TW_RETURN_IF_ERROR(FoldPadsIntoConvolutions(graph, protected_nodes, changed));
  // Chains are found first and fused after: fusing removes nodes.
  std::vector<Chain> chains;
  for (Node* node : graph->op_nodes()) {
    Chain chain;
    if (FindChain(node, protected_nodes, &chain)) chains.push_back(chain);
  }
  KeepAddsOfSameShape(*graph, &chains);
  for (const Chain& chain : chains) {
    TW_RETURN_IF_ERROR(Fuse(graph, chain));
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
