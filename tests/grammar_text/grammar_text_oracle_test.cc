// Brute-force mask oracle for the grammar-text front ends: random grammars
// (literals, classes and negated classes, groups, alternation, * + ? {m}
// {m,} {m,n} {,n}, recursion through rules) are written out as GBNF and as
// Lark, compiled for a small random vocabulary, and every token of every
// mask along random walks is checked against a reference that knows nothing
// of the front ends: it lowers the same syntax tree to a plain character
// CFG and decides "some sentence starts with these bytes" by least
// fixpoints over all rules (derives[A][i][j], prefix[A][i]).
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

constexpr uint32_t kInf = ~0u;

struct Node {
  enum Kind { kLit, kClass, kRef, kAlt, kSeq, kRep, kToken } kind = kSeq;
  std::string text;  // literal, or class characters, or kToken: special token indices
  bool negated = false;
  int ref = 0;
  std::vector<Node> kids;
  uint32_t min = 0, max = 0;
};

// --- Random grammars ---

// Special tokens in the token-terminal variant: the reference reads special
// token k as the character kSpecialChar + k, which no text terminal matches.
constexpr char kSpecialChar = 'P';
constexpr int kNumSpecials = 2;
bool IsSpecialChar(char c) { return c >= kSpecialChar && c < kSpecialChar + kNumSpecials; }

Node RandomNode(std::mt19937& rng, int num_rules, int depth, bool tokens = false) {
  Node n;
  if (tokens && rng() % 5 == 0) {
    n.kind = Node::kToken;
    std::set<char> which;
    const int len = 1 + static_cast<int>(rng() % 2);
    for (int i = 0; i < len; ++i) which.insert(static_cast<char>(rng() % kNumSpecials));
    n.text.assign(which.begin(), which.end());
    return n;
  }
  const int pick = static_cast<int>(rng() % (depth <= 0 ? 3 : 6));
  switch (pick) {
    case 0: {
      n.kind = Node::kLit;
      const int len = static_cast<int>(rng() % 3);  // "" is allowed
      for (int i = 0; i < len; ++i) n.text.push_back(static_cast<char>('a' + rng() % 3));
      break;
    }
    case 1: {
      n.kind = Node::kClass;
      n.negated = rng() % 4 == 0;
      std::set<char> chars;
      const int len = 1 + static_cast<int>(rng() % 2);
      for (int i = 0; i < len; ++i) chars.insert(static_cast<char>('a' + rng() % 3));
      n.text.assign(chars.begin(), chars.end());
      break;
    }
    case 2:
      n.kind = Node::kRef;
      n.ref = static_cast<int>(rng() % num_rules);
      break;
    case 3:
    case 4: {
      n.kind = pick == 3 ? Node::kAlt : Node::kSeq;
      const int k = (pick == 3 ? 2 : 0) + static_cast<int>(rng() % 3);
      for (int i = 0; i < k; ++i) n.kids.push_back(RandomNode(rng, num_rules, depth - 1, tokens));
      break;
    }
    default: {
      n.kind = Node::kRep;
      n.kids.push_back(RandomNode(rng, num_rules, depth - 1, tokens));
      static constexpr std::pair<uint32_t, uint32_t> kForms[] = {
          {0, kInf}, {1, kInf}, {0, 1}, {2, 2}, {2, kInf}, {1, 3}, {0, 2}};
      std::tie(n.min, n.max) = kForms[rng() % std::size(kForms)];
      break;
    }
  }
  return n;
}

// --- Writing a tree as GBNF and as Lark ---

// The id of special token 0 in the vocabulary of the grammar being written.
TokenId first_special_id = 0;

