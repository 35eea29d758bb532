// Cross-checks the matcher's masks against a brute-force oracle on generated
// grammars and vocabularies (RE2's exhaustive_tester style).
//
// Grammars: random CFGs (epsilon rules, recursion, ambiguity) over lexemes that
// are prefix-free literals, so a byte string splits into lexemes in at most one
// way and longest-match lexing reads exactly that split. The oracle then decides
// "some sentence starts with these bytes" with the independent viable-prefix
// oracle of tests/grammar, and the matcher must agree token by token: tokens
// are random byte strings over the lexemes' alphabet, many spanning lexeme
// boundaries, some ending inside a lexeme.
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/grammar/viable_prefix_oracle.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;
using testing::ViablePrefixOracle;

struct Case {
  std::vector<std::string> lexemes;  // builder lexeme id -> literal
  GrammarIr ir;
  std::shared_ptr<SmallVocabTokenizer> tokenizer;
};

// Prefix-free literals over {a, b, c}: no literal is a prefix of another.
std::vector<std::string> PrefixFreeLiterals(std::mt19937& rng, size_t n) {
  std::vector<std::string> out;
  while (out.size() < n) {
    std::string s;
    const size_t len = 1 + rng() % 3;
    for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 3));
    bool ok = true;
    for (const std::string& o : out) {
      if (o.compare(0, s.size(), s) == 0 || s.compare(0, o.size(), o) == 0) ok = false;
    }
    if (ok) out.push_back(s);
    if (out.size() < n && rng() % 50 == 0) break;  // the alphabet may run out
  }
  return out;
}

Case MakeCase(std::mt19937& rng, int seed) {
  Case c;
  c.lexemes = PrefixFreeLiterals(rng, 2 + rng() % 3);
  for (const std::string& l : c.lexemes) c.ir.builder.AddLexeme(l, c.ir.pool->Literal(l));
  const size_t num_nts = 2 + rng() % 4;
  std::vector<NonterminalId> nts;
  for (size_t a = 0; a < num_nts; ++a) {
    nts.push_back(c.ir.builder.Nonterminal(std::string(1, static_cast<char>('A' + a))));
  }
  for (NonterminalId a : nts) {
    const size_t num_rules = 1 + rng() % 3;
    for (size_t r = 0; r < num_rules; ++r) {
      std::vector<Symbol> rhs;
      const size_t len = rng() % 4;
      for (size_t k = 0; k < len; ++k) {
        if (rng() % 5 < 2) {
          rhs.push_back(Symbol::Lexeme(static_cast<LexemeId>(rng() % c.lexemes.size())));
        } else {
          rhs.push_back(Symbol::Nonterminal(nts[rng() % num_nts]));
        }
      }
      c.ir.builder.AddRule(a, std::move(rhs));
    }
  }
  c.ir.builder.SetStart(nts[0]);
  // Vocabulary: every single byte of the alphabet plus random strings of 1..5
  // bytes (boundary-spanning), and a token with a byte outside the alphabet.
  std::set<std::string> vocab = {"a", "b", "c", "x"};
  while (vocab.size() < 24) {
    std::string s;
    const size_t len = 1 + rng() % 5;
    for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 3));
    vocab.insert(s);
  }
  c.tokenizer = std::make_shared<SmallVocabTokenizer>(
      std::vector<std::string>(vocab.begin(), vocab.end()), "oracle-" + std::to_string(seed));
  return c;
}

class ByteOracle {
 public:
  ByteOracle(const Case& c, const ViablePrefixOracle& grammar) : c_(c), grammar_(grammar) {}

  // Splits `bytes` into whole lexemes plus a tail that is a proper prefix of
  // some lexeme; false when no such split exists (it is unique if it does).
  bool Split(const std::string& bytes, std::vector<LexemeId>& lexemes, std::string& tail) const {
    lexemes.clear();
    size_t i = 0;
    while (i < bytes.size()) {
      bool matched = false;
      for (LexemeId l = 0; l < c_.lexemes.size(); ++l) {
        if (bytes.compare(i, c_.lexemes[l].size(), c_.lexemes[l]) == 0) {
          lexemes.push_back(l);
          i += c_.lexemes[l].size();
          matched = true;
          break;
        }
      }
      if (!matched) break;
    }
    tail = bytes.substr(i);
    if (tail.empty()) return true;
    for (const std::string& l : c_.lexemes) {
      if (l.size() > tail.size() && l.compare(0, tail.size(), tail) == 0) return true;
    }
    return false;
  }

