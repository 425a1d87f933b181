// Functions: TF_Function (a FunctionDef), made from a graph's operations
// (runtime/common_runtime/graph_to_function.h does the conversion), read and
// written as bytes, and copied into a graph's function library (whose checks
// are FunctionLibraryDefinition's).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/common_runtime/graph_to_function.h"

using tensorweave::FunctionDef;
using tensorweave::GraphToFunctionOptions;
using tensorweave::Node;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// Translates TF_GraphToFunctionWithControlOutputs' arguments into options;
// the checks of the body are GraphToFunctionDef's.
Status MakeFunction(const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash,
                    int num_opers, const TF_Operation* const* opers, int ninputs,
                    const TF_Output* inputs, int noutputs, const TF_Output* outputs,
                    const char* const* output_names, int ncontrol_outputs,
                    const TF_Operation* const* control_outputs,
                    const char* const* control_output_names, const TF_FunctionOptions* opts,
                    const char* description, FunctionDef* function) {
  if (fn_body == nullptr) return errors::InvalidArgument("The function body graph is NULL");
  if (fn_name == nullptr || fn_name[0] == '\0') {
    return errors::InvalidArgument("A function needs a name");
  }
  if (opts != nullptr) return errors::InvalidArgument("TF_FunctionOptions must be NULL");
  if (ninputs < 0 || noutputs < 0 || ncontrol_outputs < 0 || num_opers < -1) {
    return errors::InvalidArgument("Negative count of operations, inputs or outputs");
  }
  if ((ninputs > 0 && inputs == nullptr) || (noutputs > 0 && outputs == nullptr) ||
      (num_opers > 0 && opers == nullptr) || (ncontrol_outputs > 0 && control_outputs == nullptr)) {
    return errors::InvalidArgument("A NULL array with a positive count");
  }
  GraphToFunctionOptions options;
  options.name = fn_name;
  options.append_hash_to_name = append_hash != 0;
  if (description != nullptr) options.description = description;
  for (int i = 0; i < ninputs; ++i) {
    options.inputs.push_back(
        {c_api::ToNode(const_cast<TF_Operation*>(inputs[i].oper)), inputs[i].index});
  }
  for (int i = 0; i < noutputs; ++i) {
    options.outputs.push_back({c_api::ToNode(outputs[i].oper), outputs[i].index});
    if (output_names != nullptr) {
      if (output_names[i] == nullptr) return errors::InvalidArgument("Output name ", i, " is NULL");
      options.output_names.push_back(output_names[i]);
    }
  }
  for (int i = 0; i < ncontrol_outputs; ++i) {
    options.control_outputs.push_back(c_api::ToNode(control_outputs[i]));
    if (control_output_names != nullptr) {
      if (control_output_names[i] == nullptr) {
        return errors::InvalidArgument("Control output name ", i, " is NULL");
      }
      options.control_output_names.push_back(control_output_names[i]);
    }
  }
  TF_Graph* graph = const_cast<TF_Graph*>(fn_body);
  std::lock_guard<std::mutex> lock(graph->mu);
  if (num_opers == -1) {
    TW_RETURN_IF_ERROR(
        tensorweave::AllBodyNodes(graph->graph, options.inputs, options.name, &options.body));
  } else {
    for (int i = 0; i < num_opers; ++i) options.body.push_back(c_api::ToNode(opers[i]));
  }
  return tensorweave::GraphToFunctionDef(graph->graph, options, function);
}

}  // namespace

extern "C" {

TF_Function* TF_GraphToFunctionWithControlOutputs(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names, int ncontrol_outputs,
    const TF_Operation* const* control_outputs, const char* const* control_output_names,
    const TF_FunctionOptions* opts, const char* description, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Function*>(nullptr), [&]() -> TF_Function* {
    std::unique_ptr<TF_Function> function(new TF_Function);
    Status made =
        MakeFunction(fn_body, fn_name, append_hash_to_fn_name, num_opers, opers, ninputs, inputs,
                     noutputs, outputs, output_names, ncontrol_outputs, control_outputs,
                     control_output_names, opts, description, &function->fdef);
    const bool ok = made.ok();
    c_api::Set(status, std::move(made));
    return ok ? function.release() : nullptr;
  });
}

TF_Function* TF_GraphToFunction(const TF_Graph* fn_body, const char* fn_name,
                                unsigned char append_hash_to_fn_name, int num_opers,
                                const TF_Operation* const* opers, int ninputs,
                                const TF_Output* inputs, int noutputs, const TF_Output* outputs,
                                const char* const* output_names, const TF_FunctionOptions* opts,
                                const char* description, TF_Status* status) {
  return TF_GraphToFunctionWithControlOutputs(
      fn_body, fn_name, append_hash_to_fn_name, num_opers, opers, ninputs, inputs, noutputs,
      outputs, output_names, 0, nullptr, nullptr, opts, description, status);
}

