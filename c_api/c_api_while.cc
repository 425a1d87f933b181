// TF_NewWhile / TF_FinishWhile / TF_AbortWhile: a TensorFlow 1.x while loop
// whose condition and body the caller builds in two graphs of their own.
// runtime/graph/while_loop_builder.h turns them into the loop's nodes, which
// are imported into the parent graph in one step (all or nothing).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/while_loop_builder.h"

using tensorweave::Node;
using tensorweave::Status;
using tensorweave::StrCat;
using tensorweave::WhileLoopSpec;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

TF_WhileParams EmptyParams() {
  return TF_WhileParams{0, nullptr, nullptr, {nullptr, 0}, nullptr, nullptr, nullptr, nullptr};
}

// A graph with one Placeholder per loop variable; writes their outputs to
// `placeholders`.
Status NewLoopGraph(TF_Graph* parent, const std::vector<TF_Output>& inputs,
                    const std::vector<tensorweave::DataType>& dtypes,
                    std::unique_ptr<TF_Graph>* graph, std::vector<TF_Output>* placeholders) {
  graph->reset(new TF_Graph);
  (*graph)->while_parent = parent;
  (*graph)->while_parent_inputs = inputs;
  std::lock_guard<std::mutex> lock((*graph)->mu);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    tensorweave::NodeDef def;
    def.set_name(StrCat("input_", i));
    def.set_op("Placeholder");
    (*def.mutable_attr())["dtype"].set_type(dtypes[i]);
    Node* node = nullptr;
    TW_RETURN_IF_ERROR((*graph)->graph.AddNode(def, &node));
    TW_RETURN_IF_ERROR((*graph)->refiner.AddNode(node));
    placeholders->push_back(TF_Output{c_api::ToOperation(node), 0});
  }
  return Status::OK();
}

void FreeWhile(const TF_WhileParams* params) {
  if (params == nullptr) return;
  TF_DeleteGraph(params->cond_graph);
  TF_DeleteGraph(params->body_graph);
  delete[] params->cond_inputs;
  delete[] params->body_inputs;
  delete[] params->body_outputs;
}

std::vector<const Node*> Nodes(const TF_Output* outputs, int n) {
  std::vector<const Node*> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(c_api::ToNode(outputs[i].oper));
  return nodes;
}

WhileLoopSpec::Tensor SpecTensor(const TF_Output& output) {
  return {output.oper == nullptr ? nullptr : c_api::ToNode(output.oper), output.index};
}

Status FinishWhile(const TF_WhileParams* params, TF_Output* outputs) {
  if (params == nullptr || params->cond_graph == nullptr || params->body_graph == nullptr ||
      params->cond_graph->while_parent == nullptr) {
    return errors::InvalidArgument("TF_FinishWhile needs the params TF_NewWhile returned");
  }
  if (outputs == nullptr) return errors::InvalidArgument("TF_FinishWhile: `outputs` is NULL");
  if (params->name == nullptr)
    return errors::InvalidArgument("TF_WhileParams `name` field is null");
  TF_Graph* parent = params->cond_graph->while_parent;
  const std::vector<TF_Output>& inputs = params->cond_graph->while_parent_inputs;
  WhileLoopSpec spec;
  for (const TF_Output& input : inputs) {
    spec.inputs.push_back(c_api::OutputName(input));
    spec.input_types.push_back(c_api::ToNode(input.oper)->output_type(input.index));
  }
  spec.cond = &params->cond_graph->graph;
  spec.cond_shapes = &params->cond_graph->refiner;
  spec.cond_inputs = Nodes(params->cond_inputs, params->ninputs);
  spec.cond_output = SpecTensor(params->cond_output);
  spec.body = &params->body_graph->graph;
  spec.body_inputs = Nodes(params->body_inputs, params->ninputs);
  for (int i = 0; i < params->ninputs; ++i) {
    spec.body_outputs.push_back(SpecTensor(params->body_outputs[i]));
  }
  std::lock_guard<std::mutex> parent_lock(parent->mu);
  std::lock_guard<std::mutex> cond_lock(params->cond_graph->mu);
  std::lock_guard<std::mutex> body_lock(params->body_graph->mu);
  spec.prefix = tensorweave::UniqueScopeName(parent->graph, params->name);
  tensorweave::GraphDef loop;
  std::vector<std::string> exits;
  TW_RETURN_IF_ERROR(tensorweave::BuildWhileLoopGraphDef(spec, &loop, &exits));
  *loop.mutable_versions() = parent->graph.versions();
  tensorweave::ImportGraphDefOptions options;
  options.allow_inputs_to_existing_nodes = true;
  TW_RETURN_IF_ERROR(tensorweave::ImportGraphDef(options, loop, &parent->graph, &parent->refiner));
  for (size_t i = 0; i < exits.size(); ++i) {
    outputs[i] = TF_Output{c_api::ToOperation(parent->graph.FindNode(exits[i])), 0};
  }
  return Status::OK();
}

}  // namespace

