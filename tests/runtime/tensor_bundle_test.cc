// Tests of TensorFlow's V2 checkpoint format: the sorted table
// (runtime/util/sstable_builder.h, sstable_reader.h) and the tensor bundle
// (runtime/util/tensor_bundle.h): round trips, the documented layout, every
// truncation and flipped byte of a small checkpoint (DATA_LOSS, never a
// crash), hostile sizes that must not allocate, atomic replacement, merging,
// and OpenCheckpoint choosing between the V2 and the older format.
#include "runtime/util/tensor_bundle.h"

#include <gtest/gtest.h>

#include <random>

#include "runtime/util/checkpoint_files.h"
#include "runtime/util/crc32c.h"
#include "runtime/util/sstable_builder.h"
#include "runtime/util/sstable_reader.h"
#include "tests/runtime/checkpoint_test_util.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

using sstable::SortedTableBuilder;
using sstable::TableEntry;

Status ReadBundle(const std::string& prefix, std::map<std::string, Tensor>* values = nullptr) {
  std::unique_ptr<BundleReader> reader;
  TW_RETURN_IF_ERROR(BundleReader::Open(prefix, &reader));
  for (const auto& [name, entry] : reader->entries()) {
    Tensor value;
    TW_RETURN_IF_ERROR(reader->Read(name, DT_INVALID, &value));
    if (values != nullptr) (*values)[name] = value;
  }
  return Status::OK();
}

std::vector<CheckpointEntry> SmallEntries() {
  return {{"a", MakeTensor<float>({2}, {1.5f, -2})},
          {"b/s", MakeTensor<std::string>({2}, {"x", "yz"})},
          {"c", Scalar<int64_t>(7)}};
}

// A table holding `entries` (header first) with TensorFlow's settings.
std::string BuildTable(const std::vector<std::pair<std::string, std::string>>& entries,
                       size_t block_size = 256 << 10) {
  SortedTableBuilder builder(block_size);
  for (const auto& [key, value] : entries) EXPECT_TRUE(builder.Add(key, value).ok());
  return builder.Finish();
}

std::string HeaderValue(int num_shards = 1) {
  BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.mutable_version()->set_producer(1);
  return header.SerializeAsString();
}

// --- Sorted table ------------------------------------------------------------------

TEST(SortedTable, MaskIsInvertibleAndMatchesLevelDb) {
  for (uint32_t crc : {0u, 1u, 0xffffffffu, 0x12345678u}) {
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(crc)), crc);
    EXPECT_NE(MaskCrc32c(crc), crc);
  }
  // LevelDB's rule: rotate right by 15, add 0xa282ead8.
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
}

TEST(SortedTable, RoundTripsManyKeysAcrossBlocksAndRestarts) {
  std::vector<std::pair<std::string, std::string>> entries = {{"", "header"}};
  for (int i = 0; i < 500; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "layer_%04d/kernel", i);
    entries.push_back({key, std::string(i % 37, static_cast<char>('a' + i % 26))});
  }
  for (size_t block_size : {64, 1024, 256 << 10}) {
    const std::string table = BuildTable(entries, block_size);
    std::vector<TableEntry> read;
    TW_ASSERT_OK(sstable::ReadSortedTable(table, "t", &read));
    ASSERT_EQ(read.size(), entries.size());
    for (size_t i = 0; i < read.size(); ++i) {
      EXPECT_EQ(read[i].key, entries[i].first);
      EXPECT_EQ(read[i].value, entries[i].second);
    }
  }
}

TEST(SortedTable, LayoutEndsWithTheFooterMagicAndEmptyTablesRead) {
  const std::string table = SortedTableBuilder().Finish();
  ASSERT_GE(table.size(), sstable::kFooterSize);
  const std::string magic = table.substr(table.size() - 8);
  EXPECT_EQ(magic, std::string("\x57\xfb\x80\x8b\x24\x75\x47\xdb", 8));
  std::vector<TableEntry> read = {{"stale", ""}};
  TW_ASSERT_OK(sstable::ReadSortedTable(table, "t", &read));
  EXPECT_TRUE(read.empty());
}

TEST(SortedTable, BuilderRefusesKeysOutOfOrder) {
  SortedTableBuilder builder;
  TW_ASSERT_OK(builder.Add("b", ""));
  ExpectError(builder.Add("a", ""), Code::INVALID_ARGUMENT, "increasing order");
  ExpectError(builder.Add("b", ""), Code::INVALID_ARGUMENT, "increasing order");
}

