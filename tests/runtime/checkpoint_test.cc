// Tests of tensorweave's own checkpoint file format
// (runtime/util/checkpoint_format.h; the kernels and the V2 format are tested
// in save_restore_kernels_test.cc and tensor_bundle_test.cc): CRC-32C values,
// round trips of every dtype, the error for each kind of bad file, corruption fuzzing (every
// truncation, flipped bytes in every region) and atomic replacement when a
// save fails or its process dies mid-write.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "runtime/util/checkpoint_format.h"
#include "tests/runtime/checkpoint_test_util.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

Status ReadEverything(const std::string& path,
                      CheckpointReader::Verify verify = CheckpointReader::Verify::kWholeFile) {
  std::unique_ptr<CheckpointReader> reader;
  TW_RETURN_IF_ERROR(CheckpointReader::Open(path, &reader, verify));
  for (const auto& [name, info] : reader->entries()) {
    Tensor value;
    TW_RETURN_IF_ERROR(reader->Read(name, DT_INVALID, &value));
  }
  return Status::OK();
}

// --- CRC-32C --------------------------------------------------------------------

TEST(CheckpointCrc32c, PublishedCheckValues) {
  // Values from RFC 3720 (iSCSI), appendix B.4, and the common check string.
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(ascending.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(CheckpointCrc32c, ExtendAndBothImplementationsAgree) {
  std::mt19937 random(7);
  std::string bytes(4099, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  for (size_t start : {0, 1, 3, 7}) {
    for (size_t length : {0, 1, 7, 8, 9, 63, 64, 1000, 4090}) {
      const char* data = bytes.data() + start;
      const uint32_t whole = Crc32c(data, length);
      EXPECT_EQ(whole, Crc32cExtendPortable(0, data, length)) << start << " " << length;
      for (size_t split : {size_t{0}, length / 3, length}) {
        EXPECT_EQ(Crc32cExtend(Crc32c(data, split), data + split, length - split), whole);
      }
    }
  }
}

// --- Round trips ----------------------------------------------------------------

TEST(CheckpointFormat, RoundTripsEveryDtypeScalarsAndEmptyTensors) {
  const std::string path = MakeTempDir() + "/model-1.twckpt";
  const std::vector<CheckpointEntry> entries = EveryDtypeEntries();
  TW_ASSERT_OK(WriteCheckpointFile(path, entries));
  std::unique_ptr<CheckpointReader> reader;
  TW_ASSERT_OK(CheckpointReader::Open(path, &reader));
  EXPECT_EQ(reader->entries().size(), entries.size());
  for (const CheckpointEntry& entry : entries) {
    Tensor value;
    TW_ASSERT_OK(reader->Read(entry.name, entry.tensor.dtype(), &value));
    EXPECT_TRUE(SameTensor(value, entry.tensor)) << entry.name << ": " << value.DebugString();
    EXPECT_FALSE(value.SharesBufferWith(entry.tensor));
    const CheckpointReader::EntryInfo* info = nullptr;
    TW_ASSERT_OK(reader->Lookup(entry.name, &info));
    EXPECT_EQ(info->offset % 64, 0u) << entry.name << " data is not 64-byte aligned";
  }
}

TEST(CheckpointFormat, LayoutIsLittleEndianAndAsDocumented) {
  const std::string path = MakeTempDir() + "/layout.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, {{"w", MakeTensor<int32_t>({2}, {0x01020304, 5})}}));
  const std::string bytes = ReadFile(path);
  ASSERT_EQ(bytes.substr(0, 8), std::string("\x89TWCKPT\n", 8));
  EXPECT_EQ(bytes[8], 1);                                    // version 1, little-endian
  EXPECT_EQ(bytes[12], 1);                                   // one entry
  EXPECT_EQ(static_cast<uint8_t>(bytes[24]), bytes.size());  // file length
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "TWCK");
  // Table: name length 1, "w", dtype 3 (DT_INT32), rank 1, dim 2, offset
  // 128 (40 header + 41 table + 4 table checksum, rounded up to 64).
  EXPECT_EQ(bytes.substr(40, 5), std::string("\x01\0\0\0w", 5));
  EXPECT_EQ(bytes[45], DT_INT32);
  EXPECT_EQ(bytes[49], 1);
  EXPECT_EQ(bytes[53], 2);
  EXPECT_EQ(static_cast<uint8_t>(bytes[61]), 128);
  EXPECT_EQ(bytes.substr(128, 5), std::string("\x04\x03\x02\x01\x05", 5));
  EXPECT_EQ(bytes.size(), 128u + 8 + 8);  // data, then the footer
}

TEST(CheckpointFormat, SecondWriteReplacesTheFileAndLeavesNoTemporaries) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/m.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, {{"v", Scalar<float>(1)}}));
  TW_ASSERT_OK(WriteCheckpointFile(path, {{"v", Scalar<float>(2)}, {"u", Scalar<int64_t>(3)}}));
  std::unique_ptr<CheckpointReader> reader;
  TW_ASSERT_OK(CheckpointReader::Open(path, &reader));
  Tensor v;
  TW_ASSERT_OK(reader->Read("v", DT_FLOAT, &v));
  EXPECT_EQ(v.scalar<float>(), 2);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"m.twckpt"});
}

