// SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename and ShardedFilespec
// kernels: V2 bundles (runtime/util/tensor_bundle.h) are written, either
// format is read (runtime/util/checkpoint_format.h's OpenCheckpoint).
// RestoreV2 also restores a slice of a tensor (a shape_and_slices spec, as
// TensorFlow's Saver asks for each partition of a partitioned variable);
// SaveV2 of slices is UNIMPLEMENTED.
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
// `count` tensors and returns the specs in `slice_specs`; when that is null
// (saving), a non-empty spec is UNIMPLEMENTED.
Status ReadNameInputs(OpKernelContext* ctx, int64_t count, std::string* prefix,
                      std::vector<std::string>* names,
                      std::vector<std::string>* slice_specs = nullptr) {
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
  if (slice_specs != nullptr) slice_specs->assign(slices, slices + count);
  for (int64_t i = 0; i < count; ++i) {
    if (!slices[i].empty() && slice_specs == nullptr) {
      return errors::Unimplemented("Saving slices is not supported: shape_and_slices[", i,
                                   "] for '", given_names[i], "' is '", slices[i],
                                   "', must be empty");
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

// A shape_and_slices spec as TensorFlow writes it: the full shape's dims,
// then the slice, one "start,length" (or "-" for all) per dim, joined by
// ':' ("5 3 0,2:-" is rows 0 and 1 of a 5x3 tensor).
struct SliceSpec {
  std::vector<int64_t> full_dims;
  std::vector<int64_t> starts, lengths;
};

bool ParseInt64(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  int64_t result = 0;
  size_t at = text[0] == '-' ? 1 : 0;
  if (at == text.size()) return false;
  for (; at < text.size(); ++at) {
    if (text[at] < '0' || text[at] > '9') return false;
    result = result * 10 + (text[at] - '0');
  }
  *value = text[0] == '-' ? -result : result;
  return true;
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> pieces(1);
  for (char c : text) {
    if (c == separator) {
      pieces.emplace_back();
    } else {
      pieces.back().push_back(c);
    }
  }
  return pieces;
}

Status ParseSliceSpec(const std::string& text, SliceSpec* spec) {
  auto bad = [&](const char* why) {
    return errors::InvalidArgument("Invalid shape_and_slice spec '", text, "': ", why);
  };
  std::vector<std::string> fields = Split(text, ' ');
  if (fields.size() < 2) return bad("expected the shape's dims and a slice");
  const std::string slice = fields.back();
  fields.pop_back();
  for (const std::string& field : fields) {
    int64_t dim = 0;
    if (!ParseInt64(field, &dim) || dim < 0) return bad("a dim is not a non-negative integer");
    spec->full_dims.push_back(dim);
  }
  const std::vector<std::string> extents = Split(slice, ':');
  if (extents.size() != spec->full_dims.size()) return bad("the slice's rank differs");
  for (size_t d = 0; d < extents.size(); ++d) {
    int64_t start = 0, length = spec->full_dims[d];
    if (extents[d] != "-") {
      const std::vector<std::string> parts = Split(extents[d], ',');
      if (parts.size() != 2 || !ParseInt64(parts[0], &start) ||
          (parts[1] != "-" && !ParseInt64(parts[1], &length))) {
        return bad("an extent is not 'start,length' or '-'");
      }
      if (parts[1] == "-") length = spec->full_dims[d] - start;
    }
    if (start < 0 || length < 0 || start > spec->full_dims[d] ||
        length > spec->full_dims[d] - start) {
      return bad("an extent lies outside the shape");
    }
    spec->starts.push_back(start);
    spec->lengths.push_back(length);
  }
  return Status::OK();
}

// The part of `full` that `spec` selects, after checking that the stored
// shape is the spec's.
Status ExtractSlice(const std::string& name, const Tensor& full, const SliceSpec& spec,
                    Tensor* out) {
  const int rank = full.dims();
  bool same_shape = rank == static_cast<int>(spec.full_dims.size());
  for (int d = 0; same_shape && d < rank; ++d) same_shape = full.dim_size(d) == spec.full_dims[d];
  if (!same_shape) {
    TensorShape wanted;
    TW_RETURN_IF_ERROR(TensorShape::Build(spec.full_dims, &wanted));
    return errors::InvalidArgument(
        "tensor_name = ", name, "; shape in shape_and_slice spec ", wanted.DebugString(),
        " does not match the shape stored in checkpoint: ", full.shape().DebugString());
  }
  TensorShape shape;
  TW_RETURN_IF_ERROR(TensorShape::Build(spec.lengths, &shape));
  Tensor slice;
  TW_RETURN_IF_ERROR(Tensor::Allocate(full.dtype(), shape, &slice));
  const size_t element_size = DataTypeSize(full.dtype());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < slice.NumElements(); ++i) {
    int64_t source = 0;
    for (int d = 0; d < rank; ++d) source = source * full.dim_size(d) + spec.starts[d] + index[d];
    if (full.dtype() == DT_STRING) {
      slice.data<std::string>()[i] = full.data<std::string>()[source];
    } else {
      std::memcpy(static_cast<char*>(slice.raw_data()) + i * element_size,
                  static_cast<const char*>(full.raw_data()) + source * element_size, element_size);
    }
    for (int d = rank - 1; d >= 0 && ++index[d] == spec.lengths[d]; --d) index[d] = 0;
  }
  *out = std::move(slice);
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
    std::vector<std::string> slice_specs;
    OP_REQUIRES_OK(ctx, ReadNameInputs(ctx, count, &prefix, &names, &slice_specs));
    std::vector<SliceSpec> slices(count);
    for (int64_t i = 0; i < count; ++i) {
      if (!slice_specs[i].empty()) OP_REQUIRES_OK(ctx, ParseSliceSpec(slice_specs[i], &slices[i]));
    }
    std::unique_ptr<CheckpointReader> reader;
    OP_REQUIRES_OK(ctx, CheckpointReader::OpenCheckpoint(
                            prefix, CheckpointReader::Verify::kWholeFile, &reader));
    for (int64_t i = 0; i < count; ++i) {
      Tensor value;
      OP_REQUIRES_OK(ctx, reader->Read(names[i], ctx->expected_output_dtype(i), &value));
      // A slice is cut from the whole tensor, which the file's size bounds.
      if (!slice_specs[i].empty())
        OP_REQUIRES_OK(ctx, ExtractSlice(names[i], value, slices[i], &value));
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
