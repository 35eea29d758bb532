// uniqueItems and contains/minContains/maxContains, checked by brute force: every
// array of a few items over a small set of atoms (repeats included) must be
// accepted iff the reference validator accepts it, and after every prefix of
// every valid document the mask must hold exactly the tokens some valid
// document continues with (EOS iff the prefix is one).
#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/json_schema/reference_validator.h"
#include "tests/matcher/unique_items_support.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;
using namespace unique_items_testing;  // NOLINT: the shared test helpers

// Every byte, plus tokens that cross item boundaries (value and comma,
// comma and quote, value and bracket).
std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"\"a\"", "\"a\",", ",\"", "\"]", "\",\"", "[\"", "true,", "null]", "\"b",
                        "a\",\"b\"", "],[", "[[", "]]", "\"a\",\"a\"", "a\"", "\\\"", "b\\\"\""}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-items-bytes");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               WhitespaceMode whitespace,
                                                               bool any_order = false) {
  return CompileSchema(schema, whitespace, Vocab(), /*cached=*/true, any_order);
}

// Mask after `prefix` must be exactly the tokens t with prefix + bytes(t) a
// prefix of some document in `valid` (sorted), EOS iff prefix is in it.
void ExpectExactMask(Matcher& m, const Tokenizer& tok, const std::vector<std::string>& valid,
                     const std::string& prefix, const std::string& schema) {
  std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
  m.FillMask(words);
  for (TokenId t = 0; t < tok.vocab_size(); ++t) {
    const bool got = (words[t / 32] >> (t % 32)) & 1;
    bool want;
    if (tok.is_special(t)) {
      want = std::binary_search(valid.begin(), valid.end(), prefix);
    } else {
      const std::string next = prefix + std::string(tok.token_bytes(t));
      auto it = std::lower_bound(valid.begin(), valid.end(), next);
      want = it != valid.end() && it->compare(0, next.size(), next) == 0;
    }
    ASSERT_EQ(got, want) << schema << "\n  after " << prefix << " token "
                         << std::string(tok.token_bytes(t));
  }
}

// Verdicts on every candidate (spaced and compact) against the reference
// validator; when `finite` (the atoms spell every value the schema admits,
// each one way), masks after every prefix of every valid compact document.
void ExpectExact(const std::string& schema, const std::vector<std::string>& atoms, size_t max_len,
                 bool finite) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << schema << ": " << reference.status();
  auto spaced = Compile(schema, WhitespaceMode::kBounded);
  auto compact = Compile(schema, WhitespaceMode::kCompact);
  ASSERT_TRUE(spaced.ok()) << schema << ": " << spaced.status();
  ASSERT_TRUE(compact.ok()) << schema << ": " << compact.status();
  std::vector<std::string> valid;
  int repeats_refused = 0;
  const std::vector<std::vector<std::string>> candidates = Arrays(atoms, max_len);
  for (const std::vector<std::string>& c : candidates) {
    absl::StatusOr<json_schema::JsonValue> value = json_schema::ParseJsonValue(Text(c, ","));
    ASSERT_TRUE(value.ok()) << Text(c, ",");
    const bool expected = json_schema::ReferenceValidate(*reference, reference->root, *value);
    EXPECT_EQ(Accepts(*spaced, Text(c, ", ")), expected) << schema << "\n  " << Text(c, ", ");
    EXPECT_EQ(Accepts(*compact, Text(c, ",")), expected) << schema << "\n  " << Text(c, ",");
    if (expected) valid.push_back(Text(c, ","));
    if (!expected && std::set<std::string>(c.begin(), c.end()).size() < c.size()) {
      ++repeats_refused;
    }
  }
  // The comparison must see valid arrays and refused repeats, or it proves little.
  EXPECT_GT(valid.size(), 1u) << schema;
  EXPECT_GT(repeats_refused, 0) << schema;
  if (!finite) return;
  std::sort(valid.begin(), valid.end());
  const Tokenizer& tok = (*compact)->tokenizer();
  std::set<std::string> checked;
  for (const std::string& doc : valid) {
    auto m = Matcher::Create(*compact);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) ExpectExactMask(*m, tok, valid, prefix, schema);
      if (::testing::Test::HasFatalFailure()) return;
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
}

