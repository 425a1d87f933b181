#include "runtime/graph/import_graph_def_extras.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// "x" and "x:0" as one key.
std::string CanonicalTensorName(const TensorId& id) { return StrCat(id.node, ":", id.index); }

// Every data tensor some node of `graph_def` consumes, canonically named.
std::unordered_set<std::string> ConsumedTensors(const GraphDef& graph_def) {
  std::unordered_set<std::string> consumed;
  for (const NodeDef& node : graph_def.node()) {
    for (const std::string& input : node.input()) {
      TensorId id;
      if (ParseTensorName(input, &id) && id.index != Graph::kControlSlot) {
        consumed.insert(CanonicalTensorName(id));
      }
    }
  }
  return consumed;
}

// Whether `graph` has a node named `prefix` or one inside scope `prefix/`.
bool PrefixInUse(const Graph& graph, const std::string& prefix) {
  const std::string scope = prefix + "/";
  for (const Node* node : graph.nodes()) {
    if (node->name() == prefix || node->name().compare(0, scope.size(), scope) == 0) return true;
  }
  return false;
}

// The first of base_1, base_2, ... for which `taken` is false.
template <typename Taken>
std::string FirstFreeName(const std::string& base, Taken taken) {
  for (int suffix = 1;; ++suffix) {
    std::string candidate = StrCat(base, "_", suffix);
    if (!taken(candidate)) return candidate;
  }
}

// New names for the GraphDef's nodes whose names `graph` already has.
std::unordered_map<std::string, std::string> UniqueNames(const Graph& graph,
                                                         const GraphDef& graph_def) {
  std::unordered_set<std::string> taken;
  for (const NodeDef& node : graph_def.node()) taken.insert(node.name());
  for (const Node* node : graph.nodes()) taken.insert(node->name());
  std::unordered_map<std::string, std::string> renamed;
  for (const NodeDef& node : graph_def.node()) {
    if (graph.FindNode(node.name()) == nullptr) continue;
    std::string fresh =
        FirstFreeName(node.name(), [&](const std::string& name) { return taken.count(name) > 0; });
    taken.insert(fresh);
    renamed[node.name()] = std::move(fresh);
  }
  return renamed;
}

// `name` after the renaming (itself when not renamed).
const std::string& Renamed(const std::unordered_map<std::string, std::string>& renamed,
                           const std::string& name) {
  auto found = renamed.find(name);
  return found == renamed.end() ? name : found->second;
}

// Applies `renamed` to the nodes, their inputs, and the options' GraphDef
// names (input_map and control_input_map keys, return outputs).
void ApplyRenaming(const std::unordered_map<std::string, std::string>& renamed, GraphDef* graph_def,
                   ImportGraphDefOptions* options) {
  for (NodeDef& node : *graph_def->mutable_node()) {
    node.set_name(Renamed(renamed, node.name()));
    for (std::string& input : *node.mutable_input()) {
      TensorId id;
      if (!ParseTensorName(input, &id)) continue;  // the importer reports it
      if (id.index == Graph::kControlSlot) {
        input = "^" + Renamed(renamed, id.node);
      } else {
        input = StrCat(Renamed(renamed, id.node), ":", id.index);
      }
    }
  }
  std::map<std::string, std::pair<std::string, int>> input_map;
  for (const auto& [key, target] : options->input_map) {
    TensorId id;
    input_map[ParseTensorName(key, &id) ? StrCat(Renamed(renamed, id.node), ":", id.index) : key] =
        target;
  }
  options->input_map = std::move(input_map);
  std::map<std::string, std::string> control_input_map;
  for (const auto& [key, target] : options->control_input_map) {
    control_input_map[Renamed(renamed, key)] = target;
  }
  options->control_input_map = std::move(control_input_map);
  for (auto& [name, index] : options->return_outputs) name = Renamed(renamed, name);
}

}  // namespace

Status ImportGraphDefWithExtras(const ImportGraphDefOptions& options,
                                const ImportGraphDefExtras& extras, const GraphDef& graph_def,
                                Graph* graph, ShapeRefiner* refiner,
                                ImportGraphDefFullResults* results) {
  *results = ImportGraphDefFullResults();
  if (graph == nullptr) return errors::InvalidArgument("ImportGraphDef: no graph given");

  std::unordered_map<std::string, int> index_of;
  for (int i = 0; i < graph_def.node_size(); ++i) index_of.emplace(graph_def.node(i).name(), i);
  std::vector<int> return_indices;
  for (const std::string& name : extras.return_operations) {
    auto found = index_of.find(name);
    if (found == index_of.end()) {
      return errors::InvalidArgument("Requested return node '", name, "' not found in graph def");
    }
    return_indices.push_back(found->second);
  }

  ImportGraphDefOptions rewritten_options = options;
  GraphDef rewritten = graph_def;
  if (!extras.default_device.empty()) {
    for (NodeDef& node : *rewritten.mutable_node()) {
      if (node.device().empty()) node.set_device(extras.default_device);
    }
  }
  std::string prefix = options.prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (extras.uniquify_prefix && !prefix.empty() && PrefixInUse(*graph, prefix)) {
    rewritten_options.prefix = FirstFreeName(
        prefix, [&](const std::string& candidate) { return PrefixInUse(*graph, candidate); });
  } else if (extras.uniquify_names && prefix.empty()) {
    ApplyRenaming(UniqueNames(*graph, graph_def), &rewritten, &rewritten_options);
  }

  TW_RETURN_IF_ERROR(ImportGraphDef(rewritten_options, rewritten, graph, refiner, &results->base));

  for (int index : return_indices) results->return_operations.push_back(results->base.nodes[index]);
  const std::unordered_set<std::string> consumed = ConsumedTensors(graph_def);
  for (const auto& entry : options.input_map) {
    TensorId id;
    if (ParseTensorName(entry.first, &id) && consumed.count(CanonicalTensorName(id)) == 0) {
      results->missing_unused_input_mappings.emplace_back(id.node, id.index);
    }
  }
  return Status::OK();
}

}  // namespace tensorweave
