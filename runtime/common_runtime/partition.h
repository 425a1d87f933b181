// Partition: splits a placed graph into one graph per device (or per
// location, see PartitionOptions). Every edge whose ends sit in different
// partitions is cut and replaced by a _Send on the source device and a _Recv
// on the destination device that meet in the step's rendezvous.
//
//   PartitionOptions options;
//   options.device_incarnation = [&](const std::string& device) { return ...; };
//   std::map<std::string, std::unique_ptr<Graph>> partitions;
//   TW_RETURN_IF_ERROR(PartitionGraph(options, placed_graph, &partitions));
//   for (auto& [device_name, partition] : partitions) { ... one executor each ... }
//
// - A data edge src:k → dst becomes src:k → _Send and _Recv → dst. Every
//   consumer of src:k on one destination device shares one _Send/_Recv pair.
// - A control edge src → dst becomes src →(control) a scalar Const →
//   _Send, and _Recv →(control) dst: only the arrival matters.
// - tensor_name is unique per cut ("edge_<id>_<src>"); send_device and
//   recv_device are the full device names; send_device_incarnation is the
//   sending device's incarnation, so the rendezvous key (rendezvous.h)
//   names the very instance of the device that sends.
#ifndef TENSORWEAVE_COMMON_RUNTIME_PARTITION_H_
#define TENSORWEAVE_COMMON_RUNTIME_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

struct PartitionOptions {
  // Which partition a node goes to. Null: its assigned device (one
  // partition per device). A master gives the node's task instead
  // ("/job:ps/replica:0/task:0"), so each worker gets one graph, which it
  // partitions again per device. Edges are cut between locations; the
  // _Send/_Recv of a cut still name the devices of both ends.
  std::function<std::string(const Node& node)> node_to_location;
  // The incarnation of a device, by full name. Null: every device has
  // incarnation 1 (fine when sender and receiver share one process).
  std::function<uint64_t(const std::string& device_name)> device_incarnation;
};

// `graph` must have every op node placed (assigned_device_name set). The
// partitions keep node names, attrs and assigned devices (also in each
// NodeDef's device field). Keyed by location: the full device name unless
// options.node_to_location says otherwise.
Status PartitionGraph(const PartitionOptions& options, const Graph& graph,
                      std::map<std::string, std::unique_ptr<Graph>>* partitions);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_PARTITION_H_