std::string Gbnf(const Node& n) {
  switch (n.kind) {
    case Node::kToken: {
      std::vector<std::string> alts;
      for (char k : n.text) alts.push_back(absl::StrCat("<[", first_special_id + k, "]>"));
      return "(" + absl::StrJoin(alts, " | ") + ")";
    }
    case Node::kLit:
      return "\"" + n.text + "\"";
    case Node::kClass:
      return "[" + std::string(n.negated ? "^" : "") + n.text + "]";
    case Node::kRef:
      return absl::StrCat("r", n.ref);
    case Node::kAlt:
    case Node::kSeq: {
      std::vector<std::string> parts;
      for (const Node& k : n.kids) parts.push_back(Gbnf(k));
      return "(" + absl::StrJoin(parts, n.kind == Node::kAlt ? " | " : " ") + ")";
    }
    case Node::kRep: {
      const std::string x = "(" + Gbnf(n.kids[0]) + ")";
      if (n.min == 0 && n.max == kInf) return x + "*";
      if (n.min == 1 && n.max == kInf) return x + "+";
      if (n.min == 0 && n.max == 1) return x + "?";
      if (n.max == kInf) return absl::StrCat(x, "{", n.min, ",}");
      if (n.min == n.max) return absl::StrCat(x, "{", n.min, "}");
      if (n.min == 0) return absl::StrCat(x, "{,", n.max, "}");
      return absl::StrCat(x, "{", n.min, ",", n.max, "}");
    }
  }
  return "";
}

// In Lark every terminal is a lexeme, matched greedily: single characters
// keep the language character-level, as in GBNF.
std::string Lark(const Node& n) {
  switch (n.kind) {
    case Node::kToken: {
      std::vector<std::string> ids;
      for (char k : n.text) ids.push_back(absl::StrCat(first_special_id + k));
      return "<[" + absl::StrJoin(ids, ",") + "]>";
    }
    case Node::kLit: {
      if (n.text.empty()) return "\"\"";
      std::vector<std::string> chars;
      for (char c : n.text) chars.push_back(std::string("\"") + c + "\"");
      return "(" + absl::StrJoin(chars, " ") + ")";
    }
    case Node::kClass:
      return "/[" + std::string(n.negated ? "^" : "") + n.text + "]/";
    case Node::kRef:
      return absl::StrCat("r", n.ref);
    case Node::kAlt:
    case Node::kSeq: {
      std::vector<std::string> parts;
      for (const Node& k : n.kids) parts.push_back(Lark(k));
      return "(" + absl::StrJoin(parts, n.kind == Node::kAlt ? " | " : " ") + ")";
    }
    case Node::kRep: {
      const std::string x = "(" + Lark(n.kids[0]) + ")";
      if (n.min == 0 && n.max == kInf) return x + "*";
      if (n.min == 1 && n.max == kInf) return x + "+";
      if (n.min == 0 && n.max == 1)
        return (n.min + n.max) % 2 ? "[" + Lark(n.kids[0]) + "]" : x + "?";
      if (n.max == kInf) return absl::StrCat("(", x, " ~ ", n.min, " ", x, "*)");
      if (n.min == n.max) return absl::StrCat(x, " ~ ", n.min);
      return absl::StrCat(x, " ~ ", n.min, "..", n.max);
    }
  }
  return "";
}

// --- The reference: a plain character CFG and fixpoints ---

struct RefSymbol {
  bool terminal;
  int nt = 0;
  std::string chars;  // terminal: the class (or one literal character)
  bool negated = false;
  bool Matches(char c) const {
    if (IsSpecialChar(c)) return !negated && chars.find(c) != std::string::npos;
    return (chars.find(c) != std::string::npos) != negated;
  }
};

class Reference {
 public:
  explicit Reference(const std::vector<Node>& rules) {
    nts_ = static_cast<int>(rules.size());
    rules_.resize(nts_);
    for (int r = 0; r < static_cast<int>(rules.size()); ++r) {
      const RefSymbol body = Lower(rules[r]);  // Lower grows rules_
      rules_[r].push_back({body});
    }
    productive_.assign(nts_, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (int a = 0; a < nts_; ++a) {
        if (productive_[a]) continue;
        for (const auto& body : rules_[a]) {
          bool all = true;
          for (const RefSymbol& s : body) all = all && (s.terminal || productive_[s.nt]);
          if (all) {
            productive_[a] = changed = true;
            break;
          }
        }
      }
    }
  }

