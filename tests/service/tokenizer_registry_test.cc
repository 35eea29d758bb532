#include "service/tokenizer_registry.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compile/token_healing.h"
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

// Token healing's sorted vocabulary is built when the tokenizer is loaded
// (about 120 ms for Llama 3), not by the first open that heals, on a request
// thread.
TEST(TokenizerRegistryTest, RegisteringPreparesTokenHealing) {
  TokenizerRegistry registry = MakeRegistry();
  absl::StatusOr<RegisterOutcome> outcome = registry.Register("vocab=12", "", "heal", {});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(TokenHealingPrepared(outcome->entry.tokenizer));
  std::shared_ptr<const Tokenizer> other = *testing::LoadStubTokenizer("vocab=13", "", {});
  EXPECT_FALSE(TokenHealingPrepared(other));
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
  // Re-registering known content works when full.
  EXPECT_TRUE(registry.Register("vocab=6", "", "", {}).ok());
  // New content makes room by evicting the least recently used unused one
  // (TokenizerRegistryTenantTest has the in-use case: RESOURCE_EXHAUSTED).
  absl::StatusOr<RegisterOutcome> third = registry.Register("vocab=7", "", "", {});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->evicted_ids.size(), 1u);
  EXPECT_EQ(registry.size(), 2u);
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
  // Per process: ctest runs each test of this file as its own process, in
  // parallel, and one rewriting the file while another reads it fails both.
  const std::string dir =
      ::testing::TempDir() + "/maskd_registry_preload_" + std::to_string(getpid());
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

// Tenants (issue 13 §2): private names, preloaded names untouchable, quotas,
// unregistering, and eviction of the least recently used unused tokenizer.

// A preloaded tokenizer "qwen3" (vocab=12) in a registry with `limits`.
std::unique_ptr<TokenizerRegistry> RegistryWithPreloadedQwen3(
    TokenizerRegistryLimits limits = {}, TokenizerIndexer indexer = EngineTokenizerIndexer()) {
  const std::string dir =  // per process, as above
      ::testing::TempDir() + "/maskd_registry_tenants_" + std::to_string(getpid());
  EXPECT_EQ(std::system(
                ("mkdir -p " + dir + " && printf 'vocab=12' > " + dir + "/tokenizer.json").c_str()),
            0);
  auto registry =
      std::make_unique<TokenizerRegistry>(limits, &testing::LoadStubTokenizer, std::move(indexer));
  EXPECT_TRUE(registry->Preload("qwen3", dir).ok());
  return registry;
}

TEST(TokenizerRegistryTenantTest, PreloadedNamesCannotBeRebound) {
  std::unique_ptr<TokenizerRegistry> owned = RegistryWithPreloadedQwen3();
  TokenizerRegistry& registry = *owned;
  const std::string preloaded_id = registry.FindByName("qwen3", "a")->tokenizer->id();
  // The attack of issue 13: other content under the preloaded name.
  absl::Status status = registry.Register("vocab=13", "", "qwen3", {}, "a").status();
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("preloaded"));
  for (const char* tenant : {"a", "b"}) {
    EXPECT_EQ(registry.FindByName("qwen3", tenant)->tokenizer->id(), preloaded_id);
  }
  // The same content under its own name is fine (idempotent).
  absl::StatusOr<RegisterOutcome> same = registry.Register("vocab=12", "", "qwen3", {}, "a");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->already_registered);
}