  bool Viable(const std::string& bytes) const {
    std::vector<LexemeId> lexemes;
    std::string tail;
    if (!Split(bytes, lexemes, tail)) return false;
    if (tail.empty()) return grammar_.IsViablePrefix(lexemes);
    for (LexemeId l = 0; l < c_.lexemes.size(); ++l) {
      const std::string& s = c_.lexemes[l];
      if (s.size() > tail.size() && s.compare(0, tail.size(), tail) == 0) {
        lexemes.push_back(l);
        if (grammar_.IsViablePrefix(lexemes)) return true;
        lexemes.pop_back();
      }
    }
    return false;
  }

  bool Complete(const std::string& bytes) const {
    std::vector<LexemeId> lexemes;
    std::string tail;
    return Split(bytes, lexemes, tail) && tail.empty() && grammar_.IsSentence(lexemes);
  }

 private:
  const Case& c_;
  const ViablePrefixOracle& grammar_;
};

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

// Both mask paths: the per-lexer-state cache, and (budget 0) the full trie
// walk it falls back to.
class MatcherOracleTest : public ::testing::TestWithParam<uint64_t> {};
INSTANTIATE_TEST_SUITE_P(MaskCacheBudget, MatcherOracleTest, ::testing::Values(64u << 20, 0u));

TEST_P(MatcherOracleTest, RandomGrammarsAndVocabulariesMatchBruteForce) {
  AutomataLimits options;
  options.mask_cache_bytes = GetParam();
  int compiled = 0, steps_checked = 0;
  for (int seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    Case c = MakeCase(rng, seed);
    ViablePrefixOracle grammar_oracle(c.ir.builder);
    ByteOracle oracle(c, grammar_oracle);
    auto g = CompiledGrammarImpl::FromIr(std::move(c.ir), c.tokenizer, options,
                                         std::chrono::steady_clock::now());
    if (!g.ok()) {
      // Only a grammar that matches nothing may fail, and then the oracle agrees.
      EXPECT_FALSE(oracle.Viable("")) << "seed " << seed << ": " << g.status();
      continue;
    }
    ++compiled;
    auto matcher = Matcher::Create(*g);
    const size_t vocab = c.tokenizer->vocab_size();
    const TokenId eos = c.tokenizer->eos_ids()[0];
    std::vector<uint32_t> mask((vocab + 31) / 32);
    std::string output;
    for (int step = 0; step < 12; ++step) {
      matcher->FillMask(mask);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < vocab; ++t) {
        const bool expected =
            t == eos ? oracle.Complete(output)
                     : oracle.Viable(output + std::string(c.tokenizer->token_bytes(t)));
        ASSERT_EQ(Bit(mask, t), expected) << "seed " << seed << " output '" << output << "' token '"
                                          << c.tokenizer->token_bytes(t) << "'\n"
                                          << (*g)->grammar().DebugString();
        if (expected && t != eos) allowed.push_back(t);
      }
      ASSERT_EQ(matcher->CanStop(), oracle.Complete(output));
      ++steps_checked;
      // A disallowed token is refused and changes nothing.
      for (TokenId t = 0; t < vocab; ++t) {
        if (t != eos && !Bit(mask, t)) {
          ASSERT_FALSE(matcher->AcceptToken(t));
          break;
        }
      }
      // Jump-forward: each forced byte must be the only viable next byte.
      JumpForward jf = matcher->ComputeJumpForward();
      std::string probe = output;
      for (char forced : jf.bytes) {
        ASSERT_FALSE(oracle.Complete(probe));
        for (int b = 'a'; b <= 'c'; ++b) {
          ASSERT_EQ(oracle.Viable(probe + static_cast<char>(b)), b == forced)
              << "seed " << seed << " jump-forward from '" << output << "'";
        }
        probe.push_back(forced);
      }
      // The grammar oracle handles inputs of under 32 lexemes: stop while
      // output + token + one more lexeme stays below that.
      if (allowed.empty() || output.size() > 24) break;
      const TokenId pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(matcher->AcceptToken(pick));
      output += c.tokenizer->token_bytes(pick);
    }
  }
  EXPECT_GT(compiled, 150);
  EXPECT_GT(steps_checked, 1000);
}