extern "C" {

TF_WhileParams TF_NewWhile(TF_Graph* g, TF_Output* inputs, int ninputs, TF_Status* status) {
  return c_api::Guard(status, EmptyParams(), [&]() -> TF_WhileParams {
    if (ninputs <= 0) {
      c_api::Set(status, errors::InvalidArgument("TF_WhileParams must have at least one input"));
      return EmptyParams();
    }
    if (g == nullptr || inputs == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_NewWhile needs a graph and its inputs"));
      return EmptyParams();
    }
    std::vector<TF_Output> parent_inputs(inputs, inputs + ninputs);
    std::vector<tensorweave::DataType> dtypes;
    {
      std::lock_guard<std::mutex> lock(g->mu);
      for (int i = 0; i < ninputs; ++i) {
        Node* node = inputs[i].oper == nullptr ? nullptr : c_api::ToNode(inputs[i].oper);
        if (node == nullptr || g->graph.FindNodeId(node->id()) != node) {
          c_api::Set(status, errors::InvalidArgument("Input ", i,
                                                     " of TF_NewWhile is not an operation of the "
                                                     "graph"));
          return EmptyParams();
        }
        if (inputs[i].index < 0 || inputs[i].index >= node->num_outputs()) {
          c_api::Set(status, errors::OutOfRange("Node '", node->name(), "' has no output ",
                                                inputs[i].index));
          return EmptyParams();
        }
        dtypes.push_back(node->output_type(inputs[i].index));
      }
    }
    std::unique_ptr<TF_Graph> cond, body;
    std::vector<TF_Output> cond_inputs, body_inputs;
    Status made = NewLoopGraph(g, parent_inputs, dtypes, &cond, &cond_inputs);
    if (made.ok()) made = NewLoopGraph(g, parent_inputs, dtypes, &body, &body_inputs);
    if (!made.ok()) {
      c_api::Set(status, std::move(made));
      return EmptyParams();
    }
    std::unique_ptr<TF_Output[]> cond_array(new TF_Output[ninputs]);
    std::unique_ptr<TF_Output[]> body_array(new TF_Output[ninputs]);
    std::unique_ptr<TF_Output[]> body_out_array(new TF_Output[ninputs]);
    for (int i = 0; i < ninputs; ++i) {
      cond_array[i] = cond_inputs[i];
      body_array[i] = body_inputs[i];
      body_out_array[i] = TF_Output{nullptr, 0};
    }
    c_api::Set(status, Status::OK());
    return TF_WhileParams{
        ninputs,        cond.release(),       cond_array.release(),     {nullptr, 0},
        body.release(), body_array.release(), body_out_array.release(), "while"};
  });
}

void TF_FinishWhile(const TF_WhileParams* params, TF_Status* status, TF_Output* outputs) {
  c_api::GuardVoid(status, [&] { c_api::Set(status, FinishWhile(params, outputs)); });
  FreeWhile(params);
}

void TF_AbortWhile(const TF_WhileParams* params) { FreeWhile(params); }

}  // extern "C"
