// Whole masks cached by parse state (compiler/matcher/state_mask_cache.h) on
// JSON Schema grammars, which use them at positions whose lexeme-end walks
// visit a few dozen trie nodes (CompileOptions::state_mask_hot_nodes): with
// every position keyed (0) and with the default, masks along random
// mask-guided documents, several per grammar so that states come back, must
// equal those of the same schema compiled with no caches at all (every mask
// a full trie walk through the parser). The schemas hold objects with many
// optional members (a set predicting many items: ParseStateKeyer's reach
// through the nonterminals predicted there), arrays of objects, recursion
// and alternatives.
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::shared_ptr<testing::SmallVocabTokenizer> JsonishTokenizer() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  // Whole keys and key openings, so that tokens cross lexeme ends.
  for (const char* t : {"\"a\"", "\"b\"",  "\"c\"",  "\"ab\"", "\"d\"",   "\"e\"", "\"f\"",
                        "\"g\"", "\"a\":", "\"b\":", "\"c\":", "\"ab\":", "{\"",   ", \"",
                        ",\"",   "\":",    "\": ",   "\"}",    "\"]",     "true",  "false",
                        "null",  "12",     "[{",     "}]",     "},{"}) {
    vocab.push_back(t);
  }
  std::mt19937 rng(64);
  const std::string alphabet = "\"\"\"abcdefg1-,:{}[] e";
  std::set<std::string> seen(vocab.begin(), vocab.end());
  while (vocab.size() < 2500) {
    std::string t;
    const size_t len = 2 + rng() % 4;
    for (size_t i = 0; i < len; ++i) t.push_back(alphabet[rng() % alphabet.size()]);
    if (seen.insert(t).second) vocab.push_back(t);
  }
  return std::make_shared<testing::SmallVocabTokenizer>(vocab, "json-schema-state-masks");
}

const std::vector<std::string>& Schemas() {
  static const std::vector<std::string> schemas = {
      // Many optional members: after each comma the set predicts every later one.
      R"({"type": "object", "properties": {
          "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"},
          "ab": {"enum": ["a", "b", 1, null]}, "d": {"type": "string", "maxLength": 3},
          "e": {"type": "array", "items": {"type": "integer"}}, "f": {"type": "number"},
          "g": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "null"}}}},
          "required": ["b"]})",
      // Arrays of objects: the same member positions come back in every item.
      R"({"type": "array", "items": {"type": "object", "properties": {
          "a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "object",
          "properties": {"c": {"type": "string"}, "d": {"type": "boolean"}}}}},
          "additionalProperties": false}})",
      // Recursion: one nonterminal at many depths, so contexts nest.
      R"({"$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"},
          "b": {"type": "array", "items": {"$ref": "#/$defs/n"}}, "c": {"type": "integer"}}}},
          "$ref": "#/$defs/n"})",
      // Alternatives that share prefixes.
      R"({"anyOf": [
          {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
           "required": ["a"]},
          {"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "string"}},
           "required": ["c"]},
          {"type": "array", "items": {"enum": ["a", "ab", 12]}}]})",
  };
  return schemas;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(
    const std::string& schema, const CompileOptions& options,
    const std::shared_ptr<const Tokenizer>& tok) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  return CompileGrammar(spec, options, tok);
}

TEST(JsonSchemaStateMasksTest, MasksCachedByParseStateEqualUncachedWalks) {
  auto tok = JsonishTokenizer();
  const size_t words = (tok->vocab_size() + 31) / 32;
  std::mt19937 rng(7);
  int steps = 0;
  size_t hits = 0;
  for (const std::string& schema : Schemas()) {
    for (uint64_t hot_nodes : {uint64_t{0}, CompileOptions().state_mask_hot_nodes}) {
      for (WhitespaceMode ws : {WhitespaceMode::kCompact, WhitespaceMode::kBounded}) {
        CompileOptions cached_options;
        cached_options.whitespace = ws;
        cached_options.state_mask_hot_nodes = hot_nodes;
        CompileOptions uncached_options = cached_options;
        uncached_options.mask_cache_bytes = 0;  // no lexer-state and no parse-state masks
        auto cached = Compile(schema, cached_options, tok);
        auto uncached = Compile(schema, uncached_options, tok);
        ASSERT_TRUE(cached.ok()) << cached.status();
        ASSERT_TRUE(uncached.ok()) << uncached.status();
        for (int doc = 0; doc < 16; ++doc) {
          auto a = Matcher::Create(*cached);
          auto b = Matcher::Create(*uncached);
          std::string text;
          for (int step = 0; step < 48; ++step) {
            std::vector<uint32_t> want(words), got(words);
            b->FillMask(want);
            a->FillMask(got);
            ++steps;
            ASSERT_EQ(got, want) << schema << "\n  hot_nodes " << hot_nodes << " after " << text;
            std::vector<TokenId> allowed;
            for (TokenId t = 0; t < tok->vocab_size(); ++t) {
              if (((want[t >> 5] >> (t & 31)) & 1) && !tok->is_special(t)) allowed.push_back(t);
            }
            if (allowed.empty()) break;
            // Prefer multi-byte tokens: they cross lexeme ends.
            TokenId pick = allowed[rng() % allowed.size()];
            for (int tries = 0; tries < 3 && tok->token_bytes(pick).size() < 2; ++tries) {
              pick = allowed[rng() % allowed.size()];
            }
            ASSERT_TRUE(a->AcceptToken(pick));
            ASSERT_TRUE(b->AcceptToken(pick));
            text += std::string(tok->token_bytes(pick));
          }
        }
        hits += std::static_pointer_cast<const CompiledGrammarImpl>(*cached)->state_masks().hits();
      }
    }
  }
  EXPECT_GT(steps, 5000);
  // The comparison saw masks copied from the cache, not only walked ones.
  EXPECT_GT(hits, 1000u);
}

}  // namespace
}  // namespace maskd
