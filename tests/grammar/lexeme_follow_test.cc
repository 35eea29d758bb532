// ComputeLexemeFollow: FIRST of the sentence and, per lexeme, the lexemes
// that can come right after it, through nullable nonterminals and rule ends.
#include "compiler/grammar/lexeme_follow.h"

#include "gtest/gtest.h"

namespace maskd {
namespace {

TEST(LexemeFollowTest, FollowsThroughNullablesAndRuleEnds) {
  // S -> A "c" | "d"; A -> "a" | "a" "b" | epsilon
  GrammarBuilder b;
  const Symbol a = Symbol::Lexeme(b.AddLexeme("a", 10)), bb = Symbol::Lexeme(b.AddLexeme("b", 11)),
               c = Symbol::Lexeme(b.AddLexeme("c", 12)), d = Symbol::Lexeme(b.AddLexeme("d", 13));
  const NonterminalId s = b.Nonterminal("S"), na = b.Nonterminal("A");
  b.AddRule(s, {Symbol::Nonterminal(na), c});
  b.AddRule(s, {d});
  b.AddRule(na, {a});
  b.AddRule(na, {a, bb});
  b.AddRule(na, {});
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_TRUE(g.ok()) << g.status();
  auto follow = ComputeLexemeFollow(**g);
  ASSERT_TRUE(follow.ok()) << follow.status();
  // Build() renumbers lexemes: map back by name.
  auto id = [&](const std::string& name) {
    for (LexemeId t = 0; t < (*g)->num_lexemes(); ++t) {
      if ((*g)->lexeme(t).name == name) return t;
    }
    ADD_FAILURE() << name;
    return LexemeId{0};
  };
  auto set = [&](std::initializer_list<const char*> names) {
    LexemeSet out((*g)->num_lexemes());
    for (const char* n : names) out.Insert(id(n));
    return out;
  };
  EXPECT_EQ(follow->first, set({"a", "c", "d"}));
  EXPECT_EQ(follow->follow[id("a")], set({"b", "c"}));
  EXPECT_EQ(follow->follow[id("b")], set({"c"}));
  EXPECT_EQ(follow->follow[id("c")], set({}));
  EXPECT_EQ(follow->follow[id("d")], set({}));
  EXPECT_EQ(ComputeLexemeFollow(**g, /*max_bits=*/4).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace maskd
