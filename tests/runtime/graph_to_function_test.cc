// GraphToFunctionDef (graph nodes to a FunctionDef) and
// BuildWhileLoopGraphDef (a v1 while loop from condition and body graphs):
// what they build is accepted by the checks that follow them (the function
// library's, GraphDef import's frame checks), and what they reject.
#include "runtime/common_runtime/graph_to_function.h"

#include <gtest/gtest.h>

#include "runtime/framework/function_library.h"
#include "runtime/graph/while_loop_builder.h"
#include "tests/runtime/graph_test_util.h"

namespace tensorweave {
namespace {

using graph_test::ImportRefined;
using graph_test::ParseGraphDef;

// A graph: x (float placeholder), three (const), y = x * three.
Graph* TimesThree(Graph* graph) {
  const GraphDef def = ParseGraphDef(R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "three" op: "Const"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
    node { name: "y" op: "Mul" input: "x" input: "three"
           attr { key: "T" value { type: DT_FLOAT } } })");
  EXPECT_TRUE(ImportRefined(ImportGraphDefOptions(), def, graph).ok());
  return graph;
}

TEST(GraphToFunctionDefTest, ResultPassesTheLibraryChecks) {
  Graph graph(OpRegistry::Global());
  TimesThree(&graph);
  GraphToFunctionOptions options;
  options.name = "times_three";
  options.inputs = {{graph.FindNode("x"), 0}};
  options.outputs = {{graph.FindNode("y"), 0}};
  ASSERT_TRUE(AllBodyNodes(graph, options.inputs, options.name, &options.body).ok());
  ASSERT_EQ(options.body.size(), 2u);
  FunctionDef function;
  ASSERT_TRUE(GraphToFunctionDef(graph, options, &function).ok());
  EXPECT_EQ(function.ret().at("y"), "y_0:z:0");
  FunctionLibraryDefinition library(OpRegistry::Global());
  FunctionDefLibrary functions;
  *functions.add_function() = function;
  const Status added = library.AddLibrary(functions);
  EXPECT_TRUE(added.ok()) << added;
  EXPECT_NE(library.op_registry()->LookUp("times_three"), nullptr);
}

TEST(GraphToFunctionDefTest, RejectsAnOpenBodyAndForeignNodes) {
  Graph graph(OpRegistry::Global());
  TimesThree(&graph);
  GraphToFunctionOptions options;
  options.name = "f";
  options.inputs = {{graph.FindNode("x"), 0}};
  options.outputs = {{graph.FindNode("y"), 0}};
  options.body = {graph.FindNode("y")};  // "three" missing
  FunctionDef function;
  Status status = GraphToFunctionDef(graph, options, &function);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'three:0', of node 'y'"), std::string::npos) << status;

  Graph other(OpRegistry::Global());
  TimesThree(&other);
  options.body = {other.FindNode("y")};
  EXPECT_EQ(GraphToFunctionDef(graph, options, &function).code(), Code::INVALID_ARGUMENT);
}

TEST(BuildWhileLoopGraphDefTest, LoopImportsAndRejectsMismatches) {
  // cond: x < 10 over an int32 placeholder; body: x + 1.
  Graph cond(OpRegistry::Global()), body(OpRegistry::Global());
  const char* kGraph = R"(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 int_val: 10 } } } }
    node { name: "less" op: "Less" input: "x" input: "c"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "add" op: "AddV2" input: "x" input: "c"
           attr { key: "T" value { type: DT_INT32 } } })";
  ASSERT_TRUE(ImportRefined(ImportGraphDefOptions(), ParseGraphDef(kGraph), &cond).ok());
  ASSERT_TRUE(ImportRefined(ImportGraphDefOptions(), ParseGraphDef(kGraph), &body).ok());
  Graph parent(OpRegistry::Global());
  ASSERT_TRUE(ImportRefined(ImportGraphDefOptions(), ParseGraphDef(R"(
    node { name: "start" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 int_val: 0 } } } })"),
                            &parent)
                  .ok());
  WhileLoopSpec spec;
  spec.prefix = "loop";
  spec.inputs = {"start:0"};
  spec.input_types = {DT_INT32};
  spec.cond = &cond;
  spec.cond_inputs = {cond.FindNode("x")};
  spec.cond_output = {cond.FindNode("less"), 0};
  spec.body = &body;
  spec.body_inputs = {body.FindNode("x")};
  spec.body_outputs = {{body.FindNode("add"), 0}};
  GraphDef loop;
  std::vector<std::string> exits;
  ASSERT_TRUE(BuildWhileLoopGraphDef(spec, &loop, &exits).ok());
  EXPECT_EQ(exits, std::vector<std::string>{"loop/Exit"});
  ImportGraphDefOptions options;
  options.allow_inputs_to_existing_nodes = true;
  const Status imported = ImportRefined(options, loop, &parent);
  EXPECT_TRUE(imported.ok()) << imported;
  EXPECT_NE(parent.FindNode("loop/body/c"), nullptr);
  EXPECT_EQ(parent.FindNode("loop/cond/x"), nullptr);  // replaced by Merge

  WhileLoopSpec wrong_type = spec;
  wrong_type.cond_output = {cond.FindNode("add"), 0};
  EXPECT_EQ(BuildWhileLoopGraphDef(wrong_type, &loop, &exits).code(), Code::INVALID_ARGUMENT);
  WhileLoopSpec foreign = spec;
  foreign.body_outputs = {{cond.FindNode("add"), 0}};
  EXPECT_EQ(BuildWhileLoopGraphDef(foreign, &loop, &exits).code(), Code::INVALID_ARGUMENT);
  WhileLoopSpec empty = spec;
  empty.inputs.clear();
  EXPECT_EQ(BuildWhileLoopGraphDef(empty, &loop, &exits).code(), Code::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace tensorweave
