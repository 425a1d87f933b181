// Writing and reading checkpoint files; docs/checkpoint_format.md is the
// byte-level description this code implements.
#include "runtime/util/checkpoint_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <set>

#include "runtime/util/checkpoint_files.h"
#include "runtime/util/tensor_bundle.h"

namespace tensorweave {
namespace {

// --- Layout constants (see docs/checkpoint_format.md) ---------------------

constexpr char kMagic[8] = {'\x89', 'T', 'W', 'C', 'K', 'P', 'T', '\n'};
constexpr char kFooterMagic[4] = {'T', 'W', 'C', 'K'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kHeaderSize =
    40;                              // magic, version, count, table length, file length, flags, crc
constexpr uint64_t kFooterSize = 8;  // file crc, footer magic
constexpr uint64_t kDataAlignment = 64;  // each entry's data starts at a multiple of this
constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

uint64_t AlignUp(uint64_t offset) {
  return (offset + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
}

void PutU32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
uint32_t GetU32(const char* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}
uint64_t GetU64(const char* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

// Copies `count` elements of `size` bytes, reversing each element's bytes
// when the host is big-endian (the file is always little-endian).
void CopyElementsLittleEndian(const char* from, char* to, uint64_t count, size_t size) {
  if (kLittleEndianHost || size == 1) {
    std::memcpy(to, from, count * size);
    return;
  }
  for (uint64_t i = 0; i < count; ++i) {
    for (size_t b = 0; b < size; ++b) to[i * size + b] = from[i * size + size - 1 - b];
  }
}

// Bytes of element data an entry occupies in the file.
uint64_t EntryDataLength(const Tensor& tensor) {
  const uint64_t count = tensor.NumElements();
  if (tensor.dtype() != DT_STRING) return count * DataTypeSize(tensor.dtype());
  uint64_t length = 8 * count;
  const std::string* strings = tensor.data<std::string>();
  for (uint64_t i = 0; i < count; ++i) length += strings[i].size();
  return length;
}

// --- Writing ----------------------------------------------------------------

using checkpoint_files::ErrnoStatus;
using checkpoint_files::TempFile;

// Appends to a temporary file, computing the CRC of everything written.
class ChecksummedFile {
 public:
  explicit ChecksummedFile(TempFile* file) : file_(file) {}

  Status Append(const char* data, size_t length) {
    crc_ = Crc32cExtend(crc_, data, length);
    return file_->Append(data, length);
  }
  Status Append(const std::string& bytes) { return Append(bytes.data(), bytes.size()); }
  Status PadTo(uint64_t offset) {
    static const char kZeros[kDataAlignment] = {};
    return Append(kZeros, offset - size());
  }

  uint64_t size() const { return file_->size(); }
  uint32_t crc() const { return crc_; }

 private:
  TempFile* file_;
  uint32_t crc_ = 0;
};

Status ValidateEntries(const std::vector<CheckpointEntry>& entries) {
  std::set<std::string> names;
  for (const CheckpointEntry& entry : entries) {
    if (entry.name.empty())
      return errors::InvalidArgument("Checkpoint entry names must be non-empty");
    if (!names.insert(entry.name).second) {
      return errors::InvalidArgument("Checkpoint entry name '", entry.name, "' appears twice");
    }
    const DataType dtype = entry.tensor.dtype();
    if (IsRefType(dtype) || !DataTypeIsSupported(dtype) || !entry.tensor.IsInitialized()) {
      return errors::InvalidArgument("Cannot save tensor '", entry.name, "' of dtype ",
                                     DataTypeString(dtype));
    }
  }
  if (entries.size() > UINT32_MAX) return errors::InvalidArgument("Too many checkpoint entries");
  return Status::OK();
}

// Writes the whole file to an open descriptor; see the format document.
Status WriteContents(ChecksummedFile* file, const std::vector<CheckpointEntry>& entries) {
  // Table records have fixed-width fields, so the table's length (and hence
  // every data offset) is known before any offset is filled in.
  uint64_t table_length = 0;
  for (const CheckpointEntry& entry : entries) {
    table_length += 4 + entry.name.size() + 4 + 4 + 8 * entry.tensor.dims() + 8 + 8 + 4;
  }
  std::vector<uint64_t> offsets, lengths;
  std::vector<uint32_t> crcs;
  uint64_t end = AlignUp(kHeaderSize + table_length + 4);
  std::vector<std::string> string_lengths(entries.size());  // the length prefix of string entries
  for (size_t i = 0; i < entries.size(); ++i) {
    const Tensor& tensor = entries[i].tensor;
    uint32_t crc = 0;
    if (tensor.dtype() == DT_STRING) {
      const std::string* strings = tensor.data<std::string>();
      for (int64_t k = 0; k < tensor.NumElements(); ++k)
        PutU64(&string_lengths[i], strings[k].size());
      crc = Crc32c(string_lengths[i].data(), string_lengths[i].size());
      for (int64_t k = 0; k < tensor.NumElements(); ++k) {
        crc = Crc32cExtend(crc, strings[k].data(), strings[k].size());
      }
    } else if (kLittleEndianHost) {
      crc = Crc32c(tensor.raw_data(), tensor.TotalBytes());
    } else {
      std::string bytes(tensor.TotalBytes(), '\0');
      CopyElementsLittleEndian(static_cast<const char*>(tensor.raw_data()), &bytes[0],
                               tensor.NumElements(), DataTypeSize(tensor.dtype()));
      crc = Crc32c(bytes.data(), bytes.size());
    }
    end = AlignUp(end);
    offsets.push_back(end);
    lengths.push_back(EntryDataLength(tensor));
    crcs.push_back(crc);
    end += lengths.back();
  }
  const uint64_t file_length = end + kFooterSize;

  std::string head;
  head.append(kMagic, sizeof(kMagic));
  PutU32(&head, kVersion);
  PutU32(&head, static_cast<uint32_t>(entries.size()));
  PutU64(&head, table_length);
  PutU64(&head, file_length);
  PutU32(&head, 0);  // flags: none defined in version 1
  PutU32(&head, Crc32c(head.data(), head.size()));
  std::string table;
  table.reserve(table_length);
  for (size_t i = 0; i < entries.size(); ++i) {
    const Tensor& tensor = entries[i].tensor;
    PutU32(&table, static_cast<uint32_t>(entries[i].name.size()));
    table += entries[i].name;
    PutU32(&table, static_cast<uint32_t>(tensor.dtype()));
    PutU32(&table, static_cast<uint32_t>(tensor.dims()));
    for (int d = 0; d < tensor.dims(); ++d) PutU64(&table, tensor.dim_size(d));
    PutU64(&table, offsets[i]);
    PutU64(&table, lengths[i]);
    PutU32(&table, crcs[i]);
  }
  PutU32(&table, Crc32c(table.data(), table.size()));
  TW_RETURN_IF_ERROR(file->Append(head));
  TW_RETURN_IF_ERROR(file->Append(table));

  for (size_t i = 0; i < entries.size(); ++i) {
    const Tensor& tensor = entries[i].tensor;
    TW_RETURN_IF_ERROR(file->PadTo(offsets[i]));
    if (tensor.dtype() == DT_STRING) {
      TW_RETURN_IF_ERROR(file->Append(string_lengths[i]));
      const std::string* strings = tensor.data<std::string>();
      for (int64_t k = 0; k < tensor.NumElements(); ++k)
        TW_RETURN_IF_ERROR(file->Append(strings[k]));
    } else if (kLittleEndianHost) {
      TW_RETURN_IF_ERROR(
          file->Append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes()));
    } else {
      std::string bytes(tensor.TotalBytes(), '\0');
      CopyElementsLittleEndian(static_cast<const char*>(tensor.raw_data()), &bytes[0],
                               tensor.NumElements(), DataTypeSize(tensor.dtype()));
      TW_RETURN_IF_ERROR(file->Append(bytes));
    }
  }
  std::string footer;
  PutU32(&footer, file->crc());
  footer.append(kFooterMagic, sizeof(kFooterMagic));
  TW_RETURN_IF_ERROR(file->Append(footer));
  if (file->size() != file_length) {
    return errors::Internal("Checkpoint writer produced ", file->size(), " bytes, planned ",
                            file_length);
  }
  return Status::OK();
}

}  // namespace

std::string CheckpointFilePath(const std::string& prefix) { return prefix + kCheckpointFileSuffix; }

std::string CheckpointFileToRead(const std::string& prefix_or_path) {
  const size_t suffix = sizeof(kCheckpointFileSuffix) - 1;
  const bool is_file =
      prefix_or_path.size() > suffix &&
      prefix_or_path.compare(prefix_or_path.size() - suffix, suffix, kCheckpointFileSuffix) == 0;
  return is_file ? prefix_or_path : CheckpointFilePath(prefix_or_path);
}

Status WriteCheckpointFile(const std::string& path, const std::vector<CheckpointEntry>& entries) {
  TW_RETURN_IF_ERROR(ValidateEntries(entries));
  std::unique_ptr<TempFile> temp;
  TW_RETURN_IF_ERROR(TempFile::Create(path, &temp));
  ChecksummedFile file(temp.get());
  TW_RETURN_IF_ERROR(WriteContents(&file, entries));
  TW_RETURN_IF_ERROR(temp->Close());
  TW_RETURN_IF_ERROR(temp->RenameToFinal());
  // Makes the rename itself durable.
  return checkpoint_files::SyncDirectory(checkpoint_files::DirectoryOf(path));
}

// --- Reading ----------------------------------------------------------------

CheckpointReader::~CheckpointReader() {
  if (fd_ >= 0) ::close(fd_);
}

Status CheckpointReader::Open(const std::string& path, std::unique_ptr<CheckpointReader>* reader,
                              Verify verify) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return errors::NotFound("Checkpoint file ", path, " not found");
    }
    return ErrnoStatus("Cannot open checkpoint file", path, errno);
  }
  std::unique_ptr<CheckpointReader> result(new CheckpointReader());
  result->path_ = path;
  result->fd_ = fd;  // closed by the destructor from here on
  struct stat info;
  if (::fstat(fd, &info) != 0) return ErrnoStatus("Cannot stat checkpoint file", path, errno);
  if (!S_ISREG(info.st_mode)) {
    return errors::InvalidArgument("Checkpoint path ", path, " is not a regular file");
  }
  try {
    TW_RETURN_IF_ERROR(result->Parse(info.st_size, verify));
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("Out of memory reading checkpoint file ", path);
  }
  *reader = std::move(result);
  return Status::OK();
}

