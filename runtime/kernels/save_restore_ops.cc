// SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename and ShardedFilespec
// kernels: V2 bundles (runtime/util/tensor_bundle.h) are written, either
// format is read (runtime/util/checkpoint_format.h's OpenCheckpoint).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/util/checkpoint_format.h"
#include "runtime/util/tensor_bundle.h"

namespace tensorweave {
namespace {

// Checks prefix, tensor_names and shape_and_slices (inputs 0..2) for
// `count` tensors; slices are UNIMPLEMENTED, so every spec must be "".
Status ReadNameInputs(OpKernelContext* ctx, int64_t count, std::string* prefix,
                      std::vector<std::string>* names) {
  const Tensor& prefix_tensor = ctx->input(0);
  const Tensor& names_tensor = ctx->input(1);
  const Tensor& slices_tensor = ctx->input(2);
  if (prefix_tensor.dims() != 0) {
    return errors::InvalidArgument("prefix must be a scalar, got shape ",
                                   prefix_tensor.shape().DebugString());
  }
  *prefix = prefix_tensor.scalar<std::string>();
  if (prefix->empty()) return errors::InvalidArgument("prefix must not be empty");
  for (const Tensor* tensor : {&names_tensor, &slices_tensor}) {
    const char* what = tensor == &names_tensor ? "tensor_names" : "shape_and_slices";
    if (tensor->dims() != 1 || tensor->dim_size(0) != count) {
      return errors::InvalidArgument(what, " must be a vector of ", count, " strings, got shape ",
                                     tensor->shape().DebugString());
    }
  }
  const std::string* slices = slices_tensor.data<std::string>();
  const std::string* given_names = names_tensor.data<std::string>();
  names->assign(given_names, given_names + count);
  for (int64_t i = 0; i < count; ++i) {
    if (!slices[i].empty()) {
      return errors::Unimplemented(
          "Saving or restoring slices is not supported: "
          "shape_and_slices[",
          i, "] for '", given_names[i], "' is '", slices[i], "', must be empty");
    }
    if ((*names)[i].empty()) return errors::InvalidArgument("tensor_names[", i, "] is empty");
  }
  return Status::OK();
}

// Creates the directory holding `path` and its missing parents, as
// TensorFlow's SaveV2 does, so saver.save(sess, "ckpt/model") works in a
// fresh working directory.
Status CreateParentDirectories(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string directory = path.substr(0, slash);
    if (::mkdir(directory.c_str(), 0777) != 0 && errno != EEXIST) {
      const int error = errno;
      const std::string message = StrCat("Cannot create directory ", directory, " for checkpoint ",
                                         path, ": ", std::strerror(error));
      return error == ENOENT || error == ENOTDIR ? errors::NotFound(message)
                                                 : errors::PermissionDenied(message);
    }
  }
  return Status::OK();
}

class SaveV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int64_t count = ctx->num_inputs() - 3;
    std::string prefix;
    std::vector<std::string> names;
    OP_REQUIRES_OK(ctx, ReadNameInputs(ctx, count, &prefix, &names));
    std::vector<CheckpointEntry> entries(count);
    for (int64_t i = 0; i < count; ++i) {
      entries[i].name = names[i];
      entries[i].tensor = ctx->input(3 + i);
    }
    OP_REQUIRES_OK(ctx, CreateParentDirectories(BundleIndexPath(prefix)));
    OP_REQUIRES_OK(ctx, WriteTensorBundle(prefix, entries));
  }
};

