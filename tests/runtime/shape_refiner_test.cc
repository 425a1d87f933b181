// Tests of ShapeRefiner and of the three paths that add user nodes through
// it: BuildNode (TF_FinishOperation), ImportGraphDef (TF_GraphImportGraphDef)
// and DirectSession::Create/Extend (TF_ExtendGraph). Real ops (Placeholder,
// Const, MatMul, Reshape, AddN) so the shape functions are the shipped ones.
#include "runtime/graph/shape_refiner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/graph/graph_def_import.h"
#include "runtime/graph/node_builder.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::AddNode;
using session_test::AddPlaceholder;
using session_test::SetAttr;

PartialTensorShape Shape(const std::vector<int64_t>& dims) {
  PartialTensorShape shape;
  EXPECT_TRUE(PartialTensorShape::Build(dims, &shape).ok());
  return shape;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// a: float[2, 3], b: float[inner, 5], product = MatMul(a, b).
GraphDef MatMulGraph(int64_t inner) {
  GraphDef graph_def;
  AddPlaceholder(&graph_def, "a", Shape({2, 3}));
  AddPlaceholder(&graph_def, "b", Shape({inner, 5}));
  SetAttr(AddNode(&graph_def, "product", "MatMul", {"a", "b"}), "T", DT_FLOAT);
  return graph_def;
}

std::string Serialized(const Graph& graph) {
  GraphDef graph_def;
  graph.ToGraphDef(&graph_def);
  return graph_def.DebugString();  // text format writes attr maps sorted
}

// A graph with its refiner, filled by importing `graph_def`.
struct RefinedGraph {
  Graph graph{OpRegistry::Global()};
  ShapeRefiner refiner{graph};
  Status Import(const GraphDef& graph_def, const ImportGraphDefOptions& options = {}) {
    return ImportGraphDef(options, graph_def, &graph, &refiner);
  }
  PartialTensorShape ShapeOf(const std::string& name, int index = 0) {
    PartialTensorShape shape;
    const Status status = refiner.GetShape(graph.FindNode(name), index, &shape);
    EXPECT_TRUE(status.ok()) << status;
    return shape;
  }
};

// --- ShapeRefiner ------------------------------------------------------------

TEST(ShapeRefiner, AddNodeRunsTheShapeFunctionOnItsInputsShapes) {
  RefinedGraph g;
  ASSERT_TRUE(g.Import(MatMulGraph(3)).ok());
  EXPECT_EQ(g.ShapeOf("a"), Shape({2, 3}));
  EXPECT_EQ(g.ShapeOf("product"), Shape({2, 5}));
}

TEST(ShapeRefiner, ConstInputsReachShapeFunctionsAsValues) {
  GraphDef graph_def;
  AddPlaceholder(&graph_def, "x", Shape({6}));
  Tensor dims(DT_INT32, TensorShape({2}));
  dims.data<int32_t>()[0] = 3;
  dims.data<int32_t>()[1] = 2;
  NodeDef* shape = AddNode(&graph_def, "dims", "Const");
  SetAttr(shape, "dtype", DT_INT32);
  SetAttr(shape, "value", dims);
  SetAttr(AddNode(&graph_def, "reshaped", "Reshape", {"x", "dims"}), "T", DT_FLOAT);
  RefinedGraph g;
  ASSERT_TRUE(g.Import(graph_def).ok());
  EXPECT_EQ(g.ShapeOf("reshaped"), Shape({3, 2}));
}

TEST(ShapeRefiner, ShapeFunctionErrorNamesTheNodeAndRecordsNothing) {
  RefinedGraph g;
  GraphDef inputs = MatMulGraph(4);
  inputs.mutable_node()->RemoveLast();
  ASSERT_TRUE(g.Import(inputs).ok());
  NodeDef def;
  def.set_name("product");
  def.set_op("MatMul");
  SetAttr(&def, "T", DT_FLOAT);
  Node* product = nullptr;
  ASSERT_TRUE(g.graph.AddNode(def, &product).ok());
  ASSERT_TRUE(g.graph.AddEdge(g.graph.FindNode("a"), 0, product, 0).ok());
  ASSERT_TRUE(g.graph.AddEdge(g.graph.FindNode("b"), 0, product, 1).ok());
  const Status status = g.refiner.AddNode(product);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(status.message(), "'product'")) << status;
  EXPECT_TRUE(Contains(status.message(), "Matrix size-incompatible")) << status;
  EXPECT_TRUE(g.ShapeOf("product").unknown_rank());
}