// --- Errors ----------------------------------------------------------------------

TEST(CheckpointFormat, ErrorsNameThePathTheKeyAndTheDtypes) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/model.twckpt";
  std::unique_ptr<CheckpointReader> reader;
  ExpectError(CheckpointReader::Open(path, &reader), Code::NOT_FOUND, path);

  TW_ASSERT_OK(WriteCheckpointFile(path, {{"mlp/dense/bias", MakeTensor<float>({2}, {1, 2})}}));
  TW_ASSERT_OK(CheckpointReader::Open(path, &reader));
  Tensor value;
  ExpectError(reader->Read("mlp/dense/kernel", DT_FLOAT, &value), Code::NOT_FOUND,
              "Key mlp/dense/kernel not found in checkpoint " + path);
  ExpectError(reader->Read("mlp/dense/bias", DT_INT32, &value), Code::INVALID_ARGUMENT,
              "'mlp/dense/bias' in " + path + " holds float, but int32 was requested");

  WriteRawFile(dir + "/text.twckpt", "model_checkpoint_path: \"model\"\n");
  ExpectError(CheckpointReader::Open(dir + "/text.twckpt", &reader), Code::DATA_LOSS,
              dir + "/text.twckpt is not a tensorweave checkpoint");
  ExpectError(CheckpointReader::Open(dir, &reader), Code::INVALID_ARGUMENT, "not a regular file");
}

