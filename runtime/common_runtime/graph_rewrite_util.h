// Small graph edits the optimizer passes share (graph_optimizer.h).
//
//   if (!MayRemove(node, options)) return;                // targets, feeds, fetches stay
//   Node* folded = nullptr;
//   TW_RETURN_IF_ERROR(ReplaceWithConst(graph, node, value, controls, &folded));
//   RemoveDeadNodes(graph, options, {input_node->id()});  // what only fed `node`
#ifndef TENSORWEAVE_COMMON_RUNTIME_GRAPH_REWRITE_UTIL_H_
#define TENSORWEAVE_COMMON_RUNTIME_GRAPH_REWRITE_UTIL_H_

#include <string>
#include <vector>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

// Const or HostConst.
bool IsConstOp(const Node* node);
// _Arg, _Retval, _Send, _Recv and their host forms: a signature's endpoints.
bool IsSignatureEndpoint(const Node* node);
// Some consumer is a _Retval or _Send: the node's value leaves the graph.
bool IsFetched(const Node* node);
// No pass may remove or rename `node`: a target, an endpoint, or stateful.
bool MustKeep(const Node* node, const GraphOptimizerOptions& options);
// A pass may replace `node` by another node computing the same value, but
// only under the same name (it is fetched).
bool MustKeepName(const Node* node);
// The node asks for a device whose type is not CPU (or one that does not
// parse), so nothing of it should run on the optimizer's CPU.
bool RequestsOtherThanCpu(const Node* node);
// Any output is a ref, resource or variant: not a plain value.
bool HasNonValueOutput(const Node* node);

// The data input `index` of `node` (null node when unconnected).
NodeOutput DataInput(const Node* node, int index);
// The op nodes with a control edge into `node`.
std::vector<Node*> ControlInputs(const Node* node);
// How many data edges leave output `index` of `node`.
int NumConsumers(const Node* node, int index);

// A Const NodeDef named `name` holding `value`, on `device`.
NodeDef ConstNodeDef(const std::string& name, const std::string& device, const Tensor& value);

// Replaces `node` by a node made from `def` (whose name should be `node`'s,
// to keep it) with data inputs `inputs` (slot order) and control inputs
// `controls`: every data consumer of output k of `node` reads output k of the
// new node, every control consumer waits for it. The assigned device is
// kept. `*replacement` (optional) is the new node.
Status ReplaceNode(Graph* graph, Node* node, const NodeDef& def,
                   const std::vector<NodeOutput>& inputs, const std::vector<Node*>& controls,
                   Node** replacement = nullptr);

// Replaces `node` (one output) by a Const of `value` under the same name, waiting for
// `controls`.
Status ReplaceWithConst(Graph* graph, Node* node, const Tensor& value,
                        const std::vector<Node*>& controls, Node** replacement = nullptr);

// Every data consumer of `from` reads `to` instead; every control consumer of
// `from` waits for to.node.
Status ForwardConsumers(Graph* graph, NodeOutput from, NodeOutput to);

// Removes the nodes among `candidate_ids` (and, transitively, their inputs)
// that nothing consumes any more and that MustKeep allows to go. Ids, not
// pointers, since candidates may have been replaced meanwhile.
void RemoveDeadNodes(Graph* graph, const GraphOptimizerOptions& options,
                     const std::vector<int>& candidate_ids);

// The value of a Const node (INVALID_ARGUMENT when its attr does not parse).
Status ConstValue(const Node* node, Tensor* value);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_GRAPH_REWRITE_UTIL_H_
