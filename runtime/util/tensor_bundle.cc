// Writing, reading and merging TensorFlow V2 checkpoints; see tensor_bundle.h
// and docs/checkpoint_format.md.
#include "runtime/util/tensor_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>

#include "runtime/util/checkpoint_files.h"
#include "runtime/util/crc32c.h"
#include "runtime/util/sstable_builder.h"
#include "runtime/util/sstable_reader.h"

namespace tensorweave {
namespace {

using checkpoint_files::ErrnoStatus;
using checkpoint_files::TempFile;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "bundles are written in host order and marked LITTLE; a big-endian host "
              "needs the byte swaps TensorFlow does");

// The format version this code writes and reads (TensorFlow's
// kTensorBundleVersion); a bundle whose min_consumer is above it is refused.
constexpr int kBundleVersion = 1;

bool IsSliceKey(const std::string& key) { return !key.empty() && key[0] == '\0'; }

// The key TensorFlow stores one partition of tensor `name` under
// (checkpoint::EncodeTensorNameSlice): in its "ordered code", the number 0,
// the name, the rank, then each dimension's start and length (-1: all of it).
// Ordered code writes an unsigned number as a byte count and big-endian
// bytes; a string with 0x00 and 0xff escaped, ended by 0x00 0x01; a signed
// number as big-endian two's complement whose leading bits give its length.
void AppendOrderedUnsigned(std::string* out, uint64_t value) {
  std::string bytes;
  for (; value != 0; value >>= 8) bytes.insert(bytes.begin(), static_cast<char>(value & 0xff));
  out->push_back(static_cast<char>(bytes.size()));
  *out += bytes;
}

void AppendOrderedString(std::string* out, const std::string& value) {
  for (char c : value) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
    if (c == '\xff') out->push_back('\0');
  }
  out->append("\0\x01", 2);
}

