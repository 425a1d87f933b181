// Tests of GraphDef import: validation names the node, and a failed import
// leaves the graph unchanged.
#include "tests/runtime/graph_test_util.h"

namespace tensorweave {
namespace graph_test {
namespace {

// --- ImportGraphDef ----------------------------------------------------------

TEST(GraphImport, ImportsNodesEdgesDevicesAndVersions) {
  Graph graph(OpRegistry::Global());
  std::vector<Node*> imported;
  ASSERT_TRUE(
      ImportRefined(ImportGraphDefOptions(), ParseGraphDef(kSmallGraph), &graph, &imported).ok());
  ASSERT_EQ(imported.size(), 4u);
  EXPECT_EQ(imported[2]->name(), "sum");
  EXPECT_EQ(graph.num_op_nodes(), 4);
  Node* sum = graph.FindNode("sum");
  const Edge* in = nullptr;
  ASSERT_TRUE(sum->input_edge(1, &in).ok());
  EXPECT_EQ(in->src()->name(), "b");
  EXPECT_EQ(graph.FindNode("n")->requested_device(), "/device:CPU:0");
  EXPECT_EQ(graph.versions().producer(), 1234);
  EXPECT_EQ(graph.versions().min_consumer(), 12);
  ExpectConsistent(graph);
  ExpectSourceSinkInvariant(graph);

  GraphDef out;
  graph.ToGraphDef(&out);
  EXPECT_EQ(out.node(2).input(0), "a");
  EXPECT_EQ(out.node(2).input(1), "b") << "output 0 is written as the bare name";
  EXPECT_EQ(out.node(2).input(2), "^n");
}

TEST(GraphImport, AcceptsAnyProducerVersion) {
  for (int producer : {0, 1, 27, 1000000}) {
    GraphDef graph_def = ParseGraphDef(kSmallGraph);
    graph_def.mutable_versions()->set_producer(producer);
    Graph graph(OpRegistry::Global());
    EXPECT_TRUE(ConvertGraphDefToGraph(graph_def, &graph).ok()) << producer;
  }
}

struct BadGraphCase {
  const char* what;
  const char* text;
  Code code;
  const char* named;  // the node (or function) the message must name
};

// gtest prints parameters in failure messages; bytes would be unreadable.
void PrintTo(const BadGraphCase& bad, std::ostream* out) { *out << bad.what; }

class GraphImportRejects : public ::testing::TestWithParam<BadGraphCase> {};

TEST_P(GraphImportRejects, WithAnErrorNamingTheNodeAndNoChange) {
  const BadGraphCase& bad = GetParam();
  Graph graph(OpRegistry::Global());
  // An existing node, so "unchanged" means more than "empty".
  MustAdd(&graph, MakeNodeDef("existing", "GraphTestConst"));
  const std::string before = Serialized(graph);
  const int nodes = graph.num_nodes(), ids = graph.num_node_ids(), edges = graph.num_edges();

  std::vector<Node*> imported = {graph.source_node()};
  Status s = ImportRefined(ImportGraphDefOptions(), ParseGraphDef(bad.text), &graph, &imported);
  EXPECT_EQ(s.code(), bad.code) << bad.what << ": " << s;
  EXPECT_TRUE(Contains(s.message(), StrCat("'", bad.named, "'"))) << bad.what << ": " << s;
  EXPECT_TRUE(imported.empty());
  EXPECT_EQ(Serialized(graph), before) << bad.what;
  EXPECT_EQ(graph.num_nodes(), nodes);
  EXPECT_EQ(graph.num_node_ids(), ids) << "validation happens before any node is added";
  EXPECT_EQ(graph.num_edges(), edges);
}

const BadGraphCase kBadGraphs[] = {
    {"duplicate name", R"(node { name: "a" op: "GraphTestConst" }
                          node { name: "a" op: "GraphTestNoOp" })",
     Code::INVALID_ARGUMENT, "a"},
    {"name of an existing node", R"(node { name: "existing" op: "GraphTestConst" })",
     Code::ALREADY_EXISTS, "existing"},
    {"unknown op", R"(node { name: "a" op: "GraphTestConst" }
                      node { name: "weird" op: "GraphTestNoSuchOp" })",
     Code::NOT_FOUND, "weird"},
    {"empty op", R"(node { name: "blank" })", Code::NOT_FOUND, "blank"},
    {"missing attr", R"(node { name: "a" op: "GraphTestConst" }
                        node { name: "add" op: "GraphTestAdd" input: "a" input: "a" })",
     Code::INVALID_ARGUMENT, "add"},
    {"attr of the wrong kind",
     R"(node { name: "c" op: "GraphTestConst" attr { key: "dtype" value { i: 3 } } })",
     Code::INVALID_ARGUMENT, "c"},
    {"type not allowed",
     R"(node { name: "a" op: "GraphTestConst" attr { key: "dtype" value { type: DT_BOOL } } }
         node { name: "add" op: "GraphTestAdd" input: "a" input: "a"
                attr { key: "T" value { type: DT_BOOL } } })",
     Code::INVALID_ARGUMENT, "add"},
    {"undeclared attr",
     R"(node { name: "c" op: "GraphTestConst" attr { key: "colour" value { s: "red" } } })",
     Code::INVALID_ARGUMENT, "c"},
    {"input naming a missing node",
     R"(node { name: "id" op: "GraphTestIdentity" input: "ghost"
               attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "id"},
    {"control input naming a missing node",
     R"(node { name: "n" op: "GraphTestNoOp" input: "^ghost" })", Code::INVALID_ARGUMENT, "n"},
    {"input naming an existing node without permission",
     R"(node { name: "id" op: "GraphTestIdentity" input: "existing"
               attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "id"},
    {"output out of range", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "id" op: "GraphTestIdentity" input: "c:1"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "id"},
    {"data input after control input", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "id" op: "GraphTestIdentity" input: "^c" input: "c"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "id"},
    {"too few inputs", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "add" op: "GraphTestAdd" input: "c"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "add"},
    {"too many inputs", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "id" op: "GraphTestIdentity" input: "c" input: "c"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "id"},
    {"inputs for an op without inputs", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "d" op: "GraphTestConst" input: "c" })",
     Code::INVALID_ARGUMENT, "d"},
    {"dtype mismatch",
     R"(node { name: "i" op: "GraphTestConst" attr { key: "dtype" value { type: DT_INT32 } } }
         node { name: "id" op: "GraphTestSplit" input: "i" })",
     Code::INVALID_ARGUMENT, "id"},
    {"value into a ref input", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "assign" op: "GraphTestAssign" input: "c" input: "c"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "assign"},
    {"two-node cycle", R"(node { name: "c" op: "GraphTestConst" }
         node { name: "x" op: "GraphTestAdd" input: "c" input: "y"
                attr { key: "T" value { type: DT_FLOAT } } }
         node { name: "y" op: "GraphTestIdentity" input: "x"
                attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "x"},
    {"self loop", R"(node { name: "loop" op: "GraphTestIdentity" input: "loop"
                            attr { key: "T" value { type: DT_FLOAT } } })",
     Code::INVALID_ARGUMENT, "loop"},
    {"control cycle", R"(node { name: "p" op: "GraphTestNoOp" input: "^q" }
                         node { name: "q" op: "GraphTestNoOp" input: "^p" })",
     Code::INVALID_ARGUMENT, "p"},
    {"function of an unknown op",
     R"(node { name: "c" op: "GraphTestConst" }
        library { function { signature { name: "my_fn" }
                             node_def { name: "n" op: "NoSuchOp" } } })",
     Code::INVALID_ARGUMENT, "my_fn"},
    {"call of a missing function",
     R"(node { name: "call" op: "PartitionedCall"
               attr { key: "Tin" value { list { } } } attr { key: "Tout" value { list { } } }
               attr { key: "f" value { func { name: "missing_fn" } } } })",
     Code::INVALID_ARGUMENT, "missing_fn"},
    {"empty name", R"(node { name: "" op: "GraphTestConst" })", Code::INVALID_ARGUMENT,
     "GraphTestConst"},
    {"name with a colon", R"(node { name: "a:1" op: "GraphTestConst" })", Code::INVALID_ARGUMENT,
     "a:1"},
};

