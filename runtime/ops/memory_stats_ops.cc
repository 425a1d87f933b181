// BytesInUse, BytesLimit, MaxBytesInUse: the memory statistics ops of
// TensorFlow 1.x's tf.contrib.memory_stats, reading the statistics of the
// device's allocator (runtime/framework/cpu_allocator.h).
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {

REGISTER_OP("BytesInUse")
    .Output("out: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("Bytes of tensor buffers the device's allocator has handed out and not had back.");

REGISTER_OP("BytesLimit")
    .Output("out: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("The most bytes the device's allocator may hand out (0: no limit).");

REGISTER_OP("MaxBytesInUse")
    .Output("out: int64")
    .SetIsStateful()
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("The peak of BytesInUse since the process started (or the stats were cleared).");

}  // namespace tensorweave