TEST(MatcherRollbackTest, RollbackAndCloneRestoreIdenticalMasks) {
  for (int seed = 0; seed < 100; ++seed) {
    std::mt19937 rng(1000 + seed);
    Case c = MakeCase(rng, 1000 + seed);
    auto g = CompiledGrammarImpl::FromIr(std::move(c.ir), c.tokenizer, AutomataLimits(),
                                         std::chrono::steady_clock::now());
    if (!g.ok()) continue;
    MatcherOptions options;
    options.max_rollback = 8;
    auto matcher = Matcher::Create(*g, options);
    const size_t words = (c.tokenizer->vocab_size() + 31) / 32;
    std::vector<std::vector<uint32_t>> masks;
    std::vector<uint32_t> mask(words);
    std::unique_ptr<Matcher> clone_at_start = matcher->Clone();
    size_t accepted = 0;
    for (int step = 0; step < 6; ++step) {
      matcher->FillMask(mask);
      masks.push_back(mask);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < c.tokenizer->vocab_size(); ++t) {
        if (Bit(mask, t)) allowed.push_back(t);
      }
      if (allowed.empty()) break;
      ASSERT_TRUE(matcher->AcceptToken(allowed[rng() % allowed.size()]));
      ++accepted;
    }
    // Roll back one token at a time: each mask must be the one seen there.
    for (size_t k = accepted; k > 0; --k) {
      ASSERT_TRUE(matcher->Rollback(1).ok());
      matcher->FillMask(mask);
      ASSERT_EQ(mask, masks[k - 1]) << "seed " << seed << " after rolling back to " << k - 1;
    }
    EXPECT_FALSE(matcher->Rollback(1).ok());
    clone_at_start->FillMask(mask);
    EXPECT_EQ(mask, masks[0]);
  }
}

TEST(MatcherTest, SpecialTokensAreNeverAllowedAndEosEndsTheSequence) {
  auto tokenizer = std::make_shared<SmallVocabTokenizer>(
      std::vector<std::string>{"a", "b", "ab", "<|special|>"}, "special-test");
  tokenizer->MarkSpecial(3);
  GrammarIr ir;
  const regex::ExprId a = ir.pool->Literal("a");
  const NonterminalId s = ir.builder.Nonterminal("s");
  // s ::= "a" s | "a" : one or more a's. The special token's text is not
  // even in the language, but a special "a" would be refused all the same.
  const LexemeId la = ir.builder.AddLexeme("a", a);
  ir.builder.AddRule(s, {Symbol::Lexeme(la), Symbol::Nonterminal(s)});
  ir.builder.AddRule(s, {Symbol::Lexeme(la)});
  ir.builder.SetStart(s);
  auto g = CompiledGrammarImpl::FromIr(std::move(ir), tokenizer, AutomataLimits(),
                                       std::chrono::steady_clock::now());
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  std::vector<uint32_t> mask(1);
  m->FillMask(mask);
  EXPECT_EQ(mask[0], 0b0001u);  // only "a"; no EOS yet
  EXPECT_FALSE(m->AcceptToken(3));
  EXPECT_FALSE(m->AcceptToken(4));   // EOS before the output is complete
  EXPECT_FALSE(m->AcceptToken(99));  // outside the vocabulary
  ASSERT_TRUE(m->AcceptToken(0));
  m->FillMask(mask);
  EXPECT_EQ(mask[0], 0b10001u);  // "a" or EOS
  EXPECT_TRUE(m->CanStop());
  EXPECT_FALSE(m->MustStop());
  ASSERT_TRUE(m->AcceptToken(4));
  m->FillMask(mask);
  EXPECT_EQ(mask[0], 0u);
  EXPECT_TRUE(m->MustStop());
  EXPECT_FALSE(m->AcceptToken(0));
  ASSERT_TRUE(m->Rollback(1).ok());  // undo EOS
  EXPECT_TRUE(m->AcceptToken(0));
}

}  // namespace
}  // namespace maskd
