// MatcherOptions::max_parser_depth: the output may hold at most that many
// lexemes (one Earley set each, so it bounds a sequence's memory); the token
// that would pass it is refused with HitDepthLimit() and changes nothing,
// while tokens the grammar refuses never report the limit. MemoryBytes()
// grows with the output and is what the service charges to its budget.
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

class ParserDepthLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> vocab;
    for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
    vocab.push_back("[[[[");
    tokenizer_ = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes4");
    GrammarSpec spec;
    spec.kind = SpecKind::kBuiltinJson;
    auto g = CompileGrammar(spec, CompileOptions(), tokenizer_);
    ASSERT_TRUE(g.ok()) << g.status();
    grammar_ = *g;
  }

  std::vector<uint32_t> Mask(Matcher& m) {
    std::vector<uint32_t> words((tokenizer_->vocab_size() + 31) / 32);
    m.FillMask(words);
    return words;
  }

  static constexpr TokenId kFourBrackets = 256;
  std::shared_ptr<testing::SmallVocabTokenizer> tokenizer_;
  std::shared_ptr<const CompiledGrammar> grammar_;
};

TEST_F(ParserDepthLimitTest, TokenPastTheLimitIsRefusedAndChangesNothing) {
  MatcherOptions options;
  options.max_parser_depth = 10;
  auto m = Matcher::Create(grammar_, options);
  size_t accepted = 0;
  while (m->AcceptToken('[')) ++accepted;
  ASSERT_TRUE(m->HitDepthLimit());
  EXPECT_EQ(m->ParserDepth(), 10u);
  // The last `[` read is still the lexer's (a lexeme reaches the parser when
  // the next byte ends it): 11 tokens, 10 lexemes parsed.
  EXPECT_EQ(accepted, 11u);
  const std::vector<uint32_t> before = Mask(*m);
  // A multi-lexeme token that would cross the limit is refused whole.
  EXPECT_FALSE(m->AcceptToken(kFourBrackets));
  EXPECT_TRUE(m->HitDepthLimit());
  EXPECT_EQ(m->ParserDepth(), 10u);
  EXPECT_EQ(Mask(*m), before);
  // A token the grammar refuses is not a limit refusal.
  EXPECT_FALSE(m->AcceptToken('}'));
  EXPECT_FALSE(m->HitDepthLimit());
  // Without the limit the same output goes deeper.
  auto unlimited = Matcher::Create(grammar_);
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(unlimited->AcceptToken('['));
  EXPECT_FALSE(unlimited->HitDepthLimit());
  EXPECT_EQ(unlimited->ParserDepth(), 11u);
}

TEST_F(ParserDepthLimitTest, MultiLexemeTokenFitsExactlyAtTheLimit) {
  MatcherOptions options;
  options.max_parser_depth = 8;
  auto m = Matcher::Create(grammar_, options);
  EXPECT_TRUE(m->AcceptToken(kFourBrackets));
  EXPECT_TRUE(m->AcceptToken(kFourBrackets));
  EXPECT_EQ(m->ParserDepth(), 7u);  // the eighth `[` is still being lexed
  EXPECT_TRUE(m->AcceptToken('['));
  EXPECT_EQ(m->ParserDepth(), 8u);
  EXPECT_FALSE(m->AcceptToken('['));
  EXPECT_TRUE(m->HitDepthLimit());
  EXPECT_FALSE(m->AcceptToken(kFourBrackets));
  EXPECT_TRUE(m->HitDepthLimit());
  // A rollback makes room again.
  options.max_rollback = 4;
  auto r = Matcher::Create(grammar_, options);
  ASSERT_TRUE(r->AcceptToken(kFourBrackets));
  ASSERT_TRUE(r->AcceptToken(kFourBrackets));
  ASSERT_TRUE(r->AcceptToken('['));
  ASSERT_FALSE(r->AcceptToken('['));
  ASSERT_TRUE(r->Rollback(1).ok());
  EXPECT_EQ(r->ParserDepth(), 7u);
  EXPECT_TRUE(r->AcceptToken('['));
  EXPECT_EQ(r->ParserDepth(), 8u);
}

TEST_F(ParserDepthLimitTest, MemoryBytesGrowsWithTheOutput) {
  auto m = Matcher::Create(grammar_);
  const size_t start = m->MemoryBytes();
  EXPECT_GT(start, 0u);
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(m->AcceptToken('['));
  const size_t deep = m->MemoryBytes();
  // At least one set start and one item per lexeme.
  EXPECT_GT(deep, start + 100000 * 12);
  // Bounded: the estimate is per-set buffers, not something quadratic.
  EXPECT_LT(deep, start + size_t{100000} * 4096);
}

}  // namespace
}  // namespace maskd