TEST(SortedTable, SnappyBlocksAreUnimplementedAndUnknownTypesDataLoss) {
  std::string table = BuildTable({{"", "h"}, {"k", "v"}});
  // The first data block starts at 0; its type byte follows its contents.
  std::vector<TableEntry> read;
  TW_ASSERT_OK(sstable::ReadSortedTable(table, "t", &read));
  // ("", "h") takes 4 bytes, ("k", "v") 5, the restart array 8.
  const size_t block_size = 4 + 5 + 8;
  for (uint8_t type : {uint8_t{1}, uint8_t{7}}) {
    std::string damaged = table;
    damaged[block_size] = static_cast<char>(type);
    const uint32_t crc = MaskCrc32c(Crc32c(damaged.data(), block_size + 1));
    for (int i = 0; i < 4; ++i) damaged[block_size + 1 + i] = static_cast<char>(crc >> (8 * i));
    ExpectError(sstable::ReadSortedTable(damaged, "t", &read),
                type == 1 ? Code::UNIMPLEMENTED : Code::DATA_LOSS,
                type == 1 ? "snappy-compressed data block 0" : "unknown block type 7");
  }
}

TEST(SortedTable, PrefixCompressionCannotExpandWithoutBound) {
  // A hand-made table whose one data block holds a 2000-byte key, then
  // 60000 entries of 4 bytes each, each sharing the whole previous key and
  // adding one byte: the decoded keys would take ~1.9 GB.
  std::string block;
  auto varint = [&](uint64_t v) { sstable::PutVarint64(&block, v); };
  std::string key(2000, 'a');
  varint(0), varint(key.size()), varint(0), block += key;
  for (int i = 0; i < 60000; ++i) {
    varint(key.size()), varint(1), varint(0), block.push_back('b');  // key + "b", growing
    key.push_back('b');
  }
  sstable::PutFixed32(&block, 0);
  sstable::PutFixed32(&block, 1);
  // Wrap it into a table by hand: block, trailer, an index block naming it.
  std::string table = block;
  table.push_back(0);
  sstable::PutFixed32(&table, MaskCrc32c(Crc32c(block.data(), block.size() + 1)));
  std::string index_block;
  std::string handle;
  sstable::PutVarint64(&handle, 0);
  sstable::PutVarint64(&handle, block.size());
  sstable::PutVarint32(&index_block, 0);
  sstable::PutVarint32(&index_block, key.size());
  sstable::PutVarint32(&index_block, handle.size());
  index_block += key + handle;
  sstable::PutFixed32(&index_block, 0);
  sstable::PutFixed32(&index_block, 1);
  const uint64_t index_offset = table.size();
  table += index_block;
  table.push_back(0);
  std::string with_type = index_block + '\0';
  sstable::PutFixed32(&table, MaskCrc32c(Crc32c(with_type.data(), with_type.size())));
  const uint64_t meta_offset = table.size();
  std::string meta;
  sstable::PutFixed32(&meta, 0);
  sstable::PutFixed32(&meta, 1);
  table += meta;
  table.push_back(0);
  std::string meta_with_type = meta + '\0';
  sstable::PutFixed32(&table, MaskCrc32c(Crc32c(meta_with_type.data(), meta_with_type.size())));
  std::string footer;
  sstable::PutVarint64(&footer, meta_offset);
  sstable::PutVarint64(&footer, meta.size());
  sstable::PutVarint64(&footer, index_offset);
  sstable::PutVarint64(&footer, index_block.size());
  footer.resize(40, '\0');
  sstable::PutFixed32(&footer, 0x8b80fb57u);
  sstable::PutFixed32(&footer, 0xdb477524u);
  table += footer;
  std::vector<TableEntry> read;
  ExpectError(sstable::ReadSortedTable(table, "forged", &read), Code::DATA_LOSS, "expand beyond");
}

// --- Bundles ------------------------------------------------------------------------

TEST(TensorBundle, RoundTripsEveryDtypeScalarsAndEmptyTensors) {
  const std::string prefix = MakeTempDir() + "/model-1";
  const std::vector<CheckpointEntry> entries = EveryDtypeEntries();
  TW_ASSERT_OK(WriteTensorBundle(prefix, entries));
  std::map<std::string, Tensor> values;
  TW_ASSERT_OK(ReadBundle(prefix, &values));
  ASSERT_EQ(values.size(), entries.size());
  for (const CheckpointEntry& entry : entries) {
    EXPECT_TRUE(SameTensor(values[entry.name], entry.tensor)) << entry.name;
  }
  EXPECT_EQ(ListDir(prefix.substr(0, prefix.rfind('/'))),
            (std::vector<std::string>{"model-1.data-00000-of-00001", "model-1.index"}));
}