Status CheckpointReader::OpenCheckpoint(const std::string& prefix_or_path, Verify verify,
                                        std::unique_ptr<CheckpointReader>* reader) {
  const std::string file = CheckpointFileToRead(prefix_or_path);
  if (file == prefix_or_path || !BundleExists(prefix_or_path)) {
    Status opened = Open(file, reader, verify);
    if (errors::IsNotFound(opened) && file != prefix_or_path) {
      return errors::NotFound("Checkpoint ", prefix_or_path, " not found: neither ",
                              BundleIndexPath(prefix_or_path), " nor ", file, " exists");
    }
    return opened;
  }
  std::unique_ptr<CheckpointReader> result(new CheckpointReader());
  result->path_ = prefix_or_path;
  TW_RETURN_IF_ERROR(BundleReader::Open(prefix_or_path, &result->bundle_));
  for (const auto& [name, entry] : result->bundle_->entries()) {
    EntryInfo& info = result->entries_[name];
    info.dtype = entry.dtype;
    info.shape = entry.shape;
  }
  *reader = std::move(result);
  return Status::OK();
}

Status CheckpointReader::ReadAt(uint64_t offset, uint64_t length, char* out) const {
  while (length > 0) {
    const ssize_t n = ::pread(fd_, out, std::min<uint64_t>(length, 1 << 30), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("Cannot read checkpoint file", path_, errno);
    if (n == 0) {
      return errors::DataLoss("Checkpoint file ", path_, " is truncated: it ended at byte ", offset,
                              " while being read");
    }
    out += n;
    offset += n;
    length -= n;
  }
  return Status::OK();
}

// CRC-32C of [offset, offset + length) of the file, read in bounded chunks.
Status CheckpointReader::ChecksumRange(uint64_t offset, uint64_t length, uint32_t* crc) const {
  std::string chunk(std::min<uint64_t>(length, 64 << 10), '\0');
  *crc = 0;
  while (length > 0) {
    const uint64_t n = std::min<uint64_t>(length, chunk.size());
    TW_RETURN_IF_ERROR(ReadAt(offset, n, &chunk[0]));
    *crc = Crc32cExtend(*crc, chunk.data(), n);
    offset += n;
    length -= n;
  }
  return Status::OK();
}

Status CheckpointReader::Parse(uint64_t size, Verify verify) {
  auto damaged = [this](auto&&... why) {
    return errors::DataLoss("Checkpoint file ", path_, " is damaged: ", why...);
  };
  char header[kHeaderSize];
  const uint64_t header_bytes = std::min<uint64_t>(size, kHeaderSize);
  TW_RETURN_IF_ERROR(ReadAt(0, header_bytes, header));
  if (size < sizeof(kMagic) || std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    if (size < sizeof(kMagic) && std::memcmp(header, kMagic, size) == 0) {
      return errors::DataLoss("Checkpoint file ", path_, " is truncated: it has only ", size,
                              " bytes");
    }
    return errors::DataLoss("Checkpoint file ", path_, " is not a tensorweave checkpoint");
  }
  if (size < kHeaderSize) {
    return errors::DataLoss("Checkpoint file ", path_, " is truncated: it has only ", size,
                            " bytes, less than a header");
  }
  if (Crc32c(header, kHeaderSize - 4) != GetU32(header + kHeaderSize - 4)) {
    return damaged("header checksum mismatch");
  }
  const uint32_t version = GetU32(header + 8);
  if (version != kVersion) {
    return errors::Unimplemented("Checkpoint file ", path_, " has format version ", version,
                                 "; this build reads version ", kVersion);
  }
  const uint32_t count = GetU32(header + 12);
  const uint64_t table_length = GetU64(header + 16);
  const uint64_t file_length = GetU64(header + 24);
  if (GetU32(header + 32) != 0) return damaged("unknown flags in header");
  if (size < file_length) {
    return errors::DataLoss("Checkpoint file ", path_, " is truncated: it has ", size,
                            " bytes, its header says ", file_length);
  }
  if (size > file_length) {
    return damaged(size - file_length, " unexpected bytes after the end");
  }
  if (table_length > file_length || kHeaderSize + table_length + 4 + kFooterSize > file_length) {
    return damaged("table of ", table_length, " bytes does not fit in ", file_length);
  }
  // Bounded by the file's size, checked above.
  std::string table_bytes(table_length + 4, '\0');
  TW_RETURN_IF_ERROR(ReadAt(kHeaderSize, table_length + 4, &table_bytes[0]));
  const char* table = table_bytes.data();
  if (Crc32c(table, table_length) != GetU32(table + table_length)) {
    return damaged("table checksum mismatch");
  }
  char footer[kFooterSize];
  TW_RETURN_IF_ERROR(ReadAt(file_length - kFooterSize, kFooterSize, footer));
  if (std::memcmp(footer + 4, kFooterMagic, sizeof(kFooterMagic)) != 0) {
    return damaged("footer magic mismatch");
  }

  // The table passed its checksum, so what follows guards against a
  // writer bug or a deliberately forged file rather than bit rot.
  const uint64_t data_start = AlignUp(kHeaderSize + table_length + 4);
  const uint64_t data_end = file_length - kFooterSize;
  uint64_t at = 0;
  auto need = [&](uint64_t bytes_needed) { return table_length - at >= bytes_needed; };
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (uint32_t i = 0; i < count; ++i) {
    if (!need(4)) return damaged("table ends inside entry ", i);
    const uint32_t name_length = GetU32(table + at);
    at += 4;
    if (name_length == 0 || !need(uint64_t{name_length} + 8)) {
      return damaged("bad name length in entry ", i);
    }
    std::string name(table + at, name_length);
    at += name_length;
    EntryInfo entry;
    entry.dtype = static_cast<DataType>(GetU32(table + at));
    const uint32_t rank = GetU32(table + at + 4);
    at += 8;
    if (IsRefType(entry.dtype) || !DataTypeIsSupported(entry.dtype)) {
      return damaged("entry '", name, "' has unsupported dtype ", static_cast<int>(entry.dtype));
    }
    if (rank > kMaxRank || !need(8 * uint64_t{rank} + 20)) {
      return damaged("bad rank ", rank, " in entry '", name, "'");
    }
    std::vector<int64_t> dims(rank);
    for (uint32_t d = 0; d < rank; ++d) dims[d] = static_cast<int64_t>(GetU64(table + at + 8 * d));
    at += 8 * uint64_t{rank};
    if (!TensorShape::Build(dims, &entry.shape).ok()) {
      return damaged("entry '", name, "' has an invalid shape");
    }
    entry.offset = GetU64(table + at);
    entry.length = GetU64(table + at + 8);
    entry.crc = GetU32(table + at + 16);
    at += 20;
    const uint64_t elements = entry.shape.num_elements();
    const size_t element_size = DataTypeSize(entry.dtype);
    const bool length_fits = entry.dtype == DT_STRING ? entry.length / 8 >= elements
                                                      : entry.length % element_size == 0 &&
                                                            entry.length / element_size == elements;
    if (!length_fits || entry.offset < data_start || entry.offset % kDataAlignment != 0 ||
        entry.offset > data_end || entry.length > data_end - entry.offset) {
      return damaged("entry '", name, "' has an impossible extent");
    }
    extents.push_back({entry.offset, entry.offset + entry.length});
    if (!entries_.emplace(std::move(name), std::move(entry)).second) {
      return damaged("an entry name appears twice");
    }
  }
  if (at != table_length) return damaged("table has ", table_length - at, " trailing bytes");
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].first < extents[i - 1].second) return damaged("entries overlap");
  }

  if (verify == Verify::kTableOnly) return Status::OK();
  // One pass over the whole file; Read later re-checks each entry it copies
  // out, which also catches a file changed after Open.
  uint32_t file_crc = 0;
  TW_RETURN_IF_ERROR(ChecksumRange(0, data_end, &file_crc));
  if (file_crc != GetU32(footer)) {
    // Name the entry whose bytes changed when there is one.
    for (const auto& [name, entry] : entries_) {
      uint32_t crc = 0;
      TW_RETURN_IF_ERROR(ChecksumRange(entry.offset, entry.length, &crc));
      if (crc != entry.crc) return damaged("checksum mismatch in entry '", name, "'");
    }
    return damaged("file checksum mismatch");
  }
  return Status::OK();
}

