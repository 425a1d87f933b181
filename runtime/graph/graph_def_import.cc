#include "runtime/graph/graph_def_import.h"

#include <algorithm>
#include <unordered_map>

#include "runtime/framework/node_def_util.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {
namespace {

// Everything about one GraphDef node that validation works out, kept so
// the commit phase cannot fail for reasons validation already checked.
struct PendingNode {
  // Where an input comes from: an imported node (by GraphDef index) or a
  // node already in the graph.
  struct Source {
    int imported = -1;
    Node* existing = nullptr;
    int output = 0;
  };
  const NodeDef* def = nullptr;
  std::string name;  // with the prefix
  DataTypeVector input_types;
  DataTypeVector output_types;
  std::vector<Source> data_inputs;     // by input slot
  std::vector<Source> control_inputs;  // deduplicated
};

// The functions of `library` that `graph` does not hold yet, checked on
// their own terms and against the graph's (in `staged`, whose registry then
// resolves the graph's ops and functions and the new ones). A function the
// graph already holds identically is left out; a different one of the same
// name is INVALID_ARGUMENT.
Status StageLibrary(const FunctionDefLibrary& library, const Graph& graph,
                    FunctionLibraryDefinition* staged) {
  FunctionDefLibrary fresh;
  for (const FunctionDef& function : library.function()) {
    const FunctionDef* held = graph.flib_def().Find(function.signature().name());
    if (held == nullptr) {
      *fresh.add_function() = function;
    } else if (!SameFunction(*held, function)) {
      return errors::InvalidArgument("Cannot add function '", function.signature().name(),
                                     "' because a different function with the same name already "
                                     "exists in the graph");
    }
  }
  *fresh.mutable_gradient() = library.gradient();
  *fresh.mutable_registered_gradients() = library.registered_gradients();
  return staged->AddLibrary(fresh);
}

// Every function a node's attrs name (If's branches, a call's `f`) is one
// the graph can run: a function of its library (or an op).
Status CheckFunctionAttrs(const NodeDef& def, const OpRegistry& ops) {
  for (const std::string& function : FunctionsNamedByAttrs(def)) {
    if (ops.LookUp(function) == nullptr) {
      return errors::InvalidArgument("Node '", def.name(), "' (op ", def.op(), ") calls function '",
                                     function, "', which is not in the graph's function library");
    }
  }
  return Status::OK();
}

// Imported nodes may only consume op nodes: SOURCE and SINK are bookkeeping
// that executors skip, so an edge out of them would never fire.
Node* FindOpNode(const Graph& graph, const std::string& name) {
  Node* node = graph.FindNode(name);
  return node != nullptr && node->IsOp() ? node : nullptr;
}

// input_map keys as TensorIds written canonically ("x" and "x:0" agree).
Status CanonicalInputMap(const ImportGraphDefOptions& options, const Graph& graph,
                         std::unordered_map<std::string, PendingNode::Source>* out) {
  for (const auto& entry : options.input_map) {
    TensorId key;
    if (!ParseTensorName(entry.first, &key) || key.index < 0) {
      return errors::InvalidArgument("input_map key '", entry.first,
                                     "' is not a tensor name of the form node:index");
    }
    Node* target = FindOpNode(graph, entry.second.first);
    if (target == nullptr) {
      return errors::InvalidArgument("input_map maps '", entry.first, "' to node '",
                                     entry.second.first, "', which is not in the graph");
    }
    if (entry.second.second < 0 || entry.second.second >= target->num_outputs()) {
      return errors::InvalidArgument("input_map maps '", entry.first, "' to output ",
                                     entry.second.second, " of node '", target->name(),
                                     "', which has ", target->num_outputs(), " outputs");
    }
    PendingNode::Source source;
    source.existing = target;
    source.output = entry.second.second;
    (*out)[StrCat(key.node, ":", key.index)] = source;
  }
  return Status::OK();
}

// Resolves every input of `pending[i]` to an imported or existing node and
// checks output ranges and dtypes.
Status ResolveInputs(const ImportGraphDefOptions& options, const Graph& graph,
                     const std::unordered_map<std::string, int>& by_name,
                     const std::unordered_map<std::string, PendingNode::Source>& input_map,
                     std::vector<PendingNode>* pending, int i) {
  PendingNode& node = (*pending)[i];
  const std::string& node_name = node.def->name();
  int slot = 0;
  for (const std::string& input : node.def->input()) {
    TensorId id;
    if (!ParseTensorName(input, &id)) {
      return errors::InvalidArgument("Node '", node_name, "' has malformed input '", input, "'");
    }
    const bool is_control = id.index == Graph::kControlSlot;
    PendingNode::Source source;
    source.output = id.index;
    bool found = false;

    if (is_control) {
      auto mapped = options.control_input_map.find(id.node);
      if (mapped != options.control_input_map.end()) {
        source.existing = FindOpNode(graph, mapped->second);
        if (source.existing == nullptr) {
          return errors::InvalidArgument("Node '", node_name, "': control_input_map sends '", input,
                                         "' to node '", mapped->second,
                                         "', which is not in the graph");
        }
        found = true;
      }
    } else if (!input_map.empty()) {
      auto mapped = input_map.find(StrCat(id.node, ":", id.index));
      if (mapped != input_map.end()) {
        source = mapped->second;
        found = true;
      }
    }
    if (!found) {
      auto local = by_name.find(id.node);
      if (local != by_name.end()) {
        source.imported = local->second;
      } else if (options.allow_inputs_to_existing_nodes) {
        source.existing = FindOpNode(graph, id.node);
      }
      if (source.imported < 0 && source.existing == nullptr) {
        if (FindOpNode(graph, id.node) != nullptr) {
          return errors::InvalidArgument(
              "Node '", node_name, "' has input '", input, "', which names a node outside the ",
              "GraphDef; inputs from existing graph nodes are not allowed in this import");
        }
        return errors::InvalidArgument("Node '", node_name, "' has input '", input,
                                       "', but no node named '", id.node, "' exists");
      }
    }

    if (is_control) {
      // Duplicates would become one edge anyway; dropping them here keeps
      // the commit phase simple.
      bool duplicate = false;
      for (const PendingNode::Source& seen : node.control_inputs) {
        duplicate |= seen.imported == source.imported && seen.existing == source.existing;
      }
      if (!duplicate) node.control_inputs.push_back(source);
      continue;
    }

    // ValidateNodeDef already checked the count and that data inputs come
    // first; this guards the indexing below all the same.
    if (slot >= static_cast<int>(node.input_types.size())) {
      return errors::InvalidArgument("Node '", node_name, "' has more data inputs than its op (",
                                     node.def->op(), ") takes");
    }
    const std::string source_name =
        source.existing ? source.existing->name() : (*pending)[source.imported].def->name();
    const DataTypeVector& source_outputs = source.existing
                                               ? source.existing->output_types()
                                               : (*pending)[source.imported].output_types;
    if (source.output >= static_cast<int>(source_outputs.size())) {
      return errors::InvalidArgument("Node '", node_name, "': input ", slot, " ('", input,
                                     "') asks for output ", source.output, " of node '",
                                     source_name, "', which has ", source_outputs.size(),
                                     " outputs");
    }
    const DataType have = source_outputs[source.output];
    const DataType want = node.input_types[slot];
    if (!IsCompatibleEdgeType(have, want)) {
      return errors::InvalidArgument("Node '", node_name, "': input ", slot, " expects ",
                                     DataTypeString(want), " but '", input, "' is ",
                                     DataTypeString(have));
    }
    node.data_inputs.push_back(source);
    ++slot;
  }
  if (slot != static_cast<int>(node.input_types.size())) {
    return errors::InvalidArgument("Node '", node_name, "' has ", slot, " data inputs but its op (",
                                   node.def->op(), ") takes ", node.input_types.size());
  }
  return Status::OK();
}

// Imported nodes with no input (data or control) from another imported node
// get a control input from each of options.control_dependencies, so every
// imported node runs after them.
Status AddControlDependencies(const ImportGraphDefOptions& options, const Graph& graph,
                              std::vector<PendingNode>* pending) {
  std::vector<PendingNode::Source> dependencies;
  for (const std::string& name : options.control_dependencies) {
    PendingNode::Source source;
    source.existing = FindOpNode(graph, name);
    source.output = Graph::kControlSlot;
    if (source.existing == nullptr) {
      return errors::InvalidArgument("Control dependency '", name,
                                     "' of the import is not an operation of the graph");
    }
    dependencies.push_back(source);
  }
  if (dependencies.empty()) return Status::OK();
  auto imported = [](const PendingNode::Source& source) { return source.imported >= 0; };
  for (PendingNode& node : *pending) {
    if (std::any_of(node.data_inputs.begin(), node.data_inputs.end(), imported) ||
        std::any_of(node.control_inputs.begin(), node.control_inputs.end(), imported)) {
      continue;
    }
    for (const PendingNode::Source& dependency : dependencies) {
      bool duplicate = false;
      for (const PendingNode::Source& seen : node.control_inputs) {
        duplicate |= seen.existing == dependency.existing;
      }
      if (!duplicate) node.control_inputs.push_back(dependency);
    }
  }
  return Status::OK();
}

bool IsMergeType(const std::string& op) { return op == "Merge" || op == "RefMerge"; }
bool IsNextIterationType(const std::string& op) {
  return op == "NextIteration" || op == "RefNextIteration";
}

// Kahn's algorithm over the imported nodes: `order` gets them producers
// first, except across while-loop back edges (NextIteration -> Merge). A node left over sits on or
// below a cycle. Walking back through left-over producers must revisit a node, and that node is on
// a cycle, so the message can show the loop.
Status TopologicalOrder(const std::vector<PendingNode>& pending, std::vector<int>* order) {
  const int n = static_cast<int>(pending.size());
  std::vector<int> remaining(n, 0);
  std::vector<std::vector<int>> consumers(n);
  auto for_each_imported_input = [&](int i, auto&& visit) {
    const bool is_merge = IsMergeType(pending[i].def->op());
    for (const PendingNode::Source& s : pending[i].data_inputs) {
      // A while loop's back edge NextIteration -> Merge closes the only
      // cycles a graph may have; the order ignores it.
      if (s.imported >= 0 && !(is_merge && IsNextIterationType(pending[s.imported].def->op()))) {
        visit(s.imported);
      }
    }
    for (const PendingNode::Source& s : pending[i].control_inputs) {
      if (s.imported >= 0) visit(s.imported);
    }
  };
  for (int i = 0; i < n; ++i) {
    for_each_imported_input(i, [&](int producer) {
      consumers[producer].push_back(i);
      ++remaining[i];
    });
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (remaining[i] == 0) ready.push_back(i);
  }
  order->clear();
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    order->push_back(i);
    for (int consumer : consumers[i]) {
      if (--remaining[consumer] == 0) ready.push_back(consumer);
    }
  }
  if (static_cast<int>(order->size()) == n) return Status::OK();

