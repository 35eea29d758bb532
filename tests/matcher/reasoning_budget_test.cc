// Reasoning token budget (compiler/compile/reasoning_budget.h) against a
// brute-force oracle over a small vocabulary: every token sequence up to a
// depth, every next token (EOS included) at every step, for budgets 0..4.
// The oracle reads the budget's definition directly: the output is reasoning
// up to the first "</think>", then a choice; the marker must be complete
// within the first B tokens, or the tokens after the B-th must spell it
// exactly. The walk goes back with Rollback(1), so the restored count is
// checked at every node too.
#include "compiler/compile/reasoning_budget.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::maskd::testing::SmallVocabTokenizer;

constexpr char kMarker[] = "</think>";
const std::vector<std::string> kChoices = {"ok", "no"};

std::vector<std::string> Vocab() {
  return {"</think>", "</", "think", ">", "<", "a", "o", "k", "ok", "no", "a</", ">o", "x"};
}

std::shared_ptr<const CompiledGrammar> ReasoningChoices(std::shared_ptr<const Tokenizer> tok,
                                                        const std::string& required_prefix = "") {
  GrammarSpec spec;
  spec.kind = SpecKind::kChoices;
  spec.choices = kChoices;
  CompileOptions options;
  options.reasoning_end_marker = kMarker;
  options.required_prefix = required_prefix;
  auto grammar = CompileGrammar(spec, options, std::move(tok));
  EXPECT_TRUE(grammar.ok()) << grammar.status();
  return grammar.ok() ? *grammar : nullptr;
}

bool PrefixOfAChoice(const std::string& s, bool whole) {
  for (const std::string& c : kChoices) {
    if (whole ? s == c : c.starts_with(s)) return true;
  }
  return false;
}

// Whether `tokens` (their bytes; `eos` after them when set) starts a valid
// output under budget `b`.
bool OracleAllows(const Tokenizer& tok, const std::vector<TokenId>& tokens, bool eos, uint32_t b) {
  const std::string marker = kMarker;
  std::string out;
  size_t done_at = 0;  // tokens up to and including the one completing the marker
  size_t end = std::string::npos;
  std::string first_b;  // bytes of the first b tokens
  for (size_t i = 0; i < tokens.size(); ++i) {
    out += tok.token_bytes(tokens[i]);
    if (i + 1 == b) first_b = out;
    if (end == std::string::npos) {
      const size_t at = out.find(marker);
      if (at != std::string::npos) {
        end = at + marker.size();
        done_at = i + 1;
      }
    }
  }
  if (tokens.size() <= b) first_b = out;
  if (end == std::string::npos) {
    if (eos) return false;
    if (tokens.size() <= b) return true;
    // Past the budget: the tokens after the b-th spell a proper prefix of
    // the marker (the b first contain none: `out` has none).
    return marker.starts_with(out.substr(first_b.size()));
  }
  if (done_at > b) {
    // Forced: the b first tokens hold no marker, the rest up to done_at
    // spell exactly the marker.
    if (first_b.find(marker) != std::string::npos) return false;
    std::string forced;
    for (size_t i = b; i < done_at; ++i) forced += tok.token_bytes(tokens[i]);
    if (forced != marker) return false;
  }
  return PrefixOfAChoice(out.substr(end), eos);
}

