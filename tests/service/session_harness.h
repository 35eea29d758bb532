// Everything a SessionStream needs, in-process, over a small fake vocabulary
// (tests/support/small_vocab_tokenizer.h): the registry holding that tokenizer, the
// grammar store, the step pool and the metrics registry.
#ifndef MASKD_TESTS_SERVICE_SESSION_HARNESS_H_
#define MASKD_TESTS_SERVICE_SESSION_HARNESS_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "service/compile_handler.h"
#include "service/grammar_store.h"
#include "service/service_metrics.h"
#include "service/session_stream.h"
#include "service/thread_pool.h"
#include "service/tokenizer_registry.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd::testing {

// JSON pieces, enough to write small documents token by token.
inline std::vector<std::string> JsonVocab() {
  return {"{",  "}",    "\"",   "\":", ",", " ",      "a", "b", "ab", "\"a",    "1",
          "12", "true", "null", "[",   "]", "\"b\":", "e", "x", "\\", "\"a\":", "2"};
}

class SessionHarness {
 public:
  explicit SessionHarness(size_t threads = 3, SessionLimits limits = {})
      : tokenizer_(std::make_shared<SmallVocabTokenizer>(JsonVocab(), "fake-json")),
        metrics_(BuildInfo{"test", "test"}),
        tokenizers_(
            {},
            [this](std::string_view, std::string_view,
                   const TokenizerOptions&) -> absl::StatusOr<std::shared_ptr<const Tokenizer>> {
              return std::shared_ptr<const Tokenizer>(tokenizer_);
            }),
        store_(GrammarStoreOptions{}, &metrics_),
        pool_(threads),
        compiler_(&tokenizers_, &store_, &metrics_, CompileLimits{}) {
    (void)tokenizers_.Register("fake", "", "fake-json", {});
    env_.compiler = &compiler_;
    env_.store = &store_;
    env_.pool = &pool_;
    env_.metrics = &metrics_;
    env_.limits = limits;
  }

  const SessionEnv& env() const { return env_; }
  const SmallVocabTokenizer& tokenizer() const { return *tokenizer_; }
  std::shared_ptr<const Tokenizer> tokenizer_ptr() const { return tokenizer_; }
  GrammarStore& store() { return store_; }
  const CompileHandler& compiler() const { return compiler_; }

  v1::CompileRequest SchemaRequest(const std::string& schema) const {
    v1::CompileRequest request;
    request.set_tokenizer_id(tokenizer_->id());
    request.mutable_spec()->set_json_schema(schema);
    return request;
  }

  // What the in-process engine allows after `text` under `schema`: the mask a
  // session must return there (bitmask words).
  std::vector<uint32_t> ReferenceMask(const std::string& schema, const std::string& text) const {
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema;
    auto grammar = CompileGrammar(spec, CompileOptions(), tokenizer_);
    EXPECT_TRUE(grammar.ok()) << grammar.status();
    if (!grammar.ok()) return {};
    auto matcher = Matcher::Create(*grammar);
    EXPECT_TRUE(matcher->AcceptBytes(text));
    std::vector<uint32_t> words((tokenizer_->vocab_size() + 31) / 32);
    matcher->FillMask(words);
    return words;
  }

  // The metrics registry in the Prometheus text format.
  std::string MetricsText() const {
    return prometheus::TextSerializer().Serialize(metrics_.registry()->Collect());
  }

 private:
  std::shared_ptr<SmallVocabTokenizer> tokenizer_;
  ServiceMetrics metrics_;
  TokenizerRegistry tokenizers_;
  GrammarStore store_;
  ThreadPool pool_;
  CompileHandler compiler_;
  SessionEnv env_;
};

}  // namespace maskd::testing

#endif  // MASKD_TESTS_SERVICE_SESSION_HARNESS_H_
