// File-system steps shared by the checkpoint writers (checkpoint_format.cc,
// tensor_bundle.cc): a file written under a temporary name, fsynced, then
// renamed into place, with errno mapped to TensorFlow's error codes.
//
//   std::unique_ptr<TempFile> file;
//   TW_RETURN_IF_ERROR(TempFile::Create("ckpt/model.index", &file));  // "...index.tmp-<hex>"
//   TW_RETURN_IF_ERROR(file->Append(bytes));
//   TW_RETURN_IF_ERROR(file->Close());          // flushes and fsyncs
//   TW_RETURN_IF_ERROR(file->RenameToFinal());  // then SyncDirectory("ckpt")
//   // Destroying a TempFile that was not renamed removes the temporary file.
#ifndef TENSORWEAVE_UTIL_CHECKPOINT_FILES_H_
#define TENSORWEAVE_UTIL_CHECKPOINT_FILES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/framework/status.h"
#include "runtime/util/checkpoint_format.h"

namespace tensorweave {
namespace checkpoint_files {

// NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED or UNKNOWN for `error`,
// with a message "<what> <path>: <strerror>".
Status ErrnoStatus(const std::string& what, const std::string& path, int error);
// "." for a bare name, "/" for a file in the root.
std::string DirectoryOf(const std::string& path);
// Makes renames in `directory` durable (a no-op where the file system
// cannot sync directories).
Status SyncDirectory(const std::string& directory);
// 16 random hex digits for temporary names.
std::string RandomSuffix();
// The hook SetCheckpointWriteHookForTesting installed, or null.
CheckpointWriteHook CurrentWriteHook();

class TempFile {
 public:
  static Status Create(const std::string& final_path, std::unique_ptr<TempFile>* file);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  Status Append(const char* data, size_t length);
  Status Append(const std::string& bytes) { return Append(bytes.data(), bytes.size()); }
  // Writes what is buffered, fsyncs and closes.
  Status Close();
  // Renames the closed file to its final path (not durable until the
  // directory is synced).
  Status RenameToFinal();

  uint64_t size() const { return size_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  TempFile() = default;
  Status Flush();
  Status WriteAll(const char* data, size_t length);

  static constexpr size_t kBufferSize = 1 << 20;
  int fd_ = -1;
  std::string final_path_, temp_path_;
  CheckpointWriteHook hook_;
  std::string buffer_;
  uint64_t size_ = 0;     // bytes appended
  uint64_t written_ = 0;  // bytes handed to write(2)
  bool renamed_ = false;
};

}  // namespace checkpoint_files
}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_CHECKPOINT_FILES_H_