INSTANTIATE_TEST_SUITE_P(GraphBadDefs, GraphImportRejects, ::testing::ValuesIn(kBadGraphs));

TEST(GraphImport, CycleErrorNamesANodeOnTheCycleNotADownstreamOne) {
  // head feeds the loop x -> y -> x; tail hangs below it. Only x and y may
  // be blamed.
  GraphDef graph_def = ParseGraphDef(R"pb(
    node {
      name: "tail"
      op: "GraphTestIdentity"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node { name: "head" op: "GraphTestConst" }
    node {
      name: "x"
      op: "GraphTestAdd"
      input: "head"
      input: "y"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "y"
      op: "GraphTestIdentity"
      input: "x"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
  )pb");
  Graph graph(OpRegistry::Global());
  Status s = ConvertGraphDefToGraph(graph_def, &graph);
  ASSERT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(s.message().rfind("Node 'x'", 0) == 0 || s.message().rfind("Node 'y'", 0) == 0) << s;
  EXPECT_TRUE(Contains(s.message(), "x -> y -> x") || Contains(s.message(), "y -> x -> y")) << s;
}

TEST(GraphImport, MalformedInputStringsAreErrorsNotCrashes) {
  for (const char* input : {"a:b", "a:-1", "", "^", "a:99999999999", "^a:0", ":0", "a:", "a::0",
                            ":", "^^a", "a:0:0", "a: 1", "a:+1", "\xff\xfe", "a:1e3"}) {
    GraphDef graph_def = ParseGraphDef(R"pb(node { name: "a" op: "GraphTestConst" })pb");
    NodeDef* id = graph_def.add_node();
    id->set_name("id");
    id->set_op("GraphTestIdentity");
    id->add_input(input);
    (*id->mutable_attr())["T"].set_type(DT_FLOAT);
    Graph graph(OpRegistry::Global());
    Status s = ConvertGraphDefToGraph(graph_def, &graph);
    EXPECT_FALSE(s.ok()) << "'" << input << "'";
    EXPECT_TRUE(Contains(s.message(), "'id'")) << "'" << input << "': " << s;
    EXPECT_EQ(graph.num_op_nodes(), 0);
  }
}

TEST(GraphImport, PrefixRenamesNodesAndTheirInputs) {
  Graph graph(OpRegistry::Global());
  ImportGraphDefOptions options;
  options.prefix = "imported";
  std::vector<Node*> imported;
  ASSERT_TRUE(ImportRefined(options, ParseGraphDef(kSmallGraph), &graph, &imported).ok());
  EXPECT_EQ(imported[0]->name(), "imported/a");
  Node* sum = graph.FindNode("imported/sum");
  ASSERT_NE(sum, nullptr);
  const Edge* in = nullptr;
  ASSERT_TRUE(sum->input_edge(0, &in).ok());
  EXPECT_EQ(in->src()->name(), "imported/a");
  EXPECT_EQ(graph.FindNode("a"), nullptr);

  // The same GraphDef again under another prefix sits beside the first; a
  // trailing '/' is not doubled.
  options.prefix = "second/";
  ASSERT_TRUE(ImportRefined(options, ParseGraphDef(kSmallGraph), &graph).ok());
  EXPECT_NE(graph.FindNode("second/sum"), nullptr);
  EXPECT_EQ(graph.num_op_nodes(), 8);
  // A prefix that would make names unparseable is refused up front.
  options.prefix = "bad:prefix";
  Status s = ImportRefined(options, ParseGraphDef(kSmallGraph), &graph);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "'bad:prefix/a'")) << s;
  // The first prefix again collides.
  options.prefix = "imported";
  EXPECT_EQ(ImportRefined(options, ParseGraphDef(kSmallGraph), &graph).code(),
            Code::ALREADY_EXISTS);
  EXPECT_EQ(graph.num_op_nodes(), 8);
  ExpectConsistent(graph);
}

