// TFRecord framing (see record_io.h). Checksums are CRC-32C from
// runtime/util/crc32c.cc, masked as TensorFlow masks them.
#include "runtime/util/record_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/framework/str_util.h"
#include "runtime/util/checkpoint_files.h"  // ErrnoStatus
#include "runtime/util/crc32c.h"

namespace tensorweave {
namespace {

constexpr size_t kHeaderBytes = sizeof(uint64_t) + sizeof(uint32_t);
constexpr size_t kFooterBytes = sizeof(uint32_t);

void EncodeFixed64(uint64_t value, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
void EncodeFixed32(uint32_t value, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint64_t DecodeFixed64(const char* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(in[i]);
  return value;
}
uint32_t DecodeFixed32(const char* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(in[i]);
  return value;
}

}  // namespace

Status ParseRecordCompression(const std::string& compression_type, RecordCompression* out) {
  if (compression_type.empty() || compression_type == "NONE") {
    *out = RecordCompression::kNone;
  } else if (compression_type == "ZLIB") {
    *out = RecordCompression::kZlib;
  } else if (compression_type == "GZIP") {
    *out = RecordCompression::kGzip;
  } else {
    return errors::InvalidArgument("Unsupported compression type: ", compression_type);
  }
  return Status::OK();
}

ZlibFormat FormatOf(RecordCompression compression) {
  return compression == RecordCompression::kGzip ? ZlibFormat::kGzip : ZlibFormat::kZlib;
}

// ---- RecordWriter ------------------------------------------------------------

Status RecordWriter::Open(const std::string& path, const std::string& compression_type,
                          std::unique_ptr<RecordWriter>* writer) {
  RecordCompression compression;
  TW_RETURN_IF_ERROR(ParseRecordCompression(compression_type, &compression));
  std::FILE* file = std::fopen(path.c_str(), "wbe");
  if (file == nullptr)
    return checkpoint_files::ErrnoStatus("Cannot create record file", path, errno);
  std::unique_ptr<RecordWriter> result(new RecordWriter(path, file));
  if (compression != RecordCompression::kNone) {
    TW_RETURN_IF_ERROR(Deflater::Create(FormatOf(compression), file, &result->deflater_));
  }
  *writer = std::move(result);
  return Status::OK();
}

RecordWriter::~RecordWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status RecordWriter::Put(const void* data, size_t length) {
  if (deflater_ != nullptr) return deflater_->Write(data, length);
  if (length > 0 && std::fwrite(data, 1, length, file_) != length) {
    return checkpoint_files::ErrnoStatus("Cannot write record file", path_, errno);
  }
  return Status::OK();
}

Status RecordWriter::WriteRecord(const void* data, size_t length) {
  if (file_ == nullptr) {
    return errors::FailedPrecondition("Record file ", path_, " is closed");
  }
  char header[kHeaderBytes];
  EncodeFixed64(length, header);
  EncodeFixed32(MaskCrc32c(Crc32c(header, sizeof(uint64_t))), header + sizeof(uint64_t));
  char footer[kFooterBytes];
  EncodeFixed32(MaskCrc32c(Crc32c(data, length)), footer);
  TW_RETURN_IF_ERROR(Put(header, sizeof(header)));
  TW_RETURN_IF_ERROR(Put(data, length));
  return Put(footer, sizeof(footer));
}

Status RecordWriter::Flush() {
  if (file_ == nullptr) {
    return errors::FailedPrecondition("Record file ", path_, " is closed");
  }
  if (deflater_ != nullptr) TW_RETURN_IF_ERROR(deflater_->Flush());
  return SyncFile();
}

Status RecordWriter::SyncFile() {
  if (std::fflush(file_) != 0)
    return checkpoint_files::ErrnoStatus("Cannot write record file", path_, errno);
  if (::fsync(::fileno(file_)) != 0 && errno != EINVAL) {
    return checkpoint_files::ErrnoStatus("Cannot sync record file", path_, errno);
  }
  return Status::OK();
}

Status RecordWriter::Close() {
  if (file_ == nullptr) return Status::OK();
  Status status = deflater_ != nullptr ? deflater_->Finish() : Status::OK();
  if (status.ok()) status = SyncFile();
  if (std::fclose(file_) != 0 && status.ok()) {
    status = checkpoint_files::ErrnoStatus("Cannot close record file", path_, errno);
  }
  file_ = nullptr;
  return status;
}

// ---- RecordReader ------------------------------------------------------------

Status RecordReader::Open(const std::string& path, const std::string& compression_type,
                          std::unique_ptr<RecordReader>* reader) {
  RecordCompression compression;
  TW_RETURN_IF_ERROR(ParseRecordCompression(compression_type, &compression));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return checkpoint_files::ErrnoStatus("Cannot open record file", path, errno);
  std::unique_ptr<RecordReader> result(new RecordReader(path, fd));
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    return errors::FailedPrecondition(path, " is a directory, not a record file");
  }
  if (compression != RecordCompression::kNone) {
    TW_RETURN_IF_ERROR(Inflater::Create(FormatOf(compression), fd, &result->inflater_));
  }
  *reader = std::move(result);
  return Status::OK();
}

RecordReader::~RecordReader() { ::close(fd_); }

Status RecordReader::ReadAt(uint64_t position, size_t length, char* out, size_t* read) {
  // A compressed file is one stream, read in order: position is always
  // where the inflater stands.
  if (inflater_ != nullptr) return inflater_->Read(out, length, read);
  *read = 0;
  while (*read < length) {
    const ssize_t n = ::pread(fd_, out + *read, length - *read, position + *read);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return checkpoint_files::ErrnoStatus("Cannot read record file", path_, errno);
    if (n == 0) break;
    *read += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status RecordReader::ReadRecord(std::string* record) {
  char header[kHeaderBytes];
  size_t read = 0;
  TW_RETURN_IF_ERROR(ReadAt(offset_, sizeof(header), header, &read));
  if (read == 0) return errors::OutOfRange("End of record file ", path_);
  if (read < sizeof(header)) {
    return errors::DataLoss("Truncated record at offset ", offset_, " in ", path_);
  }
  if (UnmaskCrc32c(DecodeFixed32(header + sizeof(uint64_t))) != Crc32c(header, sizeof(uint64_t))) {
    return errors::DataLoss("Corrupted record at offset ", offset_, " in ", path_,
                            ": the length's checksum does not match");
  }
  const uint64_t length = DecodeFixed64(header);
  std::string data;
  bool complete = false;
  TW_RETURN_IF_ERROR(ReadBody(length, &data, &complete));
  if (!complete) {
    return errors::DataLoss("Truncated record at offset ", offset_, " in ", path_, ": it holds ",
                            length, " bytes but the file ends first");
  }
  if (UnmaskCrc32c(DecodeFixed32(&data[length])) != Crc32c(data.data(), length)) {
    return errors::DataLoss("Corrupted record at offset ", offset_, " in ", path_,
                            ": the data's checksum does not match");
  }
  data.resize(length);
  *record = std::move(data);
  offset_ += kHeaderBytes + length + kFooterBytes;
  return Status::OK();
}

Status RecordReader::ReadBody(uint64_t length, std::string* body, bool* complete) {
  *complete = false;
  const uint64_t data_start = offset_ + kHeaderBytes;
  if (inflater_ == nullptr) {
    struct stat info;
    if (::fstat(fd_, &info) != 0)
      return checkpoint_files::ErrnoStatus("Cannot stat record file", path_, errno);
    const uint64_t size = static_cast<uint64_t>(info.st_size);
    if (data_start > size || length > size - data_start ||
        kFooterBytes > size - data_start - length) {
      return Status::OK();
    }
  }
  // Read in pieces of at most 16 MiB: what is allocated never runs far
  // ahead of the bytes that came (a compressed file has no size to check).
  constexpr uint64_t kPiece = uint64_t{16} << 20;
  const uint64_t total = length + kFooterBytes;
  if (total < length) return Status::OK();  // a length near 2^64
  body->clear();
  while (body->size() < total) {
    const uint64_t want = std::min(kPiece, total - body->size());
    const size_t before = body->size();
    body->resize(before + want);
    size_t read = 0;
    TW_RETURN_IF_ERROR(ReadAt(data_start + before, want, &(*body)[before], &read));
    if (read < want) return Status::OK();
  }
  *complete = true;
  return Status::OK();
}

}  // namespace tensorweave
