// SessionStream and GrammarStore against a MemoryBudget, in process over a
// small vocabulary: sequences are charged as they open and grow and give it
// back when they go, a refusal fails only its op (naming the budget), the
// cache gives way to live sequences, a grammar's growth is charged by the
// step that causes it (no sweep here), held oversized grammars count, and
// the cache's bytes are attributed to the tenant whose compile stored them.
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/compile_handler.h"
#include "service/grammar_recipes.h"
#include "service/grammar_store.h"
#include "service/memory_budget.h"
#include "service/session_stream.h"
#include "service/thread_pool.h"
#include "service/tokenizer_registry.h"
#include "tests/service/memory_harness.h"
#include "tests/service/session_harness.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

constexpr char kSchema[] =
    R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}})";

TEST(SessionMemory, SequencesAreChargedUntilTheBudgetAndGiveItBack) {
  MemoryHarness h(size_t{4} << 20);
  const std::string unused = h.Compile(R"({"type":"array","items":{"type":"boolean"}})", "default");
  const std::string handle = h.Compile(kSchema, "default");
  ASSERT_NE(h.store().Find(unused), nullptr);
  int opened = 0;
  std::string refusal;
  {
    SessionStream stream(h.env());
    for (uint64_t first = 0; first < 64 * 1024 && refusal.empty(); first += 1024) {
      v1::StepResponse response;
      ASSERT_TRUE(
          stream.Step(h.Opens(handle, first, 1024), absl::InfiniteFuture(), &response).ok());
      for (const v1::SequenceResult& r : response.results()) {
        if (!r.has_error()) {
          ++opened;
          continue;
        }
        EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
        if (refusal.empty()) refusal = r.error().message();
      }
    }
    EXPECT_GT(opened, 100);
    EXPECT_THAT(refusal, HasSubstr("memory budget exhausted"));
    EXPECT_THAT(refusal, HasSubstr("--memory_budget_bytes"));
    EXPECT_EQ(stream.open_sequences(), static_cast<size_t>(opened));
    EXPECT_GT(h.budget().used(MemoryKind::kSequences), static_cast<size_t>(opened) * 256);
    EXPECT_LE(h.budget().used_total(), h.budget().limit());
    // The cache gave way to the sequences before the first refusal, but
    // kept the grammar they use (evicting it would free nothing, and its
    // handle would stop opening).
    EXPECT_EQ(h.store().Find(unused), nullptr);
    EXPECT_NE(h.store().Find(handle), nullptr);
    EXPECT_GT(h.budget().refusals(MemoryKind::kSequences), 0u);
  }
  EXPECT_EQ(h.budget().used(MemoryKind::kSequences), 0u);
  EXPECT_EQ(h.budget().used(MemoryKind::kSessions), 0u);
}

TEST(SessionMemory, AdvanceThatOutgrowsTheBudgetClosesOnlyItsSequence) {
  MemoryHarness h(size_t{1} << 20);
  v1::CompileRequest any_json;
  SessionStream stream(h.env());
  // Builtin JSON (any value), so `[` nests without end.
  v1::StepRequest open;
  for (uint64_t id : {1, 2}) {
    v1::SequenceOp* op = open.add_ops();
    op->set_sequence_id(id);
    op->mutable_open()->mutable_compile()->set_tokenizer_id("fj");
    op->mutable_open()->mutable_compile()->mutable_spec()->mutable_builtin_json();
  }
  v1::StepResponse opened;
  ASSERT_TRUE(stream.Step(open, absl::InfiniteFuture(), &opened).ok());
  ASSERT_FALSE(opened.results(0).has_error()) << opened.results(0).error().message();
  v1::StepRequest deep;
  v1::SequenceOp* op = deep.add_ops();
  op->set_sequence_id(1);
  for (int i = 0; i < 60000; ++i) op->mutable_advance()->add_tokens(h.Token("["));
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(deep, absl::InfiniteFuture(), &response).ok());
  const v1::SequenceResult& r = response.results(0);
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(r.error().message(), HasSubstr("sequence 1's parser state"));
  EXPECT_THAT(r.error().message(), HasSubstr("closed to give its memory back"));
  EXPECT_GT(r.tokens_accepted(), 0u);
  EXPECT_LT(r.tokens_accepted(), 60000u);
  EXPECT_EQ(stream.open_sequences(), 1u);
  EXPECT_LE(h.budget().used_total(), h.budget().limit());
  // The other sequence goes on.
  v1::StepRequest next;
  v1::SequenceOp* other = next.add_ops();
  other->set_sequence_id(2);
  other->mutable_advance()->add_tokens(h.Token("["));
  v1::StepResponse fine;
  ASSERT_TRUE(stream.Step(next, absl::InfiniteFuture(), &fine).ok());
  EXPECT_FALSE(fine.results(0).has_error()) << fine.results(0).error().message();
  EXPECT_TRUE(fine.results(0).has_mask());
}