void AppendOrderedSigned(std::string* out, int64_t value) {
  const uint64_t magnitude = value < 0 ? ~static_cast<uint64_t>(value) : value;
  int bits = 0;  // significant bits of the magnitude
  while (bits < 64 && (magnitude >> bits) != 0) ++bits;
  const int length = bits / 7 + 1;  // 1..10 bytes: 7 payload bits each, less the sign
  // Header: `length` leading one bits (over one or two bytes), then the value.
  static const uint8_t kHeader[11][2] = {{0, 0},    {0x80, 0},    {0xc0, 0},   {0xe0, 0},
                                         {0xf0, 0}, {0xf8, 0},    {0xfc, 0},   {0xfe, 0},
                                         {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
  uint8_t bytes[10];
  for (int i = 0; i < 10; ++i) {
    const int shift = 8 * (9 - i);
    bytes[i] = shift >= 64 ? (value < 0 ? 0xff : 0)
                           : static_cast<uint8_t>(static_cast<uint64_t>(value) >> shift);
  }
  uint8_t* begin = bytes + 10 - length;
  begin[0] ^= kHeader[length][0];
  if (length > 1) begin[1] ^= kHeader[length][1];
  out->append(reinterpret_cast<const char*>(begin), length);
}

std::string SliceKey(const std::string& name, const TensorSliceProto& slice) {
  std::string key;
  AppendOrderedUnsigned(&key, 0);
  AppendOrderedString(&key, name);
  AppendOrderedUnsigned(&key, slice.extent_size());
  for (const TensorSliceProto::Extent& extent : slice.extent()) {
    AppendOrderedSigned(&key, extent.start());
    AppendOrderedSigned(
        &key, extent.has_length_case() == TensorSliceProto::Extent::kLength ? extent.length() : -1);
  }
  return key;
}

// A key for messages: slice keys are binary.
std::string PrintableKey(const std::string& key) {
  return IsSliceKey(key) ? "(a partition's slice)" : key;
}

// Whether a tensor of `dtype` can be saved: fixed-size elements or strings.
bool IsSavableDtype(DataType dtype) {
  return !IsRefType(dtype) && DataTypeIsSupported(dtype) &&
         (dtype == DT_STRING || DataTypeSize(dtype) > 0);
}

Status ValidateBundleEntries(const std::vector<CheckpointEntry>& entries) {
  std::set<std::string> names;
  for (const CheckpointEntry& entry : entries) {
    if (entry.name.empty()) {
      return errors::InvalidArgument("Checkpoint entry names must be non-empty");
    }
    if (!names.insert(entry.name).second) {
      return errors::InvalidArgument("Adding duplicate key: ", entry.name);
    }
    if (!entry.tensor.IsInitialized() || !IsSavableDtype(entry.tensor.dtype())) {
      return errors::InvalidArgument("Cannot save tensor '", entry.name, "' of dtype ",
                                     DataTypeString(entry.tensor.dtype()));
    }
  }
  return Status::OK();
}

// Appends one tensor's bytes to the data file as TensorFlow lays them out
// and returns the masked CRC the entry records. Strings: every length as a
// varint64, the masked CRC of the lengths (each as a little-endian uint32,
// or uint64 past 4 GB), then the bytes; the entry's CRC covers the lengths
// (as checksummed), that 4-byte checksum and the bytes.
Status AppendTensor(const Tensor& tensor, TempFile* file, uint64_t* size, uint32_t* masked_crc) {
  const uint64_t start = file->size();
  uint32_t crc = 0;
  if (tensor.dtype() != DT_STRING) {
    const char* bytes = static_cast<const char*>(tensor.raw_data());
    crc = Crc32c(bytes, tensor.TotalBytes());
    TW_RETURN_IF_ERROR(file->Append(bytes, tensor.TotalBytes()));
  } else {
    const std::string* strings = tensor.data<std::string>();
    const int64_t count = tensor.NumElements();
    std::string lengths;
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t length = strings[i].size();
      sstable::PutVarint64(&lengths, length);
      std::string fixed;
      sstable::PutFixed32(&fixed, static_cast<uint32_t>(length));
      if (length > UINT32_MAX) sstable::PutFixed32(&fixed, static_cast<uint32_t>(length >> 32));
      crc = Crc32cExtend(crc, fixed.data(), fixed.size());
    }
    std::string length_checksum;
    sstable::PutFixed32(&length_checksum, MaskCrc32c(crc));
    crc = Crc32cExtend(crc, length_checksum.data(), 4);
    TW_RETURN_IF_ERROR(file->Append(lengths));
    TW_RETURN_IF_ERROR(file->Append(length_checksum));
    for (int64_t i = 0; i < count; ++i) {
      crc = Crc32cExtend(crc, strings[i].data(), strings[i].size());
      TW_RETURN_IF_ERROR(file->Append(strings[i]));
    }
  }
  *size = file->size() - start;
  *masked_crc = MaskCrc32c(crc);
  return Status::OK();
}

std::string HeaderBytes(int num_shards) {
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  return header.SerializeAsString();
}

// The index table: the header under "", then the entries in name order.
Status BuildIndex(const std::string& header, const std::map<std::string, BundleEntryProto>& entries,
                  std::string* table) {
  sstable::SortedTableBuilder builder;
  TW_RETURN_IF_ERROR(builder.Add("", header));
  for (const auto& [name, entry] : entries) {
    TW_RETURN_IF_ERROR(builder.Add(name, entry.SerializeAsString()));
  }
  *table = builder.Finish();
  return Status::OK();
}

Status WriteIndexFile(const std::string& path, const std::string& table,
                      std::unique_ptr<TempFile>* file) {
  TW_RETURN_IF_ERROR(TempFile::Create(path, file));
  TW_RETURN_IF_ERROR((*file)->Append(table));
  return (*file)->Close();
}

Status ReadWholeFile(const std::string& path, std::string* contents) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return errors::NotFound("Checkpoint index ", path, " not found");
    }
    return ErrnoStatus("Cannot open checkpoint index", path, errno);
  }
  struct stat info;
  Status status;
  if (::fstat(fd, &info) != 0) {
    status = ErrnoStatus("Cannot stat checkpoint index", path, errno);
  } else if (!S_ISREG(info.st_mode)) {
    status = errors::InvalidArgument("Checkpoint index ", path, " is not a regular file");
  } else {
    contents->resize(info.st_size);
    uint64_t at = 0;
    while (status.ok() && at < contents->size()) {
      const ssize_t n = ::pread(fd, &(*contents)[at], contents->size() - at, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) status = ErrnoStatus("Cannot read checkpoint index", path, errno);
      if (n == 0) status = errors::DataLoss("Checkpoint index ", path, " shrank while read");
      if (n > 0) at += n;
    }
  }
  ::close(fd);
  return status;
}

