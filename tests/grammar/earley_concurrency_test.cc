// One built Grammar shared by parsers on several threads (as matchers of many
// sequences share one compiled grammar): every thread must see exactly what a
// single thread sees. Run under ThreadSanitizer via the "concurrency" label.
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "compiler/grammar/earley_parser.h"
#include "compiler/grammar/grammar.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

// Expression grammar: E ::= E "+" T | T ; T ::= T "*" F | F ; F ::= "(" E ")" | "x"
std::shared_ptr<const Grammar> ExpressionGrammar() {
  GrammarBuilder b;
  const LexemeId plus = b.AddLexeme("+", 0), times = b.AddLexeme("*", 1),
                 open = b.AddLexeme("(", 2), close = b.AddLexeme(")", 3), x = b.AddLexeme("x", 4);
  const NonterminalId e = b.Nonterminal("E"), t = b.Nonterminal("T"), f = b.Nonterminal("F");
  b.AddRule(e, {Symbol::Nonterminal(e), Symbol::Lexeme(plus), Symbol::Nonterminal(t)});
  b.AddRule(e, {Symbol::Nonterminal(t)});
  b.AddRule(t, {Symbol::Nonterminal(t), Symbol::Lexeme(times), Symbol::Nonterminal(f)});
  b.AddRule(t, {Symbol::Nonterminal(f)});
  b.AddRule(f, {Symbol::Lexeme(open), Symbol::Nonterminal(e), Symbol::Lexeme(close)});
  b.AddRule(f, {Symbol::Lexeme(x)});
  b.SetStart(e);
  return *b.Build();
}

// A random walk's trace: the allowed sets and acceptance after each step.
std::vector<std::pair<LexemeSet, bool>> Trace(const std::shared_ptr<const Grammar>& g,
                                              uint32_t seed) {
  std::mt19937 rng(seed);
  EarleyParser p(g);
  std::vector<std::pair<LexemeSet, bool>> out;
  for (int step = 0; step < 400; ++step) {
    const std::vector<LexemeId> choices = p.Allowed().ToVector();
    if (rng() % 5 == 0 && p.Depth() > 0) {
      p.Pop(1);
    } else {
      p.Scan(choices[rng() % choices.size()]);
    }
    out.emplace_back(p.Allowed(), p.IsAccepting());
  }
  return out;
}

TEST(EarleyConcurrencyTest, SharedGrammarGivesSameResultsOnEveryThread) {
  const auto g = ExpressionGrammar();
  constexpr int kThreads = 4;
  std::vector<std::vector<std::pair<LexemeSet, bool>>> expected, got(kThreads);
  for (int i = 0; i < kThreads; ++i) expected.push_back(Trace(g, 100 + i));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { got[i] = Trace(g, 100 + i); });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(got[i], expected[i]) << "thread " << i;
}

}  // namespace
}  // namespace maskd
