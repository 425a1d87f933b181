// A graph pass that rewrites Conv2D -> BiasAdd (-> Relu | Relu6 | Elu |
// LeakyRelu) chains, and DepthwiseConv2dNative or MatMul -> BiasAdd (-> the
// same) chains, into one _FusedConv2D / _FusedDepthwiseConv2dNative /
// _FusedMatMul node (ops/nn_fused_ops.cc), as TensorFlow's grappler
// remapper does on the CPU (oneDNN builds, for the depthwise one):
//
//   std::unordered_set<std::string> fetched = {"logits", "loss"};
//   bool changed = false;
//   TW_RETURN_IF_ERROR(FuseConvBiasActivation(graph, fetched, &changed));
//
// A chain is fused only when every intermediate result (the Conv2D's or
// MatMul's output, and the BiasAdd's when an activation follows) has the
// next op of the chain as its only consumer, has no control edges out, and
// is not in `protected_nodes` (the names fetched, or otherwise needed by
// name). The fused node takes the name and device of the chain's last node,
// so its consumers and fetches by name are unchanged; the control inputs
// of the chain's nodes become its control inputs. Only float and double
// convolutions and float products are fused (the fused kernels' types), in
// both data formats, in inference and training graphs alike (a training
// graph's gradient ops consume the intermediates, which then keeps them
// unfused). A _FusedConv2D whose filter is a Const gets the attr
// _filter_is_const = true: its kernel keeps the filter reordered.
//
// A Conv2D's chain may also take in an AddV2 or Add of the BiasAdd's output
// and another tensor (either operand order) before the activation, as the
// remapper's contraction + bias + add fusion does for residual blocks:
// fused_ops [BiasAdd, Add(, activation)] with the tensor as the second arg.
// Only when both operands' shapes are fully known from the graph and equal
// (the kernel does not broadcast), and the BiasAdd and the Add meet the
// intermediate rules above.
//
// Before fusing, a Pad of zeros over the rows and columns only (a Const
// paddings input) whose one consumer is a VALID NHWC Conv2D or
// DepthwiseConv2dNative goes into the convolution as EXPLICIT padding
// (Keras' ZeroPadding2D before MobileNetV2's stride-2 depthwise blocks and
// ResNet50's stem); a fetched Pad stays.
#ifndef TENSORWEAVE_COMMON_RUNTIME_CONV_FUSION_H_
#define TENSORWEAVE_COMMON_RUNTIME_CONV_FUSION_H_

#include <string>
#include <unordered_set>

#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

// Fuses every eligible chain of `graph`; `changed` says whether any was.
Status FuseConvBiasActivation(Graph* graph, const std::unordered_set<std::string>& protected_nodes,
                              bool* changed);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_CONV_FUSION_H_
