// Tests of the graph layer: Graph/Node/Edge bookkeeping and the graph
// algorithms. GraphDef import has its own file (graph_def_import_test.cc).
#include "tests/runtime/graph_test_util.h"

namespace tensorweave {
namespace graph_test {
namespace {

// --- Graph -----------------------------------------------------------------

TEST(GraphBasics, NewGraphHoldsSourceAndSinkJoinedByControlEdge) {
  Graph graph(OpRegistry::Global());
  EXPECT_EQ(graph.num_nodes(), 2);
  EXPECT_EQ(graph.num_op_nodes(), 0);
  EXPECT_EQ(graph.num_edges(), 1);
  Node* source = graph.source_node();
  Node* sink = graph.sink_node();
  EXPECT_EQ(source->id(), 0);
  EXPECT_EQ(sink->id(), 1);
  EXPECT_TRUE(source->IsSource());
  EXPECT_TRUE(sink->IsSink());
  EXPECT_FALSE(source->IsOp());
  EXPECT_EQ(graph.FindNode("_SOURCE"), source);
  EXPECT_EQ(graph.FindNode("_SINK"), sink);
  ASSERT_EQ(source->out_edges().size(), 1u);
  const Edge* edge = source->out_edges()[0];
  EXPECT_TRUE(edge->IsControlEdge());
  EXPECT_EQ(edge->src_output(), Graph::kControlSlot);
  EXPECT_EQ(edge->dst_input(), Graph::kControlSlot);
  EXPECT_EQ(edge->dst(), sink);
  EXPECT_EQ(Graph::kControlSlot, -1);
  GraphDef graph_def;
  graph.ToGraphDef(&graph_def);
  EXPECT_EQ(graph_def.node_size(), 0) << "SOURCE and SINK are never serialized";
}

TEST(GraphBasics, AddNodeFillsDefaultsAndComputesTypes) {
  Graph graph(OpRegistry::Global());
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->id(), 2);
  EXPECT_EQ(c->type_string(), "GraphTestConst");
  EXPECT_NE(FindNodeAttr(c->def(), "dtype"), nullptr) << "default filled in";
  EXPECT_EQ(c->output_types(), DataTypeVector({DT_FLOAT}));
  EXPECT_EQ(c->num_inputs(), 0);

  Node* add = MustAdd(&graph, WithType(MakeNodeDef("add", "GraphTestAdd"), "T", DT_INT32));
  EXPECT_EQ(add->input_types(), DataTypeVector({DT_INT32, DT_INT32}));
  EXPECT_EQ(add->output_types(), DataTypeVector({DT_INT32}));

  NodeDef addn = WithType(MakeNodeDef("addn", "GraphTestAddN"), "T", DT_FLOAT);
  (*addn.mutable_attr())["N"].set_i(3);
  EXPECT_EQ(MustAdd(&graph, addn)->num_inputs(), 3);

  Node* var = MustAdd(&graph, WithType(MakeNodeDef("v", "GraphTestVar"), "dtype", DT_FLOAT));
  EXPECT_EQ(var->output_type(0), DT_FLOAT_REF);
  EXPECT_TRUE(var->IsStateful());
  EXPECT_FALSE(add->IsStateful());

