// MaskCache assembles the lexer-only walk of a new lexer state from walks of
// the root's child subtrees, memoized per grammar and shared across grammars
// (mask_cache.h). Whatever was memoized before, the assembled walk must be
// the walk of the whole trie from scratch: the same inside tokens, and the
// same boundary nodes ending the lexeme with the same lexemes accepting.
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/grammar/lexeme_set.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/mask_cache.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

std::set<TokenId> Inside(const MaskWalk& walk) {
  std::set<TokenId> out(walk.inside_ids.begin(), walk.inside_ids.end());
  for (size_t w = 0; w < walk.inside_words.size(); ++w) {
    for (int b = 0; b < 32; ++b) {
      if ((walk.inside_words[w] >> b) & 1) out.insert(static_cast<TokenId>(w * 32 + b));
    }
  }
  return out;
}

// Boundary node -> the lexemes accepting where its lexeme ends (what the
// parser scans; the lexer state itself may be any with those tags).
using EndTags = std::map<uint32_t, std::vector<uint32_t>>;
std::vector<uint32_t> Tags(const regex::LazyDfa& dfa, regex::StateId s) {
  auto tags = dfa.AcceptingTags(s);
  return std::vector<uint32_t>(tags.begin(), tags.end());
}

EndTags Ends(const MaskCacheEntry& entry, const regex::LazyDfa& dfa) {
  EndTags out;
  for (const MaskCacheEntry::EndGroup& g : entry.groups) {
    for (const std::vector<uint32_t>* nodes : g.nodes) {
      for (uint32_t n : *nodes)
        EXPECT_TRUE(out.emplace(n, Tags(dfa, g.ended)).second) << "node " << n;
    }
  }
  return out;
}

EndTags Ends(const MaskWalk& walk, const regex::LazyDfa& dfa, regex::StateId from) {
  EndTags out;
  for (const MaskWalk::Boundary& b : walk.boundaries) {
    for (uint32_t n : b.nodes) out.emplace(n, Tags(dfa, dfa.Walk(from, b.prefix)));
  }
  return out;
}

std::shared_ptr<SmallVocabTokenizer> Vocab(std::mt19937& rng) {
  // Key-like and string-like pieces, a multi-byte character split across
  // tokens, and random strings.
  const std::string alphabet = "abcnm\"{}:, \\ux0-";
  std::set<std::string> vocab;
  for (char c : alphabet) vocab.insert(std::string(1, c));
  for (const char* s : {"\"a", "a\"", "\":", "\",", "{\"", "\"}", "name", "na", "me\"",
                        "\": ", "ab", "\xC3", "\xA9", "\xC3\xA9", "\"\xC3"}) {
    vocab.insert(s);
  }
  while (vocab.size() < 160) {
    std::string s;
    const size_t len = 1 + rng() % 6;
    for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    vocab.insert(s);
  }
  return std::make_shared<SmallVocabTokenizer>(std::vector<std::string>(vocab.begin(), vocab.end()),
                                               "mask-cache-vocab");
}

std::shared_ptr<const CompiledGrammarImpl> CompileImpl(const std::string& schema,
                                                       std::shared_ptr<const Tokenizer> tok,
                                                       CompileOptions options = {}) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  auto compiled = CompileGrammar(spec, options, std::move(tok));
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  return std::static_pointer_cast<const CompiledGrammarImpl>(*compiled);
}

// The lexer state before the first byte of any of the grammar's lexemes.
regex::StateId StartOfAnyLexeme(const CompiledGrammarImpl& g) {
  LexemeSet all(g.grammar().num_lexemes());
  for (LexemeId id = 0; id < g.grammar().num_lexemes(); ++id) all.Insert(id);
  return g.LexerStart(all);
}