// Dictionaries only save bandwidth: past a quarter of the budget a mask is
// sent in full instead of stored, and nothing fails.
TEST(SessionMemory, DictionaryStoresStopAtAQuarterOfTheBudget) {
  MemoryHarness h(size_t{8} << 20);
  h.env().limits.dictionary_min_payload_bytes = 0;  // store even tiny masks
  const std::string handle = h.Compile(kSchema, "default");
  auto first_step = [&](SessionStream& stream) {
    v1::StepRequest request = h.Opens(handle, 1, 1);
    request.mutable_session_options()->set_mask_dictionary_slots(16);
    v1::StepResponse response;
    EXPECT_TRUE(stream.Step(request, absl::InfiniteFuture(), &response).ok());
    return response.results(0);
  };
  {
    SessionStream stream(h.env());
    const v1::SequenceResult stored = first_step(stream);
    ASSERT_FALSE(stored.has_error()) << stored.error().message();
    EXPECT_TRUE(stored.mask().has_dictionary_store());
    EXPECT_GT(h.budget().used(MemoryKind::kDictionaries), 0u);
  }
  EXPECT_EQ(h.budget().used(MemoryKind::kDictionaries), 0u);
  // Other streams' dictionaries hold a quarter of the budget already.
  h.budget().Charge(MemoryKind::kDictionaries, h.budget().limit() / 4);
  SessionStream stream(h.env());
  const v1::SequenceResult full = first_step(stream);
  ASSERT_FALSE(full.has_error()) << full.error().message();
  EXPECT_FALSE(full.mask().has_dictionary_store());
  EXPECT_FALSE(full.mask().has_dictionary_ref());
  EXPECT_GT(full.mask().vocab_size(), 0u);
  EXPECT_EQ(h.budget().used(MemoryKind::kDictionaries), h.budget().limit() / 4);
}

TEST(SessionMemory, GrammarGrowthIsChargedByTheStepThatCausesIt) {
  MemoryHarness h(0);
  const std::string handle = h.Compile(kSchema, "default");
  std::shared_ptr<const CompiledGrammar> grammar = h.store().Find(handle);
  ASSERT_NE(grammar, nullptr);
  const size_t at_insert = h.store().stats().bytes;
  SessionStream stream(h.env());
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(h.Opens(handle, 1, 1), absl::InfiniteFuture(), &response).ok());
  // Walk into the object: each step builds lexer states and cached masks.
  for (const char* text : {"{", "\"a\":", "\"", "ab", "\"", ",", "\"b\":", "12"}) {
    v1::StepRequest step;
    v1::SequenceOp* op = step.add_ops();
    op->set_sequence_id(1);
    op->mutable_advance()->add_tokens(h.Token(text));
    v1::StepResponse r;
    ASSERT_TRUE(stream.Step(step, absl::InfiniteFuture(), &r).ok());
    ASSERT_FALSE(r.results(0).has_error()) << text << ": " << r.results(0).error().message();
  }
  const size_t grown = grammar->SizeBytes();
  ASSERT_GT(grown, at_insert) << "the walk did not grow the grammar";
  // No sweep ran (recharge_interval 0): the steps charged it.
  EXPECT_EQ(h.store().stats().bytes, grown);
  EXPECT_EQ(h.budget().used(MemoryKind::kCache), grown);
}

