// The tensorweave checkpoint file: named tensors in one self-checking file,
// what tensorweave wrote before it wrote TensorFlow's V2 format
// (tensor_bundle.h, now the default). docs/checkpoint_format.md describes
// both; this header is the C++ contract of the older one, and
// CheckpointReader::OpenCheckpoint reads either.
//
//   // Saving (atomic: the previous file under `path` survives any crash).
//   std::vector<CheckpointEntry> entries = {{"w", w}, {"b", b}};
//   TW_RETURN_IF_ERROR(WriteCheckpointFile(CheckpointFilePath("ckpt/model-100"), entries));
//
//   // Restoring.
//   std::unique_ptr<CheckpointReader> reader;
//   TW_RETURN_IF_ERROR(CheckpointReader::Open(CheckpointFilePath("ckpt/model-100"), &reader));
//   Tensor w;
//   TW_RETURN_IF_ERROR(reader->Read("w", DT_FLOAT, &w));
//
// Errors: a missing file is NOT_FOUND naming the path; a short, damaged or
// foreign file is DATA_LOSS naming the file (and the entry when the damage
// is inside one); a name the file does not hold is NOT_FOUND naming it; a
// dtype other than the stored one is INVALID_ARGUMENT. No file content can
// crash the reader or make it allocate more than the file's own size.
#ifndef TENSORWEAVE_UTIL_CHECKPOINT_FORMAT_H_
#define TENSORWEAVE_UTIL_CHECKPOINT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/util/crc32c.h"

namespace tensorweave {

class BundleReader;

// The file a checkpoint prefix ("ckpt/model-100") is stored in.
constexpr const char kCheckpointFileSuffix[] = ".twckpt";
std::string CheckpointFilePath(const std::string& prefix);
// The file to read for `prefix_or_path`: a prefix as a Saver was given it
// ("ckpt/model-100"), or that file's own path ("ckpt/model-100.twckpt"),
// which is returned unchanged.
std::string CheckpointFileToRead(const std::string& prefix_or_path);

struct CheckpointEntry {
  std::string name;
  Tensor tensor;
};

// Writes `entries` to `path` atomically: the bytes go to a fresh
// "<path>.tmp-<random>" file in the same directory, which is fsynced, then
// renamed over `path`, and the directory is fsynced. On failure the
// temporary file is removed and `path` is untouched. Names must be unique
// and non-empty; every tensor must be initialized with a supported dtype
// (INVALID_ARGUMENT otherwise). A missing directory is NOT_FOUND.
Status WriteCheckpointFile(const std::string& path, const std::vector<CheckpointEntry>& entries);

// For tests that simulate a crash or a full disk mid-save: called before
// each write to the temporary file with the bytes written so far and the
// temporary file's path; a non-OK result fails the save as a failed write
// would. Null (the default) disables it. Not for production use.
using CheckpointWriteHook = std::function<Status(int64_t bytes_written, const std::string& temp)>;
void SetCheckpointWriteHookForTesting(CheckpointWriteHook hook);

// Random access to a checkpoint file. Open verifies the file's structure
// and (with Verify::kWholeFile) every byte's checksum in one streaming pass
// (memory: the table plus a 64 KB chunk); each Read then copies one entry
// from the file straight into a fresh tensor and re-verifies that entry's
// checksum. The file stays open until the reader is destroyed. Reads from
// several threads at once are safe.
//
// Callers that only list entries and read tensors (the C API's
// TF_CheckpointReader) use the format-neutral part: OpenCheckpoint, the
// names of entries() with EntryInfo::dtype and ::shape, Lookup and Read;
// offset, length and crc describe this file format only.
class CheckpointReader {
 public:
  // How much Open checks before it returns.
  enum class Verify {
    // Every checksum, so a damaged file is refused before anything is read
    // from it: what restoring uses, so no variable changes from a bad file.
    kWholeFile,
    // The header, the table and the footer only; each Read still checks the
    // bytes it returns. For looking inside a large checkpoint (listing its
    // entries, reading a few) without reading all of it.
    kTableOnly,
  };

  struct EntryInfo {
    DataType dtype = DT_INVALID;
    TensorShape shape;
    uint64_t offset = 0;  // from the start of the file
    uint64_t length = 0;  // bytes of element data
    uint32_t crc = 0;     // CRC-32C of those bytes
  };

  static Status Open(const std::string& path, std::unique_ptr<CheckpointReader>* reader,
                     Verify verify = Verify::kWholeFile);
  // Opens the checkpoint saved under `prefix_or_path` in either format: a
  // TensorFlow V2 bundle when "<prefix>.index" exists, else the file
  // "<prefix>.twckpt" (or that file's own path, see CheckpointFileToRead).
  // The entry point for callers that should not know how a checkpoint is
  // laid out on disk (the C API, RestoreV2). Neither existing is NOT_FOUND
  // naming both. A bundle's index is always checked whole and each Read
  // checks its entry, whatever `verify` says; EntryInfo's offset, length and
  // crc are then zero.
  static Status OpenCheckpoint(const std::string& prefix_or_path, Verify verify,
                               std::unique_ptr<CheckpointReader>* reader);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::string& path() const { return path_; }
  // Every entry, by name.
  const std::map<std::string, EntryInfo>& entries() const { return entries_; }
  // NOT_FOUND naming `name` when the file has no such entry.
  Status Lookup(const std::string& name, const EntryInfo** info) const;
  // A fresh tensor holding entry `name`. `expected_dtype` (DT_INVALID for
  // any) must match the stored dtype, else INVALID_ARGUMENT naming both.
  Status Read(const std::string& name, DataType expected_dtype, Tensor* out) const;

 private:
  CheckpointReader() = default;
  Status Parse(uint64_t size, Verify verify);
  Status ReadAt(uint64_t offset, uint64_t length, char* out) const;
  Status ChecksumRange(uint64_t offset, uint64_t length, uint32_t* crc) const;
  Status DecodeEntry(const std::string& name, const EntryInfo& info, Tensor* out) const;

  std::string path_;
  int fd_ = -1;
  std::map<std::string, EntryInfo> entries_;
  std::unique_ptr<BundleReader> bundle_;  // set when reading a V2 bundle
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_CHECKPOINT_FORMAT_H_
