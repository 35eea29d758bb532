// MemoryBudget: charges within the limit pass, one past it is refused with
// RESOURCE_EXHAUSTED naming what asked and the flag, the cache gives way
// first, and the default comes from the cgroup limit.
#include "service/memory_budget.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

TEST(MemoryBudget, ChargesPassWithinTheLimitAndAreRefusedPastIt) {
  MemoryBudget budget(1000);
  ASSERT_TRUE(budget.TryCharge(MemoryKind::kSequences, 600, "sequence 1's parser state").ok());
  ASSERT_TRUE(budget.TryCharge(MemoryKind::kDictionaries, 400, "a store").ok());
  EXPECT_EQ(budget.used_total(), 1000u);
  const absl::Status refused = budget.TryCharge(MemoryKind::kSequences, 1, "sequence 2's parser");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("sequence 2's parser"));
  EXPECT_THAT(refused.message(), HasSubstr("--memory_budget_bytes"));
  EXPECT_THAT(refused.message(), HasSubstr("sequences 600"));
  EXPECT_EQ(budget.used(MemoryKind::kSequences), 600u);  // nothing kept of a refusal
  EXPECT_EQ(budget.refusals(MemoryKind::kSequences), 1u);
  budget.Release(MemoryKind::kSequences, 600);
  EXPECT_TRUE(budget.TryCharge(MemoryKind::kCompiles, 600, "a compile").ok());
  // Charge (memory already taken) is never refused, and counts.
  budget.Charge(MemoryKind::kSessions, 50);
  EXPECT_EQ(budget.used_total(), 1050u);
  EXPECT_FALSE(budget.TryCharge(MemoryKind::kSessions, 1, "x").ok());
}

TEST(MemoryBudget, ZeroLimitCountsButNeverRefuses) {
  MemoryBudget budget(0);
  EXPECT_TRUE(budget.TryCharge(MemoryKind::kSequences, size_t{1} << 50, "huge").ok());
  EXPECT_EQ(budget.used(MemoryKind::kSequences), size_t{1} << 50);
}

TEST(MemoryBudget, TheCacheGivesWayBeforeAChargeIsRefused) {
  MemoryBudget budget(1000);
  size_t cache = 700;
  size_t asked = 0;
  budget.SetCache([&] { return cache; },
                  [&](size_t bytes) {
                    asked = bytes;
                    const size_t freed = std::min(cache, bytes + 50);  // frees a bit more
                    cache -= freed;
                    return freed;
                  });
  ASSERT_TRUE(budget.TryCharge(MemoryKind::kSequences, 200, "a").ok());
  EXPECT_EQ(asked, 0u);  // fitted without evicting
  ASSERT_TRUE(budget.TryCharge(MemoryKind::kSequences, 300, "b").ok());
  EXPECT_EQ(asked, 200u);  // 700 + 500 - 1000
  EXPECT_EQ(cache, 450u);
  EXPECT_EQ(budget.used(MemoryKind::kCache), 450u);
  // More than the cache can give: refused after it gave everything.
  const absl::Status refused = budget.TryCharge(MemoryKind::kSequences, 1000, "c");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(cache, 0u);
  // The cache grew past what is left: FitCache trims it back.
  cache = 900;
  budget.FitCache();
  EXPECT_EQ(cache, 450u);  // 500 charged + 450 <= 1000 (it freed 50 more than asked)
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("maskd_cgroup_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(root_ / "memory");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }
  std::filesystem::path root_;
};

TEST_F(CgroupTest, ReadsV2ThenV1) {
  EXPECT_EQ(CgroupMemoryLimitBytes(root_.string()), 0u);  // nothing there
  Write("memory/memory.limit_in_bytes", "2147483648\n");
  EXPECT_EQ(CgroupMemoryLimitBytes(root_.string()), size_t{2} << 30);
  Write("memory.max", "4294967296\n");  // v2 wins
  EXPECT_EQ(CgroupMemoryLimitBytes(root_.string()), size_t{4} << 30);
  Write("memory.max", "max\n");  // v2 without a limit: v1 is still read
  EXPECT_EQ(CgroupMemoryLimitBytes(root_.string()), size_t{2} << 30);
  // v1's "no limit" is a huge page-rounded number.
  Write("memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(CgroupMemoryLimitBytes(root_.string()), 0u);
}

TEST_F(CgroupTest, DefaultIsThreeFifthsOfTheLimit) {
  Write("memory.max", "1073741824\n");
  EXPECT_EQ(DefaultMemoryBudgetBytes(root_.string()), size_t{1073741824} / 5 * 3);
  // No limit: three fifths of physical memory.
  Write("memory.max", "max\n");
  const size_t physical =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_EQ(DefaultMemoryBudgetBytes(root_.string()), physical / 5 * 3);
}

}  // namespace
}  // namespace maskd
