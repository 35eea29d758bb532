// HugePageAllocator and PaddedJson: the memory the loader takes for large
// tables and for the document itself.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "compiler/tokenizer/huge_pages.h"
#include "compiler/tokenizer/padded_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd::tokenizer_internal {
namespace {

using ::testing::HasSubstr;

TEST(HugePageAllocatorTest, LargeAndSmallBlocksHoldTheirContents) {
  // 3 MiB (mapped on its own) and 4 KiB (operator new).
  for (const size_t count : {size_t{3} << 18, size_t{1} << 10}) {
    std::vector<uint32_t, HugePageAllocator<uint32_t>> values(count);
    std::iota(values.begin(), values.end(), 0u);
    values.push_back(7);  // Grows: a new block, the old one freed.
    EXPECT_EQ(values[count - 1], count - 1);
    EXPECT_EQ(values.back(), 7u);
  }
}

TEST(HugePageAllocatorTest, LargeBlocksAreHugePageAligned) {
  HugePageAllocator<char> allocator;
  const size_t bytes = kHugePageThreshold + 1;
  char* block = allocator.allocate(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % (2 << 20), 0u);
  EXPECT_EQ(block[bytes - 1], 0);  // Fresh mappings are zeroed.
  block[bytes - 1] = 1;
  allocator.deallocate(block, bytes);
}

TEST(HugePageAllocatorTest, BacksAHashMap) {
  absl::flat_hash_map<uint64_t, uint32_t, absl::Hash<uint64_t>, std::equal_to<uint64_t>,
                      HugePageAllocator<std::pair<const uint64_t, uint32_t>>>
      map;
  map.reserve(200000);  // About 4 MiB of slots.
  for (uint64_t i = 0; i < 200000; ++i) map[i * 7919] = static_cast<uint32_t>(i);
  EXPECT_EQ(map.size(), 200000u);
  EXPECT_EQ(map.at(7919 * 123456), 123456u);
  EXPECT_FALSE(map.contains(1));
}

TEST(PaddedJsonTest, CopyIsFollowedByZeroPadding) {
  for (const size_t size : {size_t{0}, size_t{10}, size_t{3} << 20}) {
    const std::string text(size, 'x');
    const PaddedJson json = PaddedJson::Copy(text);
    EXPECT_EQ(json.text(), text);
    ASSERT_GE(json.capacity(), size + 64);
    for (size_t i = size; i < size + 64; ++i) EXPECT_EQ(json.text().data()[i], 0) << i;
  }
}

TEST(PaddedJsonTest, MovesKeepTheBuffer) {
  PaddedJson json = PaddedJson::Copy("{\"a\": 1}");
  const char* data = json.text().data();
  PaddedJson moved = std::move(json);
  EXPECT_EQ(moved.text(), "{\"a\": 1}");
  EXPECT_EQ(moved.text().data(), data);
  moved = PaddedJson::Copy(std::string(2 << 20, 'y'));
  EXPECT_EQ(moved.text().size(), size_t{2} << 20);
}

TEST(PaddedJsonTest, ReadsWholeFiles) {
  const std::string path =
      ::testing::TempDir() + "/padded_json_test_" + std::to_string(getpid()) + ".json";
  std::string contents(3 << 20, 'z');
  contents.front() = '[';
  contents.back() = ']';
  std::ofstream(path, std::ios::binary) << contents;
  absl::StatusOr<PaddedJson> json = PaddedJson::ReadFile(path);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->text(), contents);
  EXPECT_EQ(json->text().data()[contents.size()], 0);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "";
  json = PaddedJson::ReadFile(path);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->text(), "");
  std::remove(path.c_str());
}

TEST(PaddedJsonTest, MissingFileIsNotFoundAndADirectoryCannotBeRead) {
  absl::StatusOr<PaddedJson> missing = PaddedJson::ReadFile("/nonexistent/maskd/tokenizer.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("/nonexistent/maskd/tokenizer.json: missing file"));
  absl::StatusOr<PaddedJson> directory = PaddedJson::ReadFile(::testing::TempDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(directory.status().message()), HasSubstr("error reading"));
}

}  // namespace
}  // namespace maskd::tokenizer_internal
