// Masks in objects whose keys were taken (LexemeRole::kUniqueKey), checked
// against a brute-force reference on generated grammars whose lexemes are
// literals over {a, b} that may be prefixes of one another ("a" beside the
// key "ab"): there the lexer, which starts from the lexemes the items allow
// taken keys included (EarleyParser::LexAllowed), must read the bytes as
// the lexer of the keys still allowed does, ending a lexeme where only a
// taken key would go on (KeyNodeTable::KeyNode::parent).
//
// The reference lexes byte by byte with longest match over the literals the
// parser allows (EarleyParser::Allowed, the parser's unique-key check being
// trusted), and decides whether a state can still reach a sentence by
// trying each next lexeme.
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/grammar/earley_parser.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

// Lexing state of the reference: the parser and the bytes of the lexeme in
// progress.
struct RefState {
  EarleyParser parser;
  std::string partial;
};

class Reference {
 public:
  explicit Reference(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {}

  const std::string& Literal(LexemeId id) const { return grammar_->lexeme(id).name; }

  // Allowed lexemes extending `prefix` by at least `more` bytes.
  bool AnyExtends(const EarleyParser& p, const std::string& prefix, size_t more) const {
    bool any = false;
    p.Allowed().ForEach([&](LexemeId id) {
      const std::string& lit = Literal(id);
      any = any || (lit.size() >= prefix.size() + more && lit.starts_with(prefix));
    });
    return any;
  }

  // Ends the lexeme `text`: scans every allowed lexeme spelled so.
  bool End(EarleyParser& p, const std::string& text) const {
    LexemeSet scanned(grammar_->num_lexemes());
    p.Allowed().ForEach([&](LexemeId id) {
      if (Literal(id) == text) scanned.Insert(id);
    });
    return !scanned.Empty() && p.ScanAny(scanned);
  }

  bool Step(RefState& s, char c) const {
    if (AnyExtends(s.parser, s.partial + c, 0)) {
      s.partial += c;
      return true;
    }
    if (s.partial.empty() || !End(s.parser, s.partial)) return false;
    s.partial = std::string(1, c);
    return AnyExtends(s.parser, s.partial, 0);
  }

  bool CanStop(const RefState& s) const {
    if (s.partial.empty()) return s.parser.IsAccepting();
    EarleyParser p = s.parser;
    return End(p, s.partial) && p.IsAccepting();
  }

  // Some byte string takes `s` to a sentence, within `depth` more lexemes.
  bool Viable(const RefState& s, int depth) const {
    if (s.partial.empty() && s.parser.IsAccepting()) return true;
    std::set<std::string> ends;
    s.parser.Allowed().ForEach([&](LexemeId id) {
      if (Literal(id).starts_with(s.partial)) ends.insert(Literal(id));
    });
    for (const std::string& v : ends) {
      EarleyParser p = s.parser;
      if (!End(p, v)) continue;
      if (p.IsAccepting()) return true;
      if (depth == 0) continue;
      // Longest match: the next lexeme's first byte must not extend v.
      bool found = false;
      p.Allowed().ForEach([&](LexemeId id) {
        if (found) return;
        const char c = Literal(id)[0];
        if (AnyExtends(s.parser, v + c, 0)) return;
        found = Viable(RefState{p, std::string(1, c)}, depth - 1);
      });
      if (found) return true;
    }
    return false;
  }

  // Whether `bytes` after `s` lead to a viable state.
  bool Allows(const RefState& s, const std::string& bytes) const {
    RefState t = s;
    for (char c : bytes) {
      if (!Step(t, c)) return false;
    }
    return Viable(t, 4);
  }

  RefState Start() const { return RefState{EarleyParser(grammar_), ""}; }

 private:
  std::shared_ptr<const Grammar> grammar_;
};

struct Spec {
  std::vector<std::string> plain, keys;
  // Members: one lexeme, or a key or plain lexeme followed by a plain one
  // (indexes into plain + keys, keys after plain).
  std::vector<std::vector<size_t>> members;
};

// S -> "{" M "}", M -> member M | (nothing): a frame can always close, so
// the parser's contract (every frame completable without a repeated key)
// holds.
std::shared_ptr<const CompiledGrammarImpl> Build(const Spec& spec,
                                                 std::shared_ptr<SmallVocabTokenizer> tokenizer) {
  GrammarIr ir;
  auto lexeme = [&](const std::string& lit, LexemeRole role) {
    return Symbol::Lexeme(
        ir.builder.AddLexeme(lit, ir.pool->Literal(lit), LexemeFlags{false, true, role}));
  };
  std::vector<Symbol> lexemes;
  for (const std::string& p : spec.plain) lexemes.push_back(lexeme(p, LexemeRole::kNone));
  for (const std::string& k : spec.keys) lexemes.push_back(lexeme(k, LexemeRole::kUniqueKey));
  const Symbol open = lexeme("{", LexemeRole::kOpenObject);
  const Symbol close = lexeme("}", LexemeRole::kCloseObject);
  const NonterminalId s = ir.builder.Nonterminal("S");
  const NonterminalId m = ir.builder.Nonterminal("M");
  const NonterminalId x = ir.builder.Nonterminal("X");
  ir.builder.AddRule(s, {open, Symbol::Nonterminal(m), close});
  ir.builder.AddRule(m, {Symbol::Nonterminal(x), Symbol::Nonterminal(m)});
  ir.builder.AddRule(m, {});
  for (const std::vector<size_t>& member : spec.members) {
    std::vector<Symbol> rhs;
    for (size_t i : member) rhs.push_back(lexemes[i]);
    ir.builder.AddRule(x, std::move(rhs));
  }
  ir.builder.SetStart(s);
  auto g = CompiledGrammarImpl::FromIr(std::move(ir), std::move(tokenizer), AutomataLimits(),
                                       std::chrono::steady_clock::now());
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : nullptr;
}

// Every string over {a, b, "{", "}"} of 1 to 3 bytes.
std::shared_ptr<SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  const std::string alphabet = "ab{}";
  std::vector<std::string> level = {""};
  for (int len = 1; len <= 3; ++len) {
    std::vector<std::string> next;
    for (const std::string& s : level) {
      for (char c : alphabet) next.push_back(s + c);
    }
    vocab.insert(vocab.end(), next.begin(), next.end());
    level = std::move(next);
  }
  static auto tok = std::make_shared<SmallVocabTokenizer>(vocab, "taken-keys");
  return tok;
}

