// Placer: chooses a device for every op node of a graph before it is
// partitioned.
//
//   PlacerOptions options;
//   options.allow_soft_placement = config.allow_soft_placement();
//   TW_RETURN_IF_ERROR(PlaceGraph(devices, options, &graph));
//   graph.FindNode("x")->assigned_device_name();  // ".../device:CPU:0"
//
// Rules, in order:
// - Nodes that must share a device form a group: a node taking a ref input
//   joins the producer of that ref (VariableV2 and its Assign); a _Retval
//   joins the producer of what it fetches; a "_class" attr entry
//   "loc:@other" joins `other`.
// - A group honours every explicit request of its members ("/device:CPU:1",
//   "/cpu:1", "CPU:1", "/job:localhost/replica:0/task:0/device:CPU:1",
//   partial ones like "/job:localhost" or "/device:CPU:*"), and the device a
//   stateful member had in an earlier placement (so a variable keeps living
//   in one device's store).
// - A node reading a ref follows the ref's producer: when its own request
//   conflicts with the rest of its group's, it is ignored (TensorFlow's
//   rule, which puts a variable's Assign on the variable's ps even when a
//   device function asked for a worker).
// - A request no device satisfies, or members requesting different devices,
//   is INVALID_ARGUMENT naming the node and listing the devices — unless
//   allow_soft_placement, which falls back to a device of the requested type,
//   then to the first device.
// - Everything else goes to the first device (CPU:0).
#ifndef TENSORWEAVE_COMMON_RUNTIME_PLACER_H_
#define TENSORWEAVE_COMMON_RUNTIME_PLACER_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/framework/device.h"
#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"
#include "tensorweave/proto/config.pb.h"

namespace tensorweave {

// The parts of a device name; unset parts match anything.
struct DeviceSpec {
  std::string job;   // empty: any
  int replica = -1;  // -1: any
  int task = -1;
  std::string type;  // "CPU"; empty: any
  int id = -1;

  // True when the full device name `device` has every part this spec sets.
  bool Matches(const DeviceSpec& device) const;
  // Combines two specs; false when they set a part to different values.
  bool MergeFrom(const DeviceSpec& other);
  std::string ToString() const;
};

// Parses "/job:j/replica:r/task:t/device:TYPE:id" and its short forms
// ("/device:CPU:1", "/cpu:1", "CPU:1", "/device:CPU:*"). Types are upper-cased
// ("cpu" → "CPU"). INVALID_ARGUMENT for anything else.
Status ParseDeviceSpec(const std::string& name, DeviceSpec* spec);

struct PlacerOptions {
  bool allow_soft_placement = false;
  // Node name → full device name of stateful nodes from earlier placements;
  // may be null.
  const std::unordered_map<std::string, std::string>* stateful_placements = nullptr;
};

// Assigns every op node of `graph` one of `devices` (not empty; the first is
// the default). On error some nodes may already be assigned.
Status PlaceGraph(const std::vector<Device*>& devices, const PlacerOptions& options, Graph* graph);

// How a session places the graph one signature runs (a pruned copy of its
// own graph `session_graph`): PlaceGraph with `config`'s soft placement,
// keeping and then recording in `stateful_placements` the device of every
// stateful node that the session graph has (so a variable lives on one
// device for every signature), and with config.log_device_placement one
// "node -> device" line per node on stderr.
Status PlaceSignatureGraph(const std::vector<Device*>& devices, const ConfigProto& config,
                           const Graph& session_graph,
                           std::unordered_map<std::string, std::string>* stateful_placements,
                           Graph* graph);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_PLACER_H_
