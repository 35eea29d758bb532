// SessionStream open options beyond the grammar: token healing
// (prompt_tail_tokens: the tokens to drop, the healed handle shared by inline
// and handle opens, the first masks equal to the in-process engine's) and the
// reasoning token budget (max_reasoning_tokens: forced marker, rollback
// restoring the count, refusals), over the small JSON vocabulary.
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "compiler/compile/compile.h"
#include "compiler/compile/token_healing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/mask_encoding.h"
#include "service/session_stream.h"
#include "tests/service/session_harness.h"

namespace maskd {
namespace {

using ::maskd::testing::SessionHarness;
using ::testing::HasSubstr;

const std::vector<std::string> kChoices = {"ab}", "b", "e"};

class SessionOpenOptionsTest : public ::testing::Test {
 protected:
  SessionOpenOptionsTest() : stream_(harness_.env()) {}

  v1::CompileRequest ChoicesRequest(const std::string& reasoning_end_marker = "") const {
    v1::CompileRequest request;
    request.set_tokenizer_id(harness_.tokenizer().id());
    for (const std::string& c : kChoices) request.mutable_spec()->mutable_choices()->add_choices(c);
    request.mutable_options()->set_reasoning_end_marker(reasoning_end_marker);
    return request;
  }

  v1::SequenceResult Step1(const v1::SequenceOp& op) {
    v1::StepRequest request;
    *request.add_ops() = op;
    v1::StepResponse response;
    EXPECT_TRUE(stream_.Step(request, absl::InfiniteFuture(), &response).ok());
    EXPECT_EQ(response.results_size(), 1);
    return response.results(0);
  }

  v1::SequenceOp OpenInline(uint64_t id, const std::vector<std::string>& tail) {
    v1::SequenceOp op;
    op.set_sequence_id(id);
    *op.mutable_open()->mutable_compile() = ChoicesRequest();
    for (const std::string& piece : tail) op.mutable_open()->add_prompt_tail_tokens(Id(piece));
    return op;
  }

  v1::SequenceOp Advance(uint64_t id, const std::vector<std::string>& pieces,
                         uint32_t rollback = 0) {
    v1::SequenceOp op;
    op.set_sequence_id(id);
    op.mutable_advance()->set_rollback_tokens(rollback);
    for (const std::string& piece : pieces) op.mutable_advance()->add_tokens(Id(piece));
    return op;
  }

  TokenId Id(const std::string& piece) const {
    for (TokenId t = 0; t < harness_.tokenizer().vocab_size(); ++t) {
      if (harness_.tokenizer().token_bytes(t) == piece) return t;
    }
    ADD_FAILURE() << "no token '" << piece << "'";
    return 0;
  }

  // The in-process engine's mask over kChoices with `prefix` required, after
  // `text`.
  std::vector<uint32_t> Reference(const std::string& prefix, const std::string& text) const {
    GrammarSpec spec;
    spec.kind = SpecKind::kChoices;
    spec.choices = kChoices;
    CompileOptions options;
    options.required_prefix = prefix;
    auto grammar = CompileGrammar(spec, options, harness_.tokenizer_ptr());
    EXPECT_TRUE(grammar.ok()) << grammar.status();
    auto matcher = Matcher::Create(*grammar);
    EXPECT_TRUE(matcher->AcceptBytes(text));
    std::vector<uint32_t> words((harness_.tokenizer().vocab_size() + 31) / 32);
    matcher->FillMask(words);
    return words;
  }

  std::vector<std::string> Allowed(const v1::Mask& mask) const {
    std::vector<uint32_t> words = DecodeMask(mask);
    std::vector<std::string> out;
    for (TokenId t = 0; t < harness_.tokenizer().vocab_size(); ++t) {
      if ((words[t / 32] >> (t % 32)) & 1) out.emplace_back(harness_.tokenizer().token_bytes(t));
    }
    return out;
  }