TEST(GraphImport, ResultsNameReturnOutputsInTheGraph) {
  Graph graph(OpRegistry::Global());
  Node* split = MustAdd(&graph, MakeNodeDef("split", "GraphTestSplit"));
  ShapeRefiner refiner(graph);
  ImportGraphDefOptions options;
  options.prefix = "p";
  options.input_map["a"] = {"split", 1};
  options.return_outputs = {{"sum", 0}, {"a", 0}, {"b", 0}};
  ImportGraphDefResults results;
  ASSERT_TRUE(ImportGraphDef(options, ParseGraphDef(kSmallGraph), &graph, &refiner, &results).ok());
  ASSERT_EQ(results.nodes.size(), 4u);
  ASSERT_EQ(results.return_outputs.size(), 3u);
  EXPECT_EQ(results.return_outputs[0].node, graph.FindNode("p/sum"));
  // a was mapped to split:1, so that is what the caller gets back.
  EXPECT_EQ(results.return_outputs[1].node, split);
  EXPECT_EQ(results.return_outputs[1].index, 1);
  EXPECT_EQ(results.return_outputs[2].node, graph.FindNode("p/b"));

  // A failed import leaves the results empty.
  options.return_outputs = {{"nowhere", 0}};
  options.prefix = "q";
  EXPECT_FALSE(
      ImportGraphDef(options, ParseGraphDef(kSmallGraph), &graph, &refiner, &results).ok());
  EXPECT_TRUE(results.nodes.empty());
  EXPECT_TRUE(results.return_outputs.empty());
}

