// GrammarBuilder::Build: validation errors, trimming of unproductive and
// unreachable symbols, and the analyses (nullable, FIRST, left corners).
#include <memory>
#include <string>
#include <vector>

#include "compiler/grammar/grammar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

Symbol NonterminalSym(NonterminalId a) { return Symbol::Nonterminal(a); }
Symbol LexemeSym(LexemeId t) { return Symbol::Lexeme(t); }

// Names of the FIRST lexemes of a nonterminal, for readable expectations.
std::vector<std::string> FirstNames(const Grammar& g, NonterminalId a) {
  std::vector<std::string> out;
  g.First(a).ForEach([&](LexemeId t) { out.push_back(g.lexeme(t).name); });
  return out;
}

NonterminalId FindNonterminal(const Grammar& g, const std::string& name) {
  for (NonterminalId a = 0; a < g.num_nonterminals(); ++a) {
    if (g.nonterminal_name(a) == name) return a;
  }
  ADD_FAILURE() << "no nonterminal " << name;
  return 0;
}

TEST(GrammarBuilderTest, MissingStartIsAnError) {
  GrammarBuilder b;
  b.AddRule(b.Nonterminal("s"), {});
  auto g = b.Build();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("no start symbol"));
}

TEST(GrammarBuilderTest, UndefinedNonterminalsAreNamed) {
  GrammarBuilder b;
  const NonterminalId s = b.Nonterminal("s");
  b.AddRule(s, {NonterminalSym(b.Nonterminal("value")), NonterminalSym(b.Nonterminal("tail"))});
  b.Nonterminal("unused_and_undefined");  // Never referenced: not an error.
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("undefined nonterminals: value, tail"));
}

TEST(GrammarBuilderTest, NonexistentIdsAreErrors) {
  GrammarBuilder b;
  const NonterminalId s = b.Nonterminal("s");
  b.AddRule(s, {LexemeSym(3)});
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("nonexistent lexeme id 3"));

  GrammarBuilder b2;
  b2.SetStart(5);
  EXPECT_THAT(b2.Build().status().message(), HasSubstr("does not exist"));
}

TEST(GrammarBuilderTest, UnproductiveStartMatchesNothing) {
  GrammarBuilder b;
  const LexemeId a = b.AddLexeme("a", 1);
  const NonterminalId s = b.Nonterminal("s");
  const NonterminalId t = b.Nonterminal("t");
  b.AddRule(s, {LexemeSym(a), NonterminalSym(t)});
  b.AddRule(t, {NonterminalSym(t), LexemeSym(a)});  // t never terminates.
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("grammar matches nothing"));
}

TEST(GrammarBuilderTest, TrimsUnproductiveAndUnreachable) {
  GrammarBuilder b;
  const LexemeId a = b.AddLexeme("a", 1);
  const LexemeId x = b.AddLexeme("x", 2);  // Only in an unproductive rule.
  const LexemeId y = b.AddLexeme("y", 3);  // Only in an unreachable rule.
  const NonterminalId s = b.Nonterminal("s");
  const NonterminalId loop = b.Nonterminal("loop");
  const NonterminalId island = b.Nonterminal("island");
  b.AddRule(s, {LexemeSym(a)});
  b.AddRule(s, {LexemeSym(x), NonterminalSym(loop)});
  b.AddRule(loop, {NonterminalSym(loop)});
  b.AddRule(island, {LexemeSym(y)});
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const Grammar& gr = **g;
  // <start> and s remain; a is the only lexeme.
  EXPECT_EQ(gr.num_nonterminals(), 2u);
  EXPECT_EQ(gr.nonterminal_name(gr.start()), "s");
  ASSERT_EQ(gr.num_lexemes(), 1u);
  EXPECT_EQ(gr.lexeme(0).name, "a");
  EXPECT_EQ(gr.builder_lexeme_id(0), a);
  EXPECT_EQ(gr.num_rules(), 2u);  // <start> -> s, s -> a.
  EXPECT_EQ(gr.DebugString(), "lexeme 0 'a' = regex#1\n<start> ::= s\ns ::= 'a'\n");
}

TEST(GrammarBuilderTest, SameRegexIsSameLexemeAndDuplicateRulesCollapse) {
  GrammarBuilder b;
  const LexemeId a1 = b.AddLexeme("a", 7);
  const LexemeId a2 = b.AddLexeme("a_again", 7);
  const LexemeId a3 = b.AddLexeme("a_lazy", 7, LexemeFlags{.lazy = true});
  EXPECT_EQ(a1, a2);
  EXPECT_NE(a1, a3);
  const NonterminalId s = b.Nonterminal("s");
  b.AddRule(s, {LexemeSym(a1)});
  b.AddRule(s, {LexemeSym(a2)});
  b.AddRule(s, {LexemeSym(a3)});
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)->num_rules(), 3u);  // <start> -> s, s -> a, s -> a_lazy.
  EXPECT_TRUE((*g)->lexeme(1).flags.lazy);
}

