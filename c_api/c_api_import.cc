// Importing a GraphDef into a TF_Graph: TF_ImportGraphDefOptions, the three
// TF_GraphImportGraphDef* entry points and TF_ImportGraphDefResults. The
// options translate into runtime ImportGraphDefOptions + ImportGraphDefExtras
// (runtime/graph/import_graph_def_extras.h), which do the work.
#include <utility>

#include "c_api/c_api_internal.h"

using tensorweave::GraphDef;
using tensorweave::Status;
using tensorweave::StrCat;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

Status ImportParsed(TF_Graph* graph, const GraphDef& graph_def,
                    const TF_ImportGraphDefOptions* opts,
                    tensorweave::ImportGraphDefFullResults* results) {
  static const TF_ImportGraphDefOptions* const kDefaults = new TF_ImportGraphDefOptions;
  if (opts == nullptr) opts = kDefaults;
  std::lock_guard<std::mutex> lock(graph->mu);
  return tensorweave::ImportGraphDefWithExtras(opts->options, opts->extras, graph_def,
                                               &graph->graph, &graph->refiner, results);
}

Status Import(TF_Graph* graph, const TF_Buffer* graph_def_bytes,
              const TF_ImportGraphDefOptions* opts,
              tensorweave::ImportGraphDefFullResults* results) {
  if (graph == nullptr || graph_def_bytes == nullptr) {
    return errors::InvalidArgument("TF_GraphImportGraphDef needs a graph and a GraphDef");
  }
  GraphDef graph_def;
  if ((graph_def_bytes->data == nullptr && graph_def_bytes->length > 0) ||
      !graph_def.ParseFromArray(graph_def_bytes->data, static_cast<int>(graph_def_bytes->length))) {
    return errors::InvalidArgument("Unparseable GraphDef");
  }
  return ImportParsed(graph, graph_def, opts, results);
}

// The C form of `results`, owned by the caller.
TF_ImportGraphDefResults* ToC(const tensorweave::ImportGraphDefFullResults& results) {
  auto out = std::make_unique<TF_ImportGraphDefResults>();
  for (const tensorweave::NodeOutput& output : results.base.return_outputs) {
    out->return_outputs.push_back(TF_Output{c_api::ToOperation(output.node), output.index});
  }
  for (tensorweave::Node* node : results.return_operations) {
    out->return_operations.push_back(c_api::ToOperation(node));
  }
  for (const auto& [name, index] : results.missing_unused_input_mappings) {
    out->missing_unused_names.push_back(name);
    out->missing_unused_indexes.push_back(index);
  }
  for (const std::string& name : out->missing_unused_names) {
    out->missing_unused_name_pointers.push_back(name.c_str());
  }
  return out.release();
}

TF_ImportGraphDefResults* ImportWithResults(
    TF_Graph* graph, const TF_ImportGraphDefOptions* opts, TF_Status* status,
    const std::function<Status(tensorweave::ImportGraphDefFullResults*)>& import) {
  return c_api::Guard(status, static_cast<TF_ImportGraphDefResults*>(nullptr),
                      [&]() -> TF_ImportGraphDefResults* {
                        tensorweave::ImportGraphDefFullResults results;
                        Status imported = import(&results);
                        c_api::Set(status, imported);
                        return imported.ok() ? ToC(results) : nullptr;
                      });
}

}  // namespace

extern "C" {

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void) {
  return c_api::Guard(nullptr, static_cast<TF_ImportGraphDefOptions*>(nullptr),
                      [] { return new TF_ImportGraphDefOptions; });
}

void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts) { delete opts; }

void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts, const char* prefix) {
  c_api::GuardVoid(nullptr, [&] { opts->options.prefix = prefix ? prefix : ""; });
}

void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts, const char* device) {
  c_api::GuardVoid(nullptr, [&] { opts->extras.default_device = device ? device : ""; });
}

void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts,
                                              unsigned char uniquify_names) {
  opts->extras.uniquify_names = uniquify_names != 0;
}

void TF_ImportGraphDefOptionsSetUniquifyPrefix(TF_ImportGraphDefOptions* opts,
                                               unsigned char uniquify_prefix) {
  opts->extras.uniquify_prefix = uniquify_prefix != 0;
}

void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts, const char* src_name,
                                             int src_index, TF_Output dst) {
  c_api::GuardVoid(nullptr, [&] {
    if (src_name == nullptr || dst.oper == nullptr) return;
    opts->options.input_map[StrCat(src_name, ":", src_index)] = {c_api::ToNode(dst.oper)->name(),
                                                                 dst.index};
  });
}

