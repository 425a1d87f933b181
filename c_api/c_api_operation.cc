// Building operations: TF_NewOperation, inputs and attribute setters collect
// the arguments of tensorweave::BuildNode, which TF_FinishOperation calls.
// TF_UpdateEdge rewires an input of an operation already in the graph (the
// back edge of a while loop).
#include <cstring>
#include <utility>

#include "c_api/c_api_internal.h"
#include "runtime/framework/node_def_util.h"

using tensorweave::AttrValue;
using tensorweave::DataType;
using tensorweave::Edge;
using tensorweave::Node;
using tensorweave::PartialTensorShape;
using tensorweave::Status;
using tensorweave::Tensor;
using tensorweave::TensorShapeProto;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// The attr `name` of `desc`, created empty (replacing an earlier value).
AttrValue* NewAttr(TF_OperationDescription* desc, const char* name) {
  AttrValue* value = &(*desc->node_def.mutable_attr())[name ? name : ""];
  value->Clear();
  return value;
}

// Records the first error of a setter that has no TF_Status.
void Fail(TF_OperationDescription* desc, Status status) { desc->status.Update(status); }

// True when `num_values` is a usable list length; records an error if not.
bool CheckListLength(TF_OperationDescription* desc, const char* attr_name, int num_values,
                     const void* values) {
  if (num_values < 0 || (num_values > 0 && values == nullptr)) {
    Fail(desc, errors::InvalidArgument("Attr '", attr_name ? attr_name : "", "' of operation '",
                                       desc->node_def.name(), "' has an invalid list (length ",
                                       num_values, ")"));
    return false;
  }
  return true;
}

// A shape from C arguments: `num_dims` -1 is an unknown rank.
bool ShapeProtoFromDims(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims,
                        int num_dims, TensorShapeProto* out) {
  if (num_dims == -1) {
    out->set_unknown_rank(true);
    return true;
  }
  if (!CheckListLength(desc, attr_name, num_dims, dims)) return false;
  for (int i = 0; i < num_dims; ++i) out->add_dim()->set_size(dims[i]);
  return true;
}

// Copies a TF_Tensor's value into a TensorProto.
Status TensorProtoFromC(const TF_Tensor* value, tensorweave::TensorProto* out) {
  if (value == nullptr) return errors::InvalidArgument("The tensor is NULL");
  Tensor tensor;
  TW_RETURN_IF_ERROR(c_api::TensorFromC(*value, &tensor));
  tensor.AsProtoTensorContent(out);
  return Status::OK();
}

// The runtime's name for a C tensor handle.
tensorweave::NodeOutput ToNodeOutput(const TF_Output& output) {
  return {c_api::ToNode(output.oper), output.index};
}

// Adds the described operation to its graph (`lock_graph`: under the
// graph's lock; TF_FinishOperationLocked's caller holds it) and frees `desc`.
TF_Operation* FinishOperation(TF_OperationDescription* desc, TF_Status* status, bool lock_graph) {
  std::unique_ptr<TF_OperationDescription> owned(desc);
  return c_api::Guard(status, static_cast<TF_Operation*>(nullptr), [&]() -> TF_Operation* {
    if (desc == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_FinishOperation: description is NULL"));
      return nullptr;
    }
    if (!desc->status.ok()) {
      c_api::Set(status, desc->status);
      return nullptr;
    }
    if (!desc->colocation_constraints.empty()) {
      AttrValue* classes = NewAttr(desc, "_class");
      for (const std::string& constraint : desc->colocation_constraints) {
        classes->mutable_list()->add_s(constraint);
      }
    }
    std::unique_lock<std::mutex> lock(desc->graph->mu, std::defer_lock);
    if (lock_graph) lock.lock();
    Node* node = nullptr;
    Status added = tensorweave::BuildNode(desc->node_def, desc->inputs, &desc->graph->graph,
                                          &desc->graph->refiner, &node);
    c_api::Set(status, added);
    return added.ok() ? c_api::ToOperation(node) : nullptr;
  });
}

}  // namespace

extern "C" {

TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type,
                                         const char* oper_name) {
  return c_api::Guard(nullptr, static_cast<TF_OperationDescription*>(nullptr), [&] {
    auto* desc = new TF_OperationDescription;
    desc->graph = graph;
    desc->node_def.set_op(op_type ? op_type : "");
    desc->node_def.set_name(oper_name ? oper_name : "");
    return desc;
  });
}

