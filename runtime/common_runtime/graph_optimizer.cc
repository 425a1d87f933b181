#include "runtime/common_runtime/graph_optimizer.h"

#include "runtime/common_runtime/conv_fusion.h"
#include "runtime/common_runtime/elementwise_fusion.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// A pass's RewriterConfig toggle: ON forces it, OFF stops it, anything else
// follows the optimizer level.
bool PassEnabled(RewriterConfig::Toggle toggle, bool by_level) {
  if (toggle == RewriterConfig::ON) return true;
  if (toggle == RewriterConfig::OFF) return false;
  return by_level;
}

}  // namespace

GraphOptimizerOptions GraphOptimizerOptionsFromConfig(const ConfigProto& config) {
  const OptimizerOptions& classic = config.graph_options().optimizer_options();
  const RewriterConfig& rewrite = config.graph_options().rewrite_options();
  const bool level_one = classic.opt_level() != OptimizerOptions::L0;
  GraphOptimizerOptions options;
  options.constant_folding =
      PassEnabled(rewrite.constant_folding(), level_one || classic.do_constant_folding());
  options.common_subexpression_elimination =
      PassEnabled(rewrite.common_subgraph_elimination(),
                  level_one || classic.do_common_subexpression_elimination());
  options.arithmetic_simplification = PassEnabled(rewrite.arithmetic_optimization(), level_one);
  options.batch_norm_folding = PassEnabled(rewrite.remapping(), level_one);
  options.dependency_optimization = PassEnabled(rewrite.dependency_optimization(), level_one);
  if (rewrite.disable_meta_optimizer()) {
    options.constant_folding = options.common_subexpression_elimination = false;
    options.arithmetic_simplification = options.batch_norm_folding = false;
    options.dependency_optimization = false;
  }
  if (rewrite.min_graph_nodes() != 0) {
    options.min_graph_nodes = rewrite.min_graph_nodes() < 0 ? 0 : rewrite.min_graph_nodes();
  }
  if (rewrite.meta_optimizer_timeout_ms() != 0) {
    options.max_folding_millis = rewrite.meta_optimizer_timeout_ms();
  }
  if (classic.max_folded_constant_in_bytes() > 0) {
    options.max_folded_constant_bytes = classic.max_folded_constant_in_bytes();
  }
  return options;
}

void GraphOptimizer::AddPass(std::string name, bool enabled, GraphPass pass) {
  passes_.push_back({std::move(name), enabled, std::move(pass)});
}

void GraphOptimizer::AddPass(std::string name, bool enabled,
                             std::function<Status(Graph*, bool*)> pass) {
  AddPass(std::move(name), enabled,
          [pass = std::move(pass)](const GraphOptimizerOptions&, Graph* graph, bool* changed) {
            return pass(graph, changed);
          });
}

Status GraphOptimizer::Optimize(Graph* graph) const {
  if (graph->num_op_nodes() < options_.min_graph_nodes) return Status::OK();
  for (const Pass& pass : passes_) {
    if (!pass.enabled) continue;
    bool changed = false;
    Status status = pass.run(options_, graph, &changed);
    if (!status.ok()) {
      return Status(status.code(),
                    StrCat("Graph optimizer pass ", pass.name, ": ", status.message()));
    }
  }
  return Status::OK();
}

GraphOptimizer DefaultGraphOptimizer(GraphOptimizerOptions options) {
  const GraphOptimizerOptions copy = options;
  GraphOptimizer optimizer(std::move(options));
  // Identity removal and constant push-down first: they leave big weights
  // read straight from their Consts and chains of constants for folding.
  optimizer.AddPass("arithmetic_simplification", copy.arithmetic_simplification,
                    SimplifyArithmetic);
  optimizer.AddPass("constant_folding", copy.constant_folding, FoldConstants);
  optimizer.AddPass("batch_norm_folding", copy.batch_norm_folding, FoldBatchNorms);
  // The filters and biases batch-norm folding built are constant expressions.
  optimizer.AddPass("constant_folding", copy.constant_folding && copy.batch_norm_folding,
                    FoldConstants);
  // TensorFlow's remapper: Conv2D/MatMul + BiasAdd (+ activation) become
  // one _FusedConv2D/_FusedMatMul, after folding has left BiasAdds of
  // constants where batch norms were.
  optimizer.AddPass("remapping", copy.batch_norm_folding,
                    [](const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
                      return FuseConvBiasActivation(graph, options.preserved_nodes, changed);
                    });
  optimizer.AddPass("common_subexpression_elimination", copy.common_subexpression_elimination,
                    EliminateCommonSubexpressions);
  // Chains of float Exp/Log/Tanh/Sigmoid/Sqrt/Rsqrt/Relu become one
  // _FusedUnaryChain (one pass over memory); after CSE, so chains it merged
  // are fused once. Part of remapping, as TensorFlow's fusions are.
  optimizer.AddPass("elementwise_fusion", copy.batch_norm_folding, FuseUnaryChains);
  // Nodes only waited for become NoOps first, which the relay removal
  // then bypasses.
  optimizer.AddPass("dependency_optimization", copy.dependency_optimization,
                    ConvertUnreadNodesToNoOps);
  optimizer.AddPass("dependency_optimization", copy.dependency_optimization, RemoveRelayNoOps);
  return optimizer;
}

Status OptimizeSignatureGraph(const ConfigProto& config, const FeedFetchSignature& signature,
                              Graph* graph) {
  GraphOptimizerOptions options = GraphOptimizerOptionsFromConfig(config);
  if (!options.AnyPass()) return Status::OK();
  options.preserved_nodes.insert(signature.targets.begin(), signature.targets.end());
  return DefaultGraphOptimizer(std::move(options)).Optimize(graph);
}

}  // namespace tensorweave
