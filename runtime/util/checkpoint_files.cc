// Temporary-file-then-rename writing for checkpoints; see checkpoint_files.h.
#include "runtime/util/checkpoint_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>

namespace tensorweave {

namespace {
std::mutex hook_mu;
CheckpointWriteHook* write_hook = nullptr;  // guarded by hook_mu
}  // namespace

void SetCheckpointWriteHookForTesting(CheckpointWriteHook hook) {
  std::lock_guard<std::mutex> lock(hook_mu);
  delete write_hook;
  write_hook = hook ? new CheckpointWriteHook(std::move(hook)) : nullptr;
}

namespace checkpoint_files {

CheckpointWriteHook CurrentWriteHook() {
  std::lock_guard<std::mutex> lock(hook_mu);
  return write_hook != nullptr ? *write_hook : CheckpointWriteHook();
}

Status ErrnoStatus(const std::string& what, const std::string& path, int error) {
  const std::string message = StrCat(what, " ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return errors::NotFound(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return errors::PermissionDenied(message);
    case ENOSPC:
    case EDQUOT:
      return errors::ResourceExhausted(message);
    default:
      return errors::Unknown(message);
  }
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDirectory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("Cannot open directory", directory, errno);
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot sync a directory; the rename is then as
  // durable as that file system makes it, which is all we can ask.
  if (result != 0 && error != EINVAL && error != ENOTSUP) {
    return ErrnoStatus("Cannot sync directory", directory, error);
  }
  return Status::OK();
}

std::string RandomSuffix() {
  static std::mutex mu;
  static std::mt19937_64* engine = new std::mt19937_64(std::random_device{}());
  std::lock_guard<std::mutex> lock(mu);
  static const char kHex[] = "0123456789abcdef";
  uint64_t bits = (*engine)();
  std::string suffix;
  for (int i = 0; i < 16; ++i, bits >>= 4) suffix.push_back(kHex[bits & 15]);
  return suffix;
}

Status TempFile::Create(const std::string& final_path, std::unique_ptr<TempFile>* file) {
  std::unique_ptr<TempFile> result(new TempFile());
  result->final_path_ = final_path;
  result->temp_path_ = StrCat(final_path, ".tmp-", RandomSuffix());
  result->hook_ = CurrentWriteHook();
  result->fd_ = ::open(result->temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (result->fd_ < 0) {
    return ErrnoStatus("Cannot create checkpoint file", result->temp_path_, errno);
  }
  result->buffer_.reserve(kBufferSize);
  *file = std::move(result);
  return Status::OK();
}

TempFile::~TempFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!renamed_) ::unlink(temp_path_.c_str());
}

Status TempFile::Append(const char* data, size_t length) {
  size_ += length;
  if (buffer_.size() + length <= kBufferSize) {
    buffer_.append(data, length);
    return Status::OK();
  }
  TW_RETURN_IF_ERROR(Flush());
  if (length >= kBufferSize) return WriteAll(data, length);  // large tensors skip the copy
  buffer_.append(data, length);
  return Status::OK();
}

Status TempFile::Flush() {
  Status status = WriteAll(buffer_.data(), buffer_.size());
  buffer_.clear();
  return status;
}

Status TempFile::WriteAll(const char* data, size_t length) {
  while (length > 0) {
    if (hook_) TW_RETURN_IF_ERROR(hook_(written_, temp_path_));
    // Modest chunks so a test hook sees the write in progress.
    const ssize_t n = ::write(fd_, data, std::min<size_t>(length, kBufferSize));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("Cannot write checkpoint file", temp_path_, errno);
    }
    data += n;
    length -= n;
    written_ += n;
  }
  return Status::OK();
}

Status TempFile::Close() {
  Status status = Flush();
  // The data must be on disk before the rename makes it the checkpoint:
  // otherwise a crash could leave the new name pointing at missing blocks.
  if (status.ok() && ::fsync(fd_) != 0) {
    status = ErrnoStatus("Cannot sync checkpoint file", temp_path_, errno);
  }
  if (::close(fd_) != 0 && status.ok()) {
    status = ErrnoStatus("Cannot close checkpoint file", temp_path_, errno);
  }
  fd_ = -1;
  return status;
}

Status TempFile::RenameToFinal() {
  if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    return ErrnoStatus("Cannot rename checkpoint file to", final_path_, errno);
  }
  renamed_ = true;
  return Status::OK();
}

}  // namespace checkpoint_files
}  // namespace tensorweave
