// A grammar whose lexer DFA outgrows its budget after compile: the lazy DFA
// stops growing at CompileOptions::memory_limit_bytes, CompiledGrammar::status()
// says so (ResourceExhausted naming the limit), and masks computed from then
// on only lose tokens -- never gain any -- so nothing is allocated unboundedly
// and nothing invalid is ever allowed.
#include <random>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

// [ab]*a[ab]{14}: the DFA must remember the last 15 bytes, 2^15 states.
constexpr char kBlowUp[] = "[ab]*a[ab]{14}";

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileWithLimit(
    const std::shared_ptr<const Tokenizer>& vocab, uint64_t memory_limit_bytes) {
  GrammarSpec spec;
  spec.kind = SpecKind::kRegex;
  spec.text = kBlowUp;
  CompileOptions options;
  options.memory_limit_bytes = memory_limit_bytes;
  return CompileGrammar(spec, options, vocab);
}

TEST(DfaBudgetTest, GrowthPastTheMemoryLimitIsReportedAndBounded) {
  auto vocab = std::make_shared<const testing::SmallVocabTokenizer>(
      std::vector<std::string>{"a", "b", "ab", "ba", "bb", "aab"}, "dfa-budget");
  auto unlimited = CompileWithLimit(vocab, uint64_t{1} << 30);
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  // Room for the compiled grammar and a few hundred more DFA states.
  const uint64_t limit = (*unlimited)->SizeBytes() + 64 * 1024;
  auto g = CompileWithLimit(vocab, limit);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE((*g)->status().ok());

  const RE2 oracle(kBlowUp);
  std::mt19937 rng(7);
  std::unique_ptr<Matcher> m = Matcher::Create(*g);
  std::vector<uint32_t> mask((vocab->vocab_size() + 31) / 32);
  std::string out;
  bool exhausted = false;
  for (int step = 0; step < 4000 && !exhausted; ++step) {
    m->FillMask(mask);
    exhausted = !(*g)->status().ok();
    // Whatever the DFA's state, an allowed token keeps the output a viable
    // prefix (the language is all of [ab]* once 15 bytes are in).
    std::vector<TokenId> allowed;
    for (TokenId t = 0; t + 1 < vocab->vocab_size(); ++t) {
      if ((mask[t / 32] >> (t % 32)) & 1) allowed.push_back(t);
    }
    if (allowed.empty()) break;
    const TokenId t = allowed[rng() % allowed.size()];
    // An allowed token is taken, unless taking it is what hits the limit
    // (masks walk states clamped to their horizon, not the ones the token
    // leads to).
    if (!m->AcceptToken(t)) {
      ASSERT_FALSE((*g)->status().ok()) << "allowed token " << t << " refused after " << out;
      exhausted = true;
      break;
    }
    out += vocab->token_bytes(t);
    if (m->CanStop()) {
      EXPECT_TRUE(RE2::FullMatch(out, oracle)) << out;
    }
  }
  ASSERT_TRUE(exhausted) << "the DFA never hit its limit in " << out.size() << " bytes";
  EXPECT_EQ((*g)->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT((*g)->status().message(), HasSubstr("regex DFA exceeded its memory limit"));
  // Bounded: the DFA stopped near the limit (mask cache entries come on top).
  EXPECT_LT((*g)->SizeBytes(), limit + 256 * 1024);
}

TEST(DfaBudgetTest, TightLimitFailsTheCompileInsteadOfTheFirstMask) {
  auto vocab = std::make_shared<const testing::SmallVocabTokenizer>(
      std::vector<std::string>{"a", "b"}, "dfa-budget-tight");
  auto g = CompileWithLimit(vocab, 1024);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kResourceExhausted) << g.status();
  EXPECT_THAT(g.status().message(), HasSubstr("memory limit of 1024 bytes"));
}

}  // namespace
}  // namespace maskd
