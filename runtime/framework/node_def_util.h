// Reading and checking NodeDefs against their OpDefs: attr access, default
// filling, validation and the input/output dtypes a node has.
#ifndef TENSORWEAVE_FRAMEWORK_NODE_DEF_UTIL_H_
#define TENSORWEAVE_FRAMEWORK_NODE_DEF_UTIL_H_

#include <string>
#include <vector>

#include "runtime/framework/op_def.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/framework/types.h"
#include "tensorweave/proto/node_def.pb.h"

namespace tensorweave {

// Typed attr getters. NOT_FOUND when absent, INVALID_ARGUMENT when the attr
// has another type; both name the node and the attr.
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::string* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, int64_t* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, int32_t* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, float* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, bool* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, DataType* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, PartialTensorShape* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, TensorShape* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, Tensor* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<std::string>* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<int64_t>* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<int32_t>* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<float>* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<bool>* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name, DataTypeVector* value);
Status GetNodeAttr(const NodeDef& node, const std::string& name,
                   std::vector<PartialTensorShape>* value);
// Null when absent.
const AttrValue* FindNodeAttr(const NodeDef& node, const std::string& name);

// Adds each attr the OpDef defaults and the node does not set.
void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node);

// Checks the node against its op: every attr the op declares is set (after
// defaults) with the right type and an allowed value; attrs the op does not
// declare are rejected unless they start with '_' (internal) ; data inputs
// come before control inputs; the number of data inputs matches the op.
// Errors are INVALID_ARGUMENT naming the node.
Status ValidateNodeDef(const NodeDef& node, const OpDef& op_def);

// The dtypes of the node's data inputs and outputs, expanding list args.
Status InOutTypesForNode(const NodeDef& node, const OpDef& op_def, DataTypeVector* inputs,
                         DataTypeVector* outputs);

// Number of tensors each arg of `args` expands to for this node (1 for a
// plain arg, N for "N * T", len(list) for a type list).
Status ArgSizes(const NodeDef& node, const std::vector<ArgDef>& args, std::vector<int>* sizes);
// The same for an op given directly (one the global registry lacks, such as
// a function's signature).
Status ArgSizes(const NodeDef& node, const OpDef& op_def, const std::vector<ArgDef>& args,
                std::vector<int>* sizes);

// A tensor name "node:3" split into ("node", 3); "node" gives index 0;
// "^node" gives index -1 (a control input). False for empty names or a
// malformed index.
struct TensorId {
  std::string node;
  int index = 0;
};
bool ParseTensorName(const std::string& name, TensorId* id);

// A one-line description of an attr value, for messages: "float", "[2,3]".
std::string SummarizeAttrValue(const AttrValue& value);

// Helpers for building AttrValues (used by the C API and graph building).
void SetAttrValue(const std::string& value, AttrValue* out);
void SetAttrValue(int64_t value, AttrValue* out);
void SetAttrValue(float value, AttrValue* out);
void SetAttrValue(bool value, AttrValue* out);
void SetAttrValue(DataType value, AttrValue* out);
void SetAttrValue(const PartialTensorShape& value, AttrValue* out);
void SetAttrValue(const TensorShape& value, AttrValue* out);
void SetAttrValue(const Tensor& value, AttrValue* out);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_NODE_DEF_UTIL_H_
