// Specs through the whole engine: front end -> compiled grammar -> masks,
// checked against independent oracles (RE2 for complete strings, a separate
// derivative pool for "some completion exists", plain string prefixes for
// choices).
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

std::shared_ptr<SmallVocabTokenizer> RandomVocab(std::mt19937& rng, const std::string& alphabet,
                                                 const std::string& id) {
  std::set<std::string> vocab;
  for (char c : alphabet) vocab.insert(std::string(1, c));
  while (vocab.size() < 40) {
    std::string s;
    const size_t len = 1 + rng() % 4;
    for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    vocab.insert(s);
  }
  return std::make_shared<SmallVocabTokenizer>(std::vector<std::string>(vocab.begin(), vocab.end()),
                                               id);
}

// Teacher-forces random allowed tokens and checks every mask bit against
// `viable(bytes)` and EOS against `complete(bytes)`.
template <typename Viable, typename Complete>
void CheckRandomWalks(const std::shared_ptr<const CompiledGrammar>& g,
                      const SmallVocabTokenizer& tok, std::mt19937& rng, Viable viable,
                      Complete complete, const std::string& what) {
  const TokenId eos = tok.eos_ids()[0];
  std::vector<uint32_t> mask((tok.vocab_size() + 31) / 32);
  for (int walk = 0; walk < 4; ++walk) {
    auto m = Matcher::Create(g);
    std::string out;
    for (int step = 0; step < 10; ++step) {
      m->FillMask(mask);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < tok.vocab_size(); ++t) {
        const bool expected =
            t == eos ? complete(out) : viable(out + std::string(tok.token_bytes(t)));
        ASSERT_EQ(Bit(mask, t), expected)
            << what << ": after '" << out << "' token '" << tok.token_bytes(t) << "'";
        if (expected && t != eos) allowed.push_back(t);
      }
      if (allowed.empty()) break;
      const TokenId t = allowed[rng() % allowed.size()];
      ASSERT_TRUE(m->AcceptToken(t));
      out += tok.token_bytes(t);
    }
  }
}

TEST(CompileRegexTest, MasksMatchDerivativeOracleAndRe2OnCompleteStrings) {
  const std::vector<std::string> patterns = {
      "a+b*",         "(ab|ba)+c?",  "[a-c]{2,5}",   "a(b|c)*a",    "(a|ab)(c|bcd)",
      "b{3}",         "(abc)*",      "[^a]+",        "a?b?c?",      "(a|b)*abb",
      "c(a{1,3}b)*c", "(?:ab)+|ba*", "a[bc]{0,2}d?", "\\x61\\x62+", "[a-c]*c[a-c]{2}",
  };
  int n = 0;
  for (const std::string& pattern : patterns) {
    std::mt19937 rng(n);
    auto tok = RandomVocab(rng, "abcd", "regex-" + std::to_string(n++));
    GrammarSpec spec;
    spec.kind = SpecKind::kRegex;
    spec.text = pattern;
    auto g = CompileGrammar(spec, CompileOptions(), tok);
    ASSERT_TRUE(g.ok()) << pattern << ": " << g.status();
    regex::ExprSet oracle_pool;
    const regex::ExprId oracle =
        *regex::ParseEcmaRegex(pattern, &oracle_pool, regex::MatchMode::kFullMatch);
    RE2 re2("(?:" + pattern + ")");
    ASSERT_TRUE(re2.ok()) << pattern;
    auto viable = [&](const std::string& s) {
      regex::ExprId e = oracle;
      for (char c : s) e = oracle_pool.Derivative(e, static_cast<uint8_t>(c));
      return !*oracle_pool.IsEmpty(e);
    };
    auto complete = [&](const std::string& s) { return RE2::FullMatch(s, re2); };
    CheckRandomWalks(*g, *tok, rng, viable, complete, pattern);
  }
}

TEST(CompileChoicesTest, MasksAllowExactlyPrefixesOfChoices) {
  const std::vector<std::string> choices = {"ab", "abc", "bca", "", "ccc"};
  std::mt19937 rng(7);
  auto tok = RandomVocab(rng, "abc", "choices");
  GrammarSpec spec;
  spec.kind = SpecKind::kChoices;
  spec.choices = choices;
  auto g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(g.ok()) << g.status();
  auto viable = [&](const std::string& s) {
    for (const std::string& c : choices) {
      if (c.compare(0, s.size(), s) == 0 && c.size() >= s.size()) return true;
    }
    return false;
  };
  auto complete = [&](const std::string& s) {
    for (const std::string& c : choices) {
      if (c == s) return true;
    }
    return false;
  };
  CheckRandomWalks(*g, *tok, rng, viable, complete, "choices");
}

TEST(CompileTest, JumpForwardGivesForcedBytesAndTheirTokens) {
  auto tok = std::make_shared<SmallVocabTokenizer>(
      std::vector<std::string>{"h", "e", "l", "o", "hel", "lo", "x"}, "jump");
  GrammarSpec spec;
  spec.kind = SpecKind::kRegex;
  spec.text = "hello(x|)";
  auto g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  JumpForward jf = m->ComputeJumpForward();
  EXPECT_EQ(jf.bytes, "hello");  // then "x" or the end: not forced
  EXPECT_EQ(tok->Decode(jf.tokens), "hello");
  ASSERT_TRUE(m->AcceptBytes("hello"));
  EXPECT_TRUE(m->CanStop());
  EXPECT_TRUE(m->ComputeJumpForward().bytes.empty());
  ASSERT_TRUE(m->AcceptToken(6));
  EXPECT_TRUE(m->MustStop());
}

TEST(CompileTest, BadSpecsGivePreciseErrors) {
  auto tok = std::make_shared<SmallVocabTokenizer>(std::vector<std::string>{"a"}, "errors");
  GrammarSpec spec;
  spec.kind = SpecKind::kRegex;
  spec.text = "a(?=b)";
  auto g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(g.status().message()).find("look"), std::string::npos) << g.status();
  spec.text = "a(b";
  g = CompileGrammar(spec, CompileOptions(), tok);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  spec.kind = SpecKind::kChoices;
  spec.choices.clear();
  g = CompileGrammar(spec, CompileOptions(), tok);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  // A regex whose language is empty cannot trap the model: it is refused.
  spec.kind = SpecKind::kRegex;
  spec.text = "a[^\\s\\S]";
  g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("matches nothing"), std::string::npos)
      << g.status();
}

}  // namespace
}  // namespace maskd