TEST(CheckpointFormat, WriterRejectsBadEntriesAndMissingDirectories) {
  const std::string dir = MakeTempDir();
  ExpectError(WriteCheckpointFile(dir + "/a", {{"x", Scalar<float>(1)}, {"x", Scalar<float>(2)}}),
              Code::INVALID_ARGUMENT, "'x' appears twice");
  ExpectError(WriteCheckpointFile(dir + "/a", {{"", Scalar<float>(1)}}), Code::INVALID_ARGUMENT,
              "non-empty");
  ExpectError(WriteCheckpointFile(dir + "/a", {{"u", Tensor()}}), Code::INVALID_ARGUMENT,
              "Cannot save tensor 'u'");
  ExpectError(WriteCheckpointFile(dir + "/missing/a", {{"x", Scalar<float>(1)}}), Code::NOT_FOUND,
              dir + "/missing/a");
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST(CheckpointFormat, FutureVersionIsUnimplemented) {
  const std::string path = MakeTempDir() + "/v.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, {{"x", Scalar<float>(1)}}));
  std::string bytes = ReadFile(path);
  bytes[8] = 2;
  // Reseal the header so only the version differs from a good file.
  const uint32_t crc = Crc32c(bytes.data(), 36);
  for (int i = 0; i < 4; ++i) bytes[36 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  WriteRawFile(path, bytes);
  std::unique_ptr<CheckpointReader> reader;
  ExpectError(CheckpointReader::Open(path, &reader), Code::UNIMPLEMENTED, "format version 2");
}

// --- Corruption fuzzing -----------------------------------------------------------

TEST(CheckpointFuzz, EveryTruncationIsDataLossNamingTheFile) {
  const std::string dir = MakeTempDir();
  const std::string good = dir + "/good.twckpt", bad = dir + "/bad.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(good, EveryDtypeEntries()));
  const std::string bytes = ReadFile(good);
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t length = 0; length < bytes.size(); ++length) {
    WriteRawFile(bad, bytes.substr(0, length));
    const Status status = ReadEverything(bad);
    ASSERT_EQ(status.code(), Code::DATA_LOSS) << "length " << length << ": " << status;
    ASSERT_NE(status.message().find(bad), std::string::npos) << status;
    ASSERT_NE(status.message().find("truncated"), std::string::npos) << status;
  }
  WriteRawFile(bad, bytes + "x");
  ExpectError(ReadEverything(bad), Code::DATA_LOSS, "1 unexpected bytes after the end");
}

TEST(CheckpointFuzz, EveryFlippedByteIsDetectedAndDataDamageNamesTheEntry) {
  const std::string dir = MakeTempDir();
  const std::string good = dir + "/good.twckpt", bad = dir + "/bad.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(good, EveryDtypeEntries()));
  const std::string bytes = ReadFile(good);
  std::unique_ptr<CheckpointReader> reader;
  TW_ASSERT_OK(CheckpointReader::Open(good, &reader));
  // Which entry, if any, owns each byte: damage there must name it.
  std::vector<std::string> owner(bytes.size());
  for (const auto& [name, info] : reader->entries()) {
    for (uint64_t i = info.offset; i < info.offset + info.length; ++i) owner[i] = name;
  }
  int in_data = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ mask);
      WriteRawFile(bad, damaged);
      const Status status = ReadEverything(bad);
      ASSERT_EQ(status.code(), Code::DATA_LOSS)
          << "byte " << at << " ^ " << int{mask} << ": " << status;
      ASSERT_NE(status.message().find(bad), std::string::npos) << status;
      if (!owner[at].empty()) {
        ++in_data;
        ASSERT_NE(status.message().find("entry '" + owner[at] + "'"), std::string::npos)
            << "byte " << at << ": " << status;
      }
    }
  }
  EXPECT_GT(in_data, 0);
}

// Opening with Verify::kTableOnly reads only the header, table and footer;
// every byte a Read returns is still checked, so damage anywhere a value
// comes from is DATA_LOSS naming the entry, and only bytes no value depends
// on (alignment padding, the whole-file checksum) go unnoticed.
TEST(CheckpointFuzz, TableOnlyOpenStillCatchesEveryFlippedByteAValueDependsOn) {
  const std::string dir = MakeTempDir();
  const std::string good = dir + "/good.twckpt", bad = dir + "/bad.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(good, EveryDtypeEntries()));
  const std::string bytes = ReadFile(good);
  std::unique_ptr<CheckpointReader> reader;
  TW_ASSERT_OK(CheckpointReader::Open(good, &reader, CheckpointReader::Verify::kTableOnly));
  uint64_t table_length = 0;  // header bytes 16..23, little-endian
  for (int i = 7; i >= 0; --i) table_length = (table_length << 8) | uint8_t(bytes[16 + i]);
  std::vector<std::string> owner(bytes.size());
  std::vector<bool> checked(bytes.size(), false);
  for (uint64_t i = 0; i < 40 + table_length + 4; ++i) checked[i] = true;      // header, table
  for (size_t i = bytes.size() - 4; i < bytes.size(); ++i) checked[i] = true;  // footer magic
  for (const auto& [name, info] : reader->entries()) {
    for (uint64_t i = info.offset; i < info.offset + info.length; ++i) {
      owner[i] = name;
      checked[i] = true;
    }
  }
  int unchecked = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    WriteRawFile(bad, damaged);
    const Status status = ReadEverything(bad, CheckpointReader::Verify::kTableOnly);
    if (!checked[at]) {
      ++unchecked;
      TW_ASSERT_OK(status);
      continue;
    }
    ASSERT_EQ(status.code(), Code::DATA_LOSS) << "byte " << at << ": " << status;
    if (!owner[at].empty()) {
      ASSERT_NE(status.message().find("entry '" + owner[at] + "'"), std::string::npos)
          << "byte " << at << ": " << status;
    }
  }
  EXPECT_GT(unchecked, 0);
  // Damage in one entry spoils that entry only.
  std::string damaged = bytes;
  const CheckpointReader::EntryInfo& info = reader->entries().at("float");
  damaged[info.offset] = static_cast<char>(damaged[info.offset] ^ 0x01);
  WriteRawFile(bad, damaged);
  TW_ASSERT_OK(CheckpointReader::Open(bad, &reader, CheckpointReader::Verify::kTableOnly));
  Tensor value;
  ExpectError(reader->Read("float", DT_INVALID, &value), Code::DATA_LOSS,
              "checksum mismatch in entry 'float'");
  TW_EXPECT_OK(reader->Read("double", DT_DOUBLE, &value));
  ExpectError(CheckpointReader::Open(bad, &reader), Code::DATA_LOSS,
              "checksum mismatch in entry 'float'");
}

