// GraphOptimizer: rewrites the graph of one signature (already pruned to
// its feeds, fetches and targets, not yet placed) into a cheaper graph that
// computes the same values. Sessions call it once per cached signature:
//
//   TW_RETURN_IF_ERROR(RewriteForSignature(signature, &graph, &rewrite));
//   TW_RETURN_IF_ERROR(OptimizeSignatureGraph(config, signature, &graph));
//   ... place, partition ...
//
// The passes, in order (each may be turned off through ConfigProto.graph_options):
//   constant folding            runs every node whose inputs are all constant
//                               on the CPU and replaces it by a Const; Shape,
//                               Size and Rank of fully known shapes too
//   arithmetic simplification   (x + c1) + c2 → x + (c1 + c2) and the like,
//                               removal of Identity, x * 1, x + 0, no-op
//                               Reshape/Transpose/Cast, AddN of constants
//   batch-norm folding          inference batch norm after a convolution or
//                               MatMul with a constant filter goes into the
//                               filter and a BiasAdd
//   constant folding            again, for what the two above made constant
//   remapping                   Conv2D/MatMul + BiasAdd (+ Relu, Relu6, Elu,
//                               LeakyRelu) become one _FusedConv2D or
//                               _FusedMatMul (conv_fusion.h)
//   common subexpression elim.  nodes computing the same op on the same
//                               inputs with the same attrs become one
//   dependency optimization     NoOps that only relay control edges go
//
// What every pass keeps: the values of fetches; feeds (_Arg/_Recv nodes) and
// fetches (_Retval/_Send) themselves; targets; every stateful node, its
// inputs and its control edges; the names of fetched nodes (a folded node
// keeps its name, so errors and partition graphs still name it); requested
// devices. A kernel error while folding never surfaces: the node is left
// to fail at run time as before.
//
// A pass is a function `Status Pass(Graph* graph, bool* changed)` (plus, for
// ours, the options); GraphOptimizer::AddPass appends one, so a new pass is
// one line where the pipeline is assembled (DefaultPipeline in
// graph_optimizer.cc).
#ifndef TENSORWEAVE_COMMON_RUNTIME_GRAPH_OPTIMIZER_H_
#define TENSORWEAVE_COMMON_RUNTIME_GRAPH_OPTIMIZER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/common_runtime/subgraph.h"
#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"
#include "tensorweave/proto/config.pb.h"

namespace tensorweave {

// TensorFlow folds constants of at most 10 MB; so do we by default.
inline constexpr int64_t kDefaultMaxFoldedConstantBytes = int64_t{10} << 20;
inline constexpr int64_t kDefaultMaxFoldingMillis = 1000;

struct GraphOptimizerOptions {
  bool constant_folding = true;
  bool arithmetic_simplification = true;
  bool batch_norm_folding = true;  // TensorFlow's "remapping": also conv fusion
  bool common_subexpression_elimination = true;
  bool dependency_optimization = true;
  // Graphs with fewer op nodes are left as they are.
  int min_graph_nodes = 4;
  // A folded result larger than this stays computed at run time.
  int64_t max_folded_constant_bytes = kDefaultMaxFoldedConstantBytes;
  // Constant folding stops starting kernels once it has run this long
  // (what is left runs at run time, where steps can be cancelled and time
  // out): a graph computing minutes of work from constants must not hold
  // its first Session.run in an optimizer nothing can interrupt. Negative:
  // no limit.
  int64_t max_folding_millis = kDefaultMaxFoldingMillis;
  // Nodes no pass may remove or rename: the signature's targets.
  std::unordered_set<std::string> preserved_nodes;

  bool AnyPass() const {
    return constant_folding || arithmetic_simplification || batch_norm_folding ||
           common_subexpression_elimination || dependency_optimization;
  }
};

// The options ConfigProto.graph_options asks for:
// - a pass is on when its RewriterConfig toggle is ON, off when it is OFF,
//   and otherwise on at opt_level L1 (the default) and off at L0, except
//   that do_constant_folding and do_common_subexpression_elimination turn
//   their pass on at L0 too (TensorFlow's classic optimizer);
// - rewrite_options.disable_meta_optimizer turns every pass off;
// - min_graph_nodes 0 means 4, a negative value 0 (as in TensorFlow);
// - max_folded_constant_in_bytes 0 means kDefaultMaxFoldedConstantBytes;
// - rewrite_options.meta_optimizer_timeout_ms bounds constant folding's
//   kernel time (0: kDefaultMaxFoldingMillis, negative: no bound).
// Toggles: constant_folding, arithmetic_optimization, remapping (batch-norm
// folding), common_subgraph_elimination, dependency_optimization.
GraphOptimizerOptions GraphOptimizerOptionsFromConfig(const ConfigProto& config);

using GraphPass = std::function<Status(const GraphOptimizerOptions&, Graph*, bool* changed)>;

class GraphOptimizer {
 public:
  explicit GraphOptimizer(GraphOptimizerOptions options) : options_(std::move(options)) {}

  // Appends a pass that runs when `enabled` is true.
  void AddPass(std::string name, bool enabled, GraphPass pass);
  // A pass of the shape other helpers write, `Status Pass(Graph*, bool*)`.
  void AddPass(std::string name, bool enabled, std::function<Status(Graph*, bool*)> pass);

  // Runs the enabled passes in order. A pass error is returned (with the
  // pass's name); passes report errors only for graphs they cannot have
  // made (a bug), never for what a user's graph holds.
  Status Optimize(Graph* graph) const;

  const GraphOptimizerOptions& options() const { return options_; }

 private:
  struct Pass {
    std::string name;
    bool enabled;
    GraphPass run;
  };
  GraphOptimizerOptions options_;
  std::vector<Pass> passes_;
};

// Our passes in their order, enabled as `options` says.
GraphOptimizer DefaultGraphOptimizer(GraphOptimizerOptions options);

// What sessions call: DefaultGraphOptimizer with the options of `config`,
// preserving `signature`'s targets.
Status OptimizeSignatureGraph(const ConfigProto& config, const FeedFetchSignature& signature,
                              Graph* graph);

// --- The passes --------------------------------------------------------------

// constant_folding.cc
Status FoldConstants(const GraphOptimizerOptions& options, Graph* graph, bool* changed);
// arithmetic_simplifier.cc
Status SimplifyArithmetic(const GraphOptimizerOptions& options, Graph* graph, bool* changed);
// batch_norm_folding.cc
Status FoldBatchNorms(const GraphOptimizerOptions& options, Graph* graph, bool* changed);
// common_subexpression.cc
Status EliminateCommonSubexpressions(const GraphOptimizerOptions& options, Graph* graph,
                                     bool* changed);
// unread_nodes.cc
Status ConvertUnreadNodesToNoOps(const GraphOptimizerOptions& options, Graph* graph, bool* changed);
// arithmetic_simplifier.cc
Status RemoveRelayNoOps(const GraphOptimizerOptions& options, Graph* graph, bool* changed);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_GRAPH_OPTIMIZER_H_