void TF_ImportGraphDefOptionsRemapControlDependency(TF_ImportGraphDefOptions* opts,
                                                    const char* src_name, TF_Operation* dst) {
  c_api::GuardVoid(nullptr, [&] {
    if (src_name == nullptr || dst == nullptr) return;
    opts->options.control_input_map[src_name] = c_api::ToNode(dst)->name();
  });
}

void TF_ImportGraphDefOptionsAddControlDependency(TF_ImportGraphDefOptions* opts,
                                                  TF_Operation* oper) {
  c_api::GuardVoid(nullptr, [&] {
    if (oper != nullptr) opts->options.control_dependencies.push_back(c_api::ToNode(oper)->name());
  });
}

void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts, const char* oper_name,
                                             int index) {
  c_api::GuardVoid(nullptr, [&] {
    if (opts == nullptr || oper_name == nullptr) return;
    opts->options.return_outputs.emplace_back(oper_name, index);
  });
}

int TF_ImportGraphDefOptionsNumReturnOutputs(const TF_ImportGraphDefOptions* opts) {
  return opts == nullptr ? 0 : static_cast<int>(opts->options.return_outputs.size());
}

void TF_ImportGraphDefOptionsAddReturnOperation(TF_ImportGraphDefOptions* opts,
                                                const char* oper_name) {
  c_api::GuardVoid(nullptr, [&] {
    if (opts == nullptr || oper_name == nullptr) return;
    opts->extras.return_operations.emplace_back(oper_name);
  });
}

int TF_ImportGraphDefOptionsNumReturnOperations(const TF_ImportGraphDefOptions* opts) {
  return opts == nullptr ? 0 : static_cast<int>(opts->extras.return_operations.size());
}

void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                            const TF_ImportGraphDefOptions* options, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    tensorweave::ImportGraphDefFullResults results;
    c_api::Set(status, Import(graph, graph_def, options, &results));
  });
}

void TF_GraphImportGraphDefWithReturnOutputs(TF_Graph* graph, const TF_Buffer* graph_def,
                                             const TF_ImportGraphDefOptions* options,
                                             TF_Output* return_outputs, int num_return_outputs,
                                             TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const int expected = TF_ImportGraphDefOptionsNumReturnOutputs(options);
    if (num_return_outputs != expected || (expected > 0 && return_outputs == nullptr)) {
      return c_api::Set(
          status,
          errors::InvalidArgument("Expected room for ", expected, " return outputs, got ",
                                  num_return_outputs, return_outputs == nullptr ? " (NULL)" : ""));
    }
    tensorweave::ImportGraphDefFullResults results;
    Status imported = Import(graph, graph_def, options, &results);
    for (size_t i = 0; imported.ok() && i < results.base.return_outputs.size(); ++i) {
      const tensorweave::NodeOutput& output = results.base.return_outputs[i];
      return_outputs[i] = TF_Output{c_api::ToOperation(output.node), output.index};
    }
    c_api::Set(status, std::move(imported));
  });
}

TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(TF_Graph* graph,
                                                            const TF_Buffer* graph_def,
                                                            const TF_ImportGraphDefOptions* options,
                                                            TF_Status* status) {
  return ImportWithResults(graph, options, status, [&](auto* results) {
    return Import(graph, graph_def, options, results);
  });
}

TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResultsNoSerialization(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Status* status) {
  return ImportWithResults(graph, options, status, [&](auto* results) -> Status {
    if (graph == nullptr || graph_def == nullptr || graph_def->data == nullptr) {
      return errors::InvalidArgument("TF_GraphImportGraphDef needs a graph and a GraphDef");
    }
    // As in TensorFlow, `data` is the message object itself, not its bytes
    // (here the runtime's GraphDef class: only C++ code built against this
    // library can pass one).
    return ImportParsed(graph, *static_cast<const GraphDef*>(graph_def->data), options, results);
  });
}

void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results, int* num_outputs,
                                           TF_Output** outputs) {
  *num_outputs = static_cast<int>(results->return_outputs.size());
  *outputs = results->return_outputs.data();
}

void TF_ImportGraphDefResultsReturnOperations(TF_ImportGraphDefResults* results, int* num_opers,
                                              TF_Operation*** opers) {
  *num_opers = static_cast<int>(results->return_operations.size());
  *opers = results->return_operations.data();
}

void TF_ImportGraphDefResultsMissingUnusedInputMappings(TF_ImportGraphDefResults* results,
                                                        int* num_missing_unused_input_mappings,
                                                        const char*** src_names,
                                                        int** src_indexes) {
  *num_missing_unused_input_mappings = static_cast<int>(results->missing_unused_names.size());
  *src_names = results->missing_unused_name_pointers.data();
  *src_indexes = results->missing_unused_indexes.data();
}

void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results) { delete results; }

}  // extern "C"
