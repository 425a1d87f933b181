// Reading a whole sorted string table (the LevelDB layout TensorFlow's
// checkpoint index files use; sstable_builder.h writes it):
//
//   std::vector<sstable::TableEntry> entries;
//   TW_RETURN_IF_ERROR(sstable::ReadSortedTable(file_bytes, "ckpt/model.index", &entries));
//   for (const auto& entry : entries) Use(entry.key, entry.value);  // in key order
//
// Every block's checksum, every handle and varint, the restart arrays and
// the keys' strict order are checked; any damage is DATA_LOSS naming the file
// and where. Snappy-compressed blocks (which TensorFlow does not write for
// checkpoints) are UNIMPLEMENTED. Memory: the decoded keys and values are
// bounded by kMaxExpansion times the table's size (prefix compression lets a
// legitimate table expand: a writer restarting every 16 keys stays under 16x),
// so no table can make the reader allocate without bound.
#ifndef TENSORWEAVE_UTIL_SSTABLE_READER_H_
#define TENSORWEAVE_UTIL_SSTABLE_READER_H_

#include <string>
#include <vector>

#include "runtime/framework/status.h"

namespace tensorweave {
namespace sstable {

struct TableEntry {
  std::string key;
  std::string value;
};

constexpr size_t kMaxExpansion = 32;

Status ReadSortedTable(const std::string& table, const std::string& filename,
                       std::vector<TableEntry>* entries);

}  // namespace sstable
}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_SSTABLE_READER_H_