TEST(MaskCacheTest, AssembledWalksEqualWholeTrieWalks) {
  std::mt19937 rng(11);
  auto tok = Vocab(rng);
  // Objects whose undeclared keys must differ from declared ones (the states
  // assembled walks are for), counted strings, patterns; compiled in turn for
  // one tokenizer so later grammars reuse subtree walks of earlier ones.
  const std::vector<std::string> schemas = {
      R"({"type":"object","properties":{"name":{"type":"string"},"nab":{"type":"integer"}}})",
      R"({"type":"object","properties":{"name":{"type":"string"}}})",
      R"({"type":"object","properties":{"ma":{"type":"string","maxLength":4}},
          "additionalProperties":{"type":"string"}})",
      R"({"type":"string","minLength":2,"maxLength":5})",
      R"({"type":"string","pattern":"^[a-c]+-?[0-9]*$"})",
      R"({"type":"array","items":{"enum":["name","na\u00e9",1]}})",
      // Counted strings longer than the trie is deep: positions share
      // subtree walks through horizon fingerprints.
      R"({"type":"string","minLength":9,"maxLength":20})",
      R"({"type":"object","properties":{"a":{"type":"string","maxLength":14}},
          "required":["a"]})",
      // A pattern and a maxLength: a length counter (regex/horizon.h).
      R"({"type":"string","pattern":"^(?:\\S+\\s+){0,3}\\S+$","maxLength":18})",
      R"({"type":"string","pattern":"^$|^[a-c]+(-[a-c]+)*$","minLength":2,"maxLength":16})",
  };
  int states_checked = 0;
  for (const std::string& schema : schemas) {
    auto g = CompileImpl(schema, tok);
    ASSERT_NE(g, nullptr);
    const regex::LazyDfa& dfa = g->dfa();
    // Every lexer state reachable from the start of any lexeme (bounded).
    std::vector<regex::StateId> states = {StartOfAnyLexeme(*g)};
    std::set<regex::StateId> seen(states.begin(), states.end());
    for (size_t i = 0; i < states.size() && states.size() < 400; ++i) {
      for (int b = 0; b < 256; ++b) {
        const regex::StateId next = dfa.Step(states[i], static_cast<uint8_t>(b));
        if (next != regex::LazyDfa::kDead && seen.insert(next).second) states.push_back(next);
      }
    }
    for (regex::StateId s : states) {
      for (bool in_lexeme : {false, true}) {
        auto entry = g->mask_cache().Get(dfa, g->vocab(), s, in_lexeme);
        ASSERT_NE(entry, nullptr);
        auto scratch =
            MaskCache::ComputeWalk(dfa, g->vocab().trie(), g->vocab().mask_words(), s, in_lexeme);
        EXPECT_EQ(Inside(*entry->walk), Inside(*scratch)) << schema << " state " << s;
        EXPECT_EQ(Ends(*entry, dfa), Ends(*scratch, dfa, s)) << schema << " state " << s;
        ++states_checked;
      }
    }
    ASSERT_TRUE(dfa.status().ok()) << dfa.status();
  }
  EXPECT_GT(states_checked, 200);
}