TEST(CheckpointFormat, OpenCheckpointTakesAPrefixOrTheFilesOwnPath) {
  const std::string dir = MakeTempDir();
  TW_ASSERT_OK(WriteCheckpointFile(CheckpointFilePath(dir + "/model"), EveryDtypeEntries()));
  std::unique_ptr<CheckpointReader> reader;
  for (const std::string& name : {dir + "/model", dir + "/model.twckpt"}) {
    TW_ASSERT_OK(
        CheckpointReader::OpenCheckpoint(name, CheckpointReader::Verify::kWholeFile, &reader));
    EXPECT_EQ(reader->path(), dir + "/model.twckpt");
    EXPECT_EQ(reader->entries().size(), EveryDtypeEntries().size());
  }
  ExpectError(CheckpointReader::OpenCheckpoint(dir + "/other", CheckpointReader::Verify::kTableOnly,
                                               &reader),
              Code::NOT_FOUND,
              "neither " + dir + "/other.index nor " + dir + "/other.twckpt exists");
}

TEST(CheckpointFormat, FileToReadAcceptsAPrefixOrTheFilesOwnPath) {
  EXPECT_EQ(CheckpointFileToRead("ckpt/model-100"), "ckpt/model-100.twckpt");
  EXPECT_EQ(CheckpointFileToRead("ckpt/model-100.twckpt"), "ckpt/model-100.twckpt");
  EXPECT_EQ(CheckpointFileToRead(".twckpt"), ".twckpt.twckpt");  // an empty prefix
  EXPECT_EQ(CheckpointFileToRead("model.twckpt.bak"), "model.twckpt.bak.twckpt");
  EXPECT_EQ(CheckpointFileToRead(""), ".twckpt");
}

TEST(CheckpointFuzz, RandomGarbageAndRandomMultiByteDamageNeverCrash) {
  const std::string dir = MakeTempDir();
  const std::string good = dir + "/good.twckpt", bad = dir + "/bad.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(good, EveryDtypeEntries()));
  const std::string bytes = ReadFile(good);
  std::mt19937 random(1234);
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = bytes;
    const int flips = 2 + random() % 16;
    for (int k = 0; k < flips; ++k)
      damaged[random() % damaged.size()] = static_cast<char>(random());
    if (trial % 3 == 0) damaged.resize(random() % damaged.size());
    WriteRawFile(bad, damaged);
    EXPECT_EQ(ReadEverything(bad).code(), Code::DATA_LOSS) << "trial " << trial;
  }
  for (int trial = 0; trial < 100; ++trial) {
    std::string garbage(8 + random() % 2000, '\0');
    for (char& c : garbage) c = static_cast<char>(random());
    std::memcpy(&garbage[0], "\x89TWCKPT\n", 8);  // past the magic check, into the parser
    WriteRawFile(bad, garbage);
    EXPECT_EQ(ReadEverything(bad).code(), Code::DATA_LOSS) << "trial " << trial;
  }
}