  // Whether w is a sentence (complete) / starts one (viable).
  bool Complete(const std::string& w) const { return Solve(w).first; }
  bool Viable(const std::string& w) const { return Solve(w).second; }

 private:
  int NewNt() {
    rules_.emplace_back();
    productive_.push_back(false);
    return nts_++;
  }
  RefSymbol Nt(int a) { return {false, a, "", false}; }

  // A symbol deriving exactly n's language.
  RefSymbol Lower(const Node& n) {
    switch (n.kind) {
      case Node::kLit: {
        const int a = NewNt();
        std::vector<RefSymbol> body;
        for (char c : n.text) body.push_back({true, 0, std::string(1, c), false});
        rules_[a].push_back(body);
        return Nt(a);
      }
      case Node::kClass:
        return {true, 0, n.text, n.negated};
      case Node::kToken: {
        std::string chars;
        for (char k : n.text) chars.push_back(static_cast<char>(kSpecialChar + k));
        return {true, 0, chars, false};
      }
      case Node::kRef:
        return Nt(n.ref);
      case Node::kAlt: {
        const int a = NewNt();
        for (const Node& k : n.kids) {
          const RefSymbol body = Lower(k);
          rules_[a].push_back({body});
        }
        return Nt(a);
      }
      case Node::kSeq: {
        std::vector<RefSymbol> body;
        for (const Node& k : n.kids) body.push_back(Lower(k));
        const int a = NewNt();
        rules_[a].push_back(body);
        return Nt(a);
      }
      case Node::kRep: {
        const RefSymbol x = Lower(n.kids[0]);
        const int a = NewNt();
        if (n.max == kInf) {
          const int star = NewNt();  // star -> epsilon | x star
          rules_[star].push_back({});
          rules_[star].push_back({x, Nt(star)});
          std::vector<RefSymbol> body(n.min, x);
          body.push_back(Nt(star));
          rules_[a].push_back(body);
        } else {
          for (uint32_t k = n.min; k <= n.max; ++k)
            rules_[a].push_back(std::vector<RefSymbol>(k, x));
        }
        return Nt(a);
      }
    }
    return Nt(0);
  }

  // (derives[0][0][n], prefix[0][0]) for nonterminal 0, the start.
  std::pair<bool, bool> Solve(const std::string& w) const {
    const int n = static_cast<int>(w.size());
    // d[a][i][j]: a derives w[i, j).
    std::vector<std::vector<std::vector<char>>> d(
        nts_, std::vector<std::vector<char>>(n + 1, std::vector<char>(n + 1, 0)));
    // Positions reachable from i after the symbols of a body.
    auto step = [&](const RefSymbol& s, const std::vector<char>& from) {
      std::vector<char> to(n + 1, 0);
      for (int i = 0; i <= n; ++i) {
        if (!from[i]) continue;
        if (s.terminal) {
          if (i < n && s.Matches(w[i])) to[i + 1] = 1;
        } else {
          for (int j = i; j <= n; ++j) {
            if (d[s.nt][i][j]) to[j] = 1;
          }
        }
      }
      return to;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (int a = 0; a < nts_; ++a) {
        for (const auto& body : rules_[a]) {
          for (int i = 0; i <= n; ++i) {
            std::vector<char> at(n + 1, 0);
            at[i] = 1;
            for (const RefSymbol& s : body) at = step(s, at);
            for (int j = i; j <= n; ++j) {
              if (at[j] && !d[a][i][j]) d[a][i][j] = changed = true;
            }
          }
        }
      }
    }
    // p[a][i]: a derives w[i, n) followed by something.
    std::vector<std::vector<char>> p(nts_, std::vector<char>(n + 1, 0));
    for (int a = 0; a < nts_; ++a) p[a][n] = productive_[a];
    auto rest_productive = [&](const std::vector<RefSymbol>& body, size_t from) {
      for (size_t k = from; k < body.size(); ++k) {
        if (!body[k].terminal && !productive_[body[k].nt]) return false;
      }
      return true;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (int a = 0; a < nts_; ++a) {
        for (const auto& body : rules_[a]) {
          for (int i = 0; i < n; ++i) {
            if (p[a][i]) continue;
            std::vector<char> at(n + 1, 0);
            at[i] = 1;
            bool ok = false;
            for (size_t k = 0; k < body.size() && !ok; ++k) {
              const RefSymbol& s = body[k];
              // The symbol that crosses the end of w.
              for (int j = i; j < n && !ok; ++j) {
                if (!at[j]) continue;
                const bool crosses = s.terminal ? (j == n - 1 && s.Matches(w[j])) : p[s.nt][j] != 0;
                if (crosses && rest_productive(body, k + 1)) ok = true;
              }
              if (at[n] && rest_productive(body, k)) ok = true;
              at = step(s, at);
            }
            if (ok) p[a][i] = changed = true;
          }
        }
      }
    }
    if (n == 0) return {d[0][0][0] != 0, productive_[0] != 0};
    return {d[0][0][n] != 0, p[0][0] != 0};
  }