TEST(TokenizerRegistryTenantTest, NamesArePrivateToTheirTenant) {
  std::unique_ptr<TokenizerRegistry> owned = RegistryWithPreloadedQwen3();
  TokenizerRegistry& registry = *owned;
  absl::StatusOr<RegisterOutcome> a = registry.Register("vocab=13", "", "mine", {}, "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(registry.FindByName("mine", "a")->tokenizer->id(), a->entry.tokenizer->id());
  EXPECT_TRUE(absl::IsNotFound(registry.FindByName("mine", "b").status()));
  // b's "mine" is b's own; a's is untouched.
  absl::StatusOr<RegisterOutcome> b = registry.Register("vocab=14", "", "mine", {}, "b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(registry.FindByName("mine", "b")->tokenizer->id(), b->entry.tokenizer->id());
  EXPECT_EQ(registry.FindByName("mine", "a")->tokenizer->id(), a->entry.tokenizer->id());
  // Lists: the preloaded tokenizer and the tenant's own.
  std::vector<size_t> a_vocabs, c_vocabs;
  for (const RegisteredTokenizer& entry : registry.List("a")) {
    a_vocabs.push_back(entry.tokenizer->vocab_size());
  }
  for (const RegisteredTokenizer& entry : registry.List("c")) {
    c_vocabs.push_back(entry.tokenizer->vocab_size());
  }
  EXPECT_THAT(a_vocabs, ::testing::UnorderedElementsAre(12u, 13u));
  EXPECT_THAT(c_vocabs, ElementsAre(12u));
  // A tenant cannot rebind its own name to other content either.
  EXPECT_TRUE(absl::IsAlreadyExists(registry.Register("vocab=15", "", "mine", {}, "a").status()));
}

TEST(TokenizerRegistryTenantTest, PerTenantQuotaIsResourceExhausted) {
  std::unique_ptr<TokenizerRegistry> owned =
      RegistryWithPreloadedQwen3({.max_tokenizers = 32, .max_tokenizers_per_tenant = 2});
  TokenizerRegistry& registry = *owned;
  ASSERT_TRUE(registry.Register("vocab=20", "", "", {}, "a").ok());
  ASSERT_TRUE(registry.Register("vocab=21", "", "", {}, "a").ok());
  absl::Status over = registry.Register("vocab=22", "", "", {}, "a").status();
  EXPECT_TRUE(absl::IsResourceExhausted(over)) << over;
  EXPECT_THAT(over.message(), HasSubstr("--max_tokenizers_per_tenant"));
  // Content someone else holds counts too; preloaded content and content
  // the tenant already holds do not.
  ASSERT_TRUE(registry.Register("vocab=22", "", "", {}, "b").ok());
  EXPECT_TRUE(absl::IsResourceExhausted(registry.Register("vocab=22", "", "", {}, "a").status()));
  EXPECT_TRUE(registry.Register("vocab=12", "", "", {}, "a").ok());
  EXPECT_TRUE(registry.Register("vocab=21", "", "", {}, "a").ok());
}

TEST(TokenizerRegistryTenantTest, UnregisterDropsTheTenantsHold) {
  std::unique_ptr<TokenizerRegistry> owned = RegistryWithPreloadedQwen3();
  TokenizerRegistry& registry = *owned;
  absl::StatusOr<RegisterOutcome> a = registry.Register("vocab=30", "", "shared", {}, "a");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(registry.Register("vocab=30", "", "", {}, "b").ok());
  const std::string id = a->entry.tokenizer->id();
  EXPECT_TRUE(absl::IsNotFound(registry.Unregister(id, "c").status()));
  absl::StatusOr<bool> first = registry.Unregister(id, "a");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(*first);  // b still holds it
  EXPECT_TRUE(registry.FindById(id).ok());
  EXPECT_TRUE(absl::IsNotFound(registry.FindByName("shared", "a").status()));
  EXPECT_TRUE(absl::IsNotFound(registry.Unregister(id, "a").status()));
  EXPECT_TRUE(*registry.Unregister(id, "b"));
  EXPECT_TRUE(absl::IsNotFound(registry.FindById(id).status()));

  const std::string preloaded = registry.FindByName("qwen3")->tokenizer->id();
  EXPECT_TRUE(absl::IsFailedPrecondition(registry.Unregister(preloaded, "a").status()));
}

TEST(TokenizerRegistryTenantTest, FullRegistryEvictsTheLeastRecentlyUsedUnusedTokenizer) {
  // The fake indexer's handles stand for the engine's index: a copy held
  // here is a grammar using the tokenizer.
  auto handles = std::make_shared<std::map<std::string, std::shared_ptr<const void>>>();
  auto released = std::make_shared<std::vector<std::string>>();
  TokenizerIndexer indexer;
  indexer.prepare = [handles](std::shared_ptr<const Tokenizer> tokenizer)
      -> absl::StatusOr<std::shared_ptr<const void>> {
    auto handle = std::make_shared<int>(0);
    (*handles)[tokenizer->id()] = handle;
    return std::shared_ptr<const void>(handle);
  };
  indexer.release = [released](const std::string& id) { released->push_back(id); };
  indexer.idle_use_count = 2;  // the registry's handle and the copy in `handles`
  std::unique_ptr<TokenizerRegistry> owned =
      RegistryWithPreloadedQwen3({.max_tokenizers = 3, .max_tokenizers_per_tenant = 8}, indexer);
  TokenizerRegistry& registry = *owned;

  const std::string in_use = registry.Register("vocab=40", "", "", {}, "a")->entry.tokenizer->id();
  const std::string older = registry.Register("vocab=41", "", "", {}, "a")->entry.tokenizer->id();
  std::shared_ptr<const void> grammar = handles->at(in_use);  // in use from now on
  ASSERT_TRUE(registry.FindById(older).ok());                 // used after in_use

  // Full (qwen3 + 2): the in-use one stays although it was used longest ago.
  absl::StatusOr<RegisterOutcome> third = registry.Register("vocab=42", "", "", {}, "b");
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_THAT(third->evicted_ids, ElementsAre(older));
  EXPECT_THAT(*released, ElementsAre(older));
  EXPECT_TRUE(absl::IsNotFound(registry.FindById(older).status()));
  EXPECT_TRUE(registry.FindById(in_use).ok());
  EXPECT_EQ(registry.size(), 3u);

  // With every registered tokenizer in use, nothing can be evicted.
  std::shared_ptr<const void> grammar2 = handles->at(third->entry.tokenizer->id());
  absl::Status full = registry.Register("vocab=43", "", "", {}, "b").status();
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_THAT(full.message(), HasSubstr("in use"));
  // Once the grammar goes, the tokenizer may be evicted.
  grammar.reset();
  EXPECT_TRUE(registry.Register("vocab=43", "", "", {}, "b").ok());
  EXPECT_TRUE(absl::IsNotFound(registry.FindById(in_use).status()));
}

}  // namespace
}  // namespace maskd
