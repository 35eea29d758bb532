// The Earley parser against a brute-force viable-prefix oracle on random
// small grammars (epsilon rules, left/right recursion, ambiguity,
// unproductive and unreachable rules): for every lexeme sequence up to a
// length, Allowed() and IsAccepting() must equal the oracle's answer, Scan
// must succeed exactly on allowed lexemes, Pop must restore the state, and
// ScanAny must equal the union of the individual scans.
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/grammar/earley_parser.h"
#include "compiler/grammar/grammar.h"
#include "gtest/gtest.h"
#include "tests/grammar/viable_prefix_oracle.h"

namespace maskd {
namespace {

using testing::ViablePrefixOracle;

struct RandomGrammar {
  GrammarBuilder builder;
  size_t num_lexemes = 0;
};

RandomGrammar MakeRandomGrammar(std::mt19937& rng) {
  RandomGrammar g;
  g.num_lexemes = 2 + rng() % 2;
  const size_t num_nts = 2 + rng() % 4;
  for (size_t t = 0; t < g.num_lexemes; ++t) {
    g.builder.AddLexeme(std::string(1, static_cast<char>('a' + t)), static_cast<RegexExprId>(t));
  }
  std::vector<NonterminalId> nts;
  for (size_t a = 0; a < num_nts; ++a) {
    nts.push_back(g.builder.Nonterminal(std::string(1, static_cast<char>('A' + a))));
  }
  for (NonterminalId a : nts) {
    const size_t num_rules = 1 + rng() % 3;
    for (size_t r = 0; r < num_rules; ++r) {
      // Short bodies with many nonterminals: epsilon rules, recursion and
      // ambiguity all come up often.
      const size_t len = rng() % 4;
      std::vector<Symbol> rhs;
      for (size_t k = 0; k < len; ++k) {
        if (rng() % 5 < 2) {
          rhs.push_back(Symbol::Lexeme(static_cast<LexemeId>(rng() % g.num_lexemes)));
        } else {
          rhs.push_back(Symbol::Nonterminal(nts[rng() % num_nts]));
        }
      }
      g.builder.AddRule(a, std::move(rhs));
    }
  }
  g.builder.SetStart(nts[0]);
  return g;
}

class OracleWalk {
 public:
  OracleWalk(const ViablePrefixOracle& oracle, const Grammar& grammar, size_t num_lexemes,
             EarleyParser& parser, std::mt19937& rng)
      : oracle_(oracle), parser_(parser), rng_(rng), num_lexemes_(num_lexemes) {
    to_grammar_.assign(num_lexemes, std::nullopt);
    for (LexemeId t = 0; t < grammar.num_lexemes(); ++t) {
      to_grammar_[grammar.builder_lexeme_id(t)] = t;
    }
  }

  // Depth-first over all viable sequences up to max_len (and one step past:
  // every lexeme is tried at every node).
  void Run(std::vector<LexemeId>& w, size_t max_len) {
    ++nodes_;
    const std::set<LexemeId> expected = Allowed(w);
    ASSERT_EQ(ToBuilderIds(parser_.Allowed()), expected) << Describe(w);
    ASSERT_EQ(parser_.IsAccepting(), IsSentence(w)) << Describe(w);
    ASSERT_EQ(parser_.Depth(), w.size());
    if (w.size() >= max_len) return;
    const LexemeSet before = parser_.Allowed();

    // ScanAny over a random subset equals the union of single scans.
    if (!expected.empty()) {
      LexemeSet subset(parser_.grammar().num_lexemes());
      std::set<LexemeId> union_allowed;
      bool union_accepting = false, any = false;
      for (LexemeId t = 0; t < num_lexemes_; ++t) {
        if (!to_grammar_[t] || rng_() % 2 == 0) continue;
        subset.Insert(*to_grammar_[t]);
        if (!expected.contains(t)) continue;
        any = true;
        w.push_back(t);
        for (LexemeId u : Allowed(w)) union_allowed.insert(u);
        union_accepting = union_accepting || IsSentence(w);
        w.pop_back();
      }
      ASSERT_EQ(parser_.ScanAny(subset), any) << Describe(w);
      if (any) {
        ASSERT_EQ(ToBuilderIds(parser_.Allowed()), union_allowed) << Describe(w) << " ScanAny";
        ASSERT_EQ(parser_.IsAccepting(), union_accepting) << Describe(w) << " ScanAny";
        parser_.Pop(1);
      }
      ASSERT_EQ(parser_.Allowed(), before);
    }

    for (LexemeId t = 0; t < num_lexemes_; ++t) {
      const bool allowed = expected.contains(t);
      if (!to_grammar_[t]) {
        ASSERT_FALSE(allowed) << "trimmed lexeme allowed by the oracle";
        continue;
      }
      ASSERT_EQ(parser_.Scan(*to_grammar_[t]), allowed) << Describe(w) << " + " << t;
      if (!allowed) {
        // A refused scan changes nothing.
        ASSERT_EQ(parser_.Depth(), w.size());
        ASSERT_EQ(parser_.Allowed(), before);
        continue;
      }
      w.push_back(t);
      Run(w, max_len);
      w.pop_back();
      if (::testing::Test::HasFatalFailure()) return;
      parser_.Pop(1);
      ASSERT_EQ(parser_.Depth(), w.size());
      ASSERT_EQ(parser_.Allowed(), before) << Describe(w) << " after Pop";
    }
  }

  size_t nodes() const { return nodes_; }