  int nts_ = 0;
  std::vector<std::vector<std::vector<RefSymbol>>> rules_;
  std::vector<char> productive_;
};

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

class GrammarTextOracleTest : public ::testing::TestWithParam<EbnfDialect> {};
INSTANTIATE_TEST_SUITE_P(Dialects, GrammarTextOracleTest,
                         ::testing::Values(EbnfDialect::kGbnf, EbnfDialect::kLark));

// One random grammar (seeded), written in DIALECT, with its syntax trees.
struct RandomGrammar {
  std::vector<Node> rules;
  std::string text;
};

// Rules r0, r1, ... written in DIALECT.
std::string GrammarText(const std::vector<Node>& rules, EbnfDialect dialect) {
  std::string text;
  for (size_t r = 0; r < rules.size(); ++r) {
    text += dialect == EbnfDialect::kGbnf ? absl::StrCat("r", r, " ::= ", Gbnf(rules[r]), "\n")
                                          : absl::StrCat("r", r, ": ", Lark(rules[r]), "\n");
  }
  return text;
}

RandomGrammar MakeRandomGrammar(std::mt19937& rng, EbnfDialect dialect) {
  RandomGrammar g;
  const int num_rules = 1 + static_cast<int>(rng() % 3);
  for (int r = 0; r < num_rules; ++r) g.rules.push_back(RandomNode(rng, num_rules, 3));
  g.text = GrammarText(g.rules, dialect);
  return g;
}

// TEXT compiled for TOK, starting at r0.
absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileText(
    const std::string& text, EbnfDialect dialect, std::shared_ptr<const Tokenizer> tok,
    const CompileOptions& options = CompileOptions()) {
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = dialect;
  spec.text = text;
  spec.start_rule = "r0";
  return CompileGrammar(spec, options, std::move(tok));
}

// Every mask token of random grammars against the reference, over `seeds`
// grammars, each with a random vocabulary of `vocab_size` tokens of up to
// `max_len` bytes from {a, b, c} (plus the single letters a, b, c, x).
struct MaskCheckCounts {
  int compiled = 0;
  int steps = 0;
  size_t state_mask_hits = 0;  // masks copied from the parse-state cache
};

// How the masks are checked: `walks` random walks of `steps` masks per
// grammar, each by a fresh matcher of the same compiled grammar.
struct MaskCheckShape {
  int walks = 1;
  int steps = 8;
  CompileOptions options;
};

