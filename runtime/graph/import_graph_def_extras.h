// The parts of TensorFlow's ImportGraphDefOptions/Results that the core
// importer (graph_def_import.h) leaves out, as a layer over it: a default
// device, uniquified node names or prefix, return operations, and the input
// mappings the import never used. The C API's TF_GraphImportGraphDef*
// functions import through here.
//
//   ImportGraphDefExtras extras;
//   extras.default_device = "/device:CPU:0";
//   extras.uniquify_names = true;           // "x" already in the graph -> "x_1"
//   extras.return_operations = {"train"};
//   ImportGraphDefFullResults results;
//   TW_RETURN_IF_ERROR(ImportGraphDefWithExtras(options, extras, graph_def, &graph,
//                                               &refiner, &results));
//   Node* train = results.return_operations[0];
#ifndef TENSORWEAVE_GRAPH_IMPORT_GRAPH_DEF_EXTRAS_H_
#define TENSORWEAVE_GRAPH_IMPORT_GRAPH_DEF_EXTRAS_H_

#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/graph_def_import.h"

namespace tensorweave {

struct ImportGraphDefExtras {
  // Given to every imported node whose NodeDef names no device.
  std::string default_device;
  // With no prefix: an imported node whose name the graph already has is
  // renamed name_1 (name_2, ... the first free one), and every input naming
  // it follows. With a prefix this does nothing (the prefix separates them).
  bool uniquify_names = false;
  // A prefix that the graph already uses (as a node name, or as the first
  // scope of one) becomes prefix_1 (prefix_2, ...).
  bool uniquify_prefix = false;
  // GraphDef node names whose imported nodes the results return, in order;
  // each must name a node of the GraphDef (INVALID_ARGUMENT otherwise).
  std::vector<std::string> return_operations;
};

struct ImportGraphDefFullResults {
  // The new nodes in GraphDef order and the return outputs.
  ImportGraphDefResults base;
  // One per ImportGraphDefExtras::return_operations.
  std::vector<Node*> return_operations;
  // The input_map keys (node, index) that no input of the GraphDef named,
  // in input_map order.
  std::vector<std::pair<std::string, int>> missing_unused_input_mappings;
};

// ImportGraphDef with `extras` applied; on error `graph` is unchanged.
Status ImportGraphDefWithExtras(const ImportGraphDefOptions& options,
                                const ImportGraphDefExtras& extras, const GraphDef& graph_def,
                                Graph* graph, ShapeRefiner* refiner,
                                ImportGraphDefFullResults* results);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_IMPORT_GRAPH_DEF_EXTRAS_H_