TEST(TensorBundle, DataFileLayoutIsTensorFlows) {
  const std::string prefix = MakeTempDir() + "/m";
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  const std::string data = ReadFile(BundleDataPath(prefix, 0, 1));
  // Entries in name order, unpadded: a's 8 bytes; b/s: varint lengths 1, 2,
  // the masked CRC of the lengths (as uint32s), "x", "yz"; c's 8 bytes.
  ASSERT_EQ(data.size(), 8u + (2 + 4 + 3) + 8);
  float a[2];
  std::memcpy(a, data.data(), 8);
  EXPECT_EQ(a[0], 1.5f);
  EXPECT_EQ(data.substr(8, 2), std::string("\x01\x02", 2));
  std::string lengths;
  sstable::PutFixed32(&lengths, 1);
  sstable::PutFixed32(&lengths, 2);
  uint32_t stored = 0;
  std::memcpy(&stored, data.data() + 10, 4);
  EXPECT_EQ(UnmaskCrc32c(stored), Crc32c(lengths.data(), lengths.size()));
  EXPECT_EQ(data.substr(14, 3), "xyz");

  std::unique_ptr<BundleReader> reader;
  TW_ASSERT_OK(BundleReader::Open(prefix, &reader));
  const BundleEntryProto& c = reader->entries().at("c").proto;
  EXPECT_EQ(c.offset(), 17);
  EXPECT_EQ(c.size(), 8);
  EXPECT_EQ(c.crc32c(), MaskCrc32c(Crc32c(data.data() + 17, 8)));
  std::vector<TableEntry> table;
  TW_ASSERT_OK(sstable::ReadSortedTable(ReadFile(BundleIndexPath(prefix)), "i", &table));
  ASSERT_EQ(table.size(), 4u);
  BundleHeaderProto header;
  ASSERT_TRUE(header.ParseFromString(table[0].value));
  EXPECT_EQ(table[0].key, "");
  EXPECT_EQ(header.num_shards(), 1);
  EXPECT_EQ(header.endianness(), BundleHeaderProto::LITTLE);
  EXPECT_EQ(header.version().producer(), 1);
}

TEST(TensorBundle, ErrorsNameTheKeyTheDtypesAndMissingFiles) {
  const std::string prefix = MakeTempDir() + "/m";
  ExpectError(ReadBundle(prefix), Code::NOT_FOUND, prefix + ".index not found");
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  std::unique_ptr<BundleReader> reader;
  TW_ASSERT_OK(BundleReader::Open(prefix, &reader));
  Tensor value;
  ExpectError(reader->Read("nope", DT_INVALID, &value), Code::NOT_FOUND,
              "Key nope not found in checkpoint");
  ExpectError(reader->Read("a", DT_INT32, &value), Code::INVALID_ARGUMENT,
              "expected dtype int32 does not equal original dtype float");
  ExpectError(WriteTensorBundle(prefix, {{"a", Scalar<float>(1)}, {"a", Scalar<float>(2)}}),
              Code::INVALID_ARGUMENT, "duplicate key: a");
  ExpectError(WriteTensorBundle(prefix, {{"", Scalar<float>(1)}}), Code::INVALID_ARGUMENT,
              "non-empty");
  ExpectError(WriteTensorBundle(MakeTempDir() + "/no/such/dir/m", SmallEntries()), Code::NOT_FOUND,
              "no/such/dir");
  std::remove(BundleDataPath(prefix, 0, 1).c_str());
  ExpectError(BundleReader::Open(prefix, &reader), Code::NOT_FOUND,
              prefix + ".data-00000-of-00001 not found");
}

TEST(TensorBundleFuzz, EveryTruncationOfIndexOrDataIsDataLossNamingTheFile) {
  const std::string prefix = MakeTempDir() + "/m";
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  for (const std::string& path : {BundleIndexPath(prefix), BundleDataPath(prefix, 0, 1)}) {
    const std::string good = ReadFile(path);
    for (size_t length = 0; length < good.size(); ++length) {
      WriteRawFile(path, good.substr(0, length));
      const Status status = ReadBundle(prefix);
      EXPECT_EQ(status.code(), Code::DATA_LOSS) << path << " " << length << " " << status;
      EXPECT_NE(status.message().find(path), std::string::npos) << status;
    }
    WriteRawFile(path, good);
  }
  TW_EXPECT_OK(ReadBundle(prefix));
}