// The header and the name -> entry records of an index file.
Status ReadIndex(const std::string& path, BundleHeaderProto* header,
                 std::vector<std::pair<std::string, BundleEntryProto>>* entries) {
  std::string contents;
  TW_RETURN_IF_ERROR(ReadWholeFile(path, &contents));
  std::vector<sstable::TableEntry> records;
  TW_RETURN_IF_ERROR(sstable::ReadSortedTable(contents, path, &records));
  if (records.empty() || !records[0].key.empty()) {
    return errors::DataLoss("Checkpoint index ", path, " is damaged: it has no header entry");
  }
  if (!header->ParseFromString(records[0].value)) {
    return errors::DataLoss("Checkpoint index ", path, " is damaged: unparseable header");
  }
  if (header->num_shards() <= 0) {
    return errors::DataLoss("Checkpoint index ", path, " is damaged: ", header->num_shards(),
                            " shards");
  }
  const VersionDef& version = header->version();
  if (version.min_consumer() > kBundleVersion) {
    return errors::InvalidArgument("Checkpoint ", path, " needs a reader of version ",
                                   version.min_consumer(), " or newer; this one is version ",
                                   kBundleVersion);
  }
  for (int bad : version.bad_consumers()) {
    if (bad == kBundleVersion) {
      return errors::InvalidArgument("Checkpoint ", path, " disallows reader version ",
                                     kBundleVersion);
    }
  }
  if (header->endianness() != BundleHeaderProto::LITTLE) {
    return errors::Unimplemented("Checkpoint ", path,
                                 " was written on a big-endian machine; only little-endian "
                                 "checkpoints can be read");
  }
  entries->clear();
  for (size_t i = 1; i < records.size(); ++i) {
    BundleEntryProto entry;
    if (!entry.ParseFromString(records[i].value)) {
      return errors::DataLoss("Checkpoint index ", path, " is damaged: entry for key ",
                              records[i].key, " not parseable");
    }
    entries->emplace_back(std::move(records[i].key), std::move(entry));
  }
  return Status::OK();
}

}  // namespace

std::string BundleIndexPath(const std::string& prefix) { return prefix + ".index"; }

std::string BundleDataPath(const std::string& prefix, int shard, int num_shards) {
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + suffix;
}

bool BundleExists(const std::string& prefix) {
  struct stat info;
  return ::stat(BundleIndexPath(prefix).c_str(), &info) == 0;
}

Status WriteTensorBundle(const std::string& prefix, const std::vector<CheckpointEntry>& entries) {
  TW_RETURN_IF_ERROR(ValidateBundleEntries(entries));
  std::unique_ptr<TempFile> data;
  TW_RETURN_IF_ERROR(TempFile::Create(BundleDataPath(prefix, 0, 1), &data));
  std::map<std::string, BundleEntryProto> records;
  for (const CheckpointEntry& entry : entries) {
    BundleEntryProto& record = records[entry.name];
    record.set_dtype(entry.tensor.dtype());
    entry.tensor.shape().AsProto(record.mutable_shape());
    record.set_shard_id(0);
    record.set_offset(data->size());
    uint64_t size = 0;
    uint32_t crc = 0;
    TW_RETURN_IF_ERROR(AppendTensor(entry.tensor, data.get(), &size, &crc));
    record.set_size(size);
    record.set_crc32c(crc);
  }
  TW_RETURN_IF_ERROR(data->Close());
  std::string table;
  TW_RETURN_IF_ERROR(BuildIndex(HeaderBytes(1), records, &table));
  std::unique_ptr<TempFile> index;
  TW_RETURN_IF_ERROR(WriteIndexFile(BundleIndexPath(prefix), table, &index));
  // Data first, as TensorFlow does: a crash between the two renames leaves
  // the old index over new data, which the entries' checksums reveal.
  TW_RETURN_IF_ERROR(data->RenameToFinal());
  TW_RETURN_IF_ERROR(index->RenameToFinal());
  return checkpoint_files::SyncDirectory(checkpoint_files::DirectoryOf(prefix));
}

