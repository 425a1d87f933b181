// TF_CheckpointReader: the C face of the runtime's checkpoint reader
// (runtime/util/checkpoint_format.h's CheckpointReader::OpenCheckpoint, which
// reads TensorFlow's V2 checkpoints and tensorweave's older .twckpt files).
// Translation only: opening, checking and decoding the files are the
// runtime's; this keeps the names in the order TF_CheckpointReaderGetVariable
// hands them out.
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/util/checkpoint_format.h"

using tensorweave::CheckpointReader;
using tensorweave::Status;
using tensorweave::Tensor;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

struct TF_CheckpointReader {
  std::unique_ptr<CheckpointReader> reader;
  std::vector<std::string> names;  // sorted, as CheckpointReader::entries() is
};

namespace {

// The entry `name` describes, or null when the checkpoint has none (or
// `name` is NULL).
const CheckpointReader::EntryInfo* Find(const TF_CheckpointReader* reader, const char* name) {
  const CheckpointReader::EntryInfo* info = nullptr;
  if (name == nullptr || !reader->reader->Lookup(name, &info).ok()) return nullptr;
  return info;
}

Status NotFound(const TF_CheckpointReader* reader, const char* name) {
  return errors::NotFound("Key ", name ? name : "(null)", " not found in checkpoint ",
                          reader->reader->path());
}

}  // namespace

TF_CheckpointReader* TF_NewCheckpointReader(const char* filename, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_CheckpointReader*>(nullptr), [&] {
    if (filename == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_NewCheckpointReader needs a file name"));
      return static_cast<TF_CheckpointReader*>(nullptr);
    }
    auto result = std::make_unique<TF_CheckpointReader>();
    Status opened = CheckpointReader::OpenCheckpoint(filename, CheckpointReader::Verify::kTableOnly,
                                                     &result->reader);
    if (!opened.ok()) {
      c_api::Set(status, std::move(opened));
      return static_cast<TF_CheckpointReader*>(nullptr);
    }
    for (const auto& entry : result->reader->entries()) result->names.push_back(entry.first);
    c_api::Set(status, Status::OK());
    return result.release();
  });
}

void TF_DeleteCheckpointReader(TF_CheckpointReader* reader) { delete reader; }

int TF_CheckpointReaderHasTensor(TF_CheckpointReader* reader, const char* name) {
  return Find(reader, name) != nullptr ? 1 : 0;
}

const char* TF_CheckpointReaderGetVariable(TF_CheckpointReader* reader, int index) {
  if (index < 0 || static_cast<size_t>(index) >= reader->names.size()) return nullptr;
  return reader->names[index].c_str();
}

int TF_CheckpointReaderSize(TF_CheckpointReader* reader) {
  return static_cast<int>(reader->names.size());
}

TF_DataType TF_CheckpointReaderGetVariableDataType(TF_CheckpointReader* reader, const char* name) {
  const CheckpointReader::EntryInfo* info = Find(reader, name);
  return info != nullptr ? static_cast<TF_DataType>(info->dtype) : static_cast<TF_DataType>(0);
}

void TF_CheckpointReaderGetVariableShape(TF_CheckpointReader* reader, const char* name,
                                         int64_t* dims, int num_dims, TF_Status* status) {
  const CheckpointReader::EntryInfo* info = Find(reader, name);
  if (info == nullptr) return c_api::Set(status, NotFound(reader, name));
  const int rank = info->shape.dims();
  if (num_dims != rank || (rank > 0 && dims == nullptr)) {
    return c_api::Set(status,
                      errors::InvalidArgument("Checkpoint entry '", name, "' has rank ", rank,
                                              ", but room for ", num_dims, " dims was given"));
  }
  for (int d = 0; d < rank; ++d) dims[d] = info->shape.dim_size(d);
  c_api::Set(status, Status::OK());
}

int TF_CheckpointReaderGetVariableNumDims(TF_CheckpointReader* reader, const char* name) {
  const CheckpointReader::EntryInfo* info = Find(reader, name);
  return info != nullptr ? info->shape.dims() : -1;
}

TF_Tensor* TF_CheckpointReaderGetTensor(TF_CheckpointReader* reader, const char* name,
                                        TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Tensor*>(nullptr), [&] {
    TF_Tensor* out = nullptr;
    Tensor value;
    Status read = name != nullptr ? reader->reader->Read(name, tensorweave::DT_INVALID, &value)
                                  : NotFound(reader, name);
    if (read.ok()) read = c_api::TensorToC(std::move(value), &out);
    c_api::Set(status, std::move(read));
    return out;
  });
}