// (A void function: gtest's ASSERT_* return from it.)
void CheckMasksAgainstReference(EbnfDialect dialect, int first_seed, int seeds, size_t vocab_size,
                                size_t max_len, MaskCheckCounts* counts,
                                const MaskCheckShape& shape = MaskCheckShape()) {
  int& compiled = counts->compiled;
  int& steps = counts->steps;
  for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
    std::mt19937 rng(seed);
    const auto [rules, text] = MakeRandomGrammar(rng, dialect);
    Reference reference(rules);

    std::set<std::string> vocab = {"a", "b", "c", "x"};
    while (vocab.size() < vocab_size) {
      std::string s;
      const size_t len = 1 + rng() % max_len;
      for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 3));
      vocab.insert(s);
    }
    auto tok = std::make_shared<SmallVocabTokenizer>(
        std::vector<std::string>(vocab.begin(), vocab.end()), absl::StrCat("gt-oracle-", seed));
    auto g = CompileText(text, dialect, tok, shape.options);
    if (!g.ok()) {
      EXPECT_FALSE(reference.Viable("")) << "seed " << seed << "\n" << text << g.status();
      EXPECT_NE(g.status().message().find("matches nothing"), std::string::npos) << g.status();
      continue;
    }
    ++compiled;
    for (int walk = 0; walk < shape.walks; ++walk) {
      auto m = Matcher::Create(*g);
      const size_t n = tok->vocab_size();
      const TokenId eos = tok->eos_ids()[0];
      std::vector<uint32_t> mask((n + 31) / 32);
      std::string output;
      for (int step = 0; step < shape.steps; ++step) {
        m->FillMask(mask);
        std::vector<TokenId> allowed;
        for (TokenId t = 0; t < n; ++t) {
          const bool expected = t == eos
                                    ? reference.Complete(output)
                                    : reference.Viable(output + std::string(tok->token_bytes(t)));
          ASSERT_EQ(Bit(mask, t), expected) << "seed " << seed << " output '" << output
                                            << "' token '" << tok->token_bytes(t) << "'\n"
                                            << text;
          if (expected && t != eos) allowed.push_back(t);
        }
        ASSERT_EQ(m->CanStop(), reference.Complete(output)) << "seed " << seed << "\n" << text;
        ++steps;
        if (allowed.empty()) break;
        const TokenId t = allowed[rng() % allowed.size()];
        ASSERT_TRUE(m->AcceptToken(t));
        output += tok->token_bytes(t);
      }
    }
    counts->state_mask_hits +=
        std::static_pointer_cast<const CompiledGrammarImpl>(*g)->state_masks().hits();
  }
}

TEST_P(GrammarTextOracleTest, MasksMatchBruteForce) {
  MaskCheckCounts counts;
  CheckMasksAgainstReference(GetParam(), 0, 200, 20, 4, &counts);
  // The generator must mostly produce usable grammars for this to prove much.
  EXPECT_GT(counts.compiled, 120);
  EXPECT_GT(counts.steps, 450);
}

// Long tokens over a small alphabet: the mask walk meets the same parser
// state under many trie nodes, so most steps come from the matcher's walk
// memo (compiler/matcher/walk_memo.h) and deep virtual frames are replayed
// into the parser when a step is new. Every mask must still be exact.
TEST_P(GrammarTextOracleTest, MasksMatchBruteForceWithLongTokens) {
  MaskCheckCounts counts;
  CheckMasksAgainstReference(GetParam(), 1000, 24, 60, 8, &counts);
  EXPECT_GT(counts.compiled, 12);
  EXPECT_GT(counts.steps, 50);
}

