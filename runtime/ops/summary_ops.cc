// Summary ops: each turns a tensor into a serialized Summary (summary.proto)
// in a scalar string, which tf.summary.FileWriter writes to an event file
// for TensorBoard. Names, inputs, attrs and defaults are TensorFlow's; the
// kernels are runtime/kernels/summary_ops.cc. As in TensorFlow every output
// is a scalar and the ops are not stateful.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {

REGISTER_OP("ScalarSummary")
    .Input("tags: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64}")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("A Summary of one simple_value per tag; tags and values have the same shape.");

REGISTER_OP("HistogramSummary")
    .Input("tag: string")
    .Input("values: T")
    .Output("summary: string")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
        "uint64} = DT_FLOAT")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(
        "A Summary holding a histogram of `values` in TensorFlow's default buckets; a NaN or "
        "infinite value is INVALID_ARGUMENT.");

REGISTER_OP("ImageSummary")
    .Input("tag: string")
    .Input("tensor: T")
    .Output("summary: string")
    .Attr("max_images: int >= 1 = 3")
    .Attr("T: {uint8, float, half, double} = DT_FLOAT")
    .Attr(
        "bad_color: tensor = { dtype: DT_UINT8 tensor_shape { dim { size: 4 } } int_val: 255 "
        "int_val: 0 int_val: 0 int_val: 255 }")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(
        "A Summary of up to max_images PNG images from a [batch, height, width, 1|3|4] tensor; "
        "float images are scaled into [0, 255] and non-finite pixels drawn in bad_color.");

REGISTER_OP("AudioSummaryV2")
    .Input("tag: string")
    .Input("tensor: float")
    .Input("sample_rate: float")
    .Output("summary: string")
    .Attr("max_outputs: int >= 1 = 3")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc(
        "A Summary of up to max_outputs 16-bit PCM WAV clips from a [batch, frames] or "
        "[batch, frames, channels] tensor of samples in [-1, 1].");

REGISTER_OP("TensorSummaryV2")
    .Input("tag: string")
    .Input("tensor: T")
    .Input("serialized_summary_metadata: string")
    .Output("summary: string")
    .Attr("T: type")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("A Summary holding `tensor` itself with the given SummaryMetadata (plugin data).");

REGISTER_OP("MergeSummary")
    .Input("inputs: N * string")
    .Output("summary: string")
    .Attr("N: int >= 1")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("One Summary with the values of every input Summary; a repeated tag is INVALID_ARGUMENT.");

}  // namespace tensorweave