  // Inputs written in the NodeDef are ignored: edges come separately.
  NodeDef with_inputs = WithType(MakeNodeDef("add2", "GraphTestAdd"), "T", DT_FLOAT);
  with_inputs.add_input("c");
  with_inputs.add_input("^zzz");
  Node* add2 = MustAdd(&graph, with_inputs);
  EXPECT_EQ(add2->def().input_size(), 0);
  ASSERT_EQ(add2->in_edges().size(), 1u) << "only its SOURCE hookup";
  EXPECT_TRUE(add2->in_edges()[0]->src()->IsSource());
  EXPECT_EQ(graph.num_op_nodes(), 5);
  EXPECT_EQ(graph.FindNode("add2"), add2);
  EXPECT_EQ(graph.FindNodeId(add2->id()), add2);
}

TEST(GraphBasics, AddNodeRejectsBadNodesNamingThem) {
  Graph graph(OpRegistry::Global());
  MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  const std::string before = Serialized(graph);
  Node* node = reinterpret_cast<Node*>(0x1);

  Status s = graph.AddNode(MakeNodeDef("mystery", "GraphTestNoSuchOp"), &node);
  EXPECT_EQ(s.code(), Code::NOT_FOUND);
  EXPECT_TRUE(Contains(s.message(), "mystery") && Contains(s.message(), "GraphTestNoSuchOp")) << s;
  EXPECT_EQ(node, nullptr);

  s = graph.AddNode(MakeNodeDef("c", "GraphTestConst"), nullptr);
  EXPECT_EQ(s.code(), Code::ALREADY_EXISTS);
  EXPECT_TRUE(Contains(s.message(), "'c'")) << s;
  EXPECT_EQ(graph.AddNode(MakeNodeDef("_SOURCE", "GraphTestConst"), nullptr).code(),
            Code::ALREADY_EXISTS);

  s = graph.AddNode(MakeNodeDef("no_t", "GraphTestAdd"), nullptr);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "no_t") && Contains(s.message(), "'T'")) << s;

  s = graph.AddNode(WithType(MakeNodeDef("bool_add", "GraphTestAdd"), "T", DT_BOOL), nullptr);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "bool_add")) << s;

  NodeDef extra = MakeNodeDef("extra", "GraphTestConst");
  (*extra.mutable_attr())["bogus"].set_i(1);
  s = graph.AddNode(extra, nullptr);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "extra") && Contains(s.message(), "bogus")) << s;

  NodeDef internal = MakeNodeDef("internal", "GraphTestConst");
  (*internal.mutable_attr())["_class"].set_s("loc:@c");
  EXPECT_TRUE(graph.AddNode(internal, nullptr).ok()) << "underscore attrs are annotations";
  graph.RemoveNode(graph.FindNode("internal"));

  NodeDef wrong_kind = MakeNodeDef("wrong_kind", "GraphTestConst");
  (*wrong_kind.mutable_attr())["dtype"].set_i(1);
  EXPECT_EQ(graph.AddNode(wrong_kind, nullptr).code(), Code::INVALID_ARGUMENT);

  NodeDef negative_n = WithType(MakeNodeDef("neg_n", "GraphTestAddN"), "T", DT_FLOAT);
  (*negative_n.mutable_attr())["N"].set_i(-5);
  s = graph.AddNode(negative_n, nullptr);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "neg_n")) << s;

  for (const char* bad_name : {"", "a:b", "^a", "a:0"}) {
    EXPECT_EQ(graph.AddNode(MakeNodeDef(bad_name, "GraphTestConst"), nullptr).code(),
              Code::INVALID_ARGUMENT)
        << "'" << bad_name << "'";
  }
  EXPECT_EQ(Serialized(graph), before) << "failed AddNode calls leave the graph unchanged";
  EXPECT_EQ(graph.num_op_nodes(), 1);
}

TEST(GraphBasics, RejectedNodeLeavesItsNameFree) {
  // AddNode claims the name before checking the op and attrs; a node it
  // rejects must not keep the name taken (or findable).
  Graph graph(OpRegistry::Global());
  EXPECT_EQ(graph.AddNode(MakeNodeDef("x", "GraphTestNoSuchOp"), nullptr).code(), Code::NOT_FOUND);
  EXPECT_EQ(graph.FindNode("x"), nullptr);
  EXPECT_EQ(graph.AddNode(MakeNodeDef("x", "GraphTestAdd"), nullptr).code(), Code::INVALID_ARGUMENT)
      << "missing attr T";
  EXPECT_EQ(graph.FindNode("x"), nullptr);
  Node* x = MustAdd(&graph, MakeNodeDef("x", "GraphTestConst"));
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(graph.FindNode("x"), x);
  EXPECT_EQ(graph.AddNode(MakeNodeDef("x", "GraphTestConst"), nullptr).code(),
            Code::ALREADY_EXISTS);
  EXPECT_EQ(graph.FindNode("x"), x) << "a duplicate leaves the first node's entry";
}

