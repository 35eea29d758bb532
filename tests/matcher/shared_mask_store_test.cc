// The cross-grammar store of lexer-only mask walks (shared_mask_store.h):
// expression fingerprints must not depend on the pool, and a grammar whose
// lexer states were first met by OTHER grammars must produce exactly the masks
// it produces alone without any cache (the full trie walk with the parser).
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "compiler/matcher/shared_mask_store.h"
#include "compiler/regex/expr_set.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using regex::ExprId;
using regex::ExprSet;
using testing::SmallVocabTokenizer;

TEST(ExprFingerprintTest, EqualStructuresInDifferentPoolsFingerprintEqually) {
  ExprSet p1, p2;
  // Build the same expressions in opposite orders so ids (and the order of Or
  // arguments, which follows ids) differ between the pools.
  ExprId x1 = p1.Or(p1.Literal("abc"), p1.Star(p1.ByteRange('0', '9')));
  ExprId y2 = p2.Star(p2.ByteRange('0', '9'));
  ExprId z2 = p2.Literal("abc");
  ExprId x2 = p2.Or(y2, z2);
  EXPECT_EQ(p1.GetFingerprint(x1), p2.GetFingerprint(x2));
  // Derivatives are structures too: equal in both pools.
  EXPECT_EQ(p1.GetFingerprint(p1.Derivative(x1, 'a')), p2.GetFingerprint(p2.Derivative(x2, 'a')));
  // Anything that changes the language changes the fingerprint.
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (ExprId e :
       {x1, p1.Literal("abd"), p1.Literal("ab"), p1.Repeat(p1.Literal("abc"), 2, 3),
        p1.Repeat(p1.Literal("abc"), 2, 4), p1.Not(x1), p1.And(x1, p1.Literal("abc")),
        p1.Concat(p1.Literal("abc"), p1.Byte('x')), p1.Concat(p1.Byte('x'), p1.Literal("abc"))}) {
    const regex::Fingerprint f = p1.GetFingerprint(e);
    EXPECT_TRUE(seen.insert({f.hi, f.lo}).second) << p1.ToString(e);
  }
}

TEST(SharedMaskStoreTest, EvictsLeastRecentlyUsedPastItsBudget) {
  auto walk = std::make_shared<MaskWalk>();
  walk->inside_ids.assign(100, 7);
  const size_t one = walk->ByteSize();
  SharedMaskStore store(2 * one + one / 2, /*shards=*/1);  // room for two walks
  auto key = [](uint64_t i) { return SharedMaskStore::Key{{i, i}, false}; };
  store.Insert(key(1), walk);
  store.Insert(key(2), walk);
  ASSERT_NE(store.Find(key(1)), nullptr);  // 1 is now the most recent
  store.Insert(key(3), walk);              // evicts 2
  EXPECT_NE(store.Find(key(1)), nullptr);
  EXPECT_EQ(store.Find(key(2)), nullptr);
  EXPECT_NE(store.Find(key(3)), nullptr);
  EXPECT_EQ(store.size(), 2u);
  EXPECT_LE(store.bytes(), 2 * one + one / 2);
  // The in_lexeme half of the key matters.
  EXPECT_EQ(store.Find(SharedMaskStore::Key{{3, 3}, true}), nullptr);
}

// Sharded (the default), the budget holds for the whole store and every
// shard keeps its most recent walks.
TEST(SharedMaskStoreTest, ShardsShareTheBudget) {
  auto walk = std::make_shared<MaskWalk>();
  walk->inside_ids.assign(100, 7);
  const size_t one = walk->ByteSize();
  constexpr size_t kShards = 8;
  SharedMaskStore store(kShards * 3 * one, kShards);  // three walks per shard
  auto key = [](uint64_t i) { return SharedMaskStore::Key{{i * 0x9E3779B97F4A7C15ull, i}, true}; };
  for (uint64_t i = 0; i < 1000; ++i) {
    store.Insert(key(i), walk);
    ASSERT_LE(store.bytes(), kShards * 3 * one);
    ASSERT_NE(store.Find(key(i)), nullptr);  // never the walk just stored
  }
  EXPECT_EQ(store.size(), kShards * 3);  // every shard full, none over
  EXPECT_EQ(store.bytes(), kShards * 3 * one);
  // The most recent walks are kept.
  int recent = 0;
  for (uint64_t i = 990; i < 1000; ++i) recent += store.Find(key(i)) != nullptr;
  EXPECT_GE(recent, 8);
}

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

