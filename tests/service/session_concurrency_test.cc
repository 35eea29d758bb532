// Several Session streams at once on one server's shared parts (grammar
// store, step pool, metrics), as the gRPC reactors drive them: each thread
// owns a stream, all open sequences by inline compile of the same schema
// (single flight: one compile) and advance many sequences per request, and
// every mask must equal a lone Matcher's. Odd streams keep a mask
// dictionary (its slots are assigned after the parallel part of each step).
// Labelled `concurrency` (TSan).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/mask_encoding.h"
#include "service/session_stream.h"
#include "tests/service/session_harness.h"

namespace maskd {
namespace {

using ::maskd::testing::SessionHarness;
using ::testing::HasSubstr;

constexpr char kSchema[] = R"({"type": "object", "properties": {"a": {"type": "string"},
    "b": {"type": "array", "items": {"type": "integer"}}}, "additionalProperties": false})";
constexpr char kDoc[] = R"({"a": "xab\\e", "b": [1, 12, 2]})";

TEST(SessionConcurrencyTest, ParallelStreamsGiveALoneMatchersMasks) {
  SessionLimits limits;
  limits.dictionary_min_payload_bytes = 0;  // the fake vocabulary's masks are one word
  SessionHarness harness(/*threads=*/3, limits);
  const std::vector<TokenId> tokens = harness.tokenizer().Encode(kDoc);
  ASSERT_EQ(harness.tokenizer().Decode(tokens), kDoc);

  // The reference: one matcher, alone, token by token.
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = kSchema;
  auto grammar = CompileGrammar(spec, CompileOptions(), harness.tokenizer_ptr());
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  auto reference = Matcher::Create(*grammar);
  const size_t words = (harness.tokenizer().vocab_size() + 31) / 32;
  std::vector<std::vector<uint32_t>> expected;
  for (size_t i = 0; i <= tokens.size(); ++i) {
    expected.emplace_back(words);
    reference->FillMask(expected.back());
    if (i < tokens.size()) {
      ASSERT_TRUE(reference->AcceptToken(tokens[i]));
    }
  }

  constexpr int kStreams = 4;
  constexpr int kSequences = 6;
  const v1::MaskEncoding encodings[] = {v1::MASK_ENCODING_AUTO, v1::MASK_ENCODING_BITMASK,
                                        v1::MASK_ENCODING_ALLOW_LIST, v1::MASK_ENCODING_DENY_LIST};
  std::vector<std::vector<std::string>> failures(kStreams);
  std::vector<int> refs(kStreams, 0);
  std::vector<std::thread> threads;
  for (int s = 0; s < kStreams; ++s) {
    threads.emplace_back([&, s] {
      SessionStream stream(harness.env());
      const bool dictionary = s % 2 == 1;
      std::vector<std::optional<std::vector<uint32_t>>> slots(4);
      auto check = [&](const v1::StepResponse& response, size_t position) {
        for (const v1::SequenceResult& result : response.results()) {
          if (result.has_error()) {
            failures[s].push_back(result.error().message());
            continue;
          }
          std::vector<uint32_t> mask;
          const v1::Mask& wire = result.mask();
          if (wire.encoding_case() == v1::Mask::kDictionaryRef) {
            if (!dictionary || wire.dictionary_ref() >= slots.size() ||
                !slots[wire.dictionary_ref()].has_value()) {
              failures[s].push_back("bad dictionary_ref at token " + std::to_string(position));
              continue;
            }
            mask = *slots[wire.dictionary_ref()];
            ++refs[s];
          } else {
            mask = DecodeMask(wire);
            if (wire.has_dictionary_store() && wire.dictionary_store() < slots.size()) {
              slots[wire.dictionary_store()] = mask;
            }
          }
          if (mask != expected[position]) {
            failures[s].push_back("mask differs at token " + std::to_string(position));
          }
        }
      };
      v1::StepRequest open;
      if (dictionary) open.mutable_session_options()->set_mask_dictionary_slots(4);
      for (int q = 0; q < kSequences; ++q) {
        v1::SequenceOp* op = open.add_ops();
        op->set_sequence_id(q);
        *op->mutable_open()->mutable_compile() = harness.SchemaRequest(kSchema);
        op->mutable_open()->set_mask_encoding(encodings[(s + q) % 4]);
      }
      v1::StepResponse response;
      ASSERT_TRUE(stream.Step(open, absl::InfiniteFuture(), &response).ok());
      check(response, 0);
      for (size_t i = 0; i < tokens.size(); ++i) {
        v1::StepRequest step;
        for (int q = 0; q < kSequences; ++q) {
          v1::SequenceOp* op = step.add_ops();
          op->set_sequence_id(q);
          op->mutable_advance()->add_tokens(tokens[i]);
        }
        response.Clear();
        ASSERT_TRUE(stream.Step(step, absl::InfiniteFuture(), &response).ok());
        check(response, i + 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int s = 0; s < kStreams; ++s) {
    EXPECT_THAT(failures[s], ::testing::IsEmpty()) << "stream " << s;
    // Sequences 1..5 repeat sequence 0's mask in every response.
    if (s % 2 == 1) {
      EXPECT_GE(refs[s], 5 * static_cast<int>(tokens.size())) << "stream " << s;
    }
  }

  // One compile for all 24 opens; the streams' ends closed every sequence.
  const std::string metrics = harness.MetricsText();
  EXPECT_THAT(metrics, HasSubstr("maskd_compile_duration_seconds_count{kind=\"json_schema\","
                                 "outcome=\"ok\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("maskd_active_sessions 0\n"));
  EXPECT_THAT(metrics, HasSubstr("maskd_cache_requests_total{result=\"miss\"} 1\n"));
  EXPECT_EQ(harness.store().stats().computes, 1u);
}

// BeginShutdown (SIGTERM) while compiles are queued and running on other
// threads: each waiting caller is answered exactly once, UNAVAILABLE naming
// the shutdown, without waiting for its compile; a later call is answered
// UNAVAILABLE at once and starts nothing.
TEST(SessionConcurrencyTest, ShutdownAnswersCompileWaitersUnavailable) {
  SessionHarness harness(/*threads=*/2);
  constexpr int kCalls = 4;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<absl::Status> answers;
  for (int c = 0; c < kCalls; ++c) {
    // Distinct slow specs (100,000-value enums): none finishes before the
    // shutdown, some are queued behind the others.
    std::string schema = R"({"enum":[)";
    for (int i = 0; i < 100000; ++i) absl::StrAppend(&schema, i, ",");
    absl::StrAppend(&schema, c, "]}");
    harness.compiler().CompileGrammarAsync(harness.SchemaRequest(schema), "default",
                                           absl::InfiniteFuture(),
                                           [&](absl::StatusOr<CompileOutcome> outcome, bool) {
                                             std::lock_guard<std::mutex> lock(mu);
                                             answers.push_back(outcome.status());
                                             cv.notify_all();
                                           });
  }
  harness.store().BeginShutdown();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5),
                            [&] { return answers.size() == static_cast<size_t>(kCalls); }));
    for (const absl::Status& status : answers) {
      EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
      EXPECT_THAT(status.message(), HasSubstr("shutting down"));
    }
  }
  bool spec_error = true;
  absl::StatusOr<CompileOutcome> late = harness.compiler().CompileGrammar(
      harness.SchemaRequest(kSchema), absl::InfiniteFuture(), &spec_error);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable) << late.status();
  EXPECT_FALSE(spec_error);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(answers.size(), static_cast<size_t>(kCalls));
}

}  // namespace
}  // namespace maskd