TEST(GraphBasics, SetAttrRetypesTheNodeOrChangesNothing) {
  Graph graph(OpRegistry::Global());
  Node* a = MustAdd(&graph, MakeNodeDef("a", "GraphTestConst"));
  Node* b = MustAdd(&graph, MakeNodeDef("b", "GraphTestConst"));
  NodeDef addn_def = WithType(MakeNodeDef("addn", "GraphTestAddN"), "T", DT_FLOAT);
  (*addn_def.mutable_attr())["N"].set_i(2);
  Node* addn = MustAdd(&graph, addn_def);
  ASSERT_TRUE(graph.AddEdge(a, 0, addn, 0).ok());
  ASSERT_TRUE(graph.AddEdge(b, 0, addn, 1).ok());

  // Growing N makes a third, unwired input slot.
  AttrValue three;
  three.set_i(3);
  ASSERT_TRUE(addn->SetAttr("N", three).ok());
  EXPECT_EQ(addn->num_inputs(), 3);
  EXPECT_TRUE(graph.AddEdge(a, 0, addn, 2).ok());

  // int32 would not accept the float edges: refused, nothing changes.
  AttrValue int32;
  int32.set_type(DT_INT32);
  Status refused = addn->SetAttr("T", int32);
  EXPECT_EQ(refused.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(refused.message().find("'addn'"), std::string::npos) << refused.message();
  EXPECT_EQ(addn->input_types(), DataTypeVector({DT_FLOAT, DT_FLOAT, DT_FLOAT}));
  // Shrinking N below a wired slot is refused too; a wrong kind of value
  // is the OpDef's to reject.
  AttrValue one;
  one.set_i(1);
  EXPECT_EQ(addn->SetAttr("N", one).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(addn->SetAttr("T", three).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(addn->num_inputs(), 3);

  // An unwired op changes type freely; clearing an attr with a default
  // restores it, one without a default cannot go.
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  ASSERT_TRUE(c->SetAttr("dtype", int32).ok());
  EXPECT_EQ(c->output_type(0), DT_INT32);
  ASSERT_TRUE(c->ClearAttr("dtype").ok());
  EXPECT_EQ(c->output_type(0), DT_FLOAT);
  EXPECT_EQ(addn->ClearAttr("N").code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(FindNodeAttr(addn->def(), "N")->i(), 3);
}

TEST(GraphBasics, AddEdgeChecksSlotsAndTypes) {
  Graph graph(OpRegistry::Global());
  Node* f = MustAdd(&graph, MakeNodeDef("f", "GraphTestConst"));
  Node* i = MustAdd(&graph, WithType(MakeNodeDef("i", "GraphTestConst"), "dtype", DT_INT32));
  Node* add = MustAdd(&graph, WithType(MakeNodeDef("add", "GraphTestAdd"), "T", DT_FLOAT));
  Node* var = MustAdd(&graph, WithType(MakeNodeDef("v", "GraphTestVar"), "dtype", DT_FLOAT));
  Node* assign = MustAdd(&graph, WithType(MakeNodeDef("assign", "GraphTestAssign"), "T", DT_FLOAT));

  const Edge* edge = nullptr;
  ASSERT_TRUE(graph.AddEdge(f, 0, add, 0, &edge).ok());
  EXPECT_EQ(edge->src(), f);
  EXPECT_EQ(edge->dst_input(), 0);
  EXPECT_FALSE(edge->IsControlEdge());

  Status s = graph.AddEdge(f, 1, add, 1);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "'f'") && Contains(s.message(), "'add'")) << s;
  EXPECT_EQ(graph.AddEdge(f, 0, add, 2).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddEdge(f, -2, add, 1).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddEdge(f, 0, add, -7).code(), Code::INVALID_ARGUMENT);
  s = graph.AddEdge(f, 0, add, 0);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT) << "slot 0 is taken";
  EXPECT_TRUE(Contains(s.message(), "already connected")) << s;
  s = graph.AddEdge(i, 0, add, 1);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "int32") && Contains(s.message(), "float")) << s;
  EXPECT_EQ(graph.AddEdge(f, Graph::kControlSlot, add, 1).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddEdge(f, 0, add, Graph::kControlSlot).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddEdge(nullptr, 0, add, 1).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddEdge(f, 0, nullptr, 1).code(), Code::INVALID_ARGUMENT);

  // A ref output may feed a value input; a ref input needs a ref output.
  EXPECT_TRUE(graph.AddEdge(var, 0, add, 1).ok());
  s = graph.AddEdge(f, 0, assign, 0);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "float_ref")) << s;
  EXPECT_TRUE(graph.AddEdge(var, 0, assign, 0).ok());
  EXPECT_TRUE(graph.AddEdge(f, 0, assign, 1).ok());
  EXPECT_TRUE(IsCompatibleEdgeType(DT_FLOAT_REF, DT_FLOAT));
  EXPECT_FALSE(IsCompatibleEdgeType(DT_FLOAT, DT_FLOAT_REF));
  EXPECT_FALSE(IsCompatibleEdgeType(DT_INT32_REF, DT_FLOAT));

  // Control edges through AddEdge, deduplicated.
  ASSERT_TRUE(graph.AddEdge(i, Graph::kControlSlot, add, Graph::kControlSlot, &edge).ok());
  EXPECT_TRUE(edge->IsControlEdge());
  const int edges = graph.num_edges();
  EXPECT_EQ(graph.AddControlEdge(i, add), edge);
  EXPECT_EQ(graph.num_edges(), edges);
  EXPECT_EQ(graph.AddControlEdge(nullptr, add), nullptr);

  const Edge* in = nullptr;
  ASSERT_TRUE(add->input_edge(1, &in).ok());
  EXPECT_EQ(in->src(), var);
  EXPECT_EQ(add->input_edge(2, &in).code(), Code::NOT_FOUND);
  EXPECT_EQ(add->input_edge(-1, &in).code(), Code::NOT_FOUND);
  Node* lonely = MustAdd(&graph, WithType(MakeNodeDef("lonely", "GraphTestAdd"), "T", DT_FLOAT));
  s = lonely->input_edge(0, &in);
  EXPECT_EQ(s.code(), Code::NOT_FOUND);
  EXPECT_TRUE(Contains(s.message(), "lonely")) << s;
  ExpectConsistent(graph);
}