TEST(SessionMemory, HeldOversizedGrammarsCountAndGiveWayFirst) {
  // 16 shards of 1 KiB: every grammar is oversized, so it is held.
  MemoryHarness h(size_t{64} << 20, 16 << 10);
  const std::string handle = h.Compile(kSchema, "default");
  std::shared_ptr<const CompiledGrammar> held = h.store().Find(handle);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(h.store().stats().bytes, 0u);
  EXPECT_EQ(h.budget().used(MemoryKind::kCache), held->SizeBytes());
  // While a sequence (here: this test) uses it, dropping it frees nothing.
  const size_t room = h.budget().limit() - h.budget().used_total();
  EXPECT_FALSE(h.budget().TryCharge(MemoryKind::kCompiles, room + 1, "a test").ok());
  EXPECT_NE(h.store().Find(handle), nullptr);
  held.reset();
  // The compile thread lets go of its result just after answering.
  for (int i = 0; i < 500 && h.store().Find(handle).use_count() > 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A charge that needs the room drops the held grammar.
  ASSERT_TRUE(h.budget().TryCharge(MemoryKind::kCompiles, room + 1, "a test").ok());
  EXPECT_EQ(h.budget().used(MemoryKind::kCache), 0u);
  EXPECT_EQ(h.store().Find(handle), nullptr);
}

// A compile in flight is charged an estimate (1 MiB + 64 bytes per spec
// byte) before it runs: one that does not fit fails RESOURCE_EXHAUSTED, is
// not cached (the next call compiles), and gives its charge back.
TEST(SessionMemory, CompileThatDoesNotFitTheBudgetFailsAndIsNotCached) {
  MemoryHarness h(size_t{512} << 10);  // under one compile's 1 MiB estimate
  bool spec_error = false;
  absl::StatusOr<CompileOutcome> outcome =
      h.compiler().CompileGrammar(h.Schema(kSchema), absl::InfiniteFuture(), &spec_error);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outcome.status().message(), HasSubstr("this compile"));
  EXPECT_THAT(outcome.status().message(), HasSubstr("--memory_budget_bytes"));
  EXPECT_EQ(h.budget().refusals(MemoryKind::kCompiles), 1u);
  EXPECT_EQ(h.budget().used(MemoryKind::kCompiles), 0u);
  // Not cached: the next call compiles again (and is refused again).
  outcome = h.compiler().CompileGrammar(h.Schema(kSchema), absl::InfiniteFuture(), &spec_error);
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(h.budget().refusals(MemoryKind::kCompiles), 2u);
  // With room, the same compile works and its charge is given back.
  MemoryHarness roomy(size_t{64} << 20);
  EXPECT_FALSE(roomy.Compile(kSchema, "default").empty());
  EXPECT_EQ(roomy.budget().used(MemoryKind::kCompiles), 0u);
}

// The specs kept for token healing by handle (up to 64 MiB) are charged to
// the budget; a full budget evicts older recipes instead of refusing
// sequences, and what is evicted is given back.
// A compile refused because the whole queue is full takes no place, and
// leaves no entry for its tenant behind (each refused tenant name used to
// stay in the queue's table with a count of zero).
TEST(SessionMemory, CompilesRefusedByTheWholeQueueLeaveNoTenantBehind) {
  ServiceMetrics metrics(BuildInfo{"test", "test"});
  GrammarStoreOptions options;
  options.max_queued_compiles = 0;
  options.recharge_interval = absl::ZeroDuration();
  GrammarStore store(options, &metrics);
  auto tokenizer = std::make_shared<testing::SmallVocabTokenizer>(testing::JsonVocab(), "fj");
  for (int i = 0; i < 3; ++i) {
    CompileJob job;
    job.spec.kind = SpecKind::kJsonSchema;
    job.spec.text = kSchema;
    job.handle = absl::StrCat("handle", i);
    std::promise<absl::Status> done;
    std::shared_ptr<CompileWait> wait = store.CompileAsync(
        job, tokenizer, absl::StrCat("tenant", i), absl::InfiniteFuture(),
        [&done](absl::StatusOr<CompiledHandle> result, bool) { done.set_value(result.status()); });
    const absl::Status status = done.get_future().get();
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_THAT(status.message(), HasSubstr("--max_queued_compiles"));
  }
  EXPECT_EQ(store.queued_compiles(), 0u);
  EXPECT_EQ(store.tenants_with_queued_compiles(), 0u);
}

TEST(SessionMemory, RecipesKeptForHealingAreCharged) {
  MemoryHarness h(0);
  const std::string a = h.Compile(kSchema, "default");
  EXPECT_GT(h.budget().used(MemoryKind::kRecipes), strlen(kSchema));
  EXPECT_EQ(h.budget().used(MemoryKind::kRecipes), h.compiler().recipes().bytes());
  h.Compile(R"({"type":"array","items":{"type":"boolean"}})", "default");
  EXPECT_EQ(h.compiler().recipes().size(), 2u);
  EXPECT_EQ(h.budget().used(MemoryKind::kRecipes), h.compiler().recipes().bytes());

  // A budget with room for two recipes: each new one evicts the oldest,
  // and what is evicted (or dropped with the recipes) is given back.
  auto job = [](int i) {
    CompileJob j;
    j.handle = absl::StrCat("handle-", i);
    j.spec.text = std::string(1000, 'x');
    return j;
  };
  MemoryBudget budget(0);
  size_t one = 0;
  {
    GrammarRecipes probe;
    probe.SetBudget(&budget);
    probe.Record(job(0));
    one = budget.used(MemoryKind::kRecipes);
  }
  EXPECT_EQ(budget.used(MemoryKind::kRecipes), 0u);
  MemoryBudget tight(2 * one + one / 2);
  {
    GrammarRecipes recipes;
    recipes.SetBudget(&tight);
    for (int i = 0; i < 5; ++i) recipes.Record(job(i));
    EXPECT_EQ(recipes.size(), 2u);
    EXPECT_NE(recipes.Find("handle-4"), nullptr);
    EXPECT_NE(recipes.Find("handle-3"), nullptr);
    EXPECT_EQ(recipes.Find("handle-0"), nullptr);
    EXPECT_EQ(tight.used(MemoryKind::kRecipes), 2 * one);
    // Once sequences hold more, a new recipe evicts both older ones to fit.
    tight.Charge(MemoryKind::kSequences, one);
    recipes.Record(job(5));
    EXPECT_EQ(recipes.size(), 1u);
    EXPECT_NE(recipes.Find("handle-5"), nullptr);
    EXPECT_LE(tight.used_total(), tight.limit());
    tight.Release(MemoryKind::kSequences, one);
  }
  EXPECT_EQ(tight.used(MemoryKind::kRecipes), 0u);
}