const std::vector<std::string> kAtoms = {"\"a\"", "\"b\"", "\"c\"", "true", "null"};

TEST(JsonSchemaUniqueItemsTest, EnumItemsNeverRepeat) {
  ExpectExact(R"({"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": true})",
              kAtoms, 4, /*finite=*/true);
  ExpectExact(R"({"type": "array", "items": {"enum": ["a", "b", "c", true]}, "uniqueItems": true,
      "maxItems": 2})",
              kAtoms, 4, /*finite=*/true);
  ExpectExact(R"({"type": "array", "items": {"enum": ["a", "b", null]}, "uniqueItems": true,
      "minItems": 2})",
              kAtoms, 4, /*finite=*/true);
}

TEST(JsonSchemaUniqueItemsTest, BooleanAndNullItems) {
  ExpectExact(R"({"type": "array", "items": {"type": ["boolean", "null"]}, "uniqueItems": true})",
              {"true", "false", "null", "\"a\""}, 4, /*finite=*/true);
  ExpectExact(R"({"type": "array", "items": {"type": "boolean"}, "uniqueItems": true,
      "minItems": 1})",
              {"true", "false", "null"}, 3, /*finite=*/true);
}

// Numbers compare by value: 1, 1.0 and 1e0 are one item.
TEST(JsonSchemaUniqueItemsTest, NumbersCompareByValue) {
  ExpectExact(R"({"type": "array", "items": {"enum": [1, 2, "1", 2.5]}, "uniqueItems": true})",
              {"1", "1.0", "1e0", "2", "\"1\"", "2.50", "3"}, 3, /*finite=*/false);
}

// A repeat is fine in the branch that allows it; each array has its own
// values (nested arrays, arrays in any-order objects).
TEST(JsonSchemaUniqueItemsTest, CombinatorsAndNesting) {
  ExpectExact(R"({"anyOf": [
      {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true},
      {"type": "array", "items": {"const": "a"}, "maxItems": 3}]})",
              kAtoms, 4, /*finite=*/true);
  ExpectExact(R"({"type": "array", "maxItems": 3,
      "items": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true}})",
              {"[]", "[\"a\"]", "[\"b\"]", "[\"a\",\"b\"]", "[\"a\",\"a\"]", "[\"b\",\"a\"]"}, 3,
              /*finite=*/true);

  auto g = Compile(R"({"type": "object", "properties": {
      "x": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true},
      "y": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true},
      "a": {"const": "a"}}})",
                   WhitespaceMode::kBounded, /*any_order=*/true);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, R"({"x": ["a", "b"], "y": ["b", "a"], "a": "a"})"));
  EXPECT_TRUE(Accepts(*g, R"({"a": "a", "y": ["a"], "x": ["a"]})"));
  EXPECT_FALSE(Accepts(*g, R"({"x": ["a", "a"]})"));
  EXPECT_FALSE(Accepts(*g, R"({"x": ["a"], "y": ["b", "b"]})"));
  EXPECT_FALSE(Accepts(*g, R"({"x": ["a"], "x": ["b"]})"));
}

// More items than values: no instance but the empty language (compiles,
// allows nothing); maxItems 1 needs no check at all.
TEST(JsonSchemaUniqueItemsTest, MinItemsBeyondTheDomain) {
  auto g = Compile(R"({"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true,
      "minItems": 3})",
                   WhitespaceMode::kBounded);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(Accepts(*g, R"(["a", "b", "a"])"));
  EXPECT_FALSE(Accepts(*g, R"(["a", "b"])"));
  auto one = Compile(R"({"type": "array", "items": {"type": "string"}, "uniqueItems": true,
      "maxItems": 1})",
                     WhitespaceMode::kBounded);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(Accepts(*one, R"(["x"])"));
}