TEST(TensorBundleFuzz, EveryFlippedByteIsDataLossOrHarmless) {
  const std::string prefix = MakeTempDir() + "/m";
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  const std::string index_path = BundleIndexPath(prefix);
  const std::string index = ReadFile(index_path);
  for (size_t at = 0; at < index.size(); ++at) {
    for (uint8_t bit : {uint8_t{0x01}, uint8_t{0x80}}) {
      std::string damaged = index;
      damaged[at] ^= bit;
      WriteRawFile(index_path, damaged);
      const Status status = ReadBundle(prefix);
      // The footer's 40 bytes of block handles and zero padding carry no
      // checksum (in LevelDB and TensorFlow either): a flip there may leave
      // the same handles (a zero padding byte taken in by a varint's
      // continuation bit), which is harmless.
      const bool padding = at >= index.size() - sstable::kFooterSize && at < index.size() - 8;
      if (status.ok()) {
        EXPECT_TRUE(padding) << at;
        std::map<std::string, Tensor> values;
        TW_EXPECT_OK(ReadBundle(prefix, &values));
        EXPECT_EQ(values.size(), 3u);
        continue;
      }
      EXPECT_EQ(status.code(), Code::DATA_LOSS) << at << " " << status;
    }
  }
  WriteRawFile(index_path, index);
  const std::string data_path = BundleDataPath(prefix, 0, 1);
  const std::string data = ReadFile(data_path);
  for (size_t at = 0; at < data.size(); ++at) {
    std::string damaged = data;
    damaged[at] ^= 0x04;
    WriteRawFile(data_path, damaged);
    const Status status = ReadBundle(prefix);
    EXPECT_EQ(status.code(), Code::DATA_LOSS) << at << " " << status;
    const char* owner = at < 8 ? "entry a" : at < 17 ? "entry b/s" : "entry c";
    EXPECT_NE(status.message().find(owner), std::string::npos) << at << " " << status;
  }
}

TEST(TensorBundleFuzz, RandomGarbageIndexesNeverCrash) {
  const std::string prefix = MakeTempDir() + "/m";
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  const std::string good = ReadFile(BundleIndexPath(prefix));
  std::mt19937 random(11);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string damaged = good;
    const int flips = 1 + random() % 8;
    for (int i = 0; i < flips; ++i) damaged[random() % damaged.size()] = random();
    if (trial % 4 == 0) damaged.resize(random() % (damaged.size() + 1));
    WriteRawFile(BundleIndexPath(prefix), damaged);
    const Status status = ReadBundle(prefix);  // any error, never a crash
    if (!status.ok()) EXPECT_NE(status.code(), Code::INTERNAL) << status;
  }
}

// An index whose single entry claims `shape` and `size` bytes at offset 0.
void WriteForgedIndex(const std::string& prefix, DataType dtype, const std::vector<int64_t>& dims,
                      int64_t size, int shard_id = 0) {
  BundleEntryProto entry;
  entry.set_dtype(dtype);
  for (int64_t d : dims) entry.mutable_shape()->add_dim()->set_size(d);
  entry.set_shard_id(shard_id);
  entry.set_size(size);
  WriteRawFile(BundleIndexPath(prefix),
               BuildTable({{"", HeaderValue()}, {"x", entry.SerializeAsString()}}));
}

TEST(TensorBundleFuzz, HostileSizesAreRefusedBeforeAllocating) {
  const std::string prefix = MakeTempDir() + "/m";
  WriteRawFile(BundleDataPath(prefix, 0, 1), std::string(16, '\0'));
  struct Case {
    DataType dtype;
    std::vector<int64_t> dims;
    int64_t size;
    int shard;
    const char* fragment;
  };
  const Case cases[] = {
      {DT_FLOAT, {int64_t{1} << 40}, int64_t{4} << 40, 0, "is truncated"},
      {DT_FLOAT, {1 << 20}, 16, 0, "has size 16"},
      {DT_STRING, {1 << 30}, 16, 0, "has size 16"},
      {DT_FLOAT, {4}, 16, 3, "shard 3 of 1"},
      {DT_FLOAT, {-5}, 16, 0, "invalid shape"},
      {static_cast<DataType>(77), {4}, 16, 0, "unknown dtype 77"},
  };
  for (const Case& c : cases) {
    WriteForgedIndex(prefix, c.dtype, c.dims, c.size, c.shard);
    ExpectError(ReadBundle(prefix), Code::DATA_LOSS, c.fragment);
  }
  WriteForgedIndex(prefix, DT_VARIANT, {1}, 16);
  ExpectError(ReadBundle(prefix), Code::UNIMPLEMENTED, "dtype variant");
}

