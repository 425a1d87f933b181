// A graph pass that rewrites chains of float elementwise steps on one
// tensor, each a function (Exp, Log, Tanh, Sigmoid, Sqrt, Rsqrt, Relu) or an
// Add/AddV2/Sub/Mul/Div/RealDiv/Maximum/Minimum with a rank-0 Const on
// either side, e.g. x -> Mul 0.5 -> Tanh -> Add 1, into one
// _FusedUnaryChain node (ops/fused_elementwise_ops.cc), whose kernel runs
// the whole chain on each cache-sized block, so the tensor crosses memory
// once instead of once per step:
//
//   bool changed = false;
//   TW_RETURN_IF_ERROR(FuseUnaryChains(graph, options, &changed));
//
// As in the conv fusion pass, a node joins a chain only when it feeds only
// the next function (one data edge out, no control edges out), is not kept
// by the options (a target) and asks for the same device as the chain's
// last node; the fused node takes the last node's name and device (so
// fetches and consumers by name are unchanged) and the chain's control
// inputs. Training graphs keep most chains unfused: the gradients read the
// intermediate results.
#ifndef TENSORWEAVE_COMMON_RUNTIME_ELEMENTWISE_FUSION_H_
#define TENSORWEAVE_COMMON_RUNTIME_ELEMENTWISE_FUSION_H_

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

// Fuses every chain of at least two steps, one of them a function, whose
// input is not a Const, in `graph` (scalar Consts left without consumers go
// too); `changed` says whether any was.
Status FuseUnaryChains(const GraphOptimizerOptions& options, Graph* graph, bool* changed);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_ELEMENTWISE_FUSION_H_
