// Shared pieces of the oneDNN convolution kernels (conv_onednn_common.h).
#include "runtime/kernels/conv_onednn_common.h"

#include <algorithm>
#include <cstring>

namespace tensorweave {
namespace onednn_conv {

using dnnl::memory;

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

memory::desc ConvProblem::SrcDesc() const {
  return memory::desc({batch, in_depth, in_rows, in_cols}, memory::data_type::f32,
                      memory::format_tag::nhwc);
}

memory::desc ConvProblem::DstDesc() const {
  return memory::desc({batch, out_depth, out_rows, out_cols}, memory::data_type::f32,
                      memory::format_tag::nhwc);
}

memory::desc ConvProblem::WeightsDesc(memory::format_tag tag) const {
  return memory::desc({out_depth, in_depth, filter_rows, filter_cols}, memory::data_type::f32, tag);
}

// Padding after the last element so that oneDNN's output size (a floor
// division) is TensorFlow's; 0 when the last windows leave input unread.
int64_t PaddingAfter(int64_t input, int64_t output, int64_t window, int64_t dilation,
                     int64_t stride, int64_t pad_before) {
  const int64_t span = (window - 1) * dilation + 1;
  return std::max<int64_t>(0, (output - 1) * stride + span - input - pad_before);
}

dnnl::post_ops EpiloguePostOps(const ConvProblem& p) {
  dnnl::post_ops ops;
  if (p.with_sum) ops.append_sum(1.0f);
  switch (p.activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      break;
    case Activation::kRelu6:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
      break;
    case Activation::kElu:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_elu, 1.0f, 0.0f);
      break;
    case Activation::kLeakyRelu:
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, p.alpha, 0.0f);
      break;
  }
  return ops;
}

AlignedBuffer AllocateAligned(size_t bytes) {
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  return AlignedBuffer(static_cast<char*>(std::aligned_alloc(64, rounded)));
}

char* ThreadBuffer(BufferSlot slot, size_t bytes) {
  thread_local AlignedBuffer buffers[kSlots];
  thread_local size_t sizes[kSlots] = {};
  if (sizes[slot] < bytes) {
    buffers[slot] = AllocateAligned(bytes);
    sizes[slot] = bytes;
  }
  return buffers[slot].get();
}

// HWIO filter element (o, i, h, w) is at ((h * W + w) * I + i) * O + o.
// The blocked layouts oneDNN's AVX2 kernels choose, written by plain loops
// of 8-float runs: oneDNN's own reorder to them (jit:uni) measured 6-19 ms
// for ResNet's 3x3x512x512 filter, several times the convolution itself.
//   ABcd8b8a: ((((o/8) * I8 + i/8) * H + h) * W + w) * 64 + (i%8) * 8 + o%8
//   Acdb8a:   ((((o/8) * H + h) * W + w) * I + i) * 8 + o%8
// (I8 = I rounded up to 8 over 8); padding channels are zero. False when
// `layout` is neither.
bool ReorderHwioFilter(const ConvProblem& p, const float* filter, const memory::desc& layout,
                       float* out) {
  const memory::dims dims = {p.out_depth, p.in_depth, p.filter_rows, p.filter_cols};
  const auto f32 = memory::data_type::f32;
  const bool blocked_both = layout == memory::desc(dims, f32, memory::format_tag::ABcd8b8a);
  if (!blocked_both && layout != memory::desc(dims, f32, memory::format_tag::Acdb8a)) {
    return false;
  }
  const int64_t rows = p.filter_rows, cols = p.filter_cols;
  const int64_t in = p.in_depth, out_depth = p.out_depth;
  const int64_t in_blocks = (in + 7) / 8, out_blocks = (out_depth + 7) / 8;
  if (in % 8 != 0 || out_depth % 8 != 0) std::memset(out, 0, layout.get_size());
  // Eight input channels at a time (eight consecutive HWIO rows, read in
  // order), so that ABcd8b8a's 64-float tiles are written whole.
  for (int64_t ib = 0; ib < in_blocks; ++ib) {
    const int64_t channels = std::min<int64_t>(8, in - ib * 8);
    for (int64_t h = 0; h < rows; ++h) {
      for (int64_t w = 0; w < cols; ++w) {
        const float* src = filter + ((h * cols + w) * in + ib * 8) * out_depth;
        for (int64_t ob = 0; ob < out_blocks; ++ob) {
          const int64_t run = std::min<int64_t>(8, out_depth - ob * 8);
          for (int64_t c = 0; c < channels; ++c) {
            const int64_t i = ib * 8 + c;
            float* dst = blocked_both
                             ? out + (((ob * in_blocks + ib) * rows + h) * cols + w) * 64 + c * 8
                             : out + (((ob * rows + h) * cols + w) * in + i) * 8;
            const float* row = src + c * out_depth + ob * 8;
            if (run == 8) {
              std::memcpy(dst, row, 8 * sizeof(float));  // a fixed size: two vector moves
            } else {
              std::memcpy(dst, row, run * sizeof(float));
            }
          }
        }
      }
    }
  }
  return true;
}

}  // namespace onednn_conv
}  // namespace tensorweave
