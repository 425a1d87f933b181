// Helpers shared by the shape functions of the array op families.
#ifndef TENSORWEAVE_OPS_ARRAY_SHAPE_OPS_H_
#define TENSORWEAVE_OPS_ARRAY_SHAPE_OPS_H_

#include <cstdint>
#include <vector>

#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace array_shape_fns {

// The int32/int64 values of input i when it is a known constant: `known`
// tells whether it is. A known value of the wrong kind is an error.
Status KnownValues(shape_inference::InferenceContext* c, int i, const char* what,
                   std::vector<int64_t>* values, bool* known);

// `axis` in [-rank, rank) mapped to [0, rank); an error naming `what` otherwise.
Status NormalizeAxis(shape_inference::InferenceContext* c, int64_t axis, int rank, const char* what,
                     int64_t* normalized);

// The declared length of input i when it is a vector of known length,
// else -1. The length is a rank to be: above kMaxRank it is an error, so a
// vector declared [2^31-1] never becomes a rank-(2^31-1) shape.
Status DeclaredRank(shape_inference::InferenceContext* c, int i, int* rank);

// Sets output `i` from dims (-1 unknown), checking the element count.
Status SetOutputDims(shape_inference::InferenceContext* c, int i, const std::vector<int64_t>& dims);

}  // namespace array_shape_fns
}  // namespace tensorweave

#endif  // TENSORWEAVE_OPS_ARRAY_SHAPE_OPS_H_