  int current = 0;
  while (remaining[current] == 0) ++current;
  std::vector<int> step(n, -1);  // position on the walk, -1 when unvisited
  std::vector<int> walk;
  while (step[current] < 0) {
    step[current] = static_cast<int>(walk.size());
    walk.push_back(current);
    int next = -1;
    for_each_imported_input(current, [&](int producer) {
      if (next < 0 && remaining[producer] > 0) next = producer;
    });
    current = next;  // exists: a left-over node has a left-over producer
  }
  // walk[step[current]..] is the cycle, consumers before producers.
  std::vector<std::string> names;
  for (size_t k = walk.size(); k-- > static_cast<size_t>(step[current]);) {
    names.push_back(pending[walk[k]].def->name());
  }
  names.push_back(names.front());  // close the loop
  return errors::InvalidArgument("Node '", pending[current].def->name(),
                                 "' is on a cycle: ", StrJoin(names, " -> "),
                                 " (the only cycles allowed are while loops, closed by an edge "
                                 "from a NextIteration to a Merge)");
}

VersionDef MergeVersions(const Graph& graph, const GraphDef& graph_def) {
  const VersionDef& incoming = graph_def.versions();
  if (graph.num_op_nodes() == 0) return incoming;
  // The combined graph is as old as its oldest part and needs whatever the
  // strictest part needs.
  VersionDef merged = graph.versions();
  merged.set_producer(std::min(merged.producer(), incoming.producer()));
  merged.set_min_consumer(std::max(merged.min_consumer(), incoming.min_consumer()));
  for (int bad : incoming.bad_consumers()) {
    if (std::find(merged.bad_consumers().begin(), merged.bad_consumers().end(), bad) ==
        merged.bad_consumers().end()) {
      merged.add_bad_consumers(bad);
    }
  }
  return merged;
}

