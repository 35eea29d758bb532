// Lark rule options `lazy` and `suffix` and `%llguidance {"skip_repetition":
// "once"}` through the whole compiler, against brute force: every mask
// along every token sequence up to a length, over a small vocabulary whose
// tokens cross lexeme ends, must allow exactly the tokens after which some
// sentence of the language (decided by a reference written from
// llguidance's definition, not by the engine) still starts with the output.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

struct LazyCase {
  std::string name;
  std::string grammar;
  std::string alphabet;  // the bytes sentences are made of
  std::function<bool(const std::string&)> in_language;
};

// Whether some sentence is `prefix` followed by at most `max_more` bytes
// of the alphabet (every viable output here completes within 4 bytes).
bool Viable(const LazyCase& c, const std::string& prefix, size_t max_more) {
  if (c.in_language(prefix)) return true;
  if (max_more == 0) return false;
  for (char ch : c.alphabet) {
    if (Viable(c, prefix + ch, max_more - 1)) return true;
  }
  return false;
}

// The first occurrence of `needle` in s ends at
// its end (s's shortest prefix containing `needle` is s itself).
bool FirstOccurrenceEndsAt(const std::string& s, const std::string& needle) {
  return s.size() >= needle.size() && s.find(needle) == s.size() - needle.size();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

std::vector<LazyCase> Cases() {
  return {
      // lazy /[ab]*b/: the shortest match, a*b, even though [ab]*b goes on.
      {"lazy", "start: item (\",\" item)*\nitem[lazy]: /[ab]*b/\n", "ab,",
       [](const std::string& s) {
         for (const std::string& p : Split(s, ',')) {
           if (p.empty() || p.back() != 'b' || p.find('b') != p.size() - 1) return false;
         }
         return true;
       }},
      // suffix="ab" on /[ab]*/: up to the first "ab", which is kept.
      {"suffix", "start: head (\",\" head)*\nhead[suffix=\"ab\"]: /[ab]*/\n", "ab,",
       [](const std::string& s) {
         for (const std::string& p : Split(s, ',')) {
           if (!FirstOccurrenceEndsAt(p, "ab")) return false;
         }
         return true;
       }},
      // A lazy rule of terminals with a suffix given by name, then text.
      {"lazy_terminals",
       "start: hd \"=\" /[ab]/\nhd[lazy, suffix=END]: A+ \"b\"\nA: /[ab]/\nEND: \"b\"\n", "ab=",
       [](const std::string& s) {
         const size_t eq = s.find('=');
         if (eq == std::string::npos || s.size() != eq + 2) return false;
         if (s[eq + 1] != 'a' && s[eq + 1] != 'b') return false;
         const std::string hd = s.substr(0, eq);
         // [ab]+ "b" "b", shortest: the first "bb" after at least one byte.
         return hd.size() >= 3 && hd.substr(1).find("bb") == hd.size() - 3;
       }},
      // One %ignore match between lexemes (and at the ends): at most two spaces.
      {"skip_once",
       "%llguidance {\"skip_repetition\": \"once\"}\n%ignore /[ ]{1,2}/\nstart: \"a\"+\n", "a ",
       [](const std::string& s) {
         return s.find('a') != std::string::npos && s.find("   ") == std::string::npos;
       }},
      {"skip_many",
       "%llguidance {\"skip_repetition\": \"many\"}\n%ignore /[ ]{1,2}/\nstart: \"a\"+\n", "a ",
       [](const std::string& s) { return s.find('a') != std::string::npos; }},
  };
}

class LarkLazyTest : public ::testing::TestWithParam<LazyCase> {};

INSTANTIATE_TEST_SUITE_P(Cases, LarkLazyTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST_P(LarkLazyTest, MasksMatchBruteForce) {
  const LazyCase& c = GetParam();
  // Single bytes plus tokens that cross lexeme ends.
  std::vector<std::string> vocab;
  for (char ch : c.alphabet) vocab.push_back(std::string(1, ch));
  for (const char* t : {"ab", "bb", "ba", "b,", "ab,", "b=", "=a", "a ", "  ", " a ", "aab"}) {
    bool inside = true;
    for (char ch : std::string(t)) inside = inside && c.alphabet.find(ch) != std::string::npos;
    if (inside) vocab.push_back(t);
  }
  auto tok = std::make_shared<SmallVocabTokenizer>(vocab, "lark-lazy-" + c.name);
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = EbnfDialect::kLark;
  spec.text = c.grammar;
  auto g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(g.ok()) << g.status();

  constexpr size_t kMaxOutput = 5;
  auto viable = [&](const std::string& prefix) { return Viable(c, prefix, 4); };
  const TokenId eos = tok->eos_ids()[0];
  std::vector<uint32_t> mask((tok->vocab_size() + 31) / 32);
  int checked = 0, allowed_seen = 0;
  std::vector<std::vector<TokenId>> frontier = {{}};
  while (!frontier.empty()) {
    std::vector<std::vector<TokenId>> next;
    for (const std::vector<TokenId>& seq : frontier) {
      auto m = Matcher::Create(*g);
      std::string output;
      for (TokenId t : seq) {
        ASSERT_TRUE(m->AcceptToken(t));
        output += tok->token_bytes(t);
      }
      m->FillMask(mask);
      for (TokenId t = 0; t < tok->vocab_size(); ++t) {
        const std::string longer = output + std::string(tok->token_bytes(t));
        const bool expected = t == eos ? c.in_language(output) : viable(longer);
        ASSERT_EQ(((mask[t / 32] >> (t % 32)) & 1) != 0, expected)
            << c.name << ": output '" << output << "' token '" << tok->token_bytes(t) << "'";
        ++checked;
        if (!expected) continue;
        ++allowed_seen;
        if (t != eos && longer.size() <= kMaxOutput) {
          next.push_back(seq);
          next.back().push_back(t);
        }
      }
      EXPECT_EQ(m->CanStop(), c.in_language(output)) << c.name << ": '" << output << "'";
    }
    frontier = std::move(next);
  }
  EXPECT_GT(checked, 500) << c.name;
  EXPECT_GT(allowed_seen, 50) << c.name;
}

}  // namespace
}  // namespace maskd
