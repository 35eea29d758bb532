// Item masks (compiler/matcher/item_masks.h) against two references: the
// same grammar compiled without them (the whole trie walked with the parser,
// which the brute-force oracles prove), and, token by token, whether the
// matcher accepts the token (the parser on its bytes, no walk and no cache).
// The grammars are character-level, so a mask is the union of the kernel's
// item masks plus a walk of their frontier subtrees: tokens that finish a
// rule (an identifier, a string, a bracket) and go on in the rule around it.
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(MASKD_GRAMMAR_TEXT_DATA) + "/" + name + ".gbnf");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every substring of `sample` up to 5 bytes (tokens that cross rule ends
// and starts), and every single printable byte.
std::vector<std::string> VocabFrom(const std::string& sample) {
  std::set<std::string> words;
  for (size_t i = 0; i < sample.size(); ++i) {
    for (size_t n = 1; n <= 5 && i + n <= sample.size(); ++n) words.insert(sample.substr(i, n));
  }
  for (char c = ' '; c < 127; ++c) words.insert(std::string(1, c));
  words.insert("\n");
  return {words.begin(), words.end()};
}

struct Case {
  std::string name;
  std::string grammar;
  std::string sample;  // a sentence, to draw the vocabulary from
};

// A case compiled with and without item masks.
struct Compiled {
  std::shared_ptr<SmallVocabTokenizer> tok;
  std::shared_ptr<const CompiledGrammar> with, without;
};

Compiled CompileBoth(const Case& c) {
  Compiled out;
  out.tok = std::make_shared<SmallVocabTokenizer>(VocabFrom(c.sample), "item-masks-" + c.name);
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = EbnfDialect::kGbnf;
  spec.text = c.grammar;
  CompileOptions on, off;
  off.item_masks = false;
  auto with = CompileGrammar(spec, on, out.tok);
  auto without = CompileGrammar(spec, off, out.tok);
  EXPECT_TRUE(with.ok()) << c.name << ": " << with.status();
  EXPECT_TRUE(without.ok()) << c.name << ": " << without.status();
  if (!with.ok() || !without.ok()) return out;
  out.with = *with;
  out.without = *without;
  const auto& impl = static_cast<const CompiledGrammarImpl&>(*out.with);
  EXPECT_NE(impl.item_masks(), nullptr) << c.name;
  if (impl.item_masks() != nullptr) {
    EXPECT_GT(impl.item_masks()->positions(), 0u);
  }
  EXPECT_EQ(static_cast<const CompiledGrammarImpl&>(*out.without).item_masks(), nullptr);
  return out;
}

// Random walks (seeds first..first+walks) over the masks with item masks:
// each mask must equal the one without them, and allow exactly the tokens
// the matcher accepts. Returns the masks checked.
int RunWalks(const std::string& name, const Compiled& g, int first, int walks, int steps) {
  const SmallVocabTokenizer* tok = g.tok.get();
  const size_t words = (tok->vocab_size() + 31) / 32;
  std::vector<uint32_t> mask(words), reference(words);
  int checked = 0;
  for (int walk = first; walk < first + walks; ++walk) {
    std::mt19937 rng(walk);
    auto m = Matcher::Create(g.with);
    auto r = Matcher::Create(g.without);
    std::string output;
    for (int step = 0; step < steps; ++step) {
      m->FillMask(mask);
      r->FillMask(reference);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < tok->vocab_size(); ++t) {
        EXPECT_EQ(Bit(mask, t), Bit(reference, t))
            << name << " after '" << output << "': token '" << tok->token_bytes(t) << "'";
        if (tok->is_special(t)) continue;
        auto probe = m->Clone();
        EXPECT_EQ(Bit(mask, t), probe->AcceptToken(t))
            << name << " after '" << output << "': token '" << tok->token_bytes(t) << "'";
        if (Bit(mask, t)) allowed.push_back(t);
      }
      ++checked;
      if (allowed.empty()) break;
      const TokenId pick = allowed[rng() % allowed.size()];
      if (!m->AcceptToken(pick) || !r->AcceptToken(pick)) {
        ADD_FAILURE() << name << ": an allowed token was refused after '" << output << "'";
        break;
      }
      output += tok->token_bytes(pick);
    }
  }
  return checked;
}

void CheckWalks(const Case& c, int walks, int steps) {
  const Compiled g = CompileBoth(c);
  ASSERT_NE(g.with, nullptr);
  EXPECT_GT(RunWalks(c.name, g, 0, walks, steps), walks * 3) << c.name;
}

TEST(ItemMasksTest, DataGrammarsMatchTheWholeWalkAndTheParser) {
  const std::vector<Case> cases = {
      {"arithmetic", ReadData("arithmetic"), "x1 = (a + b_1)*c\ny=(((z)) )-12/q\n"},
      {"c", ReadData("c"),
       "int f(int a){int x = a+1; while(x<10){x = x*2;} if(x>=3){return x;}else{g(x, 2);}"
       "// hi\n/* c */return 0;}"},
      {"json_arr", ReadData("json_arr"),
       "[\n{\"a\": [1, 2.5e-3, true], \"b\": {\"c\": null}},\n\"s\\u00e9\\n\", -0.5 ]"},
  };
  for (const Case& c : cases) CheckWalks(c, 6, 30);
}

// A left-recursive list (the front end's x*) ending a rule that may also end
// right there (blanks), inside two different callers: after "(ab" a ")" is
// allowed and after "ab" a "+", and a token holding both the identifier's
// tail and what follows it ("b)!", "b +c") is decided only by the walk of
// its frontier subtree.
TEST(ItemMasksTest, TokensLeavingARuleAreWalkedInTheirCaller) {
  const Case c = {"callers",
                  "root ::= \"(\" id \")\" \"!\" | id \"+\" id \"\\n\"\n"
                  "id ::= [a-c] [a-c]* [ ]*\n",
                  "(ab )!ab +c\nb) a+bc\n"};
  CheckWalks(c, 12, 12);
}

// Matchers on several threads share one table: kernels are combined on
// first use under its lock, and every thread's masks stay exact.
TEST(ItemMasksTest, ThreadsShareOneTable) {
  const Case c = {"c-threads", ReadData("c"),
                  "int f(int a){int x = a+1; while(x<10){x = x*2;} return x;}"};
  const Compiled g = CompileBoth(c);
  ASSERT_NE(g.with, nullptr);
  std::vector<int> checked(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] { checked[k] = RunWalks(c.name, g, 100 * k, 2, 20); });
  }
  for (std::thread& t : threads) t.join();
  for (int n : checked) EXPECT_GT(n, 6);
}

}  // namespace
}  // namespace maskd