Status MergeTensorBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix, bool delete_old_dirs,
                          bool allow_missing_files) {
  std::map<std::string, BundleEntryProto> merged;
  std::vector<std::string> data_files;  // by merged shard id
  std::vector<std::string> merged_prefixes;
  for (const std::string& prefix : prefixes) {
    if (allow_missing_files && !BundleExists(prefix)) continue;
    BundleHeaderProto header;
    std::vector<std::pair<std::string, BundleEntryProto>> entries;
    TW_RETURN_IF_ERROR(ReadIndex(BundleIndexPath(prefix), &header, &entries));
    std::map<int, int> renumbered;  // this bundle's shard id -> merged id
    for (auto& [name, entry] : entries) {
      if (!entry.slices().empty() || IsSliceKey(name)) {
        return errors::Unimplemented("Merging partitioned tensors is not supported: ", prefix,
                                     " holds slices of ", IsSliceKey(name) ? "a tensor" : name);
      }
      if (entry.shard_id() < 0 || entry.shard_id() >= header.num_shards()) {
        return errors::DataLoss("Checkpoint index ", BundleIndexPath(prefix), " is damaged: entry ",
                                name, " is in shard ", entry.shard_id(), " of ",
                                header.num_shards());
      }
      auto [it, fresh] = renumbered.emplace(entry.shard_id(), static_cast<int>(data_files.size()));
      if (fresh) {
        data_files.push_back(BundleDataPath(prefix, entry.shard_id(), header.num_shards()));
      }
      entry.set_shard_id(it->second);
      if (!merged.emplace(name, std::move(entry)).second) {
        return errors::InvalidArgument("Duplicate tensor keyed by ", name,
                                       " encountered, when merging prefix: ", prefix);
      }
    }
    merged_prefixes.push_back(prefix);
  }
  if (merged_prefixes.empty()) {
    return errors::InvalidArgument("MergeV2Checkpoints found none of the ", prefixes.size(),
                                   " checkpoints to merge");
  }
  // The merged data files are those holding entries, numbered in the order
  // first met (TensorFlow numbers them so too); a bundle without entries
  // contributes no file.
  const int num_shards = std::max<int>(1, data_files.size());
  std::string table;
  TW_RETURN_IF_ERROR(BuildIndex(HeaderBytes(num_shards), merged, &table));
  std::unique_ptr<TempFile> index;
  TW_RETURN_IF_ERROR(WriteIndexFile(BundleIndexPath(merged_prefix), table, &index));
  for (size_t shard = 0; shard < data_files.size(); ++shard) {
    const std::string target = BundleDataPath(merged_prefix, shard, num_shards);
    if (::rename(data_files[shard].c_str(), target.c_str()) != 0) {
      return ErrnoStatus("Cannot rename checkpoint data file to", target, errno);
    }
  }
  TW_RETURN_IF_ERROR(index->RenameToFinal());
  TW_RETURN_IF_ERROR(checkpoint_files::SyncDirectory(checkpoint_files::DirectoryOf(merged_prefix)));
  // Cleanup is best effort, as in TensorFlow: the merged bundle is complete.
  for (const std::string& prefix : merged_prefixes) {
    ::unlink(BundleIndexPath(prefix).c_str());
    if (delete_old_dirs) ::rmdir(checkpoint_files::DirectoryOf(prefix).c_str());
  }
  return Status::OK();
}

// --- Reading ------------------------------------------------------------------

BundleReader::~BundleReader() {
  for (const auto& [shard, fd] : shard_fds_) ::close(fd);
}