class RestoreV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int64_t count = ctx->num_outputs();
    std::string prefix;
    std::vector<std::string> names;
    OP_REQUIRES_OK(ctx, ReadNameInputs(ctx, count, &prefix, &names));
    std::unique_ptr<CheckpointReader> reader;
    OP_REQUIRES_OK(ctx, CheckpointReader::OpenCheckpoint(
                            prefix, CheckpointReader::Verify::kWholeFile, &reader));
    for (int64_t i = 0; i < count; ++i) {
      Tensor value;
      OP_REQUIRES_OK(ctx, reader->Read(names[i], ctx->expected_output_dtype(i), &value));
      ctx->set_output(i, std::move(value));
    }
  }
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("delete_old_dirs", &delete_old_dirs_));
    OP_REQUIRES_OK(c, c->GetAttr("allow_missing_files", &allow_missing_files_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& prefixes = ctx->input(0);
    const Tensor& destination = ctx->input(1);
    OP_REQUIRES(ctx, prefixes.dims() == 1,
                errors::InvalidArgument("checkpoint_prefixes must be a vector, got shape ",
                                        prefixes.shape().DebugString()));
    OP_REQUIRES(ctx, destination.dims() == 0,
                errors::InvalidArgument("destination_prefix must be a scalar, got shape ",
                                        destination.shape().DebugString()));
    const std::string* given = prefixes.data<std::string>();
    const std::vector<std::string> sources(given, given + prefixes.NumElements());
    const std::string& merged = destination.scalar<std::string>();
    OP_REQUIRES(ctx, !merged.empty(),
                errors::InvalidArgument("destination_prefix must not be empty"));
    OP_REQUIRES_OK(ctx, CreateParentDirectories(BundleIndexPath(merged)));
    OP_REQUIRES_OK(ctx,
                   MergeTensorBundles(sources, merged, delete_old_dirs_, allow_missing_files_));
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

// Reads scalar int32 input `index` into `value`.
Status ScalarInt32(OpKernelContext* ctx, int index, const char* what, int32_t* value) {
  const Tensor& tensor = ctx->input(index);
  if (tensor.dims() != 0) {
    return errors::InvalidArgument(what, " must be a scalar, got shape ",
                                   tensor.shape().DebugString());
  }
  *value = tensor.scalar<int32_t>();
  return Status::OK();
}

Status OutputString(OpKernelContext* ctx, std::string value) {
  Tensor* output = nullptr;
  TW_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(), &output));
  output->data<std::string>()[0] = std::move(value);
  return Status::OK();
}

class ShardedFilenameOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& basename = ctx->input(0);
    OP_REQUIRES(ctx, basename.dims() == 0,
                errors::InvalidArgument("basename must be a scalar, got shape ",
                                        basename.shape().DebugString()));
    int32_t shard = 0, num_shards = 0;
    OP_REQUIRES_OK(ctx, ScalarInt32(ctx, 1, "shard", &shard));
    OP_REQUIRES_OK(ctx, ScalarInt32(ctx, 2, "num_shards", &num_shards));
    char suffix[48];
    std::snprintf(suffix, sizeof(suffix), "-%05d-of-%05d", shard, num_shards);
    OP_REQUIRES_OK(ctx, OutputString(ctx, basename.scalar<std::string>() + suffix));
  }
};

class ShardedFilespecOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& basename = ctx->input(0);
    OP_REQUIRES(ctx, basename.dims() == 0,
                errors::InvalidArgument("basename must be a scalar, got shape ",
                                        basename.shape().DebugString()));
    int32_t num_shards = 0;
    OP_REQUIRES_OK(ctx, ScalarInt32(ctx, 1, "num_shards", &num_shards));
    char suffix[48];
    std::snprintf(suffix, sizeof(suffix), "-%s-of-%05d", "?????", num_shards);
    OP_REQUIRES_OK(ctx, OutputString(ctx, basename.scalar<std::string>() + suffix));
  }
};

REGISTER_KERNEL_BUILDER(Name("SaveV2").Device(DEVICE_CPU), SaveV2Op);
REGISTER_KERNEL_BUILDER(Name("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);
REGISTER_KERNEL_BUILDER(Name("MergeV2Checkpoints").Device(DEVICE_CPU), MergeV2CheckpointsOp);
REGISTER_KERNEL_BUILDER(Name("ShardedFilename").Device(DEVICE_CPU), ShardedFilenameOp);
REGISTER_KERNEL_BUILDER(Name("ShardedFilespec").Device(DEVICE_CPU), ShardedFilespecOp);

}  // namespace
}  // namespace tensorweave