std::shared_ptr<SmallVocabTokenizer> JsonishVocab(std::mt19937& rng) {
  const std::string alphabet = "ab\"{}:,[]0129 \\xy-.e";
  std::set<std::string> vocab;
  for (char c : alphabet) vocab.insert(std::string(1, c));
  for (const char* s : {"\"a", "a\"", "\":", "\",", "{\"", "\"}", "ab", "12", "0.", ", \""}) {
    vocab.insert(s);
  }
  while (vocab.size() < 120) {
    std::string s;
    const size_t len = 1 + rng() % 5;
    for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    vocab.insert(s);
  }
  return std::make_shared<SmallVocabTokenizer>(std::vector<std::string>(vocab.begin(), vocab.end()),
                                               "shared-store-vocab");
}

// Schemas that share lexemes (strings, numbers, keys) in different
// combinations, so later grammars meet states earlier ones stored.
const std::vector<std::string>& Schemas() {
  static const std::vector<std::string> schemas = {
      R"({"type":"string"})",
      R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}})",
      R"({"type":"array","items":{"type":"string","maxLength":3}})",
      R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}},
          "required":["a"]})",
      R"({"type":"array","items":{"type":"integer"},"minItems":1})",
      R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}},
          "additionalProperties":false})",
      R"({"type":"string","pattern":"^a+b?$"})",
      R"({"enum":["ab","a\"b",12,null]})",
  };
  return schemas;
}

TEST(SharedMaskStoreTest, GrammarsSharingWalksGiveTheMasksOfTheUncachedWalk) {
  std::mt19937 rng(7);
  auto tok = JsonishVocab(rng);
  CompileOptions cached;
  CompileOptions uncached;
  uncached.mask_cache_bytes = 0;  // the full trie walk with the parser, every mask
  const size_t words = (tok->vocab_size() + 31) / 32;
  int steps = 0;
  // Two passes: in the second every grammar finds its walks stored by the
  // others (and by its own earlier compile).
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < Schemas().size(); ++i) {
      GrammarSpec spec;
      spec.kind = SpecKind::kJsonSchema;
      spec.text = Schemas()[i];
      auto a = CompileGrammar(spec, cached, tok);
      auto b = CompileGrammar(spec, uncached, tok);
      ASSERT_TRUE(a.ok()) << a.status();
      ASSERT_TRUE(b.ok()) << b.status();
      for (int walk = 0; walk < 6; ++walk) {
        auto ma = Matcher::Create(*a);
        auto mb = Matcher::Create(*b);
        std::vector<uint32_t> mask_a(words), mask_b(words);
        std::string out;
        for (int step = 0; step < 16; ++step) {
          ma->FillMask(mask_a);
          mb->FillMask(mask_b);
          ++steps;
          std::vector<TokenId> allowed;
          for (TokenId t = 0; t < tok->vocab_size(); ++t) {
            ASSERT_EQ(Bit(mask_a, t), Bit(mask_b, t))
                << "schema " << i << " after '" << out << "' token '" << tok->token_bytes(t) << "'";
            if (Bit(mask_a, t) && t != tok->eos_ids()[0]) allowed.push_back(t);
          }
          if (allowed.empty()) break;
          const TokenId t = allowed[rng() % allowed.size()];
          ASSERT_TRUE(ma->AcceptToken(t));
          ASSERT_TRUE(mb->AcceptToken(t));
          out += tok->token_bytes(t);
        }
      }
    }
  }
  EXPECT_GT(steps, 300);
}

}  // namespace
}  // namespace maskd