// --- Atomicity ----------------------------------------------------------------------

// A large entry, so the writer issues several write(2) calls.
std::vector<CheckpointEntry> LargeEntries(float fill) {
  Tensor big(DT_FLOAT, TensorShape({1 << 20}));  // 4 MB
  std::fill(big.data<float>(), big.data<float>() + big.NumElements(), fill);
  return {{"big", big}, {"small", Scalar<float>(fill)}};
}

void ExpectHolds(const std::string& path, float fill) {
  std::unique_ptr<CheckpointReader> reader;
  TW_ASSERT_OK(CheckpointReader::Open(path, &reader));
  Tensor small, big;
  TW_ASSERT_OK(reader->Read("small", DT_FLOAT, &small));
  TW_ASSERT_OK(reader->Read("big", DT_FLOAT, &big));
  EXPECT_EQ(small.scalar<float>(), fill);
  EXPECT_EQ(big.data<float>()[big.NumElements() - 1], fill);
}

TEST(CheckpointAtomicity, FailedWriteLeavesThePreviousFileAndNoTemporary) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/model.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, LargeEntries(1)));
  int calls = 0;
  std::string temp_seen;
  SetCheckpointWriteHookForTesting([&](int64_t written, const std::string& temp) {
    ++calls;
    temp_seen = temp;
    return written > 0 ? errors::ResourceExhausted("disk full (simulated)") : Status::OK();
  });
  const Status status = WriteCheckpointFile(path, LargeEntries(2));
  SetCheckpointWriteHookForTesting(nullptr);
  ExpectError(status, Code::RESOURCE_EXHAUSTED, "disk full (simulated)");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(temp_seen.rfind(path + ".tmp-", 0), 0u) << temp_seen;
  ExpectHolds(path, 1);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"model.twckpt"});
}

TEST(CheckpointAtomicity, ProcessKilledMidWriteLeavesThePreviousFileReadable) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/model.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, LargeEntries(1)));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child dies abruptly once part of the new file is on disk, as a
    // crash or SIGKILL would leave it: no cleanup, no rename.
    SetCheckpointWriteHookForTesting([](int64_t written, const std::string&) {
      if (written >= (1 << 20)) _exit(17);
      return Status::OK();
    });
    WriteCheckpointFile(path, LargeEntries(2));
    _exit(0);  // not reached when the hook fires
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  ASSERT_EQ(WEXITSTATUS(wait_status), 17) << "the child finished its save before dying";
  ExpectHolds(path, 1);
  // The half-written temporary is left behind, never under the final name.
  const std::vector<std::string> files = ListDir(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].rfind("model.twckpt.tmp-", 0), 0u) << files[1];
  EXPECT_EQ(ReadEverything(dir + "/" + files[1]).code(), Code::DATA_LOSS);
}

TEST(CheckpointAtomicity, ReadersNeverSeeAPartialFileWhileWritersReplaceIt) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/model.twckpt";
  TW_ASSERT_OK(WriteCheckpointFile(path, LargeEntries(0)));
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 1; w <= 2; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 5; ++i) EXPECT_TRUE(WriteCheckpointFile(path, LargeEntries(w)).ok());
    });
  }
  int reads = 0;
  std::thread reader([&] {
    while (!done.load()) {
      std::unique_ptr<CheckpointReader> reader;
      const Status status = CheckpointReader::Open(path, &reader);
      ASSERT_TRUE(status.ok()) << status;
      Tensor small, big;
      ASSERT_TRUE(reader->Read("small", DT_FLOAT, &small).ok());
      ASSERT_TRUE(reader->Read("big", DT_FLOAT, &big).ok());
      // Each file is one writer's whole save, never a mix.
      EXPECT_EQ(big.data<float>()[0], small.scalar<float>());
      EXPECT_EQ(big.data<float>()[big.NumElements() - 1], small.scalar<float>());
      ++reads;
    }
  });
  for (std::thread& writer : writers) writer.join();
  done = true;
  reader.join();
  EXPECT_GT(reads, 0);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"model.twckpt"});
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