void Walk(Matcher& m, const Tokenizer& tok, std::vector<TokenId>& path, uint32_t b, int depth,
          size_t& checked) {
  std::vector<uint32_t> mask((tok.vocab_size() + 31) / 32);
  m.FillMask(mask);
  const TokenId eos = tok.eos_ids()[0];
  for (TokenId t = 0; t < tok.vocab_size(); ++t) {
    const bool got = (mask[t / 32] >> (t % 32)) & 1;
    bool want;
    if (t == eos) {
      want = OracleAllows(tok, path, true, b);
      ASSERT_EQ(m.CanStop(), want);
    } else {
      path.push_back(t);
      want = OracleAllows(tok, path, false, b);
      path.pop_back();
    }
    ASSERT_EQ(got, want) << "budget " << b << " after " << path.size() << " tokens, token '"
                         << tok.token_bytes(t) << "'";
    ++checked;
  }
  if (depth == 0) return;
  for (TokenId t = 0; t + 1 < tok.vocab_size(); ++t) {
    if (!((mask[t / 32] >> (t % 32)) & 1)) {
      ASSERT_FALSE(m.AcceptToken(t));
      continue;
    }
    ASSERT_TRUE(m.AcceptToken(t));
    path.push_back(t);
    Walk(m, tok, path, b, depth - 1, checked);
    path.pop_back();
    ASSERT_TRUE(m.Rollback(1).ok());
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(ReasoningBudgetTest, MasksEqualTheBruteForceOracle) {
  auto tok = std::make_shared<SmallVocabTokenizer>(Vocab());
  auto grammar = ReasoningChoices(tok);
  ASSERT_NE(grammar, nullptr);
  size_t total = 0;
  for (uint32_t b = 0; b <= 4; ++b) {
    ReasoningBudget budget;
    budget.end_marker = kMarker;
    budget.max_tokens = b;
    MatcherOptions options;
    options.max_rollback = 16;
    auto m = CreateBudgetedMatcher(grammar, budget, options);
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<TokenId> path;
    size_t checked = 0;
    Walk(**m, *tok, path, b, 5, checked);
    if (HasFatalFailure()) return;
    EXPECT_GT(checked, 100u) << "budget " << b;
    total += checked;
  }
  std::printf("oracle checks: %zu\n", total);
  EXPECT_GT(total, 100'000u);
}

TEST(ReasoningBudgetTest, ForcedMarkerComesAsJumpForwardAndCloneKeepsTheCount) {
  auto tok = std::make_shared<SmallVocabTokenizer>(Vocab());
  auto grammar = ReasoningChoices(tok);
  ReasoningBudget budget;
  budget.end_marker = kMarker;
  budget.max_tokens = 2;
  auto m = CreateBudgetedMatcher(grammar, budget);
  ASSERT_TRUE(m.ok());
  Matcher& matcher = **m;
  EXPECT_TRUE(matcher.ComputeJumpForward().bytes.empty());  // free text: nothing forced
  ASSERT_TRUE(matcher.AcceptToken(5));                      // "a"
  auto clone = matcher.Clone();
  ASSERT_TRUE(matcher.AcceptToken(1));  // "</": the budget is spent mid-marker
  // The whole marker is forced, not just its rest ("think>").
  JumpForward jump = matcher.ComputeJumpForward();
  EXPECT_EQ(jump.bytes, kMarker);
  ASSERT_EQ(jump.tokens.size(), 1u);
  EXPECT_EQ(tok->token_bytes(jump.tokens[0]), kMarker);
  EXPECT_FALSE(matcher.AcceptToken(5));  // "a": not the marker
  EXPECT_FALSE(matcher.AcceptToken(2));  // "think": not the marker's start
  ASSERT_TRUE(matcher.AcceptToken(0));   // "</think>"
  EXPECT_TRUE(matcher.AcceptToken(8));   // "ok"
  EXPECT_TRUE(matcher.CanStop());
  // The clone was taken after one token: one more is still free.
  EXPECT_TRUE(clone->AcceptToken(5));
  EXPECT_FALSE(clone->AcceptToken(5));
  clone->Reset();
  EXPECT_TRUE(clone->AcceptToken(5));
  EXPECT_TRUE(clone->AcceptToken(5));
  EXPECT_FALSE(clone->AcceptToken(5));
}

TEST(ReasoningBudgetTest, HealedPrefixComesBeforeTheForcedMarker) {
  auto tok = std::make_shared<SmallVocabTokenizer>(Vocab());
  // The healed prefix holds a whole marker: it is not the reasoning's end.
  auto grammar = ReasoningChoices(tok, "x</think>");
  ReasoningBudget budget;
  budget.end_marker = kMarker;
  budget.max_tokens = 0;
  budget.prefix_bytes = 9;
  auto m = CreateBudgetedMatcher(grammar, budget);
  ASSERT_TRUE(m.ok());
  Matcher& matcher = **m;
  ASSERT_TRUE(matcher.AcceptToken(12));  // "x": the prefix, not forced yet
  EXPECT_TRUE(matcher.ComputeJumpForward().bytes.starts_with(kMarker));
  ASSERT_TRUE(matcher.AcceptToken(0));  // the prefix's marker
  // Now the budget (0) forces the reasoning's own marker.
  EXPECT_EQ(matcher.ComputeJumpForward().bytes, kMarker);
  EXPECT_FALSE(matcher.AcceptToken(5));
  ASSERT_TRUE(matcher.AcceptToken(0));
  EXPECT_TRUE(matcher.AcceptToken(9));  // "no"
  EXPECT_TRUE(matcher.CanStop());
}

TEST(ReasoningBudgetTest, RefusesMarkersThatOverlapThemselvesAndNoMarker) {
  auto tok = std::make_shared<SmallVocabTokenizer>(Vocab());
  auto grammar = ReasoningChoices(tok);
  ReasoningBudget budget;
  budget.end_marker = "abab";
  auto overlapping = CreateBudgetedMatcher(grammar, budget);
  EXPECT_EQ(overlapping.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(overlapping.status().message().find("overlaps itself"), std::string::npos);
  budget.end_marker = "";
  EXPECT_EQ(CreateBudgetedMatcher(grammar, budget).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace maskd