TEST(ShapeRefiner, InputsNeverRefinedCountAsUnknown) {
  Graph graph(OpRegistry::Global());
  ShapeRefiner refiner(graph);
  GraphDef graph_def = MatMulGraph(7);
  // Imported without a refiner: nothing is known about a, b or product.
  ASSERT_TRUE(ImportGraphDef(ImportGraphDefOptions(), graph_def, &graph, nullptr).ok());
  Node* product = graph.FindNode("product");
  ASSERT_TRUE(refiner.AddNode(product).ok()) << "unknown inputs cannot contradict";
  PartialTensorShape shape;
  ASSERT_TRUE(refiner.GetShape(product, 0, &shape).ok());
  EXPECT_EQ(shape, Shape({-1, -1}));
}

TEST(ShapeRefiner, SetShapeMergesAndRejectsContradictions) {
  RefinedGraph g;
  GraphDef graph_def;
  AddPlaceholder(&graph_def, "x", Shape({-1, 3}));
  ASSERT_TRUE(g.Import(graph_def).ok());
  Node* x = g.graph.FindNode("x");
  ASSERT_TRUE(g.refiner.SetShape(x, 0, Shape({4, -1})).ok());
  EXPECT_EQ(g.ShapeOf("x"), Shape({4, 3}));
  ASSERT_TRUE(g.refiner.SetShape(x, 0, PartialTensorShape()).ok()) << "unknown adds nothing";
  EXPECT_EQ(g.ShapeOf("x"), Shape({4, 3}));

  const Status contradiction = g.refiner.SetShape(x, 0, Shape({4, 2}));
  EXPECT_EQ(contradiction.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(contradiction.message(), "'x'")) << contradiction;
  EXPECT_EQ(g.ShapeOf("x"), Shape({4, 3})) << "a rejected shape changes nothing";
  EXPECT_EQ(g.refiner.SetShape(x, 0, Shape({4})).code(), Code::INVALID_ARGUMENT);
}

TEST(ShapeRefiner, RejectsOutputsOutsideItsGraph) {
  RefinedGraph g;
  RefinedGraph other;
  ASSERT_TRUE(g.Import(MatMulGraph(3)).ok());
  ASSERT_TRUE(other.Import(MatMulGraph(3)).ok());
  PartialTensorShape shape;
  Node* a = g.graph.FindNode("a");
  EXPECT_EQ(g.refiner.GetShape(a, 1, &shape).code(), Code::OUT_OF_RANGE);
  EXPECT_EQ(g.refiner.GetShape(a, -1, &shape).code(), Code::OUT_OF_RANGE);
  EXPECT_EQ(g.refiner.SetShape(a, 1, shape).code(), Code::OUT_OF_RANGE);
  EXPECT_EQ(g.refiner.GetShape(nullptr, 0, &shape).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(g.refiner.GetShape(g.graph.source_node(), 0, &shape).code(), Code::INVALID_ARGUMENT);
  // Node "a" of the other graph has id 2 too; the refiner still tells them apart.
  Node* foreign = other.graph.FindNode("a");
  ASSERT_EQ(foreign->id(), a->id());
  EXPECT_EQ(g.refiner.GetShape(foreign, 0, &shape).code(), Code::INVALID_ARGUMENT);
}

TEST(ShapeRefiner, RemoveNodeForgetsItsShapes) {
  RefinedGraph g;
  ASSERT_TRUE(g.Import(MatMulGraph(3)).ok());
  Node* product = g.graph.FindNode("product");
  g.refiner.RemoveNode(product);
  EXPECT_TRUE(g.ShapeOf("product").unknown_rank());
  g.refiner.RemoveNode(nullptr);  // ignored
}

// v: a float[2, 3] variable's handle, passed through Identity and read.
GraphDef VariableGraph(DataType read_dtype) {
  GraphDef graph_def;
  NodeDef* v = AddNode(&graph_def, "v", "VarHandleOp", {});
  SetAttr(v, "dtype", DT_FLOAT);
  SetAttr(v, "shape", Shape({2, 3}));
  SetAttr(AddNode(&graph_def, "handle", "Identity", {"v"}), "T", DT_RESOURCE);
  SetAttr(AddNode(&graph_def, "read", "ReadVariableOp", {"handle"}), "dtype", read_dtype);
  return graph_def;
}

TEST(ShapeRefiner, HandleDataFlowsFromVarHandleOpToItsReads) {
  RefinedGraph g;
  ASSERT_TRUE(g.Import(VariableGraph(DT_FLOAT)).ok());
  ShapeRefiner::HandleData data;
  ASSERT_TRUE(g.refiner.GetHandleData(g.graph.FindNode("handle"), 0, &data).ok());
  ASSERT_TRUE(data.is_set());
  ASSERT_EQ(data.shape_and_type_size(), 1);
  EXPECT_EQ(data.shape_and_type(0).dtype(), tensorweave::DT_FLOAT);
  EXPECT_EQ(data.shape_and_type(0).shape().dim_size(), 2);
  EXPECT_EQ(g.ShapeOf("read").DebugString(), Shape({2, 3}).DebugString());
  // Outputs nothing is known of, and outputs that are not there.
  ASSERT_TRUE(g.refiner.GetHandleData(g.graph.FindNode("read"), 0, &data).ok());
  EXPECT_FALSE(data.is_set());
  EXPECT_EQ(g.refiner.GetHandleData(g.graph.FindNode("v"), 1, &data).code(), Code::OUT_OF_RANGE);

  // A read as another dtype names the node.
  RefinedGraph bad;
  const Status status = bad.Import(VariableGraph(DT_INT32));
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(status.message(), "'read'")) << status;
}

