#include "runtime/ops/strided_slice_spec.h"

#include <algorithm>

namespace tensorweave {
namespace {

bool Bit(int64_t mask, int i) { return i < 64 && ((mask >> i) & 1) != 0; }

// Start and stop of one dense dim of known size, TensorFlow's clamping:
// negative indices count from the end, then the index is clamped into
// [0, dim] for forward walks and [-1, dim - 1] for backward ones.
void Canonicalize(int64_t dim, int64_t stride, bool begin_masked, bool end_masked, int64_t begin,
                  int64_t end, int64_t* start, int64_t* stop) {
  const int64_t low = stride > 0 ? 0 : -1;
  const int64_t high = stride > 0 ? dim : dim - 1;
  auto clamp = [&](int64_t x) {
    if (x < 0) x += dim;
    return std::min(std::max(x, low), high);
  };
  *start = begin_masked ? (stride > 0 ? low : high) : clamp(begin);
  *stop = end_masked ? (stride > 0 ? high : low) : clamp(end);
}

}  // namespace

Status ComputeStridedSlice(const std::vector<int64_t>& input_dims,
                           const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                           const std::vector<int64_t>& strides, const StridedSliceMasks& masks,
                           StridedSliceDense* dense, StridedSliceKnown known) {
  const int sparse_count = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size()) {
    return errors::InvalidArgument(
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [",
        begin.size(), "], [", end.size(), "], and [", strides.size(), "] instead.");
  }
  if (sparse_count > 64) {
    return errors::InvalidArgument("StridedSlice takes at most 64 indices, got ", sparse_count);
  }
  int ellipsis_at = -1;
  for (int i = 0; i < sparse_count; ++i) {
    if (!Bit(masks.ellipsis, i)) continue;
    if (ellipsis_at >= 0) {
      return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");
    }
    ellipsis_at = i;
  }
  // Entries that consume an input dim: all but the ellipsis and new axes.
  int consuming = 0;
  for (int i = 0; i < sparse_count; ++i) {
    if (i != ellipsis_at && !Bit(masks.new_axis, i)) ++consuming;
  }
  const int rank = static_cast<int>(input_dims.size());
  if (consuming > rank) {
    return errors::InvalidArgument("Index out of range using input dim ", rank, "; input has only ",
                                   rank, " dims");
  }
  dense->begin.assign(rank, 0);
  dense->stride.assign(rank, 1);
  dense->size.assign(rank, 0);
  dense->final_dims.clear();

  // Takes input dim `d` whole, as an ellipsis (explicit or implicit) does.
  auto take_all = [&](int d) {
    dense->begin[d] = 0;
    dense->stride[d] = 1;
    dense->size[d] = input_dims[d];
    dense->final_dims.push_back(input_dims[d]);
  };

  int d = 0;  // the next input dim
  for (int i = 0; i < sparse_count; ++i) {
    if (i == ellipsis_at) {
      const int covered = rank - consuming;
      for (int k = 0; k < covered; ++k) take_all(d++);
      continue;
    }
    if (Bit(masks.new_axis, i)) {
      dense->final_dims.push_back(1);
      continue;
    }
    const bool interval_known =
        known.strides && (known.begin || Bit(masks.begin, i)) && (known.end || Bit(masks.end, i));
    const int64_t stride = known.strides ? strides[i] : 1;
    if (stride == 0) return errors::InvalidArgument("strides[", i, "] must be non-zero");
    if (Bit(masks.shrink_axis, i)) {
      // A single index walks forward; a backward stride there is a
      // malformed spec (TensorFlow rejects it too).
      if (stride < 0) {
        return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
      }
      const int64_t dim = known.begin ? input_dims[d] : -1;
      int64_t index = known.begin ? begin[i] : 0;
      if (dim >= 0) {
        if (index < 0) index += dim;
        if (index < 0 || index >= dim) {
          return errors::InvalidArgument("slice index ", begin[i], " of dimension ", d,
                                         " out of bounds.");
        }
      }
      // One element.
      dense->begin[d] = index;
      dense->stride[d] = 1;
      dense->size[d] = 1;
      ++d;
      continue;
    }
    const int64_t dim = interval_known ? input_dims[d] : -1;
    dense->stride[d] = stride;
    if (dim < 0) {
      dense->size[d] = -1;
      dense->final_dims.push_back(-1);
      ++d;
      continue;
    }
    int64_t start, stop;
    Canonicalize(dim, stride, Bit(masks.begin, i), Bit(masks.end, i), begin[i], end[i], &start,
                 &stop);
    const int64_t span = stop - start;
    int64_t size = 0;
    if ((span > 0 && stride > 0) || (span < 0 && stride < 0)) {
      // ceil(span / stride) for same-signed operands, without overflow:
      // |span| <= 2^62 + 1, but |stride| of INT64_MIN has no int64 value.
      const uint64_t magnitude = static_cast<uint64_t>(span > 0 ? span : -span);
      const uint64_t step =
          stride > 0 ? static_cast<uint64_t>(stride) : uint64_t{0} - static_cast<uint64_t>(stride);
      size = static_cast<int64_t>(magnitude / step + (magnitude % step != 0 ? 1 : 0));
    }
    dense->begin[d] = start;
    dense->size[d] = size;
    // With at most one element taken the stride is never applied; 1 keeps
    // offset arithmetic (stride x dense stride) from overflowing for
    // strides like INT64_MIN.
    if (size <= 1) dense->stride[d] = 1;
    dense->final_dims.push_back(size);
    ++d;
  }
  // Dims past the last index are taken whole (an implicit trailing ellipsis).
  while (d < rank) take_all(d++);
  return Status::OK();
}

}  // namespace tensorweave
