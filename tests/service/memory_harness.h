// A server's parts (tokenizer registry over a small fake vocabulary, grammar
// store, step pool, compile handler) with a MemoryBudget, for the tests of
// what sessions and the cache charge to it.
#ifndef MASKD_TESTS_SERVICE_MEMORY_HARNESS_H_
#define MASKD_TESTS_SERVICE_MEMORY_HARNESS_H_

#include <future>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "service/compile_handler.h"
#include "service/grammar_store.h"
#include "service/memory_budget.h"
#include "service/session_stream.h"
#include "service/thread_pool.h"
#include "service/tokenizer_registry.h"
#include "tests/service/session_harness.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {

// A server's parts with a budget; the cache's sweep is off so only charges
// made where growth happens are seen.
class MemoryHarness {
 public:
  MemoryHarness(size_t budget_bytes, size_t cache_bytes = size_t{1} << 30,
                size_t per_tenant_bytes = 0, size_t shards = 16)
      : tokenizer_(std::make_shared<testing::SmallVocabTokenizer>(testing::JsonVocab(), "fj")),
        metrics_(BuildInfo{"test", "test"}),
        budget_(budget_bytes),
        tokenizers_(
            {},
            [this](std::string_view, std::string_view,
                   const TokenizerOptions&) -> absl::StatusOr<std::shared_ptr<const Tokenizer>> {
              return std::shared_ptr<const Tokenizer>(tokenizer_);
            }),
        store_(StoreOptions(cache_bytes, &budget_, per_tenant_bytes, shards), &metrics_),
        pool_(2),
        compiler_(&tokenizers_, &store_, &metrics_, CompileLimits{}) {
    (void)tokenizers_.Register("fake", "", "fj", {});
    compiler_.recipes().SetBudget(&budget_);
    env_.compiler = &compiler_;
    env_.store = &store_;
    env_.pool = &pool_;
    env_.metrics = &metrics_;
    env_.budget = &budget_;
  }

  static GrammarStoreOptions StoreOptions(size_t cache_bytes, MemoryBudget* budget,
                                          size_t per_tenant_bytes, size_t shards) {
    GrammarStoreOptions options;
    options.max_bytes = cache_bytes;
    options.max_bytes_per_tenant = per_tenant_bytes;
    options.num_shards = shards;
    options.recharge_interval = absl::ZeroDuration();
    options.budget = budget;
    return options;
  }

  v1::CompileRequest Schema(const std::string& schema) const {
    v1::CompileRequest request;
    request.set_tokenizer_id(tokenizer_->id());
    request.mutable_spec()->set_json_schema(schema);
    return request;
  }

  // The handle of `schema`, compiled for `tenant`.
  std::string Compile(const std::string& schema, const std::string& tenant) {
    std::promise<absl::StatusOr<CompileOutcome>> done;
    compiler_.CompileGrammarAsync(
        Schema(schema), tenant, absl::InfiniteFuture(),
        [&done](absl::StatusOr<CompileOutcome> outcome, bool) { done.set_value(outcome); });
    absl::StatusOr<CompileOutcome> outcome = done.get_future().get();
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? outcome->job.handle : "";
  }

  v1::StepRequest Opens(const std::string& handle, uint64_t first, int count) const {
    v1::StepRequest request;
    for (int i = 0; i < count; ++i) {
      v1::SequenceOp* op = request.add_ops();
      op->set_sequence_id(first + static_cast<uint64_t>(i));
      op->mutable_open()->set_handle(handle);
    }
    return request;
  }

  TokenId Token(const std::string& text) const {
    for (TokenId t = 0; t < tokenizer_->vocab_size(); ++t) {
      if (tokenizer_->token_bytes(t) == text) return t;
    }
    ADD_FAILURE() << "no token " << text;
    return 0;
  }

  SessionEnv& env() { return env_; }
  const CompileHandler& compiler() const { return compiler_; }
  MemoryBudget& budget() { return budget_; }
  GrammarStore& store() { return store_; }

 private:
  std::shared_ptr<testing::SmallVocabTokenizer> tokenizer_;
  ServiceMetrics metrics_;
  MemoryBudget budget_;
  TokenizerRegistry tokenizers_;
  GrammarStore store_;
  ThreadPool pool_;
  CompileHandler compiler_;
  SessionEnv env_;
};

}  // namespace maskd

#endif  // MASKD_TESTS_SERVICE_MEMORY_HARNESS_H_
