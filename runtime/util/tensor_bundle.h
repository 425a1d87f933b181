// TensorFlow's V2 checkpoint format ("tensor bundle"): what tf.train.Saver
// writes by default, readable by TensorFlow and written by it.
//
//   // Saving one shard (atomic: temporary files fsynced, then renamed).
//   TW_RETURN_IF_ERROR(WriteTensorBundle("ckpt/model-100", {{"w", w}, {"b", b}}));
//   //   -> ckpt/model-100.index, ckpt/model-100.data-00000-of-00001
//
//   // Reading.
//   std::unique_ptr<BundleReader> reader;
//   TW_RETURN_IF_ERROR(BundleReader::Open("ckpt/model-100", &reader));
//   Tensor w;
//   TW_RETURN_IF_ERROR(reader->Read("w", DT_FLOAT, &w));
//
//   // Sharded saves write one bundle per device, then merge them.
//   TW_RETURN_IF_ERROR(MergeTensorBundles({"t/part-00000-of-00002", "t/part-00001-of-00002"},
//                                         "ckpt/model-100", /*delete_old_dirs=*/true,
//                                         /*allow_missing_files=*/false));
//
// `<prefix>.index` is a sorted table (sstable_builder.h) mapping "" to a
// BundleHeaderProto and each name to a BundleEntryProto (runtime/proto/
// tensor_bundle.proto); the data files hold the tensors' bytes, strings as
// varint lengths, a masked CRC of the lengths, then the bytes. Errors: a
// missing index or data file is NOT_FOUND naming it; any damage (a checksum,
// an impossible extent, a truncated file) is DATA_LOSS naming the file and,
// inside an entry, the entry. No file content can crash the reader or make
// it allocate more than the files' own sizes (the index's decoded keys: see
// sstable_reader.h).
#ifndef TENSORWEAVE_UTIL_TENSOR_BUNDLE_H_
#define TENSORWEAVE_UTIL_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/util/checkpoint_format.h"
#include "tensorweave/proto/tensor_bundle.pb.h"

namespace tensorweave {

// "<prefix>.index" and "<prefix>.data-%05d-of-%05d".
std::string BundleIndexPath(const std::string& prefix);
std::string BundleDataPath(const std::string& prefix, int shard, int num_shards);
// Whether a bundle's index file exists under `prefix`.
bool BundleExists(const std::string& prefix);

// Writes `entries` as a one-shard bundle under `prefix`. Names must be
// unique and non-empty; dtypes numeric, bool or string (INVALID_ARGUMENT
// otherwise). The data file and the index are written to temporary files,
// fsynced, renamed (data first), and the directory fsynced; on failure both
// temporary files are removed and an earlier bundle under `prefix` stays.
Status WriteTensorBundle(const std::string& prefix, const std::vector<CheckpointEntry>& entries);

// TensorFlow's MergeBundles: one index under `merged_prefix` listing the
// entries of every bundle in `prefixes` (renumbering their data files, which
// are renamed to the merged prefix); the source index files are then
// removed, and with `delete_old_dirs` their directories when empty. With
// `allow_missing_files`, prefixes without an index are skipped (but not
// all of them). A name in two bundles is INVALID_ARGUMENT.
Status MergeTensorBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix, bool delete_old_dirs,
                          bool allow_missing_files);

class BundleReader {
 public:
  struct Entry {
    DataType dtype = DT_INVALID;
    TensorShape shape;
    BundleEntryProto proto;
  };

  // Reads and checks the whole index and opens the data files its entries
  // use, checking each entry's extent against its file's size.
  static Status Open(const std::string& prefix, std::unique_ptr<BundleReader>* reader);
  ~BundleReader();
  BundleReader(const BundleReader&) = delete;
  BundleReader& operator=(const BundleReader&) = delete;

  const std::string& prefix() const { return prefix_; }
  // Every tensor, by name. The entries of a partitioned tensor's slices
  // (keys TensorFlow encodes starting with a zero byte) are not listed; the
  // tensor itself is, with its full shape.
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // NOT_FOUND naming `name` when the bundle has no such tensor.
  Status Lookup(const std::string& name, const Entry** entry) const;
  // A fresh tensor holding `name`, its checksum verified. `expected_dtype`
  // (DT_INVALID for any) must match, else INVALID_ARGUMENT. A tensor
  // TensorFlow saved partitioned (tf.get_variable with a partitioner) is
  // assembled whole from its partitions.
  Status Read(const std::string& name, DataType expected_dtype, Tensor* out) const;

 private:
  BundleReader() = default;
  Status Parse();
  Status ReadBytes(int shard, uint64_t offset, uint64_t length, char* out) const;
  Status DecodeStrings(const std::string& name, const Entry& entry, Tensor* tensor) const;
  // One entry's own bytes (not partitioned), checksum verified.
  Status ReadEntry(const std::string& name, const Entry& entry, Tensor* out) const;
  // A partitioned tensor from its slices' entries.
  Status AssembleSlices(const std::string& name, const Entry& entry, Tensor* out) const;

  std::string prefix_;
  std::string index_path_;
  int num_shards_ = 0;
  std::map<int, int> shard_fds_;  // shard id -> open data file
  std::map<std::string, Entry> entries_;
  std::map<std::string, Entry> slice_entries_;  // partitions, by TensorFlow's slice key
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_TENSOR_BUNDLE_H_
