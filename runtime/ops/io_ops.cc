// Checkpoint ops with TensorFlow's signatures: SaveV2, RestoreV2,
// MergeV2Checkpoints and the shard-name helpers ShardedFilename and
// ShardedFilespec. SaveV2 writes TensorFlow's V2 format ("<prefix>.index"
// and "<prefix>.data-00000-of-00001"); RestoreV2 also reads tensorweave's
// older "<prefix>.twckpt" files (docs/checkpoint_format.md) and restores
// slices ("5 3 0,2:-"); saving slices is UNIMPLEMENTED.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// prefix is a scalar; tensor_names and shape_and_slices are vectors with
// one element per saved or restored tensor (`count`, when known).
Status CheckNameInputs(InferenceContext* c, int64_t count) {
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(c->WithRank(0, 0, &shape));
  for (int i : {1, 2}) {
    TW_RETURN_IF_ERROR(c->WithRank(i, 1, &shape));
    if (shape.dim_size(0) >= 0 && shape.dim_size(0) != count) {
      return c->Error(i == 1 ? "tensor_names" : "shape_and_slices", " has ", shape.dim_size(0),
                      " elements but there are ", count, " tensors");
    }
  }
  return Status::OK();
}

Status SaveV2Shape(InferenceContext* c) { return CheckNameInputs(c, c->num_inputs() - 3); }

// Without slices the stored shape is known only when the file is read.
Status RestoreV2Shape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(CheckNameInputs(c, c->num_outputs()));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape());
  return Status::OK();
}

}  // namespace

// Stateful: two saves of the same tensors are two writes, never merged.
REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetShapeFn(SaveV2Shape)
    .SetIsStateful()
    .Doc("Writes the tensors, under their names, as the V2 checkpoint prefix, atomically.");

// Stateful: the file may change between runs, so its values are never
// constant-folded or shared between two restore ops.
REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetShapeFn(RestoreV2Shape)
    .SetIsStateful()
    .Doc("Reads the named tensors from the checkpoint saved under prefix (either format).");

// Stateful: it renames and deletes files.
REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape shape;
      TW_RETURN_IF_ERROR(c->WithRank(0, 1, &shape));
      return c->WithRank(1, 0, &shape);
    })
    .SetIsStateful()
    .Doc(
        "Merges the V2 checkpoints of checkpoint_prefixes (a sharded save's parts) into one "
        "under destination_prefix.");

// "<basename>-<shard>-of-<num_shards>", both numbers as 5 digits.
REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape shape;
      for (int i = 0; i < 3; ++i) TW_RETURN_IF_ERROR(c->WithRank(i, 0, &shape));
      c->set_output(0, PartialTensorShape::UnknownDims(0));
      return Status::OK();
    })
    .Doc("The name of one shard of a sharded file.");

// "<basename>-?????-of-<num_shards>": a glob of every shard.
REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn([](InferenceContext* c) {
      PartialTensorShape shape;
      for (int i = 0; i < 2; ++i) TW_RETURN_IF_ERROR(c->WithRank(i, 0, &shape));
      c->set_output(0, PartialTensorShape::UnknownDims(0));
      return Status::OK();
    })
    .Doc("The glob pattern matching every shard of a sharded file.");

}  // namespace tensorweave