void TF_SetDevice(TF_OperationDescription* desc, const char* device) {
  c_api::GuardVoid(nullptr, [&] { desc->node_def.set_device(device ? device : ""); });
}

void TF_AddInput(TF_OperationDescription* desc, TF_Output input) {
  c_api::GuardVoid(nullptr, [&] {
    if (input.oper == nullptr) {
      return Fail(desc, errors::InvalidArgument("An input of operation '", desc->node_def.name(),
                                                "' is NULL"));
    }
    desc->inputs.arguments.push_back({{ToNodeOutput(input)}, /*is_list=*/false});
  });
}

void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs, int num_inputs) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, "(input list)", num_inputs, inputs)) return;
    tensorweave::BuildNodeInputs::Argument argument;
    argument.is_list = true;
    for (int i = 0; i < num_inputs; ++i) {
      if (inputs[i].oper == nullptr) {
        return Fail(desc, errors::InvalidArgument("An input of operation '", desc->node_def.name(),
                                                  "' is NULL"));
      }
      argument.tensors.push_back(ToNodeOutput(inputs[i]));
    }
    desc->inputs.arguments.push_back(std::move(argument));
  });
}

void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input) {
  c_api::GuardVoid(nullptr, [&] {
    if (input == nullptr) {
      return Fail(desc, errors::InvalidArgument("A control input of operation '",
                                                desc->node_def.name(), "' is NULL"));
    }
    desc->inputs.control_inputs.push_back(c_api::ToNode(input));
  });
}

void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name, const void* value,
                      size_t length) {
  c_api::GuardVoid(nullptr, [&] {
    NewAttr(desc, attr_name)->set_s(length ? static_cast<const char*>(value) : "", length);
  });
}

void TF_SetAttrStringList(TF_OperationDescription* desc, const char* attr_name,
                          const void* const* values, const size_t* lengths, int num_values) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_values, values)) return;
    AttrValue::ListValue* list = NewAttr(desc, attr_name)->mutable_list();
    for (int i = 0; i < num_values; ++i) {
      list->add_s(lengths[i] ? static_cast<const char*>(values[i]) : "", lengths[i]);
    }
  });
}

void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name, int64_t value) {
  c_api::GuardVoid(nullptr, [&] { NewAttr(desc, attr_name)->set_i(value); });
}

void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name, const int64_t* values,
                       int num_values) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_values, values)) return;
    AttrValue::ListValue* list = NewAttr(desc, attr_name)->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_i(values[i]);
  });
}

void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name, float value) {
  c_api::GuardVoid(nullptr, [&] { NewAttr(desc, attr_name)->set_f(value); });
}

void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name, const float* values,
                         int num_values) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_values, values)) return;
    AttrValue::ListValue* list = NewAttr(desc, attr_name)->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_f(values[i]);
  });
}

void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name, unsigned char value) {
  c_api::GuardVoid(nullptr, [&] { NewAttr(desc, attr_name)->set_b(value != 0); });
}

void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name,
                        const unsigned char* values, int num_values) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_values, values)) return;
    AttrValue::ListValue* list = NewAttr(desc, attr_name)->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_b(values[i] != 0);
  });
}

void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name, TF_DataType value) {
  c_api::GuardVoid(nullptr,
                   [&] { NewAttr(desc, attr_name)->set_type(static_cast<DataType>(value)); });
}

void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name,
                        const TF_DataType* values, int num_values) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_values, values)) return;
    AttrValue::ListValue* list = NewAttr(desc, attr_name)->mutable_list();
    for (int i = 0; i < num_values; ++i) list->add_type(static_cast<DataType>(values[i]));
  });
}

void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name, const int64_t* dims,
                     int num_dims) {
  c_api::GuardVoid(nullptr, [&] {
    TensorShapeProto shape;
    if (!ShapeProtoFromDims(desc, attr_name, dims, num_dims, &shape)) return;
    *NewAttr(desc, attr_name)->mutable_shape() = std::move(shape);
  });
}

void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name,
                         const int64_t* const* dims, const int* num_dims, int num_shapes) {
  c_api::GuardVoid(nullptr, [&] {
    if (!CheckListLength(desc, attr_name, num_shapes, num_dims)) return;
    AttrValue value;
    for (int i = 0; i < num_shapes; ++i) {
      if (!ShapeProtoFromDims(desc, attr_name, dims ? dims[i] : nullptr, num_dims[i],
                              value.mutable_list()->add_shape())) {
        return;
      }
    }
    *NewAttr(desc, attr_name) = std::move(value);
  });
}