TEST(ShapeRefiner, SetHandleDataReplacesWhatIsKnownAndChecksShapes) {
  RefinedGraph g;
  ASSERT_TRUE(g.Import(VariableGraph(DT_FLOAT)).ok());
  Node* v = g.graph.FindNode("v");
  ShapeRefiner::HandleData data;
  auto* entry = data.add_shape_and_type();
  entry->set_dtype(tensorweave::DT_INT64);
  entry->mutable_shape()->add_dim()->set_size(-5);
  EXPECT_EQ(g.refiner.SetHandleData(v, 0, data).code(), Code::INVALID_ARGUMENT);
  entry->mutable_shape()->mutable_dim(0)->set_size(4);
  ASSERT_TRUE(g.refiner.SetHandleData(v, 0, data).ok());
  ShapeRefiner::HandleData read_back;
  ASSERT_TRUE(g.refiner.GetHandleData(v, 0, &read_back).ok());
  EXPECT_TRUE(read_back.is_set());
  EXPECT_EQ(read_back.shape_and_type(0).dtype(), tensorweave::DT_INT64);
  g.refiner.RemoveNode(v);
  ASSERT_TRUE(g.refiner.GetHandleData(v, 0, &read_back).ok());
  EXPECT_FALSE(read_back.is_set());
}

// --- BuildNode -----------------------------------------------------------------

TEST(BuildNode, InfersTypeAttrsFromInputsWiresAndRefines) {
  RefinedGraph g;
  GraphDef inputs = MatMulGraph(3);
  inputs.mutable_node()->RemoveLast();
  ASSERT_TRUE(g.Import(inputs).ok());
  Node* a = g.graph.FindNode("a");
  Node* b = g.graph.FindNode("b");

  NodeDef def;
  def.set_name("product");
  def.set_op("MatMul");  // T left out: it comes from a
  BuildNodeInputs given;
  given.arguments.push_back({{{a, 0}}, false});
  given.arguments.push_back({{{b, 0}}, false});
  given.control_inputs.push_back(b);
  Node* product = nullptr;
  ASSERT_TRUE(BuildNode(def, given, &g.graph, &g.refiner, &product).ok());
  EXPECT_EQ(product->input_types(), DataTypeVector({DT_FLOAT, DT_FLOAT}));
  EXPECT_EQ(g.ShapeOf("product"), Shape({2, 5}));
  const Edge* in = nullptr;
  ASSERT_TRUE(product->input_edge(1, &in).ok());
  EXPECT_EQ(in->src(), b);
  EXPECT_EQ(product->in_edges().size(), 3u) << "a, b and ^b; no SOURCE hookup";

  // A list input: N and T come from the list.
  NodeDef sum_def;
  sum_def.set_name("sum");
  sum_def.set_op("AddN");
  BuildNodeInputs list;
  list.arguments.push_back({{{product, 0}, {product, 0}}, true});
  Node* sum = nullptr;
  ASSERT_TRUE(BuildNode(sum_def, list, &g.graph, &g.refiner, &sum).ok());
  EXPECT_EQ(sum->num_inputs(), 2);
  EXPECT_EQ(g.ShapeOf("sum"), Shape({2, 5}));
}

