// ShapeRefiner: the known shape of every output of one graph, worked out as
// nodes are added. Every path that adds user nodes (BuildNode for the C API's
// TF_FinishOperation, ImportGraphDef for TF_GraphImportGraphDef and
// Session::Create/Extend) hands each new node to the refiner after wiring its
// inputs, so a shape error rejects a graph the same way whichever way it came.
//
//   Graph graph(OpRegistry::Global());
//   ShapeRefiner refiner(graph);
//   Node* node = ...;                          // added and wired, inputs
//   TW_RETURN_IF_ERROR(refiner.AddNode(node)); // refined before it
//   TW_RETURN_IF_ERROR(refiner.SetShape(node, 0, PartialTensorShape({2, -1})));
//   PartialTensorShape shape;
//   TW_RETURN_IF_ERROR(refiner.GetShape(node, 0, &shape));
//   ...
//   refiner.RemoveNode(node);                  // before graph.RemoveNode(node)
//
// AddNode runs the node's shape function on the recorded shapes of its
// inputs and on the values of inputs that Const nodes produce (so Reshape or
// Fill see their shape argument). An input never refined counts as unknown.
// Shapes are kept by node id, which a graph never reuses.
//
// Not thread-safe: the owner of the graph locks around both.
#ifndef TENSORWEAVE_GRAPH_SHAPE_REFINER_H_
#define TENSORWEAVE_GRAPH_SHAPE_REFINER_H_

#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/graph/graph.h"
#include "tensorweave/proto/cpp_shape_inference.pb.h"

namespace tensorweave {

class ShapeRefiner {
 public:
  // `graph` (not owned) must outlive the refiner.
  explicit ShapeRefiner(const Graph& graph) : graph_(graph) {}
  ShapeRefiner(const ShapeRefiner&) = delete;
  ShapeRefiner& operator=(const ShapeRefiner&) = delete;

  // Runs the shape function of `node`, whose inputs are wired, and records
  // its output shapes. On error (the shape function's INVALID_ARGUMENT
  // naming the node) nothing is recorded.
  Status AddNode(const Node* node);

  // Merges `shape` into the known shape of output `index` of `node`.
  // INVALID_ARGUMENT when the two contradict (nothing changes then), when
  // `node` is not an op node of the graph; OUT_OF_RANGE for a bad index.
  Status SetShape(const Node* node, int index, const PartialTensorShape& shape);

  // The known shape of output `index` of `node` (unknown when never refined).
  // Errors as SetShape's.
  Status GetShape(const Node* node, int index, PartialTensorShape* shape) const;

  // Forgets the shapes of `node`, which is about to leave the graph.
  void RemoveNode(const Node* node);

  // What is known of the values behind a resource or variant handle that
  // output `index` of `node` produces (TF_GetHandleShapeAndType): set by
  // AddNode for VarHandleOp from its dtype and shape, carried through ops
  // that forward a handle (Identity, control flow), or set by
  // SetHandleData (TF_SetHandleShapeAndType), which replaces it. Unset
  // (is_set false) when nothing is known. Errors as SetShape's.
  using HandleData = CppShapeInferenceResult::HandleData;
  Status SetHandleData(const Node* node, int index, const HandleData& data);
  Status GetHandleData(const Node* node, int index, HandleData* data) const;

  // When set, AddNode refuses ops registered without a shape function
  // (TF_SetRequireShapeInferenceFns); off by default, as in TensorFlow's C
  // API, and their outputs are then of unknown shape.
  void set_require_shape_inference_fns(bool require) { require_shape_fns_ = require; }
  bool require_shape_inference_fns() const { return require_shape_fns_; }

 private:
  // INVALID_ARGUMENT / OUT_OF_RANGE unless `node` is an op node of the graph
  // with an output `index`.
  Status CheckOutput(const Node* node, int index) const;
  // The known shape of an output of a node of the graph; unknown when absent.
  PartialTensorShape Known(const Node* node, int index) const;
  // The handle data of `node`'s outputs worked out from its inputs' (empty
  // when none is known); a ReadVariableOp's `outputs` take its variable's
  // shape. INVALID_ARGUMENT for a read of a variable as another dtype.
  Status InferHandleData(const Node* node, std::vector<HandleData>* handles,
                         std::vector<PartialTensorShape>* outputs) const;
  // The handle data of an output of a node of the graph; null when unset.
  const HandleData* FindHandle(const Node* node, int index) const;

  const Graph& graph_;
  // By node id, then output index; shorter when a node was never refined.
  std::vector<std::vector<PartialTensorShape>> shapes_;
  // By node id, then output index; only for nodes with handle data.
  std::vector<std::vector<HandleData>> handle_data_;
  bool require_shape_fns_ = false;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_SHAPE_REFINER_H_