// `name` fit for an error message: bytes outside printable ASCII (a NUL
// among them) are shown as \xNN, so the message stays one readable C string.
std::string Printable(const std::string& name) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

}  // namespace

bool IsValidNodeName(const std::string& name) {
  auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || !(is_alnum(name[0]) || name[0] == '.')) return false;
  for (char c : name) {
    if (!is_alnum(c) && c != '_' && c != '.' && c != '-' && c != '/' && c != '>') return false;
  }
  return true;
}

bool IsInternalOp(const std::string& op_type) {
  // Not every '_' op: TensorFlow's optimizer writes ops such as _FusedConv2D
  // into GraphDefs users export, and those are ordinary ops to a runtime
  // that has them.
  static const char* const kRuntimeOps[] = {"_Arg",  "_Retval",   "_Send",
                                            "_Recv", "_HostSend", "_HostRecv"};
  for (const char* runtime_op : kRuntimeOps) {
    if (op_type == runtime_op) return true;
  }
  return false;
}

Status ValidateUserNode(const NodeDef& node_def) {
  if (!IsValidNodeName(node_def.name())) {
    return errors::InvalidArgument("Node '", Printable(node_def.name()),
                                   "' has an invalid name: node names match "
                                   "[A-Za-z0-9.][A-Za-z0-9_.\\-/>]*");
  }
  if (IsInternalOp(node_def.op())) {
    return errors::InvalidArgument("Node '", node_def.name(), "' has op '",
                                   Printable(node_def.op()),
                                   "', which only the runtime may insert into a graph");
  }
  return Status::OK();
}

