// Reading the index tensors of GatherNd, ScatterNd and the TensorScatter
// ops: `indices` of shape [..., depth] names slices of a tensor whose first
// `depth` dimensions it indexes. Each index row becomes the row-major
// number of its slice, checked against the shape.
//
//   std::vector<int64_t> slices;
//   TW_RETURN_IF_ERROR(ReadSliceNumbers(indices, params.shape(), "param shape",
//                                       /*ignore_bad=*/false, &slices));
//   // slices[r] in [0, product of the first depth dims), or -1 when ignored.
#ifndef TENSORWEAVE_KERNELS_ND_INDEX_H_
#define TENSORWEAVE_KERNELS_ND_INDEX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

// The policy attr TensorFlow 2.x writes on these ops: "" and "DEFAULT" and
// "ERROR" make a bad index an error (the CPU default), "IGNORE" skips it.
Status ParseBadIndicesPolicy(const std::string& policy, bool* ignore_bad);

// One slice number per row of `indices` (int32 or int64, rank >= 1, last
// dim `depth` <= shape's rank). A row outside `shape` is INVALID_ARGUMENT
// ("indices[3] = [0, 7] does not index into <what> [2,5]") unless
// `ignore_bad`, which gives -1.
Status ReadSliceNumbers(const Tensor& indices, const TensorShape& shape, const char* what,
                        bool ignore_bad, std::vector<int64_t>* slices);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_ND_INDEX_H_
