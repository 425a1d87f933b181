#include "runtime/common_runtime/placer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {

namespace {

// "*" gives -1 (any); otherwise a non-negative integer.
bool ParseId(const std::string& text, int* id) {
  if (text == "*") {
    *id = -1;
    return true;
  }
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *id = std::atoi(text.c_str());
  return true;
}

bool ParseType(const std::string& text, std::string* type) {
  if (text.empty()) return false;
  type->clear();
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    type->push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return true;
}

// One "key:value[:value]" component of a device name.
bool ParseComponent(const std::string& component, DeviceSpec* spec) {
  std::vector<std::string> parts = StrSplit(component, ':');
  if (parts.size() == 2 && parts[0] == "job") {
    spec->job = parts[1];
    return !spec->job.empty();
  }
  if (parts.size() == 2 && parts[0] == "replica") return ParseId(parts[1], &spec->replica);
  if (parts.size() == 2 && parts[0] == "task") return ParseId(parts[1], &spec->task);
  if (parts[0] == "device") {
    if (parts.size() == 2) return ParseType(parts[1], &spec->type);
    if (parts.size() == 3) return ParseType(parts[1], &spec->type) && ParseId(parts[2], &spec->id);
    return false;
  }
  // Legacy "cpu:1" and bare "CPU:1".
  if (parts.size() == 2) return ParseType(parts[0], &spec->type) && ParseId(parts[1], &spec->id);
  return false;
}

// Union-find over node ids.
class Groups {
 public:
  explicit Groups(int size) : parent_(size) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Union(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

std::string DeviceList(const std::vector<Device*>& devices) {
  std::vector<std::string> names;
  for (const Device* device : devices) names.push_back(device->name());
  return StrJoin(names, ", ");
}

// A ref (a variable) or a resource handle (a TensorArray, a Stack) is only
// usable on the device that holds it: its readers go there.
bool FollowsProducer(DataType input_type) {
  return IsRefType(input_type) || input_type == DT_RESOURCE;
}

bool TakesRef(const Node& node) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (FollowsProducer(node.input_type(i))) return true;
  }
  return false;
}

// Puts nodes that must share a device into one group.
void ColocateNodes(const Graph& graph, Groups* groups) {
  for (Node* node : graph.op_nodes()) {
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge() || !edge->src()->IsOp()) continue;
      const bool takes_ref = FollowsProducer(node->input_type(edge->dst_input()));
      if (takes_ref || node->type_string() == "_Retval") {
        groups->Union(node->id(), edge->src()->id());
      }
    }
    std::vector<std::string> classes;
    if (FindNodeAttr(node->def(), "_class") != nullptr &&
        GetNodeAttr(node->def(), "_class", &classes).ok()) {
      for (const std::string& entry : classes) {
        if (entry.compare(0, 5, "loc:@") != 0) continue;
        const Node* other = graph.FindNode(entry.substr(5));
        if (other != nullptr) groups->Union(node->id(), other->id());
      }
    }
  }
}

class GroupPlacer {
 public:
  GroupPlacer(const std::vector<Device*>& devices, const PlacerOptions& options)
      : devices_(devices), options_(options) {
    for (const Device* device : devices) {
      DeviceSpec parsed;
      ParseDeviceSpec(device->name(), &parsed).ok();
      device_specs_.push_back(parsed);
    }
  }

  // Picks the device for a group of nodes.
  Status Place(const std::vector<Node*>& members, Device** chosen) {
    DeviceSpec merged;
    const Node* narrowed_by = nullptr;  // the member whose request set `merged`
    std::string merged_request;
    Status problem;
    // As in TensorFlow, a node reading a variable through a ref follows the
    // variable: its own conflicting request (an Assign that a device
    // function sent to a worker while the variable sits on a ps) is
    // ignored. So the other members decide first.
    std::vector<const Node*> ordered;
    for (const Node* member : members) {
      if (!TakesRef(*member)) ordered.push_back(member);
    }
    const size_t first_ref_reader = ordered.size();
    for (const Node* member : members) {
      if (TakesRef(*member)) ordered.push_back(member);
    }
    for (size_t i = 0; i < ordered.size(); ++i) {
      const Node* member = ordered[i];
      std::string request = member->requested_device();
      if (options_.stateful_placements != nullptr && member->IsStateful()) {
        auto it = options_.stateful_placements->find(member->name());
        if (it != options_.stateful_placements->end()) request = it->second;
      }
      if (request.empty()) continue;
      DeviceSpec spec;
      Status parsed = ParseDeviceSpec(request, &spec);
      if (!parsed.ok()) {
        problem = errors::InvalidArgument("Cannot assign a device for operation '", member->name(),
                                          "': ", parsed.message());
        break;
      }
      if (FirstMatch(spec) < 0) {
        problem = errors::InvalidArgument("Cannot assign a device for operation '", member->name(),
                                          "': no device matches the requested device '", request,
                                          "'; available devices: ", DeviceList(devices_));
        break;
      }
      DeviceSpec combined = merged;
      if (!combined.MergeFrom(spec) || FirstMatch(combined) < 0) {
        if (i >= first_ref_reader && narrowed_by != nullptr) continue;
        problem = errors::InvalidArgument(
            "Cannot colocate nodes '", narrowed_by->name(), "' and '", member->name(),
            "': they must share a device but request '", merged_request, "' and '", request,
            "'; available devices: ", DeviceList(devices_));
        break;
      }
      merged = combined;
      if (narrowed_by == nullptr) {
        narrowed_by = member;
        merged_request = request;
      }
    }
    if (problem.ok()) {
      *chosen = devices_[FirstMatch(merged)];
      return Status::OK();
    }
    if (!options_.allow_soft_placement) return problem;
    // Soft placement: keep the type asked for when such a device exists.
    DeviceSpec by_type;
    by_type.type = merged.type;
    const int fallback = FirstMatch(by_type);
    *chosen = devices_[fallback < 0 ? 0 : fallback];
    return Status::OK();
  }