const char* TF_FunctionName(TF_Function* func) {
  return func == nullptr ? nullptr : func->fdef.signature().name().c_str();
}

void TF_FunctionToFunctionDef(TF_Function* func, TF_Buffer* output_func_def, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (func == nullptr) return c_api::Set(status, errors::InvalidArgument("The function is NULL"));
    c_api::Set(status, c_api::StringToBuffer(func->fdef.SerializeAsString(), output_func_def));
  });
}

TF_Function* TF_FunctionImportFunctionDef(const void* proto, size_t proto_len, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Function*>(nullptr), [&]() -> TF_Function* {
    std::unique_ptr<TF_Function> function(new TF_Function);
    if ((proto == nullptr && proto_len > 0) || proto_len > static_cast<size_t>(INT32_MAX) ||
        !function->fdef.ParseFromArray(proto, static_cast<int>(proto_len))) {
      c_api::Set(status, errors::InvalidArgument(
                             "Invalid FunctionDef given to TF_FunctionImportFunctionDef"));
      return nullptr;
    }
    c_api::Set(status, Status::OK());
    return function.release();
  });
}

void TF_FunctionSetAttrValueProto(TF_Function* func, const char* attr_name, const void* proto,
                                  size_t proto_len, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (func == nullptr || attr_name == nullptr) {
      return c_api::Set(status, errors::InvalidArgument("The function or attr name is NULL"));
    }
    tensorweave::AttrValue value;
    if ((proto == nullptr && proto_len > 0) || proto_len > static_cast<size_t>(INT32_MAX) ||
        !value.ParseFromArray(proto, static_cast<int>(proto_len))) {
      return c_api::Set(status, errors::InvalidArgument("Unparseable AttrValue proto passed to "
                                                        "TF_FunctionSetAttrValueProto"));
    }
    (*func->fdef.mutable_attr())[attr_name] = std::move(value);
    c_api::Set(status, Status::OK());
  });
}

void TF_FunctionGetAttrValueProto(TF_Function* func, const char* attr_name,
                                  TF_Buffer* output_attr_value, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (func == nullptr || attr_name == nullptr) {
      return c_api::Set(status, errors::InvalidArgument("The function or attr name is NULL"));
    }
    auto found = func->fdef.attr().find(attr_name);
    if (found == func->fdef.attr().end()) {
      return c_api::Set(status, errors::InvalidArgument("Function '", func->fdef.signature().name(),
                                                        "' has no attr named '", attr_name, "'."));
    }
    c_api::Set(status, c_api::StringToBuffer(found->second.SerializeAsString(), output_attr_value));
  });
}

void TF_DeleteFunction(TF_Function* func) { delete func; }

void TF_GraphCopyFunction(TF_Graph* g, const TF_Function* func, const TF_Function* grad,
                          TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (g == nullptr) return c_api::Set(status, errors::InvalidArgument("The graph is NULL"));
    if (func == nullptr) {
      return c_api::Set(status, errors::InvalidArgument(
                                    "'func' argument to TF_GraphCopyFunction cannot be null"));
    }
    tensorweave::FunctionDefLibrary library;
    *library.add_function() = func->fdef;
    if (grad != nullptr) {
      *library.add_function() = grad->fdef;
      tensorweave::GradientDef* gradient = library.add_gradient();
      gradient->set_function_name(func->fdef.signature().name());
      gradient->set_gradient_func(grad->fdef.signature().name());
    }
    std::lock_guard<std::mutex> lock(g->mu);
    c_api::Set(status, g->graph.AddFunctionLibrary(library));
  });
}

int TF_GraphNumFunctions(TF_Graph* g) {
  return c_api::Guard(nullptr, 0, [&] {
    if (g == nullptr) return 0;
    std::lock_guard<std::mutex> lock(g->mu);
    return g->graph.flib_def().ToProto().function_size();
  });
}

int TF_GraphGetFunctions(TF_Graph* g, TF_Function** funcs, int max_func, TF_Status* status) {
  return c_api::Guard(status, -1, [&] {
    if (g == nullptr || (max_func > 0 && funcs == nullptr) || max_func < 0) {
      c_api::Set(status, errors::InvalidArgument("TF_GraphGetFunctions needs a graph and room for ",
                                                 max_func, " functions"));
      return -1;
    }
    tensorweave::FunctionDefLibrary library;
    {
      std::lock_guard<std::mutex> lock(g->mu);
      library = g->graph.flib_def().ToProto();
    }
    const int count = std::min(max_func, library.function_size());
    std::vector<std::unique_ptr<TF_Function>> copies;
    for (int i = 0; i < count; ++i) {
      copies.emplace_back(new TF_Function);
      copies.back()->fdef = library.function(i);
    }
    for (int i = 0; i < count; ++i) funcs[i] = copies[i].release();
    c_api::Set(status, Status::OK());
    return count;
  });
}

}  // extern "C"