// Masks cached by parse state (compiler/matcher/state_mask_cache.h) at every
// lexer position: several walks of longer outputs per grammar, so states come
// back within a walk and across matchers, and every mask, cached or walked,
// must be exact.
TEST_P(GrammarTextOracleTest, MasksCachedByParseStateMatchBruteForce) {
  MaskCheckCounts counts;
  MaskCheckShape shape;
  shape.walks = 3;
  shape.steps = 12;
  shape.options.state_mask_hot_nodes = 0;
  CheckMasksAgainstReference(GetParam(), 2000, 40, 24, 3, &counts, shape);
  EXPECT_GT(counts.compiled, 25);
  EXPECT_GT(counts.steps, 240);
  EXPECT_GT(counts.state_mask_hits, 90u);
}

// The walk memo names a parser set by its items AND the sets their origins
// name: after "a(c" and "b(c" the top sets hold the same dotted item
// p -> "(" p . ")", waiting in sets that differ (root -> "a" . p "x" versus
// root -> "b" . p "y"). Taking them for one state would carry "a(c)"'s
// verdict on "y" over to "b(c)y". (p is recursive, so no lexeme merge hides
// it: every byte is its own lexeme and the walk runs the parser.)
TEST(GrammarTextWalkMemoTest, SetsWaitingInDifferentSetsStayApart) {
  // Every token starts with "s": the walk's base set is the one after it, so
  // the sets after "sa" and "sb" are walk sets (named by the memo's ids).
  const std::vector<std::string> words = {
      "sa(c)x",   "sa(c)y",     "sb(c)x",     "sb(c)y",     "sa((c))x", "sb((c))y", "sb((c))x",
      "sa((c))y", "sa(((c)))x", "sb(((c)))x", "sb(((c)))y", "sb(c",     "sa(c"};
  auto tok = std::make_shared<SmallVocabTokenizer>(words, "gt-walk-memo");
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = EbnfDialect::kGbnf;
  spec.text =
      "root ::= \"s\" q\nq ::= \"a\" p \"x\" | \"b\" p \"y\"\np ::= \"(\" p \")\" | \"c\"\n";
  auto g = CompileGrammar(spec, CompileOptions(), tok);
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  std::vector<uint32_t> mask((tok->vocab_size() + 31) / 32);
  m->FillMask(mask);
  for (TokenId t = 0; t < words.size(); ++t) {  // then EOS, not allowed here
    const std::string& w = words[t];
    const bool expected = w.back() == 'c' || (w[1] == 'a') == (w.back() == 'x');
    EXPECT_EQ(Bit(mask, t), expected) << "'" << w << "'";
  }
  EXPECT_FALSE(Bit(mask, tok->eos_ids()[0]));
}

// Masks cached by parse state: after "sa(c" and "sb(c" the top sets hold
// the same item p -> "(" p . ")", waiting in sets that differ only through a
// unit rule predicted there (w -> . p) and the item waiting on w
// (q -> "a" . w "x" versus q -> "b" . w "y"). The state's name must reach
// through both, or "sa(c"'s cached mask would allow ")x" after "sb(c".
TEST(GrammarTextStateMaskTest, StatesCompletingIntoDifferentContextsStayApart) {
  const std::vector<std::string> words = {"s", "a", "b", "(", "c", ")", ")x", ")y", "x", "y", "))"};
  auto tok = std::make_shared<SmallVocabTokenizer>(words, "gt-state-mask");
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = EbnfDialect::kGbnf;
  spec.text =
      "root ::= \"s\" q\nq ::= \"a\" w \"x\" | \"b\" w \"y\"\nw ::= p\n"
      "p ::= \"(\" p \")\" | \"c\"\n";
  CompileOptions options;
  options.state_mask_hot_nodes = 0;
  auto g = CompileGrammar(spec, options, tok);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<uint32_t> mask((tok->vocab_size() + 31) / 32);
  auto allowed_after = [&](const std::string& output) {
    auto m = Matcher::Create(*g);
    EXPECT_TRUE(m->AcceptBytes(output)) << output;
    m->FillMask(mask);
    std::set<std::string> allowed;
    for (TokenId t = 0; t < words.size(); ++t) {
      if (Bit(mask, t)) allowed.insert(words[t]);
    }
    return allowed;
  };
  const auto& cache = std::static_pointer_cast<const CompiledGrammarImpl>(*g)->state_masks();
  for (int round = 0; round < 3; ++round) {  // later rounds from the cache
    EXPECT_EQ(allowed_after("sa(c"), (std::set<std::string>{")", ")x"}));
    EXPECT_EQ(allowed_after("sb(c"), (std::set<std::string>{")", ")y"}));
    EXPECT_EQ(allowed_after("sa((c"), (std::set<std::string>{")", "))"}));
  }
  EXPECT_GE(cache.hits(), 5u);
  // Rolled-back sets are named again: one matcher goes "sa(c" -> "s" -> "sb(c".
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes("s"));
  ASSERT_TRUE(m->AcceptBytes("a("));
  ASSERT_TRUE(m->AcceptBytes("c"));
  m->FillMask(mask);
  EXPECT_TRUE(Bit(mask, 6));  // ")x"
  ASSERT_TRUE(m->Rollback(2).ok());
  ASSERT_TRUE(m->AcceptBytes("b("));
  ASSERT_TRUE(m->AcceptBytes("c"));
  m->FillMask(mask);
  EXPECT_FALSE(Bit(mask, 6));  // ")x"
  EXPECT_TRUE(Bit(mask, 7));   // ")y"
}