// Follows random outputs, comparing every mask with the reference. Returns
// the number of masks compared.
int CheckMasks(const Spec& spec, std::mt19937& rng, int walks, const std::string& what) {
  std::shared_ptr<SmallVocabTokenizer> vocab = Vocab();
  std::shared_ptr<const CompiledGrammarImpl> g = Build(spec, vocab);
  if (g == nullptr) return 0;
  Reference ref(g->grammar_ptr());
  const size_t words_count = (vocab->vocab_size() + 31) / 32;
  const TokenId eos = vocab->eos_ids()[0];
  int compared = 0;
  for (int walk = 0; walk < walks; ++walk) {
    std::unique_ptr<Matcher> m = Matcher::Create(g);
    RefState state = ref.Start();
    std::string output;
    for (int step = 0; step < 12; ++step) {
      std::vector<uint32_t> words(words_count);
      m->FillMask(words);
      std::vector<TokenId> allowed;
      for (TokenId t = 0; t < vocab->vocab_size(); ++t) {
        const bool got = ((words[t >> 5] >> (t & 31)) & 1) != 0;
        const bool want =
            t == eos ? ref.CanStop(state) : ref.Allows(state, std::string(vocab->token_bytes(t)));
        EXPECT_EQ(got, want) << what << " after \"" << output << "\" token \""
                             << std::string(vocab->token_bytes(t)) << "\"";
        if (got != want) return compared;
        if (want && t != eos) allowed.push_back(t);
      }
      ++compared;
      if (allowed.empty()) break;
      const TokenId t = allowed[rng() % allowed.size()];
      EXPECT_TRUE(m->AcceptToken(t));
      for (char c : std::string(vocab->token_bytes(t))) EXPECT_TRUE(ref.Step(state, c));
      output += std::string(vocab->token_bytes(t));
    }
  }
  return compared;
}

// The key "ab" beside the plain "a" and "bb": once "ab" was written, "abb"
// is "a" then "bb" (the lexeme "a" ends where only the taken key goes on).
TEST(TakenKeysOracleTest, LexemeEndsWhereOnlyATakenKeyGoesOn) {
  Spec spec;
  spec.plain = {"a", "bb"};
  spec.keys = {"ab"};
  spec.members = {{2}, {0, 1}};
  std::mt19937 rng(1);
  EXPECT_GT(CheckMasks(spec, rng, 20, "a/bb/key ab"), 20);
  // The case itself, spelled out.
  std::shared_ptr<SmallVocabTokenizer> vocab = Vocab();
  auto g = Build(spec, vocab);
  ASSERT_NE(g, nullptr);
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  ASSERT_TRUE(m->AcceptBytes("{ab"));
  std::vector<uint32_t> words((vocab->vocab_size() + 31) / 32);
  m->FillMask(words);
  auto allowed = [&](const std::string& bytes) {
    TokenId t = 0;
    while (vocab->token_bytes(t) != bytes) ++t;
    return ((words[t >> 5] >> (t & 31)) & 1) != 0;
  };
  EXPECT_TRUE(allowed("abb"));
  EXPECT_TRUE(allowed("a"));
  EXPECT_TRUE(allowed("}"));
  EXPECT_FALSE(allowed("ab}"));  // "ab" again
  EXPECT_FALSE(allowed("aba"));
}

TEST(TakenKeysOracleTest, RandomLiteralGrammars) {
  std::mt19937 rng(7);
  int compared = 0;
  for (int round = 0; round < 60; ++round) {
    std::set<std::string> literals;
    const size_t n = 3 + rng() % 3;
    while (literals.size() < n) {
      std::string s;
      const size_t len = 1 + rng() % 3;
      for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + rng() % 2));
      literals.insert(s);
    }
    Spec spec;
    for (const std::string& l : literals) (rng() % 2 == 0 ? spec.keys : spec.plain).push_back(l);
    if (spec.keys.empty() || spec.plain.empty()) continue;
    const size_t all = spec.plain.size() + spec.keys.size();
    for (size_t i = 0; i < all; ++i) {
      spec.members.push_back({i});
      // A member of two lexemes, the second plain (a key at most once per member).
      if (rng() % 2 == 0) spec.members.push_back({i, rng() % spec.plain.size()});
    }
    std::string what;
    for (const std::string& p : spec.plain) what += p + " ";
    what += "| keys";
    for (const std::string& k : spec.keys) what += " " + k;
    compared += CheckMasks(spec, rng, 6, what);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(compared, 500);
}

}  // namespace
}  // namespace maskd