// Items from infinite domains need a runtime check this engine does not
// have: refused, naming the keyword and the array's pointer.
TEST(JsonSchemaUniqueItemsTest, InfiniteDomainsAreRefusedByName) {
  for (const char* schema : {
           R"({"properties": {"tags": {"type": "array", "items": {"type": "string",
               "maxLength": 3}, "uniqueItems": true}}})",
           R"({"properties": {"tags": {"type": "array", "items": {"type": "integer",
               "maximum": 9}, "uniqueItems": true}}})",
           R"({"properties": {"tags": {"type": "array", "items": {"type": "object",
               "additionalProperties": false, "properties": {"a": {"type": "string"}}},
               "uniqueItems": true}}})",
           R"({"properties": {"tags": {"type": "array", "uniqueItems": true,
               "items": {"anyOf": [{"type": "object"}, {"type": "integer"}]}}}})",
           R"({"properties": {"tags": {"type": "array", "items": {"enum": [{"a": 1}, 2]},
               "uniqueItems": true}}})",
           R"({"properties": {"tags": {"prefixItems": [{"const": 1}],
               "items": {"enum": [1, 2]}, "uniqueItems": true}}})",
       }) {
    auto g = Compile(schema, WhitespaceMode::kBounded);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("uniqueItems")) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("/properties/tags")) << schema;
  }
}

// Open strings (no maxLength, pattern, format): the matcher refuses the
// byte that closes a string the array already holds.
const char* kStringSchema =
    R"({"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3})";

// Whether `text` (compact) is a prefix of some array of at most 3 distinct
// canonical strings, for texts over [ ] , " a b \ (where `\` escapes only
// `"`, `\` and `b`): every open string can be finished with a fresh value,
// so a prefix dies only by bad syntax, a 4th item or a closed repeat.
bool ViableStringArrayPrefix(const std::string& text, bool* complete) {
  enum { kStart, kOpen, kItemStart, kInString, kEscape, kAfterItem, kEnd } state = kStart;
  std::set<std::string> closed;
  std::string current;
  size_t items = 0;
  for (char c : text) {
    switch (state) {
      case kStart:
        if (c != '[') return false;
        state = kOpen;
        break;
      case kOpen:
      case kItemStart:
        if (c == ']' && state == kOpen) {
          state = kEnd;
        } else if (c == '"' && items < 3) {
          state = kInString;
          current.clear();
          ++items;
        } else {
          return false;
        }
        break;
      case kInString:
        if (c == '"') {
          if (!closed.insert(current).second) return false;
          state = kAfterItem;
        } else {
          current += c;
          if (c == '\\') state = kEscape;
        }
        break;
      case kEscape:
        if (c != '"' && c != '\\' && c != 'b') return false;
        current += c;
        state = kInString;
        break;
      case kAfterItem:
        if (c == ',' && items < 3) {
          state = kItemStart;
        } else if (c == ']') {
          state = kEnd;
        } else {
          return false;
        }
        break;
      case kEnd:
        return false;
    }
  }
  *complete = state == kEnd;
  return true;
}

TEST(JsonSchemaUniqueItemsTest, OpenStringsNeverRepeat) {
  ExpectExact(kStringSchema,
              {"\"a\"", "\"b\"", "\"ab\"", "\"\"", "\"\\\"\"", "\"\\\\\"", "\"\\b\"", "\"a\\\"\""},
              3, /*finite=*/false);
  auto g = Compile(kStringSchema, WhitespaceMode::kCompact);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  // Every valid document over the alphabet of at most 2 items of length <= 2.
  std::vector<std::string> docs;
  const std::vector<std::string> atoms = {"\"a\"", "\"b\"",    "\"ab\"",
                                          "\"\"",  "\"\\\"\"", "\"\\b\""};
  for (const std::vector<std::string>& c : Arrays(atoms, 3)) {
    bool complete = false;
    if (ViableStringArrayPrefix(Text(c, ","), &complete) && complete) docs.push_back(Text(c, ","));
  }
  std::set<std::string> checked;
  int refused_repeats = 0;
  for (const std::string& doc : docs) {
    auto m = Matcher::Create(*g);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) {
        std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
        m->FillMask(words);
        for (TokenId t = 0; t < tok.vocab_size(); ++t) {
          const bool got = (words[t / 32] >> (t % 32)) & 1;
          bool complete = false;
          if (tok.is_special(t)) {
            ASSERT_TRUE(ViableStringArrayPrefix(prefix, &complete));
            ASSERT_EQ(got, complete) << "EOS after " << prefix;
            continue;
          }
          const std::string bytes(tok.token_bytes(t));
          if (bytes.find_first_not_of("[],\"ab\\") != std::string::npos) continue;
          const bool want = ViableStringArrayPrefix(prefix + bytes, &complete);
          refused_repeats += !want && ViableStringArrayPrefix(prefix, &complete) &&
                             bytes.find('"') != std::string::npos;
          ASSERT_EQ(got, want) << "after " << prefix << " token " << bytes;
        }
      }
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
  EXPECT_GT(docs.size(), 50u);
  EXPECT_GT(refused_repeats, 0);
}