// The parser against the chart reference on random strings, valid or not: the
// matcher is fed one character token at a time and must accept exactly the
// prefixes the reference calls viable (refusing the first character that
// leaves the language, and keeping its state when it refuses), and be able to
// stop exactly after complete sentences. The masks test above walks only
// valid prefixes; this one also proves the rejections.
TEST_P(GrammarTextOracleTest, ParserAgreesWithChartReferenceOnRandomStrings) {
  const EbnfDialect dialect = GetParam();
  const std::string alphabet = "abcx";
  auto tok = std::make_shared<SmallVocabTokenizer>(std::vector<std::string>{"a", "b", "c", "x"},
                                                   "gt-oracle-chars");
  int compiled = 0, refused_chars = 0, complete = 0;
  for (int seed = 0; seed < 150; ++seed) {
    std::mt19937 rng(1000 + seed);
    const auto [rules, text] = MakeRandomGrammar(rng, dialect);
    Reference reference(rules);
    auto g = CompileText(text, dialect, tok);
    if (!g.ok()) {
      EXPECT_FALSE(reference.Viable("")) << "seed " << seed << "\n" << text << g.status();
      continue;
    }
    ++compiled;
    for (int trial = 0; trial < 12; ++trial) {
      auto m = Matcher::Create(*g);
      std::string accepted;
      const size_t len = rng() % 9;
      for (size_t i = 0; i < len; ++i) {
        const TokenId t = static_cast<TokenId>(rng() % alphabet.size());  // ids follow the vocab
        const char c = alphabet[t];
        const bool viable = reference.Viable(accepted + c);
        ASSERT_EQ(m->AcceptToken(t), viable)
            << "seed " << seed << " after '" << accepted << "' char '" << c << "'\n"
            << text;
        if (viable) {
          accepted += c;
        } else {
          ++refused_chars;
        }
      }
      ASSERT_EQ(m->CanStop(), reference.Complete(accepted))
          << "seed " << seed << " '" << accepted << "'\n"
          << text;
      complete += reference.Complete(accepted) ? 1 : 0;
    }
  }
  // Both verdicts must occur often for the agreement to mean something.
  EXPECT_GT(compiled, 90);
  EXPECT_GT(refused_chars, 500);
  EXPECT_GT(complete, 100);
}

