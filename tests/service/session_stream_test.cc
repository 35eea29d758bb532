// SessionStream without gRPC: op semantics (open/advance/close, rollback,
// drafts, omit_mask), every per-sequence error with its code, the limits, and
// masks equal to a lone Matcher's.
#include "service/session_stream.h"

#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/mask_encoding.h"
#include "tests/service/session_harness.h"

namespace maskd {
namespace {

using ::maskd::testing::SessionHarness;
using ::testing::HasSubstr;

constexpr char kSchema[] = R"({"type": "object", "properties": {"a": {"type": "string"},
    "b": {"type": "array", "items": {"type": "integer"}}}, "required": ["a"],
    "additionalProperties": false})";

class SessionStreamTest : public ::testing::Test {
 protected:
  SessionStreamTest() : stream_(harness_.env()) {}

  v1::StepResponse Step(const v1::StepRequest& request) {
    v1::StepResponse response;
    EXPECT_TRUE(stream_.Step(request, absl::InfiniteFuture(), &response).ok());
    EXPECT_EQ(response.results_size(), request.ops_size());
    return response;
  }

  v1::SequenceOp* Open(v1::StepRequest& request, uint64_t id, uint32_t max_rollback = 4) {
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    *op->mutable_open()->mutable_compile() = harness_.SchemaRequest(kSchema);
    op->mutable_open()->set_max_rollback_tokens(max_rollback);
    return op;
  }

  v1::AdvanceSequence* Advance(v1::StepRequest& request, uint64_t id, const std::string& text) {
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    for (TokenId t : harness_.tokenizer().Encode(text)) op->mutable_advance()->add_tokens(t);
    return op->mutable_advance();
  }

  std::vector<uint32_t> Reference(const std::string& text) {
    return harness_.ReferenceMask(kSchema, text);
  }

  TokenId Id(const std::string& piece) { return harness_.tokenizer().Encode(piece).at(0); }

  SessionHarness harness_;
  SessionStream stream_;
};

TEST_F(SessionStreamTest, OpenAdvanceCloseGiveTheMatchersMasks) {
  v1::StepRequest open;
  open.set_request_id(5);
  Open(open, 1);
  v1::StepResponse response = Step(open);
  EXPECT_EQ(response.request_id(), 5u);
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference(""));
  EXPECT_EQ(stream_.open_sequences(), 1u);

  v1::StepRequest advance;
  Advance(advance, 1, R"({"a":"ab")");
  response = Step(advance);
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(response.results(0).tokens_accepted(),
            harness_.tokenizer().Encode(R"({"a":"ab")").size());
  EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference(R"({"a":"ab")"));
  EXPECT_EQ(response.results(0).stop(), v1::STOP_STATUS_CONTINUE);

  v1::StepRequest finish;
  Advance(finish, 1, "}");
  response = Step(finish);
  // Complete; trailing whitespace (bounded by default) may still follow.
  EXPECT_EQ(response.results(0).stop(), v1::STOP_STATUS_MAY_STOP);
  const uint32_t eos = harness_.tokenizer().eos_ids()[0];
  EXPECT_EQ(DecodeMask(response.results(0).mask())[eos / 32] >> (eos % 32) & 1, 1u);

  v1::StepRequest close;
  close.add_ops()->set_sequence_id(1);
  close.mutable_ops(0)->mutable_close();
  response = Step(close);
  EXPECT_FALSE(response.results(0).has_error());
  EXPECT_EQ(stream_.open_sequences(), 0u);
  response = Step(close);
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SessionStreamTest, RollbackDraftsAndOmitMask) {
  v1::StepRequest open;
  Open(open, 1, /*max_rollback=*/2);
  Step(open);

  v1::StepRequest step;
  v1::AdvanceSequence* advance = Advance(step, 1, "{");
  for (TokenId t : harness_.tokenizer().Encode(R"("a":1)")) advance->add_draft_tokens(t);
  advance->set_omit_mask(true);
  v1::StepResponse response = Step(step);
  ASSERT_FALSE(response.results(0).has_error());
  EXPECT_EQ(response.results(0).tokens_accepted(), 1u);
  // '"a":' fits; then 1 is not a string.
  EXPECT_EQ(response.results(0).drafts_accepted(), 1u);
  EXPECT_FALSE(response.results(0).has_mask());

  v1::StepRequest undo;
  Advance(undo, 1, "")->set_rollback_tokens(1);
  response = Step(undo);
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference("{"));

  // Only one more can be undone: three is refused and changes nothing.
  v1::StepRequest too_far;
  Advance(too_far, 1, "")->set_rollback_tokens(3);
  response = Step(too_far);
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(0).error().message(), HasSubstr("rollback_tokens 3"));
  v1::StepRequest look;
  Advance(look, 1, "");
  EXPECT_EQ(DecodeMask(Step(look).results(0).mask()), Reference("{"));
}