// The cached masks (lexer-only walks, then the tokens that may complete a
// repeat stepped again) must equal the uncached ones (every token stepped
// through the parser) on a vocabulary of many multi-byte tokens holding
// quotes, commas and brackets, along random mask-guided documents.
TEST(JsonSchemaUniqueItemsTest, CachedMasksEqualUncachedWalks) {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  std::mt19937 rng(12);
  const std::string alphabet = "\"\"\"ab,[] {}:\\x";
  std::set<std::string> seen(vocab.begin(), vocab.end());
  while (vocab.size() < 3000) {
    std::string t;
    const size_t len = 2 + rng() % 5;
    for (size_t i = 0; i < len; ++i) t.push_back(alphabet[rng() % alphabet.size()]);
    if (seen.insert(t).second) vocab.push_back(t);
  }
  auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-items-cache");
  const std::vector<std::string> schemas = {
      R"({"type": "array", "items": {"type": "string"}, "uniqueItems": true})",
      R"({"type": "object", "properties": {"a": {"type": "array", "uniqueItems": true,
          "items": {"type": "string"}}, "b": {"type": "string"}}})",
      R"({"anyOf": [{"type": "array", "items": {"type": "string"}, "uniqueItems": true},
          {"type": "array", "items": {"const": "a"}}]})"};
  int steps = 0, refused_repeats = 0;
  for (const std::string& schema : schemas) {
    for (WhitespaceMode ws : {WhitespaceMode::kCompact, WhitespaceMode::kBounded}) {
      GrammarSpec spec;
      spec.kind = SpecKind::kJsonSchema;
      spec.text = schema;
      CompileOptions cached_options;
      cached_options.whitespace = ws;
      CompileOptions uncached_options = cached_options;
      uncached_options.mask_cache_bytes = 0;
      auto cached = CompileGrammar(spec, cached_options, tok);
      auto uncached = CompileGrammar(spec, uncached_options, tok);
      ASSERT_TRUE(cached.ok()) << cached.status();
      ASSERT_TRUE(uncached.ok()) << uncached.status();
      for (int doc = 0; doc < 12; ++doc) {
        auto a = Matcher::Create(*cached);
        auto b = Matcher::Create(*uncached);
        std::string text;
        for (int step = 0; step < 40; ++step) {
          std::vector<uint32_t> want((tok->vocab_size() + 31) / 32), got(want.size());
          b->FillMask(want);
          a->FillMask(got);
          ++steps;
          ASSERT_EQ(got, want) << schema << "\n  after " << text;
          // Tokens the lexer alone allows but the parser refuses: repeats.
          std::vector<TokenId> allowed;
          for (TokenId t = 0; t < tok->vocab_size(); ++t) {
            if ((want[t >> 5] >> (t & 31)) & 1) allowed.push_back(t);
          }
          if (allowed.empty() || (allowed.size() == 1 && tok->is_special(allowed[0]))) break;
          // Prefer tokens holding a quote: they write (and repeat) strings.
          TokenId pick = allowed[rng() % allowed.size()];
          for (int tries = 0; tries < 4 && tok->token_bytes(pick).find('"') == std::string::npos;
               ++tries) {
            pick = allowed[rng() % allowed.size()];
          }
          if (tok->is_special(pick)) break;
          ASSERT_TRUE(a->AcceptToken(pick));
          ASSERT_TRUE(b->AcceptToken(pick));
          text += std::string(tok->token_bytes(pick));
          // Count the refusals the comparison saw: a repeated item string.
          for (const char* repeat : {"\"a\"", "\"b\"", "\"\""}) {
            refused_repeats += !a->Clone()->AcceptBytes(std::string(",") + repeat) &&
                               a->Clone()->AcceptBytes(",\"q\"");
          }
        }
      }
    }
  }
  EXPECT_GT(steps, 500);
  EXPECT_GT(refused_repeats, 20);
}

