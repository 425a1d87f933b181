// Building a sorted string table in the LevelDB layout that TensorFlow's
// checkpoint index files use (tensorflow/core/lib/io/table_builder.cc):
//
//   SortedTableBuilder builder;
//   TW_RETURN_IF_ERROR(builder.Add("", header_bytes));       // keys strictly increasing
//   TW_RETURN_IF_ERROR(builder.Add("dense/kernel", entry_bytes));
//   std::string table = builder.Finish();                     // the whole file
//
// The table is built in memory: checkpoint indexes hold one small record per
// tensor. Layout (docs/checkpoint_format.md): data blocks of prefix-compressed
// entries with a restart array, one index block, an empty metaindex block,
// each block followed by a type byte (0: uncompressed) and the masked CRC-32C
// of block and type, then a 48-byte footer ending in the table magic.
#ifndef TENSORWEAVE_UTIL_SSTABLE_BUILDER_H_
#define TENSORWEAVE_UTIL_SSTABLE_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/framework/status.h"

namespace tensorweave {
namespace sstable {

// The last 8 bytes of every table, little-endian.
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
// Two block handles padded to 40 bytes, then the magic.
constexpr size_t kFooterSize = 48;
// The type byte and CRC after each block.
constexpr size_t kBlockTrailerSize = 5;
enum BlockType : uint8_t { kUncompressedBlock = 0, kSnappyBlock = 1 };

void PutFixed32(std::string* out, uint32_t value);
void PutVarint32(std::string* out, uint32_t value);
void PutVarint64(std::string* out, uint64_t value);

class SortedTableBuilder {
 public:
  // TensorFlow's defaults: 256 KB data blocks, a restart point every 16 keys.
  explicit SortedTableBuilder(size_t block_size = 256 << 10, int restart_interval = 16);

  // INVALID_ARGUMENT unless `key` sorts (bytewise) after the previous key.
  Status Add(const std::string& key, const std::string& value);
  // The finished table. The builder is spent afterwards.
  std::string Finish();

 private:
  // Prefix-compressed entries with restart points, as a block holds them.
  class BlockBuilder {
   public:
    explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) {}
    void Add(const std::string& key, const std::string& value);
    std::string Finish();  // the block's bytes; the builder is reset
    size_t EstimatedSize() const { return bytes_.size() + 4 * (restarts_.size() + 1); }
    bool empty() const { return entries_ == 0; }

   private:
    int restart_interval_;
    std::string bytes_;
    std::vector<uint32_t> restarts_ = {0};
    int since_restart_ = 0;
    int entries_ = 0;
    std::string last_key_;
  };

  // Appends a block and its trailer; returns its handle's encoding.
  std::string AppendBlock(const std::string& contents);
  void FlushDataBlock();
  // Indexes the last flushed block under a key between its last key and
  // `next_key` (null at the end).
  void AddPendingIndexEntry(const std::string* next_key);

  size_t block_size_;
  std::string table_;
  BlockBuilder data_block_;
  BlockBuilder index_block_{1};
  std::string last_key_;
  bool has_key_ = false;
  std::string pending_handle_;
  bool has_pending_handle_ = false;
};

}  // namespace sstable
}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_SSTABLE_BUILDER_H_