  SessionHarness harness_;
  SessionStream stream_;
};

TEST_F(SessionOpenOptionsTest, HealingDropsTheTailAndConstrainsTheFirstTokens) {
  // "a" ends the prompt; "ab" covers it and more, so it is healed.
  v1::SequenceResult opened = Step1(OpenInline(1, {",", "a"}));
  ASSERT_FALSE(opened.has_error()) << opened.error().message();
  ASSERT_TRUE(opened.has_healing());
  EXPECT_EQ(opened.healing().prompt_tokens_to_drop(), 1u);
  EXPECT_EQ(opened.healing().removed_bytes(), "a");
  EXPECT_THAT(opened.healing().healed_handle(), ::testing::MatchesRegex("[0-9a-f]{64}"));
  EXPECT_EQ(DecodeMask(opened.mask()), Reference("a", ""));
  // "a" again, or "ab" covering it and going on into "b" / "ab}".
  EXPECT_THAT(Allowed(opened.mask()), ::testing::UnorderedElementsAre("a", "ab"));
  v1::SequenceResult next = Step1(Advance(1, {"ab"}));
  ASSERT_FALSE(next.has_error()) << next.error().message();
  EXPECT_EQ(DecodeMask(next.mask()), Reference("a", "ab"));
  EXPECT_EQ(next.stop(), v1::STOP_STATUS_MUST_STOP);  // "a" + "b", and "aab}" is out

  // The same grammar by handle, and the same prompt end: the same healed
  // compile (its handle), the same mask.
  bool spec_error = false;
  auto compiled =
      harness_.compiler().CompileGrammar(ChoicesRequest(), absl::InfiniteFuture(), &spec_error);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  v1::SequenceOp by_handle = OpenInline(2, {",", "a"});
  by_handle.mutable_open()->set_handle(compiled->job.handle);
  v1::SequenceResult healed = Step1(by_handle);
  ASSERT_FALSE(healed.has_error()) << healed.error().message();
  EXPECT_EQ(healed.healing().healed_handle(), opened.healing().healed_handle());
  EXPECT_NE(healed.healing().healed_handle(), compiled->job.handle);
  EXPECT_EQ(DecodeMask(healed.mask()), DecodeMask(opened.mask()));
  // And the healed handle opens like any other.
  v1::SequenceOp again;
  again.set_sequence_id(3);
  again.mutable_open()->set_handle(opened.healing().healed_handle());
  v1::SequenceResult reopened = Step1(again);
  ASSERT_FALSE(reopened.has_error()) << reopened.error().message();
  EXPECT_FALSE(reopened.has_healing());
  EXPECT_EQ(DecodeMask(reopened.mask()), DecodeMask(opened.mask()));
  // Healing a healed grammar keeps its prefix after the new one.
  again.set_sequence_id(4);
  again.mutable_open()->add_prompt_tail_tokens(Id("a"));
  v1::SequenceResult twice = Step1(again);
  ASSERT_FALSE(twice.has_error()) << twice.error().message();
  EXPECT_EQ(twice.healing().removed_bytes(), "a");
  EXPECT_EQ(DecodeMask(twice.mask()), Reference("aa", ""));
}

TEST_F(SessionOpenOptionsTest, HealedBytesComeBeforeTheReasoningAndItsBudget) {
  v1::SequenceOp open = OpenInline(1, {",", "a"});
  *open.mutable_open()->mutable_compile() = ChoicesRequest("x");
  open.mutable_open()->set_max_reasoning_tokens(1);
  v1::SequenceResult result = Step1(open);
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_EQ(result.healing().removed_bytes(), "a");
  // "a" itself, or tokens covering it and going on into the reasoning.
  EXPECT_THAT(Allowed(result.mask()), ::testing::UnorderedElementsAre("a", "ab"));
  result = Step1(Advance(1, {"ab"}));  // "a" healed, "b" reasoning: the budget is spent
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_THAT(Allowed(result.mask()), ::testing::ElementsAre("x"));
  result = Step1(Advance(1, {"x"}));
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_THAT(Allowed(result.mask()), ::testing::UnorderedElementsAre("a", "ab", "b", "e"));
}

TEST_F(SessionOpenOptionsTest, NothingToHealLeavesThePlainGrammar) {
  // No token is longer than "}" and starts with it.
  v1::SequenceResult opened = Step1(OpenInline(1, {"a", "}"}));
  ASSERT_FALSE(opened.has_error()) << opened.error().message();
  ASSERT_TRUE(opened.has_healing());
  EXPECT_EQ(opened.healing().prompt_tokens_to_drop(), 0u);
  EXPECT_EQ(opened.healing().removed_bytes(), "");
  EXPECT_EQ(opened.healing().healed_handle(), "");
  EXPECT_EQ(DecodeMask(opened.mask()), Reference("", ""));
  // Without a tail, no healing field.
  EXPECT_FALSE(Step1(OpenInline(2, {})).has_healing());
}

TEST_F(SessionOpenOptionsTest, HealingErrors) {
  v1::SequenceOp too_long = OpenInline(1, {});
  for (int i = 0; i <= CompileHandler::kMaxPromptTailTokens; ++i) {
    too_long.mutable_open()->add_prompt_tail_tokens(Id("a"));
  }
  v1::SequenceResult result = Step1(too_long);
  EXPECT_EQ(result.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(result.error().message(), HasSubstr("open.prompt_tail_tokens has 1025 tokens"));
  // A handle this replica never compiled.
  v1::SequenceOp unknown = OpenInline(2, {"a"});
  unknown.mutable_open()->set_handle(std::string(64, 'f'));
  result = Step1(unknown);
  EXPECT_EQ(result.error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(result.error().message(), HasSubstr("not in this replica's cache"));
  // Ids past the vocabulary are never healed (nor anything before them).
  v1::SequenceOp outside = OpenInline(3, {"a"});
  outside.mutable_open()->add_prompt_tail_tokens(1u << 30);
  result = Step1(outside);
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_EQ(result.healing().prompt_tokens_to_drop(), 0u);
}

TEST_F(SessionOpenOptionsTest, ReasoningBudgetForcesTheMarkerAndRollbackRestoresTheCount) {
  v1::SequenceOp open;
  open.set_sequence_id(1);
  *open.mutable_open()->mutable_compile() = ChoicesRequest("x");
  open.mutable_open()->set_max_reasoning_tokens(2);
  open.mutable_open()->set_max_rollback_tokens(8);
  v1::SequenceResult result = Step1(open);
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_GT(Allowed(result.mask()).size(), 10u);  // free reasoning
  result = Step1(Advance(1, {"a", "b"}));
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_THAT(Allowed(result.mask()), ::testing::ElementsAre("x"));
  EXPECT_EQ(result.jump_forward().bytes(), "x");
  EXPECT_EQ(result.stop(), v1::STOP_STATUS_CONTINUE);
  // Over the budget: refused, the sequence keeps its two tokens.
  result = Step1(Advance(1, {"a"}));
  EXPECT_EQ(result.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  result = Step1(Advance(1, {"x"}));
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_THAT(Allowed(result.mask()), ::testing::UnorderedElementsAre("a", "ab", "b", "e"));
  // Back before the marker and one reasoning token: one more is free.
  result = Step1(Advance(1, {}, 2));
  ASSERT_FALSE(result.has_error()) << result.error().message();
  EXPECT_GT(Allowed(result.mask()).size(), 10u);
  result = Step1(Advance(1, {"e"}));
  EXPECT_THAT(Allowed(result.mask()), ::testing::ElementsAre("x"));
}

TEST_F(SessionOpenOptionsTest, ReasoningBudgetNeedsAMarker) {
  v1::SequenceOp open;
  open.set_sequence_id(1);
  *open.mutable_open()->mutable_compile() = ChoicesRequest();
  open.mutable_open()->set_max_reasoning_tokens(2);
  v1::SequenceResult result = Step1(open);
  EXPECT_EQ(result.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(result.error().message(), HasSubstr("open.max_reasoning_tokens"));
  EXPECT_THAT(result.error().message(), HasSubstr("reasoning_end_marker"));
  EXPECT_EQ(stream_.open_sequences(), 0u);
}

}  // namespace
}  // namespace maskd