void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc, const char* attr_name,
                                const void* proto, size_t proto_len, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    TensorShapeProto shape;
    if ((proto == nullptr && proto_len > 0) ||
        !shape.ParseFromArray(proto, static_cast<int>(proto_len))) {
      return c_api::Set(status, errors::InvalidArgument("Unparseable TensorShapeProto for attr '",
                                                        attr_name ? attr_name : "", "'"));
    }
    *NewAttr(desc, attr_name)->mutable_shape() = std::move(shape);
    c_api::Set(status, Status::OK());
  });
}

void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc, const char* attr_name,
                                    const void* const* protos, const size_t* proto_lens,
                                    int num_shapes, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (num_shapes < 0 || (num_shapes > 0 && (protos == nullptr || proto_lens == nullptr))) {
      return c_api::Set(
          status, errors::InvalidArgument("Invalid list of ", num_shapes, " shapes for attr '",
                                          attr_name ? attr_name : "", "'"));
    }
    AttrValue value;
    for (int i = 0; i < num_shapes; ++i) {
      if (!value.mutable_list()->add_shape()->ParseFromArray(protos[i],
                                                             static_cast<int>(proto_lens[i]))) {
        return c_api::Set(status,
                          errors::InvalidArgument("Unparseable TensorShapeProto ", i, " for attr '",
                                                  attr_name ? attr_name : "", "'"));
      }
    }
    *NewAttr(desc, attr_name) = std::move(value);
    c_api::Set(status, Status::OK());
  });
}

void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name, TF_Tensor* value,
                      TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    tensorweave::TensorProto proto;
    Status converted = TensorProtoFromC(value, &proto);
    if (converted.ok()) *NewAttr(desc, attr_name)->mutable_tensor() = std::move(proto);
    c_api::Set(status, std::move(converted));
  });
}

void TF_SetAttrTensorList(TF_OperationDescription* desc, const char* attr_name,
                          TF_Tensor* const* values, int num_values, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (num_values < 0 || (num_values > 0 && values == nullptr)) {
      return c_api::Set(
          status, errors::InvalidArgument("Invalid list of ", num_values, " tensors for attr '",
                                          attr_name ? attr_name : "", "'"));
    }
    AttrValue value;
    for (int i = 0; i < num_values; ++i) {
      Status converted = TensorProtoFromC(values[i], value.mutable_list()->add_tensor());
      if (!converted.ok()) return c_api::Set(status, std::move(converted));
    }
    *NewAttr(desc, attr_name) = std::move(value);
    c_api::Set(status, Status::OK());
  });
}

void TF_SetAttrValueProto(TF_OperationDescription* desc, const char* attr_name, const void* proto,
                          size_t proto_len, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    AttrValue value;
    if ((proto == nullptr && proto_len > 0) ||
        !value.ParseFromArray(proto, static_cast<int>(proto_len))) {
      return c_api::Set(status, errors::InvalidArgument("Unparseable AttrValue for attr '",
                                                        attr_name ? attr_name : "", "'"));
    }
    *NewAttr(desc, attr_name) = std::move(value);
    c_api::Set(status, Status::OK());
  });
}

TF_Operation* TF_FinishOperation(TF_OperationDescription* desc, TF_Status* status) {
  return FinishOperation(desc, status, /*lock_graph=*/true);
}

TF_Operation* TF_FinishOperationLocked(TF_OperationDescription* desc, TF_Status* status) {
  return FinishOperation(desc, status, /*lock_graph=*/false);
}

TF_OperationDescription* TF_NewOperationLocked(TF_Graph* graph, const char* op_type,
                                               const char* oper_name) {
  // Describing an operation never touches the graph; only finishing does.
  return TF_NewOperation(graph, op_type, oper_name);
}

void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op) {
  c_api::GuardVoid(nullptr, [&] {
    if (op == nullptr) {
      return Fail(desc, errors::InvalidArgument("TF_ColocateWith: operation '",
                                                desc->node_def.name(), "' is colocated with NULL"));
    }
    desc->colocation_constraints.insert("loc:@" + c_api::ToNode(op)->name());
  });
}