Status BundleReader::Open(const std::string& prefix, std::unique_ptr<BundleReader>* reader) {
  std::unique_ptr<BundleReader> result(new BundleReader());
  result->prefix_ = prefix;
  result->index_path_ = BundleIndexPath(prefix);
  try {
    TW_RETURN_IF_ERROR(result->Parse());
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("Out of memory reading checkpoint ", prefix);
  }
  *reader = std::move(result);
  return Status::OK();
}

Status BundleReader::Parse() {
  BundleHeaderProto header;
  std::vector<std::pair<std::string, BundleEntryProto>> records;
  TW_RETURN_IF_ERROR(ReadIndex(index_path_, &header, &records));
  num_shards_ = header.num_shards();
  auto damaged = [this](const std::string& name, auto&&... why) {
    return errors::DataLoss("Checkpoint index ", index_path_, " is damaged: entry ", name, " ",
                            why...);
  };
  std::map<int, uint64_t> shard_sizes;
  for (auto& [name, proto] : records) {
    Entry entry;
    entry.dtype = proto.dtype();
    if (!TensorShape::FromProto(proto.shape(), &entry.shape).ok()) {
      return damaged(name, "has an invalid shape");
    }
    if (!IsSavableDtype(entry.dtype)) {
      if (entry.dtype == DT_VARIANT || (entry.dtype > DT_INVALID && entry.dtype <= DT_UINT64)) {
        return errors::Unimplemented("Checkpoint ", prefix_, " holds ", name, " of dtype ",
                                     DataTypeString(entry.dtype),
                                     ", which tensorweave cannot restore");
      }
      return damaged(name, "has unknown dtype ", static_cast<int>(entry.dtype));
    }
    if (proto.slices().empty()) {
      if (proto.shard_id() < 0 || proto.shard_id() >= num_shards_) {
        return damaged(name, "is in shard ", proto.shard_id(), " of ", num_shards_);
      }
      if (proto.offset() < 0 || proto.size() < 0) return damaged(name, "has a negative extent");
      const uint64_t size = proto.size();
      const uint64_t elements = entry.shape.num_elements();
      const size_t element_size = DataTypeSize(entry.dtype);
      // A string takes at least its one-byte length; anything else exactly
      // its elements' bytes. Either way the tensor fits in the file.
      const bool size_fits = entry.dtype == DT_STRING
                                 ? (elements == 0 ? size == 0 || size == 4 : size >= elements + 4)
                                 : size % element_size == 0 && size / element_size == elements;
      if (!size_fits)
        return damaged(name, "has size ", size, " for shape ", entry.shape.DebugString());
      auto fd_it = shard_fds_.find(proto.shard_id());
      if (fd_it == shard_fds_.end()) {
        const std::string path = BundleDataPath(prefix_, proto.shard_id(), num_shards_);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          if (errno == ENOENT) return errors::NotFound("Checkpoint data file ", path, " not found");
          return ErrnoStatus("Cannot open checkpoint data file", path, errno);
        }
        fd_it = shard_fds_.emplace(proto.shard_id(), fd).first;
        struct stat info;
        if (::fstat(fd, &info) != 0) return ErrnoStatus("Cannot stat", path, errno);
        shard_sizes[proto.shard_id()] = info.st_size;
      }
      const uint64_t file_size = shard_sizes[proto.shard_id()];
      if (static_cast<uint64_t>(proto.offset()) > file_size || size > file_size - proto.offset()) {
        return errors::DataLoss("Checkpoint data file ",
                                BundleDataPath(prefix_, proto.shard_id(), num_shards_),
                                " is truncated: entry ", name, " needs bytes up to ",
                                proto.offset() + size, ", the file has ", file_size);
      }
    }
    entry.proto = std::move(proto);
    // A partition's own entry is read through its tensor's (see Read).
    (IsSliceKey(name) ? slice_entries_ : entries_).emplace(name, std::move(entry));
  }
  return Status::OK();
}

Status BundleReader::Lookup(const std::string& name, const Entry** entry) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return errors::NotFound("Key ", name, " not found in checkpoint ", prefix_);
  }
  *entry = &it->second;
  return Status::OK();
}