// Inside a counted string far from its bounds, successive positions differ
// only in the counter: their subtree walks are shared (horizon fingerprints),
// so each new position adds few walks to the store, and its masks stay exact.
TEST(MaskCacheTest, CountedStringPositionsShareSubtreeWalks) {
  std::mt19937 rng(5);
  auto tok = Vocab(rng);
  auto g = CompileImpl(R"({"type":"string","maxLength":60})", tok);
  ASSERT_NE(g, nullptr);
  const regex::LazyDfa& dfa = g->dfa();
  regex::StateId s = dfa.Step(StartOfAnyLexeme(*g), '"');
  ASSERT_NE(s, regex::LazyDfa::kDead);
  // The walks a position is assembled from: one per root child, and one per
  // child of the large children walked in parts (VocabIndex::walk_in_parts).
  size_t root_children = 0, parts = 0;
  const TokenTrie& trie = g->vocab().trie();
  trie.ForEachRootChild([&](uint32_t child) {
    ++root_children;
    ++parts;
    if (g->vocab().walk_in_parts(child)) trie.ForEachChild(child, [&](uint32_t) { ++parts; });
  });
  // The root's height, the horizon of a whole walk, is the longest token.
  EXPECT_EQ(g->vocab().height(TokenTrie::kRoot), trie.max_depth());
  const size_t walks_before = g->vocab().mask_store().size();
  constexpr int kPositions = 20;
  std::set<const MaskWalk*> whole_walks;
  for (int k = 0; k < kPositions; ++k, s = dfa.Step(s, 'a')) {
    auto entry = g->mask_cache().Get(dfa, g->vocab(), s, true);
    ASSERT_NE(entry, nullptr);
    whole_walks.insert(entry->walk.get());
    auto scratch = MaskCache::ComputeWalk(dfa, g->vocab().trie(), g->vocab().mask_words(), s, true);
    EXPECT_EQ(Inside(*entry->walk), Inside(*scratch)) << "position " << k;
    EXPECT_EQ(Ends(*entry, dfa), Ends(*scratch, dfa, s)) << "position " << k;
  }
  // Without sharing, every position would store a walk for most parts; with
  // it, the first position stores them and later ones about one whole-trie
  // walk each.
  const size_t added = g->vocab().mask_store().size() - walks_before;
  EXPECT_LT(added, parts + 3 * kPositions);
  EXPECT_GT(parts, root_children);  // This vocabulary has a large child.
  // Positions far from the bounds are assembled from the same subtree walks,
  // so they share one whole walk too.
  EXPECT_LE(whole_walks.size(), 2u);
  EXPECT_GT(root_children, 10u);
}

// A string bounded by a pattern (counting words) and a maxLength: positions
// far from the length bound share whole walks with positions holding the
// same words count, and masks stay exact all the way to the bound.
TEST(MaskCacheTest, PatternAndMaxLengthPositionsShareWalks) {
  std::mt19937 rng(9);
  auto tok = Vocab(rng);
  auto g =
      CompileImpl(R"({"type":"string","pattern":"^(?:\\S+\\s+){0,40}\\S+$","maxLength":90})", tok);
  ASSERT_NE(g, nullptr);
  const regex::LazyDfa& dfa = g->dfa();
  regex::StateId s = dfa.Step(StartOfAnyLexeme(*g), '"');
  ASSERT_NE(s, regex::LazyDfa::kDead);
  std::set<const MaskWalk*> whole_walks;
  const std::string text = "aaa b";  // Repeated: a word of three letters, a space.
  size_t positions = 0;
  for (size_t i = 0; i < 89; ++i, s = dfa.Step(s, text[i % text.size()])) {
    ASSERT_NE(s, regex::LazyDfa::kDead) << "position " << i;
    auto entry = g->mask_cache().Get(dfa, g->vocab(), s, true);
    ASSERT_NE(entry, nullptr);
    auto scratch = MaskCache::ComputeWalk(dfa, g->vocab().trie(), g->vocab().mask_words(), s, true);
    ASSERT_EQ(Inside(*entry->walk), Inside(*scratch)) << "position " << i;
    ASSERT_EQ(Ends(*entry, dfa), Ends(*scratch, dfa, s)) << "position " << i;
    whole_walks.insert(entry->walk.get());
    ++positions;
  }
  // Far from both bounds a position's walk depends on the letters around it
  // only; near the bounds (the last words and characters) on the counts.
  EXPECT_LT(whole_walks.size(), positions / 2);
  ASSERT_TRUE(dfa.status().ok()) << dfa.status();
}