TEST(GraphImport, InputMapAndControlInputMapRewireToExistingNodes) {
  Graph graph(OpRegistry::Global());
  Node* split = MustAdd(&graph, MakeNodeDef("split", "GraphTestSplit"));
  Node* feed = MustAdd(&graph, MakeNodeDef("feed", "GraphTestConst"));
  ASSERT_TRUE(graph.AddEdge(feed, 0, split, 0).ok());
  Node* gate = MustAdd(&graph, MakeNodeDef("gate", "GraphTestNoOp"));

  ImportGraphDefOptions options;
  options.prefix = "p";
  options.input_map["a"] = {"split", 1};       // key without ":0" still matches "a"
  options.input_map["ghost:0"] = {"feed", 0};  // a tensor the GraphDef does not define
  options.control_input_map["n"] = "gate";
  GraphDef graph_def = ParseGraphDef(kSmallGraph);
  NodeDef* extra = graph_def.add_node();
  extra->set_name("uses_ghost");
  extra->set_op("GraphTestIdentity");
  extra->add_input("ghost");
  (*extra->mutable_attr())["T"].set_type(DT_FLOAT);
  ASSERT_TRUE(ImportRefined(options, graph_def, &graph).ok());

  Node* sum = graph.FindNode("p/sum");
  const Edge* in = nullptr;
  ASSERT_TRUE(sum->input_edge(0, &in).ok());
  EXPECT_EQ(in->src(), split);
  EXPECT_EQ(in->src_output(), 1);
  ASSERT_TRUE(sum->input_edge(1, &in).ok());
  EXPECT_EQ(in->src()->name(), "p/b");
  bool gated = false;
  for (const Edge* edge : sum->in_edges()) gated |= edge->IsControlEdge() && edge->src() == gate;
  EXPECT_TRUE(gated);
  ASSERT_TRUE(graph.FindNode("p/uses_ghost")->input_edge(0, &in).ok());
  EXPECT_EQ(in->src(), feed);
  ExpectConsistent(graph);
  ExpectSourceSinkInvariant(graph);

  // Targets that do not exist or do not fit are errors, with nothing added.
  const int nodes = graph.num_nodes();
  ImportGraphDefOptions bad;
  bad.prefix = "q";
  bad.input_map["a"] = {"nowhere", 0};
  EXPECT_EQ(ImportRefined(bad, ParseGraphDef(kSmallGraph), &graph).code(), Code::INVALID_ARGUMENT);
  bad.input_map["a"] = {"split", 2};
  EXPECT_EQ(ImportRefined(bad, ParseGraphDef(kSmallGraph), &graph).code(), Code::INVALID_ARGUMENT);
  bad.input_map.clear();
  bad.input_map["a:x"] = {"split", 0};
  EXPECT_EQ(ImportRefined(bad, ParseGraphDef(kSmallGraph), &graph).code(), Code::INVALID_ARGUMENT);
  bad.input_map.clear();
  bad.control_input_map["n"] = "nowhere";
  Status s = ImportRefined(bad, ParseGraphDef(kSmallGraph), &graph);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "'sum'")) << s;
  bad.control_input_map.clear();
  Graph typed(OpRegistry::Global());
  MustAdd(&typed, WithType(MakeNodeDef("int", "GraphTestConst"), "dtype", DT_INT32));
  bad.input_map["a"] = {"int", 0};
  s = ImportRefined(bad, ParseGraphDef(kSmallGraph), &typed);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT) << "int32 mapped into a float input";
  EXPECT_TRUE(Contains(s.message(), "'sum'")) << s;
  EXPECT_EQ(graph.num_nodes(), nodes);
}