 private:
  int FirstMatch(const DeviceSpec& spec) const {
    for (size_t i = 0; i < device_specs_.size(); ++i) {
      if (spec.Matches(device_specs_[i])) return static_cast<int>(i);
    }
    return -1;
  }

  const std::vector<Device*>& devices_;
  const PlacerOptions& options_;
  std::vector<DeviceSpec> device_specs_;
};

}  // namespace

bool DeviceSpec::Matches(const DeviceSpec& device) const {
  return (job.empty() || job == device.job) && (replica < 0 || replica == device.replica) &&
         (task < 0 || task == device.task) && (type.empty() || type == device.type) &&
         (id < 0 || id == device.id);
}

bool DeviceSpec::MergeFrom(const DeviceSpec& other) {
  auto merge_string = [](std::string* mine, const std::string& theirs) {
    if (theirs.empty()) return true;
    if (mine->empty()) *mine = theirs;
    return *mine == theirs;
  };
  auto merge_int = [](int* mine, int theirs) {
    if (theirs < 0) return true;
    if (*mine < 0) *mine = theirs;
    return *mine == theirs;
  };
  return merge_string(&job, other.job) && merge_int(&replica, other.replica) &&
         merge_int(&task, other.task) && merge_string(&type, other.type) &&
         merge_int(&id, other.id);
}

std::string DeviceSpec::ToString() const {
  std::string out;
  if (!job.empty()) out += "/job:" + job;
  if (replica >= 0) out += StrCat("/replica:", replica);
  if (task >= 0) out += StrCat("/task:", task);
  if (!type.empty()) out += "/device:" + type + ":" + (id < 0 ? "*" : std::to_string(id));
  return out;
}

Status ParseDeviceSpec(const std::string& name, DeviceSpec* spec) {
  *spec = DeviceSpec();
  for (const std::string& component : StrSplit(name, '/')) {
    if (component.empty()) continue;
    if (!ParseComponent(component, spec)) {
      return errors::InvalidArgument("Malformed device specification '", name, "'");
    }
  }
  return Status::OK();
}

Status PlaceGraph(const std::vector<Device*>& devices, const PlacerOptions& options, Graph* graph) {
  if (devices.empty()) return errors::Internal("No devices to place the graph on");
  Groups groups(graph->num_node_ids());
  ColocateNodes(*graph, &groups);

  std::vector<std::vector<Node*>> members(graph->num_node_ids());
  std::vector<Node*> nodes = graph->op_nodes();
  for (Node* node : nodes) members[groups.Find(node->id())].push_back(node);

  GroupPlacer placer(devices, options);
  for (Node* node : nodes) {
    if (members[node->id()].empty()) continue;  // not a group's representative
    Device* device = nullptr;
    TW_RETURN_IF_ERROR(placer.Place(members[node->id()], &device));
    for (Node* member : members[node->id()]) member->set_assigned_device_name(device->name());
  }
  return Status::OK();
}

Status PlaceSignatureGraph(const std::vector<Device*>& devices, const ConfigProto& config,
                           const Graph& session_graph,
                           std::unordered_map<std::string, std::string>* stateful_placements,
                           Graph* graph) {
  PlacerOptions options;
  options.allow_soft_placement = config.allow_soft_placement();
  options.stateful_placements = stateful_placements;
  TW_RETURN_IF_ERROR(PlaceGraph(devices, options, graph));
  std::string placement_log;
  for (const Node* node : graph->op_nodes()) {
    if (node->IsStateful() && session_graph.FindNode(node->name()) != nullptr) {
      stateful_placements->emplace(node->name(), node->assigned_device_name());
    }
    if (config.log_device_placement()) {
      placement_log += StrCat(node->name(), " -> ", node->assigned_device_name(), "\n");
    }
  }
  // One write, so lines of concurrent sessions do not interleave.
  if (!placement_log.empty()) std::fputs(placement_log.c_str(), stderr);
  return Status::OK();
}

}  // namespace tensorweave