// The server keeps exactly open.max_rollback_tokens snapshots, counted over
// tokens accepted in separate requests: rolling back that many restores the
// mask seen then, one more is refused and changes nothing. A sequence that
// kept one snapshot too few (or too many) fails here.
TEST_F(SessionStreamTest, RollbackAtExactlyMaxAndOnePast) {
  const std::string text = R"({"a":"abba","b":[1,12,2,1]})";  // In the harness vocabulary.
  const std::vector<TokenId> tokens = harness_.tokenizer().Encode(text);
  for (uint32_t max_rollback : {1u, 3u}) {
    ASSERT_GT(tokens.size(), max_rollback + 2);
    const uint64_t id = 10 + max_rollback;
    v1::StepRequest open;
    Open(open, id, max_rollback);
    ASSERT_FALSE(Step(open).results(0).has_error());
    // One token per request: snapshots must be kept across requests.
    const size_t n = max_rollback + 2;
    for (size_t i = 0; i < n; ++i) {
      v1::StepRequest step;
      v1::SequenceOp* op = step.add_ops();
      op->set_sequence_id(id);
      op->mutable_advance()->add_tokens(tokens[i]);
      ASSERT_EQ(Step(step).results(0).tokens_accepted(), 1u);
    }
    auto prefix = [&](size_t k) {
      return harness_.tokenizer().Decode(std::span<const TokenId>(tokens.data(), k));
    };
    v1::StepRequest too_far;
    Advance(too_far, id, "")->set_rollback_tokens(max_rollback + 1);
    v1::StepResponse response = Step(too_far);
    EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::INVALID_ARGUMENT)
        << "max_rollback " << max_rollback;
    v1::StepRequest look;
    Advance(look, id, "");
    EXPECT_EQ(DecodeMask(Step(look).results(0).mask()), Reference(prefix(n)));

    v1::StepRequest exactly;
    Advance(exactly, id, "")->set_rollback_tokens(max_rollback);
    response = Step(exactly);
    ASSERT_FALSE(response.results(0).has_error())
        << "max_rollback " << max_rollback << ": " << response.results(0).error().message();
    EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference(prefix(n - max_rollback)));
    v1::StepRequest exhausted;
    Advance(exhausted, id, "")->set_rollback_tokens(1);
    EXPECT_EQ(Step(exhausted).results(0).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(SessionStreamTest, PerSequenceErrorsCarryTheirCodeAndPlace) {
  v1::StepRequest open;
  Open(open, 1);
  Open(open, 2);
  Open(open, 1);  // duplicate in one request
  v1::SequenceOp* unknown_handle = open.add_ops();
  unknown_handle->set_sequence_id(3);
  unknown_handle->mutable_open()->set_handle("nope");
  v1::SequenceOp* bad_schema = Open(open, 4);
  bad_schema->mutable_open()->mutable_compile()->mutable_spec()->set_json_schema("{");
  v1::SequenceOp* bad_encoding = Open(open, 5);
  bad_encoding->mutable_open()->set_mask_encoding(static_cast<v1::MaskEncoding>(9));
  Open(open, 6, /*max_rollback=*/100000);
  v1::SequenceOp* empty = open.add_ops();
  empty->set_sequence_id(7);
  v1::StepResponse response = Step(open);
  EXPECT_FALSE(response.results(0).has_error());
  EXPECT_FALSE(response.results(1).has_error());
  EXPECT_EQ(response.results(2).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(2).error().message(), HasSubstr("more than once"));
  EXPECT_EQ(response.results(3).error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(response.results(4).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(4).error().message(), HasSubstr("open.compile: "));
  EXPECT_EQ(response.results(5).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(5).error().message(), HasSubstr("mask_encoding"));
  EXPECT_EQ(response.results(6).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(6).error().message(), HasSubstr("--max_rollback_tokens"));
  EXPECT_EQ(response.results(7).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(stream_.open_sequences(), 2u);

  v1::StepRequest again;
  Open(again, 2);
  v1::StepResponse reopened = Step(again);
  EXPECT_EQ(reopened.results(0).error().code(), grpc::StatusCode::ALREADY_EXISTS);

  v1::StepRequest advance;
  v1::AdvanceSequence* wrong = Advance(advance, 1, "{");
  wrong->add_tokens(Id("12"));  // a number where a key must come
  wrong->add_tokens(Id("}"));
  Advance(advance, 2, "")->add_tokens(10000);
  response = Step(advance);
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(0).error().message(),
              HasSubstr(absl::StrCat("tokens[1] = ", Id("12"), " (\"12\") is not allowed")));
  EXPECT_EQ(response.results(0).tokens_accepted(), 1u);
  EXPECT_EQ(response.results(1).error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(response.results(1).error().message(), HasSubstr("outside the vocabulary"));

  const std::string metrics = harness_.MetricsText();
  EXPECT_THAT(metrics, HasSubstr("maskd_errors_total{code=\"INVALID_ARGUMENT\"} 7"));
  EXPECT_THAT(metrics, HasSubstr("maskd_errors_total{code=\"NOT_FOUND\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("maskd_errors_total{code=\"ALREADY_EXISTS\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("maskd_tokens_total{result=\"rejected\"} 2"));
  EXPECT_THAT(metrics, HasSubstr("maskd_active_sessions 2"));
}

TEST(SessionStreamLimitsTest, SequencesPerStreamAndOpsPerRequest) {
  SessionLimits limits;
  limits.max_sequences_per_stream = 2;
  limits.max_ops_per_request = 3;
  SessionHarness harness(2, limits);
  SessionStream stream(harness.env());
  v1::StepRequest open;
  for (uint64_t id = 0; id < 3; ++id) {
    v1::SequenceOp* op = open.add_ops();
    op->set_sequence_id(id);
    *op->mutable_open()->mutable_compile() = harness.SchemaRequest(kSchema);
  }
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, absl::InfiniteFuture(), &response).ok());
  EXPECT_FALSE(response.results(0).has_error());
  EXPECT_FALSE(response.results(1).has_error());
  EXPECT_EQ(response.results(2).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(response.results(2).error().message(), HasSubstr("--max_sequences_per_stream"));

  *open.add_ops() = open.ops(0);
  response.Clear();
  ASSERT_TRUE(stream.Step(open, absl::InfiniteFuture(), &response).ok());
  ASSERT_EQ(response.results_size(), 4);
  for (const v1::SequenceResult& result : response.results()) {
    EXPECT_EQ(result.error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(result.error().message(), HasSubstr("--max_ops_per_request"));
  }
}

// An advance carrying more tokens than --max_tokens_per_op fails alone,
// leaving its sequence unchanged (one 8 MB request of 1M `[` tokens per
// sequence grew the server by 1.9 GiB).
TEST(SessionStreamLimitsTest, TokensPerOp) {
  SessionLimits limits;
  limits.max_tokens_per_op = 4;
  SessionHarness harness(2, limits);
  SessionStream stream(harness.env());
  v1::StepRequest open;
  v1::SequenceOp* op = open.add_ops();
  op->set_sequence_id(1);
  op->mutable_open()->mutable_compile()->set_tokenizer_id(harness.tokenizer().id());
  op->mutable_open()->mutable_compile()->mutable_spec()->mutable_builtin_json();
  v1::StepResponse response;
  ASSERT_TRUE(stream.Step(open, absl::InfiniteFuture(), &response).ok());
  ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  const TokenId bracket = harness.tokenizer().Encode("[").at(0);

  v1::StepRequest deep;
  op = deep.add_ops();
  op->set_sequence_id(1);
  for (int i = 0; i < 5; ++i) op->mutable_advance()->add_tokens(bracket);
  response.Clear();
  ASSERT_TRUE(stream.Step(deep, absl::InfiniteFuture(), &response).ok());
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(response.results(0).error().message(), HasSubstr("--max_tokens_per_op"));
  EXPECT_EQ(response.results(0).tokens_accepted(), 0u);

  // Four are within the limit, and the sequence had taken none before.
  op->mutable_advance()->mutable_tokens()->RemoveLast();
  response.Clear();
  ASSERT_TRUE(stream.Step(deep, absl::InfiniteFuture(), &response).ok());
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_EQ(response.results(0).tokens_accepted(), 4u);
}

}  // namespace
}  // namespace maskd

namespace maskd {
namespace {

// The Compile RPC's handler: a compile over its time limit is a spec error
// (DEADLINE_EXCEEDED in the response) and goes on to fill the cache; the
// RPC's own deadline fails the call instead.
TEST(CompileHandlerTest, TimeLimitAndDeadline) {
  SessionHarness harness;
  // Big enough (tens of ms) that it cannot finish within the 1 µs limit,
  // even if this thread is descheduled for a while after handing it over.
  v1::CompileRequest request = harness.SchemaRequest("");
  for (int i = 0; i < 20000; ++i) {
    request.mutable_spec()->mutable_choices()->add_choices(absl::StrCat("ab", i, "x", i * 7));
  }
  request.mutable_options()->mutable_compile_time_limit()->set_nanos(1000);
  v1::CompileResponse response;
  grpc::Status status = harness.compiler().Compile(request, absl::InfiniteFuture(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(response.has_error()) << response.grammar().stats().compile_time().DebugString();
  EXPECT_EQ(response.error().code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(response.error().message(), HasSubstr("time limit"));

  // The compile went on: once done, the same request is a cache hit.
  request.mutable_options()->clear_compile_time_limit();
  for (int i = 0; i < 3000 && harness.store().stats().computes == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  response.Clear();
  status = harness.compiler().Compile(request, absl::InfiniteFuture(), &response);
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(response.has_grammar()) << response.error().message();
  EXPECT_TRUE(response.grammar().stats().cache_hit());
  EXPECT_EQ(harness.store().stats().computes, 1u);

  v1::CompileRequest other = harness.SchemaRequest(R"({"type": "array"})");
  status = harness.compiler().Compile(other, absl::Now() - absl::Seconds(1), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("deadline"));
}

}  // namespace
}  // namespace maskd