Status BundleReader::ReadBytes(int shard, uint64_t offset, uint64_t length, char* out) const {
  const int fd = shard_fds_.at(shard);
  while (length > 0) {
    const ssize_t n = ::pread(fd, out, std::min<uint64_t>(length, 1 << 30), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return ErrnoStatus("Cannot read checkpoint data file",
                         BundleDataPath(prefix_, shard, num_shards_), errno);
    }
    if (n == 0) {
      return errors::DataLoss("Checkpoint data file ", BundleDataPath(prefix_, shard, num_shards_),
                              " is truncated: it ended at byte ", offset, " while being read");
    }
    out += n;
    offset += n;
    length -= n;
  }
  return Status::OK();
}

Status BundleReader::Read(const std::string& name, DataType expected_dtype, Tensor* out) const {
  const Entry* entry = nullptr;
  TW_RETURN_IF_ERROR(Lookup(name, &entry));
  if (expected_dtype != DT_INVALID && expected_dtype != entry->dtype) {
    return errors::InvalidArgument("tensor_name = ", name, "; expected dtype ",
                                   DataTypeString(expected_dtype),
                                   " does not equal original dtype ", DataTypeString(entry->dtype));
  }
  try {
    if (!entry->proto.slices().empty()) return AssembleSlices(name, *entry, out);
    return ReadEntry(name, *entry, out);
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted("Out of memory reading entry ", name, " of checkpoint ",
                                     prefix_);
  }
}

Status BundleReader::ReadEntry(const std::string& name, const Entry& entry, Tensor* out) const {
  Tensor tensor;
  TW_RETURN_IF_ERROR(Tensor::Allocate(entry.dtype, entry.shape, &tensor));
  if (entry.dtype == DT_STRING) {
    TW_RETURN_IF_ERROR(DecodeStrings(name, entry, &tensor));
  } else {
    char* data = static_cast<char*>(tensor.raw_data());
    const uint64_t size = entry.proto.size();
    TW_RETURN_IF_ERROR(ReadBytes(entry.proto.shard_id(), entry.proto.offset(), size, data));
    if (MaskCrc32c(Crc32c(data, size)) != entry.proto.crc32c()) {
      return errors::DataLoss("Checksum does not match for entry ", PrintableKey(name),
                              " of checkpoint ",
                              BundleDataPath(prefix_, entry.proto.shard_id(), num_shards_));
    }
    if (entry.dtype == DT_BOOL) {
      const uint64_t count = entry.shape.num_elements();
      for (uint64_t i = 0; i < count; ++i) {
        if (static_cast<uint8_t>(data[i]) > 1) {
          return errors::DataLoss("Entry ", PrintableKey(name), " of checkpoint ", prefix_,
                                  " holds a bool that is neither 0 nor 1");
        }
      }
    }
  }
  *out = std::move(tensor);
  return Status::OK();
}