TEST(GrammarBuilderTest, FreshNonterminalsGetUniqueNames) {
  GrammarBuilder b;
  const NonterminalId a = b.Nonterminal("item");
  const NonterminalId f1 = b.FreshNonterminal("item");
  const NonterminalId f2 = b.FreshNonterminal("item");
  EXPECT_NE(a, f1);
  EXPECT_NE(f1, f2);
  EXPECT_EQ(b.nonterminal_name(f1), "item#1");
  EXPECT_EQ(b.nonterminal_name(f2), "item#2");
  EXPECT_EQ(b.Nonterminal("item"), a);
}

// value ::= obj | "n" ; obj ::= "{" members "}" ; members ::= eps | value more
// more ::= eps | "," value more
TEST(GrammarBuilderTest, NullableFirstAndClosures) {
  GrammarBuilder b;
  const LexemeId lb = b.AddLexeme("{", 1), rb = b.AddLexeme("}", 2), n = b.AddLexeme("n", 3),
                 comma = b.AddLexeme(",", 4);
  const NonterminalId value = b.Nonterminal("value"), obj = b.Nonterminal("obj"),
                      members = b.Nonterminal("members"), more = b.Nonterminal("more");
  b.AddRule(value, {NonterminalSym(obj)});
  b.AddRule(value, {LexemeSym(n)});
  b.AddRule(obj, {LexemeSym(lb), NonterminalSym(members), LexemeSym(rb)});
  b.AddRule(members, {});
  b.AddRule(members, {NonterminalSym(value), NonterminalSym(more)});
  b.AddRule(more, {});
  b.AddRule(more, {LexemeSym(comma), NonterminalSym(value), NonterminalSym(more)});
  b.SetStart(value);
  auto g = b.Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const Grammar& gr = **g;
  const NonterminalId gv = FindNonterminal(gr, "value"), gm = FindNonterminal(gr, "members"),
                      gmore = FindNonterminal(gr, "more"), gobj = FindNonterminal(gr, "obj");
  EXPECT_FALSE(gr.nullable(gv));
  EXPECT_TRUE(gr.nullable(gm));
  EXPECT_TRUE(gr.nullable(gmore));
  EXPECT_FALSE(gr.accepts_empty());
  EXPECT_THAT(FirstNames(gr, gv), UnorderedElementsAre("{", "n"));
  EXPECT_THAT(FirstNames(gr, gm), UnorderedElementsAre("{", "n"));
  EXPECT_THAT(FirstNames(gr, gmore), UnorderedElementsAre(","));
  EXPECT_THAT(FirstNames(gr, gobj), UnorderedElementsAre("{"));
  std::vector<NonterminalId> corners(gr.left_corners(gm).begin(), gr.left_corners(gm).end());
  EXPECT_THAT(corners, UnorderedElementsAre(gv));
  corners.assign(gr.left_corners(gv).begin(), gr.left_corners(gv).end());
  EXPECT_THAT(corners, UnorderedElementsAre(gobj));
  // members ::= . value more, members ::= . (end)
  EXPECT_EQ(gr.predicted_positions(gm).size(), 2u);
  EXPECT_GT(gr.ByteSizeEstimate(), sizeof(Grammar));
  // Positions: advancing the dot is +1, the end is kEndOfRule.
  for (RuleId r = 0; r < gr.num_rules(); ++r) {
    const uint32_t p = gr.rule_first_pos(r);
    for (size_t k = 0; k < gr.rule_length(r); ++k) {
      EXPECT_EQ(gr.pos_symbol(p + k), gr.rule_rhs(r)[k].bits());
      EXPECT_EQ(gr.pos_rule(p + k), r);
    }
    EXPECT_EQ(gr.pos_symbol(p + gr.rule_length(r)), Grammar::kEndOfRule);
  }
  (void)rb;
}

TEST(GrammarBuilderTest, EmptyLanguageOfOnlyEpsilon) {
  GrammarBuilder b;
  const NonterminalId s = b.Nonterminal("s");
  b.AddRule(s, {});
  b.SetStart(s);
  auto g = b.Build();
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE((*g)->accepts_empty());
  EXPECT_EQ((*g)->num_lexemes(), 0u);
}

}  // namespace
}  // namespace maskd
