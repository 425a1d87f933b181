// The LevelDB table layout TensorFlow's checkpoint index uses; see
// sstable_builder.h and docs/checkpoint_format.md.
#include "runtime/util/sstable_builder.h"

#include <algorithm>

#include "runtime/util/crc32c.h"

namespace tensorweave {
namespace sstable {

void PutFixed32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void PutVarint64(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void PutVarint32(std::string* out, uint32_t value) { PutVarint64(out, value); }

void SortedTableBuilder::BlockBuilder::Add(const std::string& key, const std::string& value) {
  size_t shared = 0;
  if (since_restart_ < restart_interval_) {
    const size_t limit = std::min(last_key_.size(), key.size());
    while (shared < limit && last_key_[shared] == key[shared]) ++shared;
  } else {
    // A full key here lets a reader start decoding at this entry.
    restarts_.push_back(static_cast<uint32_t>(bytes_.size()));
    since_restart_ = 0;
  }
  PutVarint32(&bytes_, static_cast<uint32_t>(shared));
  PutVarint32(&bytes_, static_cast<uint32_t>(key.size() - shared));
  PutVarint32(&bytes_, static_cast<uint32_t>(value.size()));
  bytes_.append(key, shared, std::string::npos);
  bytes_ += value;
  last_key_ = key;
  ++since_restart_;
  ++entries_;
}

std::string SortedTableBuilder::BlockBuilder::Finish() {
  std::string block = std::move(bytes_);
  for (uint32_t restart : restarts_) PutFixed32(&block, restart);
  PutFixed32(&block, static_cast<uint32_t>(restarts_.size()));
  bytes_.clear();
  restarts_ = {0};
  since_restart_ = 0;
  entries_ = 0;
  last_key_.clear();
  return block;
}

SortedTableBuilder::SortedTableBuilder(size_t block_size, int restart_interval)
    : block_size_(block_size), data_block_(restart_interval) {}

std::string SortedTableBuilder::AppendBlock(const std::string& contents) {
  std::string handle;
  PutVarint64(&handle, table_.size());
  PutVarint64(&handle, contents.size());
  table_ += contents;
  const char type = static_cast<char>(kUncompressedBlock);
  table_.push_back(type);
  PutFixed32(&table_, MaskCrc32c(Crc32cExtend(Crc32c(contents.data(), contents.size()), &type, 1)));
  return handle;
}

namespace {

// The shortest key >= `start` and < `limit` (LevelDB's bytewise
// FindShortestSeparator), so index blocks stay small; TensorFlow's tables
// use the same rule, which keeps our index files byte-identical to its.
std::string ShortestSeparator(const std::string& start, const std::string& limit) {
  const size_t common = std::min(start.size(), limit.size());
  size_t diff = 0;
  while (diff < common && start[diff] == limit[diff]) ++diff;
  if (diff >= common) return start;  // one is a prefix of the other
  const uint8_t byte = static_cast<uint8_t>(start[diff]);
  if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
    std::string separator = start.substr(0, diff + 1);
    separator[diff] = static_cast<char>(byte + 1);
    return separator;
  }
  return start;
}

// The shortest key >= `key` (LevelDB's FindShortSuccessor).
std::string ShortSuccessor(const std::string& key) {
  for (size_t i = 0; i < key.size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>(key[i]);
    if (byte != 0xff) {
      std::string successor = key.substr(0, i + 1);
      successor[i] = static_cast<char>(byte + 1);
      return successor;
    }
  }
  return key;
}

}  // namespace

void SortedTableBuilder::FlushDataBlock() {
  if (data_block_.empty()) return;
  // The block's index entry waits for the next key (or Finish): its key
  // need only sort between this block's last key and the next block's first.
  pending_handle_ = AppendBlock(data_block_.Finish());
  has_pending_handle_ = true;
}

void SortedTableBuilder::AddPendingIndexEntry(const std::string* next_key) {
  if (!has_pending_handle_) return;
  index_block_.Add(
      next_key != nullptr ? ShortestSeparator(last_key_, *next_key) : ShortSuccessor(last_key_),
      pending_handle_);
  has_pending_handle_ = false;
}

Status SortedTableBuilder::Add(const std::string& key, const std::string& value) {
  if (has_key_ && key <= last_key_) {
    return errors::InvalidArgument("Table keys must be added in increasing order: '", key,
                                   "' after '", last_key_, "'");
  }
  AddPendingIndexEntry(&key);
  data_block_.Add(key, value);
  last_key_ = key;
  has_key_ = true;
  if (data_block_.EstimatedSize() >= block_size_) FlushDataBlock();
  return Status::OK();
}

std::string SortedTableBuilder::Finish() {
  FlushDataBlock();
  AddPendingIndexEntry(nullptr);
  const std::string metaindex_handle = AppendBlock(BlockBuilder(1).Finish());
  const std::string index_handle = AppendBlock(index_block_.Finish());
  std::string footer = metaindex_handle + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic & 0xffffffffu));
  PutFixed32(&footer, static_cast<uint32_t>(kTableMagic >> 32));
  table_ += footer;
  return std::move(table_);
}

}  // namespace sstable
}  // namespace tensorweave