 private:
  // The oracle is slow (cubic fixpoints); ScanAny checks and the walk ask
  // about the same sequences, so answers are memoized.
  const std::set<LexemeId>& Allowed(const std::vector<LexemeId>& w) {
    auto it = allowed_cache_.find(w);
    if (it == allowed_cache_.end()) it = allowed_cache_.emplace(w, oracle_.Allowed(w)).first;
    return it->second;
  }
  bool IsSentence(const std::vector<LexemeId>& w) {
    auto it = sentence_cache_.find(w);
    if (it == sentence_cache_.end()) it = sentence_cache_.emplace(w, oracle_.IsSentence(w)).first;
    return it->second;
  }

  std::set<LexemeId> ToBuilderIds(const LexemeSet& s) const {
    std::set<LexemeId> out;
    s.ForEach([&](LexemeId t) { out.insert(parser_.grammar().builder_lexeme_id(t)); });
    return out;
  }
  std::string Describe(const std::vector<LexemeId>& w) const {
    std::string out = "grammar:\n" + parser_.grammar().DebugString() + "input:";
    for (LexemeId t : w) out += " " + std::to_string(t);
    return out;
  }

  const ViablePrefixOracle& oracle_;
  EarleyParser& parser_;
  std::mt19937& rng_;
  size_t num_lexemes_;
  std::vector<std::optional<LexemeId>> to_grammar_;
  size_t nodes_ = 0;
  std::map<std::vector<LexemeId>, std::set<LexemeId>> allowed_cache_;
  std::map<std::vector<LexemeId>, bool> sentence_cache_;
};

TEST(EarleyOracleTest, RandomGrammarsMatchViablePrefixOracle) {
  std::mt19937 rng(12345);
  size_t built = 0, rejected = 0, nodes = 0;
  for (int iteration = 0; iteration < 600; ++iteration) {
    RandomGrammar rg = MakeRandomGrammar(rng);
    ViablePrefixOracle oracle(rg.builder);
    auto grammar = rg.builder.Build();
    const bool start_productive = oracle.Productive(rg.builder.start());
    ASSERT_EQ(grammar.ok(), start_productive) << grammar.status();
    if (!grammar.ok()) {
      EXPECT_NE(grammar.status().message().find("grammar matches nothing"), std::string::npos);
      ++rejected;
      continue;
    }
    ++built;
    // Cover both ways of finding waiting items: indexed sets, linear scans,
    // and the default mix.
    EarleyOptions options;
    options.index_set_after_lookups = std::vector<uint32_t>{0, 4, ~0u}[iteration % 3];
    EarleyParser parser(*grammar, options);
    OracleWalk walk(oracle, **grammar, rg.num_lexemes, parser, rng);
    std::vector<LexemeId> w;
    walk.Run(w, 6);
    if (HasFatalFailure()) return;
    nodes += walk.nodes();
    // Reset returns to the empty input.
    parser.Reset();
    EXPECT_EQ(parser.Depth(), 0u);
    EXPECT_EQ(parser.IsAccepting(), oracle.IsSentence({}));
  }
  // The generator must exercise both outcomes and non-trivial languages.
  EXPECT_GT(built, 300u);
  EXPECT_GT(rejected, 5u);
  EXPECT_GT(nodes, 10000u);
}

// Hand-picked grammars where the classic Earley bugs live.
TEST(EarleyOracleTest, NullableAndRecursiveShapes) {
  struct Case {
    const char* name;
    std::vector<std::pair<int, std::vector<int>>> rules;  // >=0 nonterminal, -1-k lexeme k.
  };
  const std::vector<Case> cases = {
      // Aycock-Horspool's example: S -> A A A A, A -> a | E, E -> epsilon.
      {"aycock_horspool", {{0, {1, 1, 1, 1}}, {1, {-1}}, {1, {2}}, {2, {}}}},
      // Left recursion with a nullable tail: S -> S a | B, B -> epsilon | b.
      {"left_recursion", {{0, {0, -1}}, {0, {1}}, {1, {}}, {1, {-2}}}},
      // Right recursion: S -> a S | epsilon.
      {"right_recursion", {{0, {-1, 0}}, {0, {}}}},
      // Ambiguous: S -> S S | a | epsilon.
      {"ambiguous", {{0, {0, 0}}, {0, {-1}}, {0, {}}}},
      // Nullable cycle: S -> A b, A -> B, B -> A | epsilon | a.
      {"nullable_cycle", {{0, {1, -2}}, {1, {2}}, {2, {1}}, {2, {}}, {2, {-1}}}},
      // Balanced brackets: S -> ( S ) S | epsilon.
      {"dyck", {{0, {-1, 0, -2, 0}}, {0, {}}}},
  };
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GrammarBuilder b;
    b.AddLexeme("a", 0);
    b.AddLexeme("b", 1);
    std::vector<NonterminalId> nts;
    for (int i = 0; i < 3; ++i) nts.push_back(b.Nonterminal(std::string(1, 'S' + i)));
    std::set<int> defined;
    for (const auto& [lhs, rhs] : c.rules) {
      std::vector<Symbol> body;
      for (int s : rhs) {
        body.push_back(s >= 0 ? Symbol::Nonterminal(nts[s])
                              : Symbol::Lexeme(static_cast<LexemeId>(-1 - s)));
      }
      b.AddRule(nts[lhs], body);
      defined.insert(lhs);
    }
    // Give unused nonterminals a rule so they are not "undefined"; they are
    // unreachable and trimmed.
    for (int i = 0; i < 3; ++i) {
      if (!defined.contains(i)) b.AddRule(nts[i], {Symbol::Lexeme(0)});
    }
    b.SetStart(nts[0]);
    auto grammar = b.Build();
    ASSERT_TRUE(grammar.ok()) << grammar.status();
    ViablePrefixOracle oracle(b);
    EarleyParser parser(*grammar);
    OracleWalk walk(oracle, **grammar, 2, parser, rng);
    std::vector<LexemeId> w;
    walk.Run(w, 8);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace maskd