Status BundleReader::AssembleSlices(const std::string& name, const Entry& entry,
                                    Tensor* out) const {
  auto damaged = [&](auto&&... why) {
    return errors::DataLoss("Checkpoint ", prefix_, " is damaged: partitioned tensor ", name, " ",
                            why...);
  };
  const int rank = entry.shape.dims();
  Tensor full;
  TW_RETURN_IF_ERROR(Tensor::Allocate(entry.dtype, entry.shape, &full));
  const size_t element_size = DataTypeSize(entry.dtype);
  uint64_t covered = 0;
  for (const TensorSliceProto& slice : entry.proto.slices()) {
    if (slice.extent_size() != rank) return damaged("has a slice of rank ", slice.extent_size());
    std::vector<int64_t> starts(rank), lengths(rank);
    for (int d = 0; d < rank; ++d) {
      const TensorSliceProto::Extent& extent = slice.extent(d);
      const int64_t size = entry.shape.dim_size(d);
      starts[d] = extent.start();
      lengths[d] = extent.has_length_case() == TensorSliceProto::Extent::kLength ? extent.length()
                                                                                 : size - starts[d];
      if (starts[d] < 0 || lengths[d] < 0 || starts[d] > size || lengths[d] > size - starts[d]) {
        return damaged("has a slice outside its shape");
      }
    }
    const std::string key = SliceKey(name, slice);
    auto it = slice_entries_.find(key);
    if (it == slice_entries_.end()) return damaged("lacks the entry of one of its slices");
    Tensor part;
    TW_RETURN_IF_ERROR(ReadEntry(key, it->second, &part));
    if (part.dtype() != entry.dtype || part.dims() != rank) {
      return damaged("has a slice of another dtype or rank");
    }
    for (int d = 0; d < rank; ++d) {
      if (part.dim_size(d) != lengths[d]) return damaged("has a slice of the wrong shape");
    }
    // Copies the slice element by element to its place in the full tensor.
    const int64_t count = part.NumElements();
    covered += count;
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t target = 0;
      for (int d = 0; d < rank; ++d)
        target = target * entry.shape.dim_size(d) + starts[d] + index[d];
      if (entry.dtype == DT_STRING) {
        full.data<std::string>()[target] = part.data<std::string>()[i];
      } else {
        std::memcpy(static_cast<char*>(full.raw_data()) + target * element_size,
                    static_cast<const char*>(part.raw_data()) + i * element_size, element_size);
      }
      for (int d = rank - 1; d >= 0 && ++index[d] == lengths[d]; --d) index[d] = 0;
    }
  }
  // Partitions of a tensor never overlap, so covering it takes exactly its
  // number of elements.
  if (covered != static_cast<uint64_t>(entry.shape.num_elements())) {
    return damaged("has slices covering ", covered, " of its ", entry.shape.num_elements(),
                   " elements");
  }
  *out = std::move(full);
  return Status::OK();
}

Status BundleReader::DecodeStrings(const std::string& name, const Entry& entry,
                                   Tensor* tensor) const {
  const uint64_t size = entry.proto.size();
  const std::string path = BundleDataPath(prefix_, entry.proto.shard_id(), num_shards_);
  auto damaged = [&](auto&&... why) {
    return errors::DataLoss("Checkpoint data file ", path, " is damaged: entry ", name, " ",
                            why...);
  };
  if (size == 0) return Status::OK();  // an empty tensor (TensorFlow accepts no bytes)
  // Bounded by the data file's size, checked at Open.
  std::string bytes(size, '\0');
  TW_RETURN_IF_ERROR(ReadBytes(entry.proto.shard_id(), entry.proto.offset(), size, &bytes[0]));
  const uint64_t count = entry.shape.num_elements();
  std::vector<uint64_t> lengths(count);  // count < size, checked at Open
  const char* at = bytes.data();
  const char* end = bytes.data() + size;
  uint32_t crc = 0;
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t length = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (at == end || shift > 63) return damaged("has a bad string length");
      const uint8_t byte = static_cast<uint8_t>(*at++);
      length |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    std::string fixed;
    sstable::PutFixed32(&fixed, static_cast<uint32_t>(length));
    if (length > UINT32_MAX) sstable::PutFixed32(&fixed, static_cast<uint32_t>(length >> 32));
    crc = Crc32cExtend(crc, fixed.data(), fixed.size());
    lengths[i] = length;
    if (length > size) return damaged("has a string longer than the entry");
    total += length;
  }
  if (end - at < 4) return damaged("ends inside its length checksum");
  uint32_t stored = 0;
  for (int i = 3; i >= 0; --i) stored = (stored << 8) | static_cast<uint8_t>(at[i]);
  if (UnmaskCrc32c(stored) != crc) return damaged("has a string length checksum mismatch");
  crc = Crc32cExtend(crc, at, 4);
  at += 4;
  if (total != static_cast<uint64_t>(end - at)) {
    return damaged("has ", end - at, " bytes of strings, its lengths say ", total);
  }
  crc = Crc32cExtend(crc, at, total);
  if (MaskCrc32c(crc) != entry.proto.crc32c()) {
    return damaged("checksum does not match");
  }
  std::string* strings = tensor->data<std::string>();
  for (uint64_t i = 0; i < count; ++i) {
    strings[i].assign(at, lengths[i]);
    at += lengths[i];
  }
  return Status::OK();
}

}  // namespace tensorweave
