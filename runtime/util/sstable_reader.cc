// Parsing and checking a sorted string table; see sstable_reader.h.
#include "runtime/util/sstable_reader.h"

#include <cstring>

#include "runtime/util/crc32c.h"
#include "runtime/util/sstable_builder.h"

namespace tensorweave {
namespace sstable {
namespace {

uint32_t DecodeFixed32(const char* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

// Reads a varint of at most `max_bytes` bytes from [*at, end); false when it
// runs past the end or is too long.
bool GetVarint(const char** at, const char* end, int max_bytes, uint64_t* value) {
  *value = 0;
  for (int i = 0; i < max_bytes && *at < end; ++i) {
    const uint8_t byte = static_cast<uint8_t>(*(*at)++);
    *value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

class TableParser {
 public:
  TableParser(const std::string& table, const std::string& filename,
              std::vector<TableEntry>* entries)
      : table_(table), filename_(filename), entries_(entries) {}

  Status Parse() {
    if (table_.size() < kFooterSize) {
      return Damaged("it has ", table_.size(), " bytes, less than a table footer");
    }
    const char* footer = table_.data() + table_.size() - kFooterSize;
    const uint64_t magic =
        (uint64_t{DecodeFixed32(footer + 40 + 4)} << 32) | DecodeFixed32(footer + 40);
    if (magic != kTableMagic) return Damaged("bad table magic number");
    const char* at = footer;
    const char* handles_end = footer + 40;
    uint64_t meta_offset, meta_size, index_offset, index_size;
    if (!GetHandle(&at, handles_end, &meta_offset, &meta_size) ||
        !GetHandle(&at, handles_end, &index_offset, &index_size)) {
      return Damaged("bad block handle in footer");
    }
    // Nothing is read from the metaindex (TensorFlow writes it empty), but
    // it is checked so that no byte of the table goes unverified.
    std::string metaindex;
    TW_RETURN_IF_ERROR(ReadBlock(meta_offset, meta_size, "metaindex block", &metaindex));
    std::vector<TableEntry> meta_entries;
    TW_RETURN_IF_ERROR(ParseBlock(metaindex, "metaindex block", &meta_entries));
    std::string index;
    TW_RETURN_IF_ERROR(ReadBlock(index_offset, index_size, "index block", &index));
    std::vector<TableEntry> index_entries;
    TW_RETURN_IF_ERROR(ParseBlock(index, "index block", &index_entries));
    for (size_t b = 0; b < index_entries.size(); ++b) {
      const std::string& handle = index_entries[b].value;
      const char* p = handle.data();
      uint64_t offset, size;
      if (!GetHandle(&p, handle.data() + handle.size(), &offset, &size) ||
          p != handle.data() + handle.size()) {
        return Damaged("bad block handle in index entry ", b);
      }
      std::string block;
      const std::string what = StrCat("data block ", b);
      TW_RETURN_IF_ERROR(ReadBlock(offset, size, what, &block));
      const size_t first = entries_->size();
      TW_RETURN_IF_ERROR(ParseBlock(block, what, entries_));
      if (entries_->size() > first && entries_->back().key > index_entries[b].key) {
        return Damaged(what, " holds keys beyond its index key");
      }
    }
    return Status::OK();
  }

 private:
  template <typename... Args>
  Status Damaged(Args&&... why) const {
    return errors::DataLoss("Checkpoint index ", filename_, " is damaged: ", why...);
  }

  static bool GetHandle(const char** at, const char* end, uint64_t* offset, uint64_t* size) {
    return GetVarint(at, end, 10, offset) && GetVarint(at, end, 10, size);
  }

  // Copies out the block at [offset, offset + size) after checking its
  // trailer: type byte and masked CRC-32C of block and type.
  Status ReadBlock(uint64_t offset, uint64_t size, const std::string& what, std::string* block) {
    const uint64_t limit = table_.size() - kFooterSize;
    if (offset > limit || size > limit - offset || kBlockTrailerSize > limit - offset - size) {
      return Damaged(what, " at ", offset, " of ", size, " bytes lies outside the table");
    }
    const char* data = table_.data() + offset;
    const uint32_t stored = UnmaskCrc32c(DecodeFixed32(data + size + 1));
    if (Crc32c(data, size + 1) != stored) return Damaged("checksum mismatch in ", what);
    const uint8_t type = static_cast<uint8_t>(data[size]);
    if (type == kSnappyBlock) {
      return errors::Unimplemented("Checkpoint index ", filename_, " has a snappy-compressed ",
                                   what,
                                   "; only uncompressed tables (what TensorFlow writes) "
                                   "can be read");
    }
    if (type != kUncompressedBlock) return Damaged("unknown block type ", int{type}, " in ", what);
    block->assign(data, size);
    return Status::OK();
  }

  // Decodes every entry of a block in order, appending them to `out`.
  Status ParseBlock(const std::string& block, const std::string& what,
                    std::vector<TableEntry>* out) {
    if (block.size() < 4) return Damaged(what, " is too short");
    const uint64_t num_restarts = DecodeFixed32(block.data() + block.size() - 4);
    if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
      return Damaged(what, " has a bad restart count");
    }
    const size_t entries_end = block.size() - 4 - 4 * num_restarts;
    for (uint64_t r = 0; r < num_restarts; ++r) {
      if (DecodeFixed32(block.data() + entries_end + 4 * r) > entries_end) {
        return Damaged(what, " has a restart point past its entries");
      }
    }
    const char* at = block.data();
    const char* end = block.data() + entries_end;
    std::string key;
    while (at < end) {
      uint64_t shared, unshared, value_length;
      if (!GetVarint(&at, end, 5, &shared) || !GetVarint(&at, end, 5, &unshared) ||
          !GetVarint(&at, end, 5, &value_length)) {
        return Damaged("bad entry header in ", what);
      }
      const uint64_t left = end - at;
      if (shared > key.size() || unshared > left || value_length > left - unshared) {
        return Damaged("entry in ", what, " runs past its block");
      }
      decoded_bytes_ += shared + unshared + value_length;
      if (decoded_bytes_ > kMaxExpansion * table_.size() + 4096) {
        return Damaged("its keys expand beyond ", kMaxExpansion, " times its size");
      }
      key.resize(shared);
      key.append(at, unshared);
      at += unshared;
      // Strictly increasing across blocks too: `out` ends with the
      // previous block's entries.
      if (!out->empty() && key <= out->back().key) {
        return Damaged("keys out of order in ", what);
      }
      out->push_back({key, std::string(at, value_length)});
      at += value_length;
    }
    return Status::OK();
  }

  const std::string& table_;
  const std::string& filename_;
  std::vector<TableEntry>* entries_;
  uint64_t decoded_bytes_ = 0;
};

}  // namespace

Status ReadSortedTable(const std::string& table, const std::string& filename,
                       std::vector<TableEntry>* entries) {
  entries->clear();
  return TableParser(table, filename, entries).Parse();
}

}  // namespace sstable
}  // namespace tensorweave