Status CheckpointReader::Lookup(const std::string& name, const EntryInfo** info) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return errors::NotFound("Key ", name, " not found in checkpoint ", path_);
  }
  *info = &it->second;
  return Status::OK();
}

Status CheckpointReader::Read(const std::string& name, DataType expected_dtype, Tensor* out) const {
  // A V2 bundle reports TensorFlow's errors.
  if (bundle_ != nullptr) return bundle_->Read(name, expected_dtype, out);
  const EntryInfo* info = nullptr;
  TW_RETURN_IF_ERROR(Lookup(name, &info));
  if (expected_dtype != DT_INVALID && expected_dtype != info->dtype) {
    return errors::InvalidArgument("Checkpoint entry '", name, "' in ", path_, " holds ",
                                   DataTypeString(info->dtype), ", but ",
                                   DataTypeString(expected_dtype), " was requested");
  }
  try {
    return DecodeEntry(name, *info, out);
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("Out of memory reading entry '", name, "' of checkpoint ",
                                     path_);
  }
}

Status CheckpointReader::DecodeEntry(const std::string& name, const EntryInfo& info,
                                     Tensor* out) const {
  auto damaged = [&](auto&&... why) {
    return errors::DataLoss("Checkpoint file ", path_, " is damaged: ", why...);
  };
  Tensor tensor;
  TW_RETURN_IF_ERROR(Tensor::Allocate(info.dtype, info.shape, &tensor));
  const uint64_t count = info.shape.num_elements();
  // Fixed-size elements on a little-endian host go straight into the
  // tensor; strings and byte swaps go through a staging buffer.
  const bool direct = info.dtype != DT_STRING &&
                      (kLittleEndianHost || info.dtype == DT_BOOL || DataTypeSize(info.dtype) == 1);
  std::string staging;
  char* data = static_cast<char*>(tensor.raw_data());
  if (!direct) {
    staging.resize(info.length);
    data = &staging[0];
  }
  TW_RETURN_IF_ERROR(ReadAt(info.offset, info.length, data));
  if (Crc32c(data, info.length) != info.crc) {
    return damaged("checksum mismatch in entry '", name, "'");
  }
  if (info.dtype == DT_STRING) {
    std::string* strings = tensor.data<std::string>();
    uint64_t at = 8 * count;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t length = GetU64(data + 8 * i);
      if (length > info.length - at) {
        return damaged("string ", i, " of entry '", name, "' runs past the entry");
      }
      strings[i].assign(data + at, length);
      at += length;
    }
    if (at != info.length) {
      return damaged("entry '", name, "' has ", info.length - at, " stray bytes");
    }
  } else {
    if (info.dtype == DT_BOOL) {
      // A bool is one byte that must be 0 or 1; anything else is not a bool.
      for (uint64_t i = 0; i < count; ++i) {
        if (static_cast<uint8_t>(data[i]) > 1) {
          return damaged("entry '", name, "' holds a bool that is neither 0 nor 1");
        }
      }
    }
    if (!direct) {
      CopyElementsLittleEndian(data, static_cast<char*>(tensor.raw_data()), count,
                               DataTypeSize(info.dtype));
    }
  }
  *out = std::move(tensor);
  return Status::OK();
}

}  // namespace tensorweave