// A schema per `i`, all about the same size.
std::string NthSchema(int i) {
  return absl::StrCat(R"({"type":"string","maxLength":)", 100 + i, "}");
}

// --max_cache_bytes_per_tenant: a tenant compiling one new grammar after
// another evicts only its own least recently used grammars; another
// tenant's working set stays cached.
TEST(SessionMemory, ATenantsFloodEvictsOnlyItsOwnGrammars) {
  size_t one = 0;
  {
    MemoryHarness probe(0);
    one = probe.store().Find(probe.Compile(NthSchema(0), "x"))->SizeBytes();
  }
  MemoryHarness h(0, size_t{1} << 30, /*per_tenant_bytes=*/4 * one + one / 2);
  std::vector<std::string> victim;
  for (int i = 0; i < 3; ++i) victim.push_back(h.Compile(NthSchema(i), "victim"));
  std::vector<std::string> flood;
  for (int i = 100; i < 130; ++i) flood.push_back(h.Compile(NthSchema(i), "flooder"));
  for (const std::string& handle : victim) EXPECT_NE(h.store().Find(handle), nullptr);
  absl::flat_hash_map<std::string, size_t> by_tenant = h.store().CachedBytesByTenant();
  EXPECT_LE(by_tenant["flooder"], 4 * one + one / 2 + one / 4);
  EXPECT_GE(by_tenant["flooder"], 3 * one);
  // Its newest grammars are the ones it keeps.
  EXPECT_NE(h.store().Find(flood.back()), nullptr);
  EXPECT_EQ(h.store().Find(flood.front()), nullptr);
  absl::flat_hash_map<std::string, uint64_t> evictions = h.store().TenantQuotaEvictions();
  EXPECT_GE(evictions["flooder"], 25u);
  EXPECT_FALSE(evictions.contains("victim"));
}

// Without a per-tenant bound, a full cache shard evicts the grammars of a
// tenant over its fair share (half the cache with two tenants) before the
// least recently used grammar of another.
TEST(SessionMemory, AFullCacheEvictsTheTenantOverItsShareFirst) {
  size_t one = 0;
  {
    MemoryHarness probe(0);
    one = probe.store().Find(probe.Compile(NthSchema(0), "x"))->SizeBytes();
  }
  // One shard (an exact LRU order) with room for about ten grammars.
  MemoryHarness h(0, 10 * one + one / 2, /*per_tenant_bytes=*/0, /*shards=*/1);
  std::vector<std::string> victim;
  for (int i = 0; i < 3; ++i) victim.push_back(h.Compile(NthSchema(i), "victim"));
  for (int i = 100; i < 130; ++i) h.Compile(NthSchema(i), "flooder");
  for (const std::string& handle : victim) EXPECT_NE(h.store().Find(handle), nullptr);
  EXPECT_GT(h.store().stats().evictions, 15u);
}

TEST(SessionMemory, CacheBytesAreChargedToTheTenantThatCompiledLast) {
  MemoryHarness h(0);
  const std::string a = h.Compile(kSchema, "tenant-a");
  const std::string b = h.Compile(R"({"type":"array","items":{"type":"boolean"}})", "tenant-b");
  absl::flat_hash_map<std::string, size_t> by_tenant = h.store().CachedBytesByTenant();
  ASSERT_EQ(by_tenant.size(), 2u);
  EXPECT_EQ(by_tenant["tenant-a"], h.store().Find(a)->SizeBytes());
  EXPECT_EQ(by_tenant["tenant-b"], h.store().Find(b)->SizeBytes());
  EXPECT_EQ(by_tenant["tenant-a"] + by_tenant["tenant-b"], h.store().stats().bytes);
  // A hit moves the charge: a grammar two tenants share counts against the
  // one that asked for it last (so one tenant's flood cannot evict, by its
  // own bound, a grammar the other just compiled).
  h.Compile(kSchema, "tenant-b");
  by_tenant = h.store().CachedBytesByTenant();
  ASSERT_EQ(by_tenant.size(), 1u);
  EXPECT_EQ(by_tenant["tenant-b"], h.store().stats().bytes);
}

}  // namespace
}  // namespace maskd