Status ImportGraphDef(const ImportGraphDefOptions& options, const GraphDef& graph_def, Graph* graph,
                      ShapeRefiner* refiner, ImportGraphDefResults* results) {
  if (results != nullptr) *results = ImportGraphDefResults();
  if (graph == nullptr) return errors::InvalidArgument("ImportGraphDef: no graph given");
  // The library's functions resolve as ops while the nodes are checked; the
  // graph gets them only when the whole import commits.
  FunctionLibraryDefinition staged(graph->op_registry());
  TW_RETURN_IF_ERROR(StageLibrary(graph_def.library(), *graph, &staged));

  std::string prefix = options.prefix;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';

  // Phase 1: names, ops, attrs and dtypes, node by node.
  const int n = graph_def.node_size();
  std::vector<PendingNode> pending(n);
  std::unordered_map<std::string, int> by_name;
  by_name.reserve(n);
  for (int i = 0; i < n; ++i) {
    const NodeDef& def = graph_def.node(i);
    PendingNode& node = pending[i];
    node.def = &def;
    if (def.name().empty()) {
      return errors::InvalidArgument("Node ", i, " of the GraphDef (op '", def.op(),
                                     "') has an empty name");
    }
    if (!by_name.emplace(def.name(), i).second) {
      return errors::InvalidArgument("Node '", Printable(def.name()),
                                     "' appears twice in the GraphDef");
    }
    node.name = prefix + def.name();
    if (options.user_graph) {
      TW_RETURN_IF_ERROR(ValidateUserNode(def));
      // And with the prefix, so a bad prefix is caught here too.
      if (!IsValidNodeName(node.name)) {
        return errors::InvalidArgument("Node '", Printable(node.name),
                                       "' has an invalid name: the import prefix '",
                                       Printable(options.prefix), "' is not a valid name");
      }
    } else if (node.name[0] == '^' || node.name.find(':') != std::string::npos) {
      return errors::InvalidArgument("Node '", Printable(node.name),
                                     "' has an invalid name (no ':' and no leading '^')");
    }
    if (graph->FindNode(node.name) != nullptr) {
      return errors::AlreadyExists("Node '", node.name, "' already exists in the graph");
    }
    const OpDef* op_def = staged.op_registry()->LookUp(def.op());
    if (op_def == nullptr) {
      return errors::NotFound("Node '", def.name(), "' has op '", def.op(),
                              "', which is not registered");
    }
    TW_RETURN_IF_ERROR(ValidateNodeDef(def, *op_def));
    TW_RETURN_IF_ERROR(CheckFunctionAttrs(def, *staged.op_registry()));
    TW_RETURN_IF_ERROR(InOutTypesForNode(def, *op_def, &node.input_types, &node.output_types));
  }

  // The outputs the caller will ask for exist.
  for (const auto& [name, index] : options.return_outputs) {
    auto found = by_name.find(name);
    if (found == by_name.end()) {
      return errors::InvalidArgument("Requested return output '", Printable(name), ":", index,
                                     "' names no node of the GraphDef");
    }
    const int num_outputs = static_cast<int>(pending[found->second].output_types.size());
    if (index < 0 || index >= num_outputs) {
      return errors::InvalidArgument("Requested return output '", name, ":", index, "' but node '",
                                     name, "' has ", num_outputs, " output(s)");
    }
  }

  // Phase 2: every input resolves to a real output of a compatible dtype.
  std::unordered_map<std::string, PendingNode::Source> input_map;
  TW_RETURN_IF_ERROR(CanonicalInputMap(options, *graph, &input_map));
  for (int i = 0; i < n; ++i) {
    TW_RETURN_IF_ERROR(ResolveInputs(options, *graph, by_name, input_map, &pending, i));
  }

  TW_RETURN_IF_ERROR(AddControlDependencies(options, *graph, &pending));

  // Phase 3: no cycles. Existing nodes never consume imported ones, so any
  // cycle lies among the imported nodes.
  std::vector<int> order;
  TW_RETURN_IF_ERROR(TopologicalOrder(pending, &order));

  // Phase 4: commit. Nodes keep GraphDef order (so ids and serialization
  // follow it); shapes are refined producers first. Validation checked all
  // but shapes, so an error other than a shape function's means validation
  // missed something. Either way the graph is put back as it was.
  std::vector<Node*> added(n, nullptr);
  auto roll_back = [&] {
    for (Node* node : added) {
      if (node == nullptr) continue;
      if (refiner != nullptr) refiner->RemoveNode(node);
      graph->RemoveNode(node);
    }
  };
  auto internal = [&](const Status& status) {
    roll_back();
    return errors::Internal("ImportGraphDef passed validation but failed to commit: ",
                            status.ToString());
  };
  const VersionDef versions = MergeVersions(*graph, graph_def);
  // Before the nodes, which resolve their ops through it. Functions stay
  // once added (nodes may point at their signatures), also on a roll back.
  {
    const Status status = graph->AddFunctionLibrary(graph_def.library());
    if (!status.ok()) return internal(status);
  }
  for (int i = 0; i < n; ++i) {
    // AddNode copies the NodeDef anyway; a renamed copy only with a prefix.
    Status status;
    if (prefix.empty()) {
      status = graph->AddNode(*pending[i].def, &added[i]);
    } else {
      NodeDef def = *pending[i].def;
      def.set_name(pending[i].name);
      status = graph->AddNode(def, &added[i]);
    }
    if (!status.ok()) return internal(status);
  }
  for (int i = 0; i < n; ++i) {
    auto resolve = [&](const PendingNode::Source& s) {
      return s.existing != nullptr ? s.existing : added[s.imported];
    };
    const std::vector<PendingNode::Source>& data = pending[i].data_inputs;
    for (int slot = 0; slot < static_cast<int>(data.size()); ++slot) {
      const Status status = graph->AddEdge(resolve(data[slot]), data[slot].output, added[i], slot);
      if (!status.ok()) return internal(status);
    }
    for (const PendingNode::Source& control : pending[i].control_inputs) {
      if (graph->AddControlEdge(resolve(control), added[i]) == nullptr) {
        return internal(errors::Internal("control edge into '", pending[i].name, "'"));
      }
    }
  }
  // Loops: frames must be well formed (checked on the whole graph, since
  // imported nodes may join frames of existing ones). Not for the runtime's
  // own partitions: pruned for a fetch inside a loop, a partition may keep a
  // frame without its Exits, and the executor checks frames itself (a loop
  // cut by _Send/_Recv is UNIMPLEMENTED there, not a malformed graph).
  if (options.user_graph && std::any_of(added.begin(), added.end(),
                                        [](const Node* node) { return IsControlFlowOp(node); })) {
    const Status frames = ValidateControlFlow(*graph);
    if (!frames.ok()) {
      roll_back();
      return frames;
    }
  }
  if (refiner != nullptr) {
    Status refined;
    try {
      for (int i : order) {
        refined = refiner->AddNode(added[i]);
        if (!refined.ok()) break;
      }
    } catch (...) {
      roll_back();
      throw;
    }
    if (!refined.ok()) {
      roll_back();
      return refined;
    }
  }
  graph->set_versions(versions);
  if (results != nullptr) {
    for (const auto& [name, index] : options.return_outputs) {
      auto mapped = input_map.find(StrCat(name, ":", index));
      if (mapped != input_map.end()) {
        results->return_outputs.push_back({mapped->second.existing, mapped->second.output});
      } else {
        results->return_outputs.push_back({added[by_name.at(name)], index});
      }
    }
    results->nodes = std::move(added);
  }
  return Status::OK();
}

Status ConvertGraphDefToGraph(const GraphDef& graph_def, Graph* graph) {
  ImportGraphDefOptions options;
  options.user_graph = false;
  return ImportGraphDef(options, graph_def, graph, /*refiner=*/nullptr);
}

}  // namespace tensorweave