TEST(BuildNode, AnErrorLeavesGraphAndRefinerUnchanged) {
  RefinedGraph g;
  GraphDef inputs = MatMulGraph(4);  // a is [2, 3], b is [4, 5]
  inputs.mutable_node()->RemoveLast();
  ASSERT_TRUE(g.Import(inputs).ok());
  Node* a = g.graph.FindNode("a");
  Node* b = g.graph.FindNode("b");
  const std::string before = Serialized(g.graph);
  const int edges = g.graph.num_edges();

  NodeDef def;
  def.set_name("product");
  def.set_op("MatMul");
  struct Case {
    BuildNodeInputs inputs;
    Code code;
  };
  auto one = [](Node* node, int index) {
    BuildNodeInputs::Argument argument;
    argument.tensors.push_back({node, index});
    return argument;
  };
  auto list = [&](Node* node, int index) {
    BuildNodeInputs::Argument argument = one(node, index);
    argument.is_list = true;
    return argument;
  };
  auto inputs_of = [](std::vector<BuildNodeInputs::Argument> arguments) {
    BuildNodeInputs inputs;
    inputs.arguments = std::move(arguments);
    return inputs;
  };
  const std::vector<Case> cases = {
      {inputs_of({one(a, 0), one(b, 0)}), Code::INVALID_ARGUMENT},   // [2,3] x [4,5]
      {inputs_of({one(a, 0)}), Code::INVALID_ARGUMENT},              // an input short
      {inputs_of({list(a, 0), one(a, 0)}), Code::INVALID_ARGUMENT},  // a list for a tensor
      {inputs_of({one(a, 1), one(a, 0)}), Code::OUT_OF_RANGE},       // a has one output
  };
  for (const Case& c : cases) {
    Node* node = a;
    const Status status = BuildNode(def, c.inputs, &g.graph, &g.refiner, &node);
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_EQ(node, nullptr);
    EXPECT_EQ(g.graph.FindNode("product"), nullptr);
    EXPECT_EQ(Serialized(g.graph), before);
    EXPECT_EQ(g.graph.num_edges(), edges);
  }
  // A node of another graph is refused before anything is added.
  RefinedGraph other;
  ASSERT_TRUE(other.Import(inputs).ok());
  BuildNodeInputs foreign;
  foreign.arguments.push_back({{{a, 0}}, false});
  foreign.arguments.push_back({{{other.graph.FindNode("b"), 0}}, false});
  Node* node = nullptr;
  EXPECT_EQ(BuildNode(def, foreign, &g.graph, &g.refiner, &node).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(Serialized(g.graph), before);
}

// --- ImportGraphDef ------------------------------------------------------------

TEST(ImportWithRefiner, AShapeErrorRejectsTheImportAndChangesNothing) {
  RefinedGraph g;
  GraphDef existing;
  AddPlaceholder(&existing, "x", Shape({2, 3}));
  ASSERT_TRUE(g.Import(existing).ok());
  const std::string before = Serialized(g.graph);
  const int ids = g.graph.num_node_ids();

  // Consumes the existing node, with a prefix so names stay new.
  GraphDef bad = MatMulGraph(4);
  ImportGraphDefOptions options;
  options.prefix = "p";
  options.input_map["a:0"] = {"x", 0};
  const Status status = g.Import(bad, options);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_TRUE(Contains(status.message(), "'p/product'")) << status;
  EXPECT_EQ(Serialized(g.graph), before);
  EXPECT_EQ(g.graph.FindNode("p/a"), nullptr);
  EXPECT_EQ(g.ShapeOf("x"), Shape({2, 3}));
  ASSERT_TRUE(g.Import(MatMulGraph(3), options).ok()) << "the good one still imports";
  EXPECT_GT(g.graph.num_node_ids(), ids);
  EXPECT_EQ(g.ShapeOf("p/product"), Shape({2, 5}));
}

TEST(ImportWithRefiner, RefinesProducersFirstWhateverTheGraphDefOrder) {
  GraphDef graph_def = MatMulGraph(3);
  std::reverse(graph_def.mutable_node()->begin(), graph_def.mutable_node()->end());
  RefinedGraph g;
  ASSERT_TRUE(g.Import(graph_def).ok());
  EXPECT_EQ(g.ShapeOf("product"), Shape({2, 5}));
  // Node ids still follow the GraphDef.
  EXPECT_LT(g.graph.FindNode("product")->id(), g.graph.FindNode("a")->id());
  GraphDef bad = MatMulGraph(4);
  std::reverse(bad.mutable_node()->begin(), bad.mutable_node()->end());
  RefinedGraph rejected;
  EXPECT_EQ(rejected.Import(bad).code(), Code::INVALID_ARGUMENT);
}

TEST(ImportWithRefiner, ControlDependenciesReachEveryImportedNode) {
  RefinedGraph g;
  GraphDef first;
  AddNode(&first, "gate", "NoOp");
  AddPlaceholder(&first, "x", Shape({3, 5}));
  ASSERT_TRUE(g.Import(first).ok());
  Node* gate = g.graph.FindNode("gate");

  ImportGraphDefOptions options;
  options.prefix = "p";
  options.control_dependencies = {"gate"};
  options.input_map["b:0"] = {"x", 0};  // b's consumers read an existing node
  GraphDef graph_def = MatMulGraph(3);
  // product has an input from a (imported); a and b have none.
  const Status imported = g.Import(graph_def, options);
  ASSERT_TRUE(imported.ok()) << imported;
  auto has_gate = [&](const std::string& name) {
    for (const Edge* edge : g.graph.FindNode(name)->in_edges()) {
      if (edge->IsControlEdge() && edge->src() == gate) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_gate("p/a"));
  EXPECT_TRUE(has_gate("p/b"));
  EXPECT_FALSE(has_gate("p/product")) << "it runs after p/a, which runs after gate";
  EXPECT_EQ(g.ShapeOf("p/product"), Shape({2, 5})) << "b's consumer reads x";

  options.prefix = "q";
  options.control_dependencies = {"ghost"};
  const Status status = g.Import(graph_def, options);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(status.message(), "'ghost'")) << status;
}

// --- Session::Create/Extend ------------------------------------------------------

std::unique_ptr<Session> NewDirectSession() {
  std::unique_ptr<Session> session;
  const Status status = NewSession(SessionOptions(), &session);
  EXPECT_TRUE(status.ok()) << status;
  return session;
}

TEST(SessionShapes, CreateAndExtendRejectWhatImportRejects) {
  std::unique_ptr<Session> session = NewDirectSession();
  const Status bad = session->Create(MatMulGraph(4));
  EXPECT_EQ(bad.code(), Code::INVALID_ARGUMENT) << bad;
  EXPECT_TRUE(Contains(bad.message(), "'product'")) << bad;
  ASSERT_TRUE(session->Create(MatMulGraph(3)).ok()) << "the failed Create added nothing";

  // Extend sees the shapes of nodes an earlier call added.
  GraphDef more;
  AddPlaceholder(&more, "c", Shape({7, 1}));
  SetAttr(AddNode(&more, "again", "MatMul", {"product", "c"}), "T", DT_FLOAT);
  const Status extended = session->Extend(more);
  EXPECT_EQ(extended.code(), Code::INVALID_ARGUMENT) << extended;
  EXPECT_TRUE(Contains(extended.message(), "'again'")) << extended;
  more.mutable_node(0)->clear_attr();
  AddPlaceholder(&more, "d", Shape({5, 1}))->set_name("d");
  more.mutable_node(1)->set_input(1, "d");
  more.mutable_node()->DeleteSubrange(0, 1);
  ASSERT_TRUE(session->Extend(more).ok());
}

}  // namespace
}  // namespace tensorweave
