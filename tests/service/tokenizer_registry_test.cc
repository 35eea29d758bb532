#include "service/tokenizer_registry.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/stub_tokenizer.h"

namespace maskd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TokenizerRegistry MakeRegistry(TokenizerRegistryLimits limits = {}) {
  return TokenizerRegistry(limits, &testing::LoadStubTokenizer);
}

TEST(TokenizerRegistryTest, RegistersAndFindsByIdAndName) {
  TokenizerRegistry registry = MakeRegistry();
  absl::StatusOr<RegisterOutcome> outcome = registry.Register("vocab=10", "", "small", {});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->already_registered);
  EXPECT_EQ(outcome->entry.tokenizer->vocab_size(), 10u);
  EXPECT_EQ(outcome->entry.special_token_count, 1u);
  EXPECT_FALSE(outcome->entry.preloaded);

  const std::string id = outcome->entry.tokenizer->id();
  absl::StatusOr<RegisteredTokenizer> by_id = registry.FindById(id);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->tokenizer.get(), outcome->entry.tokenizer.get());
  absl::StatusOr<RegisteredTokenizer> by_name = registry.FindByName("small");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->tokenizer->id(), id);
  EXPECT_EQ(registry.size(), 1u);
}

TEST(TokenizerRegistryTest, UnknownIdAndNameAreNotFound) {
  TokenizerRegistry registry = MakeRegistry();
  EXPECT_TRUE(absl::IsNotFound(registry.FindById("nope").status()));
  absl::Status status = registry.FindByName("llama9").status();
  EXPECT_TRUE(absl::IsNotFound(status));
  EXPECT_THAT(status.message(), HasSubstr("llama9"));
}

TEST(TokenizerRegistryTest, SameContentIsIdempotentAndCanGainAName) {
  TokenizerRegistry registry = MakeRegistry();
  ASSERT_TRUE(registry.Register("vocab=8", "", "", {}).ok());
  absl::StatusOr<RegisterOutcome> again = registry.Register("vocab=8", "", "alias", {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_registered);
  EXPECT_EQ(registry.size(), 1u);
  EXPECT_TRUE(registry.FindByName("alias").ok());
}

TEST(TokenizerRegistryTest, NameBoundToOtherContentIsAlreadyExists) {
  TokenizerRegistry registry = MakeRegistry();
  ASSERT_TRUE(registry.Register("vocab=8", "", "model", {}).ok());
  absl::Status status = registry.Register("vocab=9", "", "model", {}).status();
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  EXPECT_EQ(registry.size(), 1u);
}

TEST(TokenizerRegistryTest, SameContentWithOtherEosIsAlreadyExists) {
  TokenizerRegistry registry = MakeRegistry();
  ASSERT_TRUE(registry.Register("vocab=8", "", "", {3}).ok());
  absl::Status status = registry.Register("vocab=8", "", "", {5}).status();
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("[3]"));
}

TEST(TokenizerRegistryTest, LoaderErrorsBecomeInvalidArgumentWithTheirMessage) {
  TokenizerRegistry registry = MakeRegistry();
  absl::Status status = registry.Register("bad json", "", "x", {}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("model.vocab"));
  EXPECT_TRUE(absl::IsInvalidArgument(registry.Register("", "", "x", {}).status()));
  EXPECT_EQ(registry.size(), 0u);
}

TEST(TokenizerRegistryTest, InvalidNamesAreRejected) {
  TokenizerRegistry registry = MakeRegistry();
  for (const std::string& name :
       std::vector<std::string>{"-lead", "has space", "a/b", std::string(129, 'a')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(registry.Register("vocab=8", "", name, {}).status()))
        << name;
  }
  EXPECT_TRUE(TokenizerRegistry::IsValidName("qwen3-8b_v1.5"));
}

TEST(TokenizerRegistryTest, SizeAndCountLimitsAreResourceExhausted) {
  TokenizerRegistry registry = MakeRegistry({.max_tokenizer_json_bytes = 8, .max_tokenizers = 2});
  absl::Status too_big = registry.Register("vocab=1000", "", "", {}).status();
  EXPECT_TRUE(absl::IsResourceExhausted(too_big)) << too_big;
  EXPECT_TRUE(
      absl::IsResourceExhausted(registry.Register("vocab=8", "123456789", "", {}).status()));

  ASSERT_TRUE(registry.Register("vocab=5", "", "", {}).ok());
  ASSERT_TRUE(registry.Register("vocab=6", "", "", {}).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(registry.Register("vocab=7", "", "", {}).status()));
  // Re-registering known content still works when full.
  EXPECT_TRUE(registry.Register("vocab=6", "", "", {}).ok());
}

TEST(TokenizerRegistryTest, ListIsSortedByNameThenId) {
  TokenizerRegistry registry = MakeRegistry();
  ASSERT_TRUE(registry.Register("vocab=5", "", "zeta", {}).ok());
  ASSERT_TRUE(registry.Register("vocab=6", "", "alpha", {}).ok());
  ASSERT_TRUE(registry.Register("vocab=7", "", "mid", {}).ok());
  std::vector<std::string> names;
  for (const RegisteredTokenizer& entry : registry.List()) names.push_back(entry.tokenizer->name());
  EXPECT_THAT(names, ElementsAre("alpha", "mid", "zeta"));
}

TEST(TokenizerRegistryTest, PreloadReadsDirectoryAndMarksPreloaded) {
  const std::string dir = ::testing::TempDir() + "/maskd_registry_preload";
  ASSERT_EQ(std::system(
                ("mkdir -p " + dir + " && printf 'vocab=12' > " + dir + "/tokenizer.json").c_str()),
            0);
  TokenizerRegistry registry = MakeRegistry();
  absl::StatusOr<RegisterOutcome> outcome = registry.Preload("tiny", dir);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->entry.preloaded);
  EXPECT_EQ(outcome->entry.tokenizer->vocab_size(), 12u);
  EXPECT_TRUE(absl::IsNotFound(registry.Preload("none", dir + "/missing").status()));
}

TEST(TokenizerRegistryTest, ConcurrentRegistrationsOfOneContentYieldOneEntry) {
  TokenizerRegistry registry = MakeRegistry();
  std::atomic<int> fresh{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<RegisterOutcome> outcome = registry.Register("vocab=64", "", "shared", {});
      if (outcome.ok() && !outcome->already_registered) ++fresh;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(fresh.load(), 1);
  EXPECT_EQ(registry.size(), 1u);
}

}  // namespace
}  // namespace maskd