// Each array keeps its own strings (nested arrays, arrays in any-order
// objects); a rollback forgets the items it undoes.
TEST(JsonSchemaUniqueItemsTest, OpenStringsPerArrayAndRollback) {
  ExpectExact(R"({"type": "array", "maxItems": 3,
      "items": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}})",
              {"[]", "[\"a\"]", "[\"b\"]", "[\"a\",\"b\"]", "[\"a\",\"a\"]"}, 3,
              /*finite=*/false);
  // A repeat is fine in the branch that allows it (the parser drops only
  // the distinct-value lexeme when the string ends).
  ExpectExact(R"({"anyOf": [
      {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
      {"type": "array", "items": {"const": "a"}}]})",
              {"\"a\"", "\"b\"", "\"ab\""}, 3, /*finite=*/false);
  auto obj = Compile(R"({"type": "object", "properties": {
      "x": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
      "y": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}})",
                     WhitespaceMode::kBounded, /*any_order=*/true);
  ASSERT_TRUE(obj.ok()) << obj.status();
  EXPECT_TRUE(Accepts(*obj, R"({"y": ["q", "r"], "x": ["q", "r"]})"));
  EXPECT_FALSE(Accepts(*obj, R"({"y": ["q"], "x": ["r", "r"]})"));
  EXPECT_FALSE(Accepts(*obj, R"({"x": ["q", "r", "q"]})"));

  auto g = Compile(kStringSchema, WhitespaceMode::kCompact);
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes("[\"a\","));
  EXPECT_FALSE(m->Clone()->AcceptBytes("\"a\""));
  ASSERT_TRUE(m->AcceptBytes("\"b\""));
  EXPECT_FALSE(m->Clone()->AcceptBytes(",\"b\""));
  EXPECT_FALSE(m->Clone()->AcceptBytes(",\"a\""));
  ASSERT_TRUE(m->Rollback(1).ok());  // Undo "b".
  ASSERT_TRUE(m->AcceptBytes("\"c\""));
  EXPECT_TRUE(m->Clone()->AcceptBytes(",\"b\"]"));
  EXPECT_FALSE(m->Clone()->AcceptBytes(",\"c\""));
}

// contains counts items matching it: exact where `contains` has a
// complement (normalization splits items into match and miss).
TEST(JsonSchemaContainsTest, CountsMatchingItems) {
  ExpectExact(R"({"type": "array", "items": {"enum": ["a", "b", true]},
      "contains": {"const": "a"}, "maxItems": 3})",
              kAtoms, 3, /*finite=*/true);
  ExpectExact(R"({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "array",
      "items": {"enum": ["a", "b", "c"]}, "contains": {"enum": ["a", "b"]},
      "minContains": 2, "maxContains": 2, "maxItems": 4})",
              kAtoms, 4, /*finite=*/true);
  ExpectExact(R"({"type": "array", "items": {"enum": ["a", "b", null]},
      "contains": {"type": "string"}, "minContains": 0, "maxContains": 1, "maxItems": 3})",
              kAtoms, 3, /*finite=*/true);
  ExpectExact(R"({"type": "array", "contains": {"type": ["boolean", "null"]}, "minContains": 2})",
              kAtoms, 3, /*finite=*/false);
  ExpectExact(R"({"type": "array", "contains": {"const": "a"}, "minItems": 2})", kAtoms, 3,
              /*finite=*/false);
}

// Draft 6/7 `contains`: at least one item matches.
TEST(JsonSchemaContainsTest, Draft7ContainsIsAtLeastOne) {
  ExpectExact(R"({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
      "items": {"enum": ["a", "b"]}, "contains": {"const": "b"}, "maxItems": 3})",
              kAtoms, 3, /*finite=*/true);
}

TEST(JsonSchemaContainsTest, WithoutAComplementRefusedByName) {
  auto g = Compile(R"({"properties": {"l": {"type": "array",
      "contains": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}})",
                   WhitespaceMode::kBounded);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("contains"));
  EXPECT_THAT(g.status().message(), HasSubstr("/properties/l"));
}

}  // namespace
}  // namespace maskd