TEST(TensorBundle, HeaderVersionsAndEndiannessAreChecked) {
  const std::string prefix = MakeTempDir() + "/m";
  BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_min_consumer(2);
  WriteRawFile(BundleIndexPath(prefix), BuildTable({{"", header.SerializeAsString()}}));
  ExpectError(ReadBundle(prefix), Code::INVALID_ARGUMENT, "version 2 or newer");
  header.mutable_version()->set_min_consumer(0);
  header.mutable_version()->add_bad_consumers(1);
  WriteRawFile(BundleIndexPath(prefix), BuildTable({{"", header.SerializeAsString()}}));
  ExpectError(ReadBundle(prefix), Code::INVALID_ARGUMENT, "disallows reader version 1");
  header.mutable_version()->clear_bad_consumers();
  header.set_endianness(BundleHeaderProto::BIG);
  WriteRawFile(BundleIndexPath(prefix), BuildTable({{"", header.SerializeAsString()}}));
  ExpectError(ReadBundle(prefix), Code::UNIMPLEMENTED, "big-endian");
  WriteRawFile(BundleIndexPath(prefix), BuildTable({{"a", ""}}));
  ExpectError(ReadBundle(prefix), Code::DATA_LOSS, "no header entry");
}

// The key TensorFlow gives the slice [start, start + 2) of 1-D tensor "w"
// (bytes as in a checkpoint TensorFlow 2.21 wrote): ordered-code 0, the
// name, rank 1, start, length.
std::string SliceKeyOfW(int start) {
  return std::string("\0w\0\x01\x01\x01", 6) + static_cast<char>(0x80 + start) + '\x82';
}

TEST(TensorBundle, PartitionedTensorsAreAssembledFromTheirSlices) {
  const std::string prefix = MakeTempDir() + "/m";
  BundleEntryProto full;
  full.set_dtype(DT_FLOAT);
  full.mutable_shape()->add_dim()->set_size(4);
  std::vector<std::pair<std::string, std::string>> records = {{"", HeaderValue()}};
  std::string data;
  for (int start : {0, 2}) {
    TensorSliceProto::Extent* extent = full.add_slices()->add_extent();
    extent->set_start(start);
    extent->set_length(2);
    const float values[2] = {start + 1.0f, start + 2.0f};
    BundleEntryProto slice;
    slice.set_dtype(DT_FLOAT);
    slice.mutable_shape()->add_dim()->set_size(2);
    slice.set_offset(data.size());
    slice.set_size(8);
    slice.set_crc32c(MaskCrc32c(Crc32c(values, 8)));
    data.append(reinterpret_cast<const char*>(values), 8);
    records.push_back({SliceKeyOfW(start), slice.SerializeAsString()});
  }
  records.push_back({"w", full.SerializeAsString()});
  WriteRawFile(BundleDataPath(prefix, 0, 1), data);
  WriteRawFile(BundleIndexPath(prefix), BuildTable(records));
  std::unique_ptr<BundleReader> reader;
  TW_ASSERT_OK(BundleReader::Open(prefix, &reader));
  ASSERT_EQ(reader->entries().size(), 1u);  // the slices' own keys are hidden
  EXPECT_EQ(reader->entries().at("w").shape, TensorShape({4}));
  Tensor value;
  TW_ASSERT_OK(reader->Read("w", DT_FLOAT, &value));
  ExpectValues<float>(value, {4}, {1, 2, 3, 4});

  // A slice whose entry is missing, or slices that leave elements out.
  records.erase(records.begin() + 2);
  WriteRawFile(BundleIndexPath(prefix), BuildTable(records));
  TW_ASSERT_OK(BundleReader::Open(prefix, &reader));
  ExpectError(reader->Read("w", DT_FLOAT, &value), Code::DATA_LOSS,
              "lacks the entry of one of its slices");
  full.mutable_slices()->RemoveLast();
  records.back().second = full.SerializeAsString();
  WriteRawFile(BundleIndexPath(prefix), BuildTable(records));
  TW_ASSERT_OK(BundleReader::Open(prefix, &reader));
  ExpectError(reader->Read("w", DT_FLOAT, &value), Code::DATA_LOSS,
              "slices covering 2 of its 4 elements");
}