void TF_SetAttrPlaceholder(TF_OperationDescription* desc, const char* attr_name,
                           const char* placeholder) {
  c_api::GuardVoid(
      nullptr, [&] { NewAttr(desc, attr_name)->set_placeholder(placeholder ? placeholder : ""); });
}

void TF_SetAttrFuncName(TF_OperationDescription* desc, const char* attr_name, const char* value,
                        size_t length) {
  c_api::GuardVoid(nullptr, [&] {
    NewAttr(desc, attr_name)->mutable_func()->set_name(length ? std::string(value, length) : "");
  });
}

void TF_UpdateEdge(TF_Graph* graph, TF_Output new_src, TF_Input dst, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (graph == nullptr || new_src.oper == nullptr || dst.oper == nullptr) {
      return c_api::Set(status,
                        errors::InvalidArgument("TF_UpdateEdge needs a graph and two operations"));
    }
    Node* src = c_api::ToNode(new_src.oper);
    Node* dst_node = c_api::ToNode(dst.oper);
    std::lock_guard<std::mutex> lock(graph->mu);
    for (const Node* node : {src, dst_node}) {
      if (graph->graph.FindNodeId(node->id()) != node) {
        return c_api::Set(status, errors::InvalidArgument("Cannot update edge: '", node->name(),
                                                          "' is not an operation of this graph"));
      }
    }
    if (new_src.index < 0 || new_src.index >= src->num_outputs()) {
      return c_api::Set(status,
                        errors::OutOfRange("Cannot update edge. Output index [", new_src.index,
                                           "] is greater than the number of total "
                                           "outputs [",
                                           src->num_outputs(), "]."));
    }
    if (dst.index < 0 || dst.index >= dst_node->num_inputs()) {
      return c_api::Set(status, errors::OutOfRange("Cannot update edge. Input index [", dst.index,
                                                   "] is greater than the number of total "
                                                   "inputs [",
                                                   dst_node->num_inputs(), "]."));
    }
    const Edge* old_edge = nullptr;
    Status found = dst_node->input_edge(dst.index, &old_edge);
    if (!found.ok()) return c_api::Set(status, errors::InvalidArgument(found.message()));
    // The new value must fit where the old one went: the same dtype and a
    // compatible shape. Both are checked before anything changes.
    if (!tensorweave::IsCompatibleEdgeType(src->output_type(new_src.index),
                                           dst_node->input_type(dst.index))) {
      return c_api::Set(
          status, errors::InvalidArgument(
                      "Cannot update edge: output ", new_src.index, " of '", src->name(),
                      "' has type ", tensorweave::DataTypeString(src->output_type(new_src.index)),
                      " but input ", dst.index, " of '", dst_node->name(), "' expects ",
                      tensorweave::DataTypeString(dst_node->input_type(dst.index))));
    }
    PartialTensorShape new_shape, old_shape, merged;
    Status shapes = graph->refiner.GetShape(src, new_src.index, &new_shape);
    if (shapes.ok()) {
      shapes = graph->refiner.GetShape(old_edge->src(), old_edge->src_output(), &old_shape);
    }
    if (!shapes.ok()) return c_api::Set(status, std::move(shapes));
    if (!old_shape.MergeWith(new_shape, &merged).ok()) {
      return c_api::Set(status, errors::InvalidArgument("Cannot update edge, incompatible shapes: ",
                                                        new_shape.DebugString(), " and ",
                                                        old_shape.DebugString(), "."));
    }
    Node* old_src = old_edge->src();
    const int old_index = old_edge->src_output();
    graph->graph.RemoveEdge(old_edge);
    Status added = graph->graph.AddEdge(src, new_src.index, dst_node, dst.index);
    if (added.ok()) {
      // The operation's shapes follow its new input: a loop's Merge, built
      // with its Enter twice, relaxes to what Enter and NextIteration share.
      added = graph->refiner.AddNode(dst_node);
      const Edge* new_edge = nullptr;
      if (!added.ok() && dst_node->input_edge(dst.index, &new_edge).ok()) {
        graph->graph.RemoveEdge(new_edge);
      }
    }
    if (!added.ok()) {
      // Put the old edge back so a failed update changes nothing.
      (void)graph->graph.AddEdge(old_src, old_index, dst_node, dst.index);
      return c_api::Set(status, std::move(added));
    }
    c_api::Set(status, Status::OK());
  });
}

}  // extern "C"