TEST(GraphBasics, NodesFromAnotherGraphAreRejected) {
  Graph graph(OpRegistry::Global());
  Graph other(OpRegistry::Global());
  Node* mine = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  Node* theirs = MustAdd(&other, WithType(MakeNodeDef("id", "GraphTestIdentity"), "T", DT_FLOAT));
  const int edges = other.num_edges();
  EXPECT_EQ(graph.AddEdge(mine, 0, theirs, 0).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(graph.AddControlEdge(mine, theirs), nullptr);
  EXPECT_EQ(other.num_edges(), edges);
  EXPECT_EQ(edges, 3) << "SOURCE->SINK and the hookups of id";
}

TEST(GraphBasics, RemovalKeepsEdgeListsConsistent) {
  Graph graph(OpRegistry::Global());
  Node* hub = MustAdd(&graph, MakeNodeDef("hub", "GraphTestConst"));
  std::vector<Node*> consumers;
  for (int k = 0; k < 20; ++k) {
    Node* node =
        MustAdd(&graph, WithType(MakeNodeDef(StrCat("id", k), "GraphTestIdentity"), "T", DT_FLOAT));
    ASSERT_TRUE(graph.AddEdge(hub, 0, node, 0).ok());
    graph.AddControlEdge(node, graph.sink_node());
    consumers.push_back(node);
  }
  ExpectConsistent(graph);
  // Remove from the middle, the front and the back of the hub's edge list.
  for (int k : {10, 0, 19, 5, 6, 18}) {
    const int id = consumers[k]->id();
    graph.RemoveNode(consumers[k]);
    EXPECT_EQ(graph.FindNodeId(id), nullptr);
    EXPECT_EQ(graph.FindNode(StrCat("id", k)), nullptr);
    ExpectConsistent(graph);
  }
  EXPECT_EQ(hub->out_edges().size(), 14u);
  EXPECT_EQ(graph.num_op_nodes(), 15);
  // A data edge removed frees its slot.
  const Edge* in = nullptr;
  ASSERT_TRUE(consumers[3]->input_edge(0, &in).ok());
  graph.RemoveEdge(in);
  EXPECT_EQ(consumers[3]->input_edge(0, &in).code(), Code::NOT_FOUND);
  EXPECT_TRUE(graph.AddEdge(hub, 0, consumers[3], 0).ok());
  ExpectConsistent(graph);
  graph.RemoveEdge(nullptr);  // ignored

  // Ids are never reused; SOURCE and SINK cannot be removed.
  const int next_id = graph.num_node_ids();
  Node* fresh = MustAdd(&graph, MakeNodeDef("fresh", "GraphTestConst"));
  EXPECT_EQ(fresh->id(), next_id);
  graph.RemoveNode(graph.source_node());
  graph.RemoveNode(graph.sink_node());
  graph.RemoveNode(nullptr);
  EXPECT_NE(graph.source_node(), nullptr);
  EXPECT_EQ(graph.FindNode("_SINK"), graph.sink_node());
  EXPECT_EQ(static_cast<int>(graph.nodes().size()), graph.num_nodes());
  EXPECT_EQ(static_cast<int>(graph.op_nodes().size()), graph.num_op_nodes());
  ExpectConsistent(graph);
}

// True when `node` has a control edge from SOURCE / to SINK.
bool FromSource(const Node* node) {
  for (const Edge* edge : node->in_edges()) {
    if (edge->src()->IsSource()) return true;
  }
  return false;
}
bool ToSink(const Node* node) {
  for (const Edge* edge : node->out_edges()) {
    if (edge->dst()->IsSink()) return true;
  }
  return false;
}

TEST(GraphSourceSink, AddNodeHooksTheNodeBetweenSourceAndSink) {
  Graph graph(OpRegistry::Global());
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  ASSERT_EQ(c->in_edges().size(), 1u);
  ASSERT_EQ(c->out_edges().size(), 1u);
  EXPECT_TRUE(c->in_edges()[0]->IsControlEdge());
  EXPECT_EQ(c->in_edges()[0]->src(), graph.source_node());
  EXPECT_EQ(c->out_edges()[0]->dst(), graph.sink_node());
  EXPECT_EQ(graph.num_edges(), 3) << "SOURCE->SINK, SOURCE->c, c->SINK";
  // Asking for a hookup again adds nothing.
  EXPECT_EQ(graph.AddControlEdge(graph.source_node(), c), c->in_edges()[0]);
  EXPECT_EQ(graph.AddControlEdge(c, graph.sink_node()), c->out_edges()[0]);
  EXPECT_EQ(graph.num_edges(), 3);
  ExpectConsistent(graph);
}

TEST(GraphSourceSink, EdgesBetweenOpNodesDropTheHookupsTheyReplace) {
  Graph graph(OpRegistry::Global());
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  Node* id = MustAdd(&graph, WithType(MakeNodeDef("id", "GraphTestIdentity"), "T", DT_FLOAT));
  Node* noop = MustAdd(&graph, MakeNodeDef("noop", "GraphTestNoOp"));
  ASSERT_TRUE(graph.AddEdge(c, 0, id, 0).ok());
  // c keeps SOURCE and loses SINK; id loses SOURCE and keeps SINK.
  EXPECT_TRUE(FromSource(c));
  EXPECT_FALSE(ToSink(c));
  EXPECT_FALSE(FromSource(id));
  EXPECT_TRUE(ToSink(id));
  EXPECT_EQ(c->out_edges().size(), 1u);
  EXPECT_EQ(id->in_edges().size(), 1u);
  // A control edge counts as much as a data edge.
  graph.AddControlEdge(id, noop);
  EXPECT_FALSE(ToSink(id));
  EXPECT_FALSE(FromSource(noop));
  EXPECT_TRUE(ToSink(noop));
  EXPECT_EQ(graph.num_edges(), 5) << "SOURCE->SINK, SOURCE->c, c->id, id->noop, noop->SINK";
  ExpectConsistent(graph);
  // A failed AddEdge changes nothing.
  EXPECT_FALSE(graph.AddEdge(noop, 0, id, 0).ok());
  EXPECT_EQ(graph.num_edges(), 5);
  ExpectConsistent(graph);
}

TEST(GraphSourceSink, RemovingEdgesAndNodesHooksUpWhatTheyLeaveAlone) {
  Graph graph(OpRegistry::Global());
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  Node* id = MustAdd(&graph, WithType(MakeNodeDef("id", "GraphTestIdentity"), "T", DT_FLOAT));
  Node* noop = MustAdd(&graph, MakeNodeDef("noop", "GraphTestNoOp"));
  const Edge* data = nullptr;
  ASSERT_TRUE(graph.AddEdge(c, 0, id, 0, &data).ok());
  graph.AddControlEdge(id, noop);

  graph.RemoveEdge(data);
  EXPECT_TRUE(ToSink(c));
  EXPECT_TRUE(FromSource(id));
  ExpectConsistent(graph);

  ASSERT_TRUE(graph.AddEdge(c, 0, id, 0).ok());
  graph.RemoveNode(id);  // c loses its only consumer, noop its only input
  EXPECT_TRUE(ToSink(c));
  EXPECT_TRUE(FromSource(noop));
  EXPECT_EQ(graph.num_edges(), 5) << "SOURCE->SINK and the hookups of c and noop";
  ExpectConsistent(graph);

  // Removing a hookup a node still needs gives it a new one.
  const Edge* hookup = noop->in_edges()[0];
  graph.RemoveEdge(hookup);
  EXPECT_TRUE(FromSource(noop));
  ExpectConsistent(graph);
}

TEST(GraphSourceSink, RemovingANodeOnASelfLoopIsSafe) {
  Graph graph(OpRegistry::Global());
  Node* noop = MustAdd(&graph, MakeNodeDef("noop", "GraphTestNoOp"));
  Node* other = MustAdd(&graph, MakeNodeDef("other", "GraphTestNoOp"));
  graph.AddControlEdge(noop, noop);
  graph.AddControlEdge(noop, other);
  graph.RemoveNode(noop);
  EXPECT_EQ(graph.num_op_nodes(), 1);
  EXPECT_TRUE(FromSource(other));
  ExpectConsistent(graph);
}

TEST(GraphBasics, ToGraphDefWritesInputsInSlotOrderThenSortedControls) {
  Graph graph(OpRegistry::Global());
  Node* c = MustAdd(&graph, MakeNodeDef("c", "GraphTestConst"));
  Node* split = MustAdd(&graph, MakeNodeDef("split", "GraphTestSplit"));
  Node* z = MustAdd(&graph, MakeNodeDef("z", "GraphTestNoOp"));
  Node* a = MustAdd(&graph, MakeNodeDef("a", "GraphTestNoOp"));
  NodeDef add_def = WithType(MakeNodeDef("add", "GraphTestAdd"), "T", DT_FLOAT);
  add_def.set_device("/device:CPU:0");
  Node* add = MustAdd(&graph, add_def);
  // Added out of slot order and controls out of name order on purpose.
  graph.AddControlEdge(z, add);
  ASSERT_TRUE(graph.AddEdge(split, 1, add, 1).ok());
  graph.AddControlEdge(a, add);
  ASSERT_TRUE(graph.AddEdge(c, 0, split, 0).ok());
  ASSERT_TRUE(graph.AddEdge(split, 0, add, 0).ok());

  GraphDef graph_def;
  graph.ToGraphDef(&graph_def);
  ASSERT_EQ(graph_def.node_size(), 5);
  const NodeDef& written = graph_def.node(4);
  EXPECT_EQ(written.name(), "add");
  ASSERT_EQ(written.input_size(), 4);
  EXPECT_EQ(written.input(0), "split");
  EXPECT_EQ(written.input(1), "split:1");
  EXPECT_EQ(written.input(2), "^a");
  EXPECT_EQ(written.input(3), "^z");
  EXPECT_EQ(written.device(), "/device:CPU:0");
  EXPECT_EQ(graph_def.node(0).input_size(), 0) << "SOURCE edges are not written";

  add->set_assigned_device_name("/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_EQ(graph.NodeDefWithInputs(add).device(), "/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_EQ(add->requested_device(), "/device:CPU:0");

  // The serialization imports back to the same serialization.
  Graph copy(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(graph_def, &copy).ok());
  GraphDef again;
  copy.ToGraphDef(&again);
  EXPECT_EQ(Bytes(again), Bytes(graph_def));
}

TEST(GraphBasics, NewNameIsFresh) {
  Graph graph(OpRegistry::Global());
  MustAdd(&graph, MakeNodeDef("x/_0", "GraphTestConst"));
  const std::string first = graph.NewName("x");
  EXPECT_NE(first, "x/_0");
  EXPECT_EQ(first.rfind("x/_", 0), 0u);
  EXPECT_NE(graph.NewName("x"), first);
  EXPECT_EQ(graph.FindNode(graph.NewName("")), nullptr);
}

// --- algorithms ------------------------------------------------------------

TEST(GraphAlgorithm, TopologicalOrderPutsProducersFirst) {
  Graph graph(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(ParseGraphDef(kSmallGraph), &graph).ok());
  std::vector<Node*> order;
  ASSERT_TRUE(TopologicalOrder(graph, &order).ok());
  ASSERT_EQ(static_cast<int>(order.size()), graph.num_nodes());
  EXPECT_TRUE(order.front()->IsSource());
  EXPECT_TRUE(order.back()->IsSink());
  std::vector<int> position(graph.num_node_ids(), -1);
  for (size_t k = 0; k < order.size(); ++k) position[order[k]->id()] = static_cast<int>(k);
  for (Node* node : graph.nodes()) {
    for (const Edge* edge : node->in_edges()) {
      EXPECT_LT(position[edge->src()->id()], position[node->id()]) << node->name();
    }
  }
}

TEST(GraphAlgorithm, TopologicalOrderReportsACycleNode) {
  Graph graph(OpRegistry::Global());
  Node* head = MustAdd(&graph, MakeNodeDef("head", "GraphTestConst"));
  Node* x = MustAdd(&graph, WithType(MakeNodeDef("x", "GraphTestAdd"), "T", DT_FLOAT));
  Node* y = MustAdd(&graph, WithType(MakeNodeDef("y", "GraphTestIdentity"), "T", DT_FLOAT));
  Node* tail = MustAdd(&graph, WithType(MakeNodeDef("tail", "GraphTestIdentity"), "T", DT_FLOAT));
  ASSERT_TRUE(graph.AddEdge(head, 0, x, 0).ok());
  ASSERT_TRUE(graph.AddEdge(y, 0, x, 1).ok());
  ASSERT_TRUE(graph.AddEdge(x, 0, y, 0).ok());
  ASSERT_TRUE(graph.AddEdge(y, 0, tail, 0).ok());
  std::vector<Node*> order;
  Status s = TopologicalOrder(graph, &order);
  ASSERT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(s.message().rfind("Node 'x'", 0) == 0 || s.message().rfind("Node 'y'", 0) == 0) << s;
  EXPECT_TRUE(order.empty());

  // A control self-loop is a cycle too.
  Graph loop(OpRegistry::Global());
  Node* n = MustAdd(&loop, MakeNodeDef("n", "GraphTestNoOp"));
  loop.AddControlEdge(n, n);
  s = TopologicalOrder(loop, &order);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(s.message(), "'n'")) << s;
}

TEST(GraphAlgorithm, ReverseReachableFollowsDataAndControlEdges) {
  Graph graph(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(ParseGraphDef(kSmallGraph), &graph).ok());
  Node* unrelated = MustAdd(&graph, MakeNodeDef("unrelated", "GraphTestConst"));
  auto reached = ReverseReachable(graph, {graph.FindNode("sum")});
  for (const char* name : {"a", "b", "n", "sum", "_SOURCE"}) {
    EXPECT_TRUE(reached.count(graph.FindNode(name))) << name;
  }
  EXPECT_FALSE(reached.count(unrelated));
  EXPECT_FALSE(reached.count(graph.sink_node()));
  EXPECT_TRUE(ReverseReachable(graph, {}).empty());
  EXPECT_TRUE(ReverseReachable(graph, {nullptr}).empty());
}

TEST(GraphAlgorithm, PruneKeepsWhatTargetsNeedAndRestoresSinkEdges) {
  Graph graph(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(ParseGraphDef(R"pb(
                                       node { name: "a" op: "GraphTestConst" }
                                       node { name: "s" op: "GraphTestSplit" input: "a" }
                                       node {
                                         name: "low"
                                         op: "GraphTestIdentity"
                                         input: "s"
                                         attr {
                                           key: "T"
                                           value { type: DT_FLOAT }
                                         }
                                       }
                                       node {
                                         name: "high"
                                         op: "GraphTestIdentity"
                                         input: "s:1"
                                         attr {
                                           key: "T"
                                           value { type: DT_FLOAT }
                                         }
                                       }
                                       node {
                                         name: "both"
                                         op: "GraphTestAdd"
                                         input: "low"
                                         input: "high"
                                         attr {
                                           key: "T"
                                           value { type: DT_FLOAT }
                                         }
                                       }
                                       node { name: "stray" op: "GraphTestConst" }
                                     )pb"),
                                     &graph)
                  .ok());
  EXPECT_TRUE(PruneForTargets(&graph, {graph.FindNode("low")}));
  EXPECT_EQ(graph.num_op_nodes(), 3);
  EXPECT_EQ(graph.FindNode("both"), nullptr);
  EXPECT_EQ(graph.FindNode("stray"), nullptr);
  Node* low = graph.FindNode("low");
  ASSERT_EQ(low->out_edges().size(), 1u);
  EXPECT_TRUE(low->out_edges()[0]->dst()->IsSink()) << "low lost its consumer and feeds SINK";
  ExpectConsistent(graph);
  ExpectSourceSinkInvariant(graph);
  EXPECT_FALSE(PruneForTargets(&graph, {low})) << "nothing left to prune";
  EXPECT_TRUE(PruneForTargets(&graph, {}));
  EXPECT_EQ(graph.num_op_nodes(), 0);
  EXPECT_EQ(graph.num_nodes(), 2);
}

TEST(GraphAlgorithm, CopyGraphReproducesNodesEdgesAndDevices) {
  Graph src(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(ParseGraphDef(kSmallGraph), &src).ok());
  src.RemoveNode(src.FindNode("b"));  // leaves a hole in the ids and an open slot
  MustAdd(&src, MakeNodeDef("late", "GraphTestConst"));
  src.FindNode("a")->set_assigned_device_name("/job:localhost/replica:0/task:0/device:CPU:0");

  Graph dst(OpRegistry::Global());
  ASSERT_TRUE(CopyGraph(src, &dst).ok());
  EXPECT_EQ(Serialized(dst), Serialized(src));
  EXPECT_EQ(dst.num_nodes(), src.num_nodes());
  EXPECT_EQ(dst.num_edges(), src.num_edges());
  EXPECT_EQ(dst.FindNode("n")->requested_device(), "/device:CPU:0");
  EXPECT_EQ(dst.FindNode("a")->assigned_device_name(),
            "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(dst.versions().producer(), 1234);
  ExpectConsistent(dst);

  EXPECT_EQ(CopyGraph(src, &dst).code(), Code::INVALID_ARGUMENT) << "dst must be empty";
  EXPECT_EQ(CopyGraph(src, &src).code(), Code::INVALID_ARGUMENT);
}

// Pruning, ordering and import stay linear even around SOURCE and SINK,
// which touch nearly every node; a quadratic step would take minutes here.
TEST(GraphAlgorithm, LargeGraphsStayLinear) {
  const int kWidth = 100000;
  GraphDef graph_def;
  NodeDef* hub = graph_def.add_node();
  hub->set_name("hub");
  hub->set_op("GraphTestConst");
  for (int k = 0; k < kWidth; ++k) {
    NodeDef* node = graph_def.add_node();
    node->set_name(StrCat("id", k));
    node->set_op("GraphTestIdentity");
    node->add_input("hub");
    (*node->mutable_attr())["T"].set_type(DT_FLOAT);
  }
  Graph graph(OpRegistry::Global());
  ASSERT_TRUE(ConvertGraphDefToGraph(graph_def, &graph).ok());
  std::vector<Node*> order;
  ASSERT_TRUE(TopologicalOrder(graph, &order).ok());
  EXPECT_EQ(static_cast<int>(order.size()), kWidth + 3);
  EXPECT_TRUE(PruneForTargets(&graph, {graph.FindNode("id7")}));
  EXPECT_EQ(graph.num_op_nodes(), 2);
  ExpectConsistent(graph);
}

}  // namespace
}  // namespace graph_test
}  // namespace tensorweave