TEST(TensorBundleAtomicity, FailedWriteLeavesThePreviousBundleAndNoTemporaries) {
  const std::string dir = MakeTempDir();
  const std::string prefix = dir + "/m";
  TW_ASSERT_OK(WriteTensorBundle(prefix, SmallEntries()));
  const std::string index = ReadFile(BundleIndexPath(prefix));
  const std::string data = ReadFile(BundleDataPath(prefix, 0, 1));
  for (int64_t fail_at : {int64_t{0}, int64_t{1}}) {
    int calls = 0;
    SetCheckpointWriteHookForTesting([&](int64_t, const std::string&) {
      return calls++ == fail_at ? errors::ResourceExhausted("disk full (simulated)") : Status::OK();
    });
    ExpectError(WriteTensorBundle(prefix, {{"a", Scalar<float>(9)}}), Code::RESOURCE_EXHAUSTED,
                "disk full");
    SetCheckpointWriteHookForTesting(nullptr);
    EXPECT_EQ(ReadFile(BundleIndexPath(prefix)), index);
    EXPECT_EQ(ReadFile(BundleDataPath(prefix, 0, 1)), data);
    EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"m.data-00000-of-00001", "m.index"}));
  }
}

TEST(TensorBundle, MergeRenumbersShardsAndRemovesThePartsDirectory) {
  const std::string dir = MakeTempDir();
  const std::string parts = dir + "/model_temp";
  ASSERT_EQ(mkdir(parts.c_str(), 0777), 0);
  const std::string part0 = parts + "/part-00000-of-00002";
  const std::string part1 = parts + "/part-00001-of-00002";
  TW_ASSERT_OK(WriteTensorBundle(part0, {{"w", MakeTensor<float>({2}, {1, 2})}}));
  TW_ASSERT_OK(WriteTensorBundle(part1, {{"b", Scalar<std::string>("s")}}));
  const std::string merged = dir + "/model";
  TW_ASSERT_OK(MergeTensorBundles({part0, part1}, merged, true, false));
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"model.data-00000-of-00002",
                                                    "model.data-00001-of-00002", "model.index"}));
  std::map<std::string, Tensor> values;
  TW_ASSERT_OK(ReadBundle(merged, &values));
  ExpectValues<float>(values["w"], {2}, {1, 2});
  EXPECT_EQ(values["b"].scalar<std::string>(), "s");

  TW_ASSERT_OK(WriteTensorBundle(dir + "/x", {{"w", Scalar<float>(1)}}));
  TW_ASSERT_OK(WriteTensorBundle(dir + "/y", {{"w", Scalar<float>(2)}}));
  ExpectError(MergeTensorBundles({dir + "/x", dir + "/y"}, dir + "/xy", false, false),
              Code::INVALID_ARGUMENT, "Duplicate tensor keyed by w");
  ExpectError(MergeTensorBundles({dir + "/x", dir + "/gone"}, dir + "/xg", false, false),
              Code::NOT_FOUND, "gone.index");
  TW_ASSERT_OK(MergeTensorBundles({dir + "/x", dir + "/gone"}, dir + "/xg", false, true));
  TW_EXPECT_OK(ReadBundle(dir + "/xg"));
}

TEST(TensorBundle, OpenCheckpointReadsEitherFormatByWhatExists) {
  const std::string dir = MakeTempDir();
  TW_ASSERT_OK(WriteTensorBundle(dir + "/v2", {{"w", Scalar<float>(2)}}));
  TW_ASSERT_OK(WriteCheckpointFile(dir + "/old.twckpt", {{"w", Scalar<float>(1)}}));
  for (const auto& [prefix, expected] :
       std::vector<std::pair<std::string, float>>{{dir + "/v2", 2}, {dir + "/old", 1}}) {
    std::unique_ptr<CheckpointReader> reader;
    TW_ASSERT_OK(
        CheckpointReader::OpenCheckpoint(prefix, CheckpointReader::Verify::kWholeFile, &reader));
    EXPECT_EQ(reader->entries().at("w").dtype, DT_FLOAT);
    Tensor value;
    TW_ASSERT_OK(reader->Read("w", DT_FLOAT, &value));
    EXPECT_EQ(value.scalar<float>(), expected);
  }
  std::unique_ptr<CheckpointReader> reader;
  ExpectError(CheckpointReader::OpenCheckpoint(dir + "/none", CheckpointReader::Verify::kWholeFile,
                                               &reader),
              Code::NOT_FOUND, "neither " + dir + "/none.index nor " + dir + "/none.twckpt");
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