TEST(GraphImport, ExtendStyleImportMayConsumeExistingNodes) {
  Graph graph(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(ParseGraphDef(kSmallGraph), &graph).ok());
  Node* old_sum = graph.FindNode("sum");
  const bool sum_fed_sink = old_sum->out_edges()[0]->dst()->IsSink();
  EXPECT_TRUE(sum_fed_sink);

  GraphDef more = ParseGraphDef(R"pb(
    node {
      name: "twice"
      op: "GraphTestAdd"
      input: "sum"
      input: "sum"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node { name: "after" op: "GraphTestNoOp" input: "^twice" input: "^n" }
    versions { producer: 99 min_consumer: 20 }
  )pb");
  EXPECT_EQ(ConvertGraphDefToGraph(more, &graph).code(), Code::INVALID_ARGUMENT)
      << "without the option, 'sum' is a missing node";
  ImportGraphDefOptions options;
  options.allow_inputs_to_existing_nodes = true;
  std::vector<Node*> imported;
  ASSERT_TRUE(ImportRefined(options, more, &graph, &imported).ok());
  ASSERT_EQ(imported.size(), 2u);
  const Edge* in = nullptr;
  ASSERT_TRUE(imported[0]->input_edge(1, &in).ok());
  EXPECT_EQ(in->src(), old_sum);
  EXPECT_EQ(graph.num_op_nodes(), 6);
  EXPECT_EQ(graph.versions().producer(), 99) << "the older producer wins";
  EXPECT_EQ(graph.versions().min_consumer(), 20) << "the stricter consumer bound wins";
  ExpectConsistent(graph);
  ExpectSourceSinkInvariant(graph);

  // SOURCE and SINK are not nodes an import may consume.
  GraphDef from_sink =
      ParseGraphDef(R"pb(node { name: "w" op: "GraphTestNoOp" input: "^_SINK" })pb");
  EXPECT_EQ(ImportRefined(options, from_sink, &graph).code(), Code::INVALID_ARGUMENT);

  // Re-sending a node the graph already has is refused as a whole.
  EXPECT_EQ(ImportRefined(options, more, &graph).code(), Code::ALREADY_EXISTS);
  EXPECT_EQ(graph.num_op_nodes(), 6);
  std::vector<Node*> order;
  EXPECT_TRUE(TopologicalOrder(graph, &order).ok());
}

TEST(GraphImport, RandomlyCorruptedGraphDefsNeverCrashOrHalfImport) {
  const GraphDef valid = ParseGraphDef(R"pb(
    node { name: "a" op: "GraphTestConst" }
    node {
      name: "v"
      op: "GraphTestVar"
      attr {
        key: "dtype"
        value { type: DT_FLOAT }
      }
    }
    node { name: "s" op: "GraphTestSplit" input: "a" }
    node {
      name: "n"
      op: "GraphTestAddN"
      input: "s"
      input: "s:1"
      input: "v"
      input: "^a"
      attr {
        key: "N"
        value { i: 3 }
      }
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
    node {
      name: "as"
      op: "GraphTestAssign"
      input: "v"
      input: "n"
      attr {
        key: "T"
        value { type: DT_FLOAT }
      }
    }
  )pb");
  const std::vector<std::string> junk = {"a",  "s:1",  "s:2",           "^v",   "v:0", "n",
                                         "",   "^",    "a:b",           "a:-1", "zz",  "as",
                                         ":1", "^s:1", "s:99999999999", "^as",  "n:0"};
  const std::vector<std::string> ops = {"GraphTestNoOp", "GraphTestIdentity", "Nope", ""};
  std::mt19937 rng(20261121);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    GraphDef graph_def = valid;
    const int edits = 1 + rng() % 3;
    for (int e = 0; e < edits; ++e) {
      NodeDef* node = graph_def.mutable_node(rng() % graph_def.node_size());
      switch (rng() % 6) {
        case 0:
          if (node->input_size() > 0) {
            node->set_input(rng() % node->input_size(), junk[rng() % junk.size()]);
          }
          break;
        case 1:
          node->add_input(junk[rng() % junk.size()]);
          break;
        case 2:
          node->clear_input();
          break;
        case 3:
          node->set_op(ops[rng() % ops.size()]);
          break;
        case 4:
          node->mutable_attr()->clear();
          break;
        case 5:
          (*node->mutable_attr())["N"].set_i(static_cast<int64_t>(rng() % 7) - 2);
          break;
      }
    }
    Graph graph(OpRegistry::Global());
    MustAdd(&graph, MakeNodeDef("existing", "GraphTestConst"));
    const std::string before = Serialized(graph);
    ImportGraphDefOptions options;
    options.allow_inputs_to_existing_nodes = rng() % 2;
    Status s = ImportRefined(options, graph_def, &graph);
    if (s.ok()) {
      ++accepted;
      ExpectConsistent(graph);
      std::vector<Node*> order;
      EXPECT_TRUE(TopologicalOrder(graph, &order).ok());
    } else {
      EXPECT_EQ(Serialized(graph), before) << s;
      EXPECT_FALSE(s.message().empty());
    }
  }
  EXPECT_GT(accepted, 0) << "some corruptions are harmless and must still import";
}

}  // namespace
}  // namespace graph_test
}  // namespace tensorweave