// A lexer state where many lexemes live (an object's optional keys, each
// after bounded whitespace) is walked from itself, not from copies clamped to
// each subtree's horizon: a clamped copy is a new DFA state whose every step
// derives all the lexemes again (eslintrc's 260 keys: 15-35 ms for the first
// ` "` after a comma). The walk stays exact, and once the exact states are
// known (the whole-trie walk from scratch steps exactly those) the cached
// walk builds no DFA state of many lexemes of its own (states of few
// lexemes deeper down, a few keys' positions, are still clamped).
TEST(MaskCacheTest, StatesOfManyLexemesAreWalkedUnclamped) {
  std::mt19937 rng(3);
  auto tok = Vocab(rng);
  std::string properties;
  for (int i = 0; i < 24; ++i) {
    if (i > 0) properties += ",";
    properties +=
        "\"k" + std::to_string(i) + (i % 2 == 0 ? "a" : "ma") + "\":{\"type\":\"integer\"}";
  }
  auto g = CompileImpl(R"({"type":"object","properties":{)" + properties + "}}", tok);
  ASSERT_NE(g, nullptr);
  const regex::LazyDfa& dfa = g->dfa();
  // The start of any lexeme, then the key positions after a quote.
  const regex::StateId start = StartOfAnyLexeme(*g);
  int many_checked = 0;
  for (regex::StateId s : {start, dfa.Step(start, '"'), dfa.Step(dfa.Step(start, '"'), 'k')}) {
    ASSERT_NE(s, regex::LazyDfa::kDead);
    if (dfa.Exprs(s).size() <= 16) continue;
    ++many_checked;
    for (bool in_lexeme : {false, true}) {
      auto scratch =
          MaskCache::ComputeWalk(dfa, g->vocab().trie(), g->vocab().mask_words(), s, in_lexeme);
      const size_t states_before = dfa.num_states();
      auto entry = g->mask_cache().Get(dfa, g->vocab(), s, in_lexeme);
      ASSERT_NE(entry, nullptr);
      for (regex::StateId n = static_cast<regex::StateId>(states_before); n < dfa.num_states();
           ++n) {
        EXPECT_LE(dfa.Exprs(n).size(), 16u) << "new state " << n << " from state " << s;
      }
      EXPECT_EQ(Inside(*entry->walk), Inside(*scratch)) << "state " << s;
      EXPECT_EQ(Ends(*entry, dfa), Ends(*scratch, dfa, s)) << "state " << s;
    }
  }
  EXPECT_GE(many_checked, 2);
  ASSERT_TRUE(dfa.status().ok()) << dfa.status();
}

// The per-grammar budget counts a walk once however many positions share
// it: a long counted string must not fill the cache (after which every
// mask walks the whole trie). Each position still costs its own entry.
TEST(MaskCacheTest, SharedWalksCountOnceAgainstTheBudget) {
  std::mt19937 rng(5);
  auto tok = Vocab(rng);
  const std::string schema = R"({"type":"string","maxLength":400})";
  size_t first_position_bytes = 0, entry_bytes = 0, walk_bytes = 0;
  {
    auto g = CompileImpl(schema, tok);
    ASSERT_NE(g, nullptr);
    regex::StateId s = g->dfa().Step(StartOfAnyLexeme(*g), '"');
    auto entry = g->mask_cache().Get(g->dfa(), g->vocab(), s, true);
    ASSERT_NE(entry, nullptr);
    first_position_bytes = g->mask_cache().bytes();
    entry_bytes = entry->OwnByteSize();
    walk_bytes = entry->walk->ByteSize();
  }
  constexpr size_t kPositions = 300;
  // Room for every position's entry, not for every position's walk.
  ASSERT_GT(walk_bytes, entry_bytes);
  CompileOptions options;
  options.mask_cache_bytes = first_position_bytes + kPositions * (entry_bytes + walk_bytes) / 2;
  auto g = CompileImpl(schema, tok, options);
  ASSERT_NE(g, nullptr);
  const regex::LazyDfa& dfa = g->dfa();
  regex::StateId s = dfa.Step(StartOfAnyLexeme(*g), '"');
  for (size_t i = 0; i < kPositions; ++i, s = dfa.Step(s, 'a')) {
    ASSERT_NE(g->mask_cache().Get(dfa, g->vocab(), s, true), nullptr)
        << "position " << i << " bytes " << g->mask_cache().bytes() << " of "
        << options.mask_cache_bytes;
  }
}

}  // namespace
}  // namespace maskd
