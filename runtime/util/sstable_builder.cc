// The LevelDB table layout TensorFlow's checkpoint index uses; see
// sstable_builder.h and docs/checkpoint_format.md.
#include "runtime/util/sstable_builder.h"

#include <algorithm>

#include "runtime/util/checkpoint_format.h"

namespace tensorweave {
namespace sstable {

uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

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
  PutFixed32(&table_, MaskCrc(Crc32cExtend(Crc32c(contents.data(), contents.size()), &type, 1)));
  return handle;
}

void SortedTableBuilder::FlushDataBlock() {
  if (data_block_.empty()) return;
  // The index key of a block is its last key: at least every key in it and
  // less than the next block's first, which is all a reader's seek needs.
  index_block_.Add(last_key_, AppendBlock(data_block_.Finish()));
}

Status SortedTableBuilder::Add(const std::string& key, const std::string& value) {
  if (has_key_ && key <= last_key_) {
    return errors::InvalidArgument("Table keys must be added in increasing order: '", key,
                                   "' after '", last_key_, "'");
  }
  data_block_.Add(key, value);
  last_key_ = key;
  has_key_ = true;
  if (data_block_.EstimatedSize() >= block_size_) FlushDataBlock();
  return Status::OK();
}

std::string SortedTableBuilder::Finish() {
  FlushDataBlock();
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