// The same oracle with special tokens as grammar terminals: random grammars
// mix text with token references (GBNF `<[id]>`, Lark `<[id,id]>`), the
// vocabulary has two special tokens besides EOS, and the reference reads
// each special token as one character no text terminal matches. So text is
// never satisfied by a special token's bytes, nor a token terminal by text.
TEST_P(GrammarTextOracleTest, MasksWithSpecialTokensMatchBruteForce) {
  const EbnfDialect dialect = GetParam();
  int compiled = 0, steps = 0, specials_taken = 0;
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(1000 + seed);
    const int num_rules = 1 + static_cast<int>(rng() % 3);
    std::vector<Node> rules;
    for (int r = 0; r < num_rules; ++r) rules.push_back(RandomNode(rng, num_rules, 3, true));
    std::set<std::string> text_vocab = {"a", "b", "c", "x"};
    while (text_vocab.size() < 16) {
      std::string s;
      const size_t len = 1 + rng() % 4;
      for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 3));
      text_vocab.insert(s);
    }
    std::vector<std::string> vocab(text_vocab.begin(), text_vocab.end());
    first_special_id = static_cast<TokenId>(vocab.size());
    // Special tokens whose bytes a text terminal could match: the engine
    // must still never read them as text.
    vocab.push_back("ab");
    vocab.push_back("c");
    auto tok = std::make_shared<SmallVocabTokenizer>(vocab, absl::StrCat("gt-special-", seed));
    for (int k = 0; k < kNumSpecials; ++k) tok->MarkSpecial(first_special_id + k);
    const std::string text = GrammarText(rules, dialect);
    Reference reference(rules);
    auto g = CompileText(text, dialect, tok);
    if (!g.ok()) {
      EXPECT_FALSE(reference.Viable("")) << "seed " << seed << "\n" << text << g.status();
      EXPECT_NE(g.status().message().find("matches nothing"), std::string::npos) << g.status();
      continue;
    }
    ++compiled;
    auto m = Matcher::Create(*g);
    const size_t n = tok->vocab_size();
    const TokenId eos = tok->eos_ids()[0];
    // What the reference reads for token t.
    auto chars_of = [&](TokenId t) {
      if (t >= first_special_id && t < first_special_id + kNumSpecials) {
        return std::string(1, static_cast<char>(kSpecialChar + (t - first_special_id)));
      }
      return std::string(tok->token_bytes(t));
    };
    std::vector<uint32_t> mask((n + 31) / 32);
    std::string output;
    for (int step = 0; step < 8; ++step) {
      m->FillMask(mask);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < n; ++t) {
        const bool expected =
            t == eos ? reference.Complete(output) : reference.Viable(output + chars_of(t));
        ASSERT_EQ(Bit(mask, t), expected)
            << "seed " << seed << " output '" << output << "' token '" << chars_of(t) << "'\n"
            << text;
        if (expected && t != eos) allowed.push_back(t);
      }
      ASSERT_EQ(m->CanStop(), reference.Complete(output)) << "seed " << seed << "\n" << text;
      ++steps;
      if (allowed.empty()) break;
      // Prefer special tokens half the time so walks go through them.
      std::vector<TokenId> special;
      for (TokenId t : allowed) {
        if (tok->is_special(t)) special.push_back(t);
      }
      const TokenId t = !special.empty() && rng() % 2 == 0 ? special[rng() % special.size()]
                                                           : allowed[rng() % allowed.size()];
      specials_taken += tok->is_special(t) ? 1 : 0;
      ASSERT_TRUE(m->AcceptToken(t));
      output += chars_of(t);
      if (step == 3) {
        // Rollback over whatever was taken (special tokens included) and
        // take it again: the masks must not change.
        std::vector<uint32_t> before(mask.size());
        m->FillMask(before);
        ASSERT_TRUE(m->Rollback(1).ok());
        ASSERT_TRUE(m->AcceptToken(t));
        std::vector<uint32_t> after(mask.size());
        m->FillMask(after);
        ASSERT_EQ(before, after) << "seed " << seed;
      }
    }
  }
  EXPECT_GT(compiled, 120);
  EXPECT_GT(steps, 450);
  EXPECT_GT(specials_taken, 100);
}

}  // namespace
}  // namespace maskd
