// uniqueItems over open numbers (and numbers mixed with open strings):
// numbers compare by value (1 == 1.0 == 10e-1, -0 == 0 == 0e5). Checked by
// brute force: every array of a few items in several spellings must be
// accepted iff the reference validator accepts it, and after every prefix of
// every valid compact document the mask must hold exactly the tokens after
// which some valid document exists (an independent oracle that searches for
// a completion with a fresh value), EOS iff the prefix is one.
#include <algorithm>
#include <functional>
#include <map>
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

// Every byte, plus tokens that end a number and go on (`1,`, `0]`), start
// one after a comma, or carry an exponent or fraction across bytes.
std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t : {"1,", "0]", ",1", ",0",  ",-0", "1e", "0e", ".0",  "e-", "e+", "1]",  "0,",
                        "00", "10", "e0", "1,1", "0 ",  " ,", "1 ", ", 1", "]",  "[1", "[0,0"}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-numbers");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(const std::string& schema,
                                                               WhitespaceMode whitespace,
                                                               bool cached = true) {
  return CompileSchema(schema, whitespace, Vocab(), cached);
}

// Verdicts on every array of at most `max_len` atoms, spaced and compact,
// against the reference validator (which compares canonical values).
void ExpectVerdicts(const std::string& schema, const std::vector<std::string>& atoms,
                    size_t max_len) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  ASSERT_TRUE(reference.ok()) << schema << ": " << reference.status();
  auto spaced = Compile(schema, WhitespaceMode::kBounded);
  auto compact = Compile(schema, WhitespaceMode::kCompact);
  ASSERT_TRUE(spaced.ok()) << schema << ": " << spaced.status();
  ASSERT_TRUE(compact.ok()) << schema << ": " << compact.status();
  int valid = 0, repeats_refused = 0;
  for (const std::vector<std::string>& c : Arrays(atoms, max_len)) {
    absl::StatusOr<json_schema::JsonValue> value = json_schema::ParseJsonValue(Text(c, ","));
    ASSERT_TRUE(value.ok()) << Text(c, ",");
    const bool expected = json_schema::ReferenceValidate(*reference, reference->root, *value);
    EXPECT_EQ(Accepts(*spaced, Text(c, ", ")), expected) << schema << "\n  " << Text(c, ", ");
    EXPECT_EQ(Accepts(*compact, Text(c, ",")), expected) << schema << "\n  " << Text(c, ",");
    valid += expected;
    // A repeat by value, spelled differently (1 and 1.0): what the check adds.
    std::set<std::string> spellings(c.begin(), c.end());
    repeats_refused += !expected && spellings.size() == c.size();
  }
  EXPECT_GT(valid, 10) << schema;
  EXPECT_GT(repeats_refused, 10) << schema;
}

// Spellings of 1, of 0 and of a few other values. (The engine's numbers
// normalize an exponent's mantissa, numeric_regex.h: no `10e-1`.)
const std::vector<std::string> kNumbers = {"1",   "1.0", "1e0", "1.00E+0", "-0", "0",   "0.00",
                                           "0e5", "2",   "12",  "1.2e1",   "-1", "-1e0"};

TEST(JsonSchemaUniqueNumbersTest, NumbersCompareByValue) {
  ExpectVerdicts(R"({"type": "array", "items": {"type": "number"}, "uniqueItems": true})", kNumbers,
                 3);
  ExpectVerdicts(R"({"type": "array", "items": {"type": "number"}, "uniqueItems": true,
      "minItems": 2, "maxItems": 2})",
                 kNumbers, 3);
}

TEST(JsonSchemaUniqueNumbersTest, NumbersMixedWithStrings) {
  std::vector<std::string> atoms = {"1", "1.0", "-0", "0e1", "\"1\"", "\"a\"", "\"a\\\"\""};
  ExpectVerdicts(R"({"type": "array", "items": {"type": ["number", "string"]},
      "uniqueItems": true})",
                 atoms, 3);
}

// Each array keeps its own numbers, and a repeat is fine in a branch that
// allows it (the parser drops only the distinct-number lexeme).
TEST(JsonSchemaUniqueNumbersTest, PerArrayAndBesideOtherBranches) {
  ExpectVerdicts(R"({"type": "array", "maxItems": 3, "items": {"type": "array",
      "items": {"type": "number"}, "uniqueItems": true}})",
                 {"[]", "[1]", "[1.0]", "[1,1e0]", "[0,-0]", "[2,1]"}, 3);
  ExpectVerdicts(R"({"anyOf": [
      {"type": "array", "items": {"type": "number"}, "uniqueItems": true},
      {"type": "array", "items": {"const": 1}}]})",
                 {"1", "1.0", "2", "-0", "0"}, 3);
}

// Whether `spelling` is a number the items admit: the engine's spellings
// (numeric_regex.h normalizes an exponent's mantissa; integers take `.0+`
// and, past 1e16, exponents), asked of the items' grammar without
// uniqueItems (`rest`: the array's other keywords, `$schema` among them).
using Spelled = std::function<bool(const std::string&)>;
Spelled SpelledBy(const std::string& items, const std::string& rest) {
  auto g = Compile(R"({"type": "array", "items": )" + items + rest + "}", WhitespaceMode::kCompact);
  EXPECT_TRUE(g.ok()) << g.status();
  std::shared_ptr<const CompiledGrammar> grammar = *g;
  auto memo = std::make_shared<std::map<std::string, bool>>();
  return [grammar, memo](const std::string& spelling) {
    auto [it, added] = memo->try_emplace(spelling, false);
    if (added) it->second = Accepts(grammar, "[" + spelling + "]");
    return it->second;
  };
}

// The cached masks (a string item beside number items is walked with the
// cache; numbers without it) must equal uncached walks, on a vocabulary of
// many multi-byte tokens mixing quotes, digits, exponents and brackets,
// along random mask-guided documents that repeat values.
TEST(JsonSchemaUniqueNumbersTest, CachedMasksEqualUncachedWalks) {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  std::mt19937 rng(7);
  const std::string alphabet = "\"\"01e.-, ]a\\";
  std::set<std::string> seen(vocab.begin(), vocab.end());
  while (vocab.size() < 2500) {
    std::string t;
    const size_t len = 2 + rng() % 4;
    for (size_t i = 0; i < len; ++i) t.push_back(alphabet[rng() % alphabet.size()]);
    if (seen.insert(t).second) vocab.push_back(t);
  }
  auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-numbers-cache");
  int steps = 0;
  for (const char* schema :
       {R"({"type": "array", "items": {"type": ["number", "string"]}, "uniqueItems": true})",
        R"({"type": "array", "items": {"type": ["integer", "string"]}, "uniqueItems": true})"}) {
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
      // Where a repeat is one token away, then random documents.
      for (const char* prefix : {"[1,", "[1, ", "[0,-0", "[\"a\",1,", "[1,\"", "[12,12", "[0, 0.0",
                                 "[1,\"1\",\"1", "[10,1"}) {
        auto a = Matcher::Create(*cached);
        auto b = Matcher::Create(*uncached);
        if (!b->AcceptBytes(prefix)) continue;
        ASSERT_TRUE(a->AcceptBytes(prefix));
        std::vector<uint32_t> want((tok->vocab_size() + 31) / 32), got(want.size());
        b->FillMask(want);
        a->FillMask(got);
        ++steps;
        ASSERT_EQ(got, want) << schema << "\n  after " << prefix;
      }
      for (int doc = 0; doc < 12; ++doc) {
        auto a = Matcher::Create(*cached);
        auto b = Matcher::Create(*uncached);
        std::string text;
        for (int step = 0; step < 30; ++step) {
          std::vector<uint32_t> want((tok->vocab_size() + 31) / 32), got(want.size());
          b->FillMask(want);
          a->FillMask(got);
          ++steps;
          ASSERT_EQ(got, want) << schema << "\n  after " << text;
          std::vector<TokenId> allowed;
          for (TokenId t = 0; t < tok->vocab_size(); ++t) {
            if (!tok->is_special(t) && ((want[t >> 5] >> (t & 31)) & 1)) allowed.push_back(t);
          }
          if (allowed.empty()) break;
          // Mostly short tokens of few bytes, so that items are small and
          // values repeat.
          TokenId pick = allowed[rng() % allowed.size()];
          for (int tries = 0; tries < 8 && (tok->token_bytes(pick).size() > 2 ||
                                            tok->token_bytes(pick).find_first_not_of("01,\"") !=
                                                std::string::npos);
               ++tries) {
            pick = allowed[rng() % allowed.size()];
          }
          ASSERT_TRUE(a->AcceptToken(pick));
          ASSERT_TRUE(b->AcceptToken(pick));
          text += std::string(tok->token_bytes(pick));
        }
      }
    }
  }
  EXPECT_GT(steps, 500);
}

// Whether a partial item (with the values before it) can become a new
// value; cleared for each grammar (ExpectExactMasks).
std::map<std::string, bool>& PartialMemo() {
  static std::map<std::string, bool> memo;
  return memo;
}

// Whether `text` (compact) is a prefix of some array of at most `max_items`
// numbers, pairwise different in value: complete items must be new values
// (compared as json_value.h's canonical keys), and the number being written
// must reach a new value within 4 more bytes (enough for every prefix here:
// `1.` needs `5e16`).
// Without `unique`, repeats are fine (what the syntax alone allows).
bool ViableNumberArray(const std::string& text, const Spelled& spelled, size_t max_items,
                       bool* complete, bool unique = true) {
  *complete = false;
  if (text.empty()) return true;
  if (text[0] != '[') return false;
  std::set<std::string> seen;
  size_t i = 1;
  size_t items = 0;
  auto fresh = [&](const std::string& spelling) {
    if (!spelled(spelling)) return false;
    absl::StatusOr<json_schema::JsonValue> v = json_schema::ParseJsonValue(spelling);
    return v.ok() && v->kind() == json_schema::JsonValue::Kind::kNumber &&
           (!unique || !seen.contains(v->CanonicalKey()));
  };
  if (i < text.size() && text[i] == ']') {
    *complete = i + 1 == text.size();
    return i + 1 == text.size();
  }
  while (true) {
    const size_t end = text.find_first_of(",]", i);
    const std::string item = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (++items > max_items) return false;
    if (item.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
    if (end == std::string::npos) {
      // The item being written: some completion of at most 4 bytes is new
      // (memoized: the same partial items recur across prefixes and tokens).
      std::map<std::string, bool>& partial_memo = PartialMemo();
      std::string key = item + (unique ? "|u" : "|r");
      for (const std::string& k : seen) key += "|" + k;
      if (auto it = partial_memo.find(key); it != partial_memo.end()) return it->second;
      const std::string alphabet = "0156.e-";
      std::vector<std::string> tails = {""};
      bool found = false;
      for (size_t n = 0; n < tails.size() && !found; ++n) {
        found = fresh(item + tails[n]);
        if (tails[n].size() == 4) continue;
        for (char c : alphabet) tails.push_back(tails[n] + c);
      }
      partial_memo[key] = found;
      return found;
    }
    if (!fresh(item)) return false;
    seen.insert(json_schema::ParseJsonValue(item)->CanonicalKey());
    if (text[end] == ']') {
      *complete = end + 1 == text.size();
      return end + 1 == text.size();
    }
    i = end + 1;
  }
}

void ExpectExactMasks(const std::string& items, const std::string& bounds, size_t max_items,
                      const std::vector<std::string>& atoms, bool cached) {
  const std::string schema =
      R"({"type": "array", "uniqueItems": true, "items": )" + items + bounds + "}";
  const Spelled spelled = SpelledBy(items, bounds);
  PartialMemo().clear();
  auto g = Compile(schema, WhitespaceMode::kCompact, cached);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  std::set<std::string> checked;
  int docs = 0, refused = 0;
  for (const std::vector<std::string>& c : Arrays(atoms, 2)) {
    const std::string doc = Text(c, ",");
    bool complete = false;
    if (!ViableNumberArray(doc, spelled, max_items, &complete) || !complete) continue;
    ++docs;
    auto m = Matcher::Create(*g);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) {
        std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
        m->FillMask(words);
        for (TokenId t = 0; t < tok.vocab_size(); ++t) {
          const bool got = (words[t / 32] >> (t % 32)) & 1;
          bool done = false;
          if (tok.is_special(t)) {
            ASSERT_TRUE(ViableNumberArray(prefix, spelled, max_items, &done));
            ASSERT_EQ(got, done) << schema << "\n  EOS after " << prefix;
            continue;
          }
          const std::string bytes(tok.token_bytes(t));
          const bool want = ViableNumberArray(prefix + bytes, spelled, max_items, &done);
          // Refusals the syntax alone would allow: the value check's work.
          refused += !want && ViableNumberArray(prefix + bytes, spelled, max_items, &done, false);
          ASSERT_EQ(got, want) << schema << "\n  after " << prefix << " token " << bytes;
        }
      }
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
  EXPECT_GT(docs, 20);
  EXPECT_GT(refused, 10);
}

// After `[0,0` no `e` (every exponent of a zero mantissa is zero again), after
// `[1,1` no `,` or `]`, but `.5`, `2` and `e1` are fine.
TEST(JsonSchemaUniqueNumbersTest, MasksAreExact) {
  const std::vector<std::string> atoms = {"1", "1.0", "-0", "0", "0e1", "1e0", "5", "-1.5"};
  for (bool cached : {true, false}) {
    ExpectExactMasks(R"({"type": "number"})", "", 99, atoms, cached);
    ExpectExactMasks(R"({"type": "number"})", R"(, "maxItems": 2)", 2, atoms, cached);
  }
}

// Integers settle earlier: after `[0,` no `0` (`0`, `0.0` are all zero),
// after `[12,` no `12.` (only `.0+` may follow), but `1.` may still become
// 1.5e+16.
TEST(JsonSchemaUniqueNumbersTest, IntegerMasksAreExact) {
  const std::vector<std::string> atoms = {"0", "-0", "0.0", "1", "1.0", "12", "12.0", "120", "-1"};
  for (bool cached : {true, false}) {
    ExpectExactMasks(R"({"type": "integer"})", "", 99, atoms, cached);
  }
  ExpectExactMasks(R"({"type": "integer", "description": "draft 4: no 1.0"})",
                   R"(, "$schema": "http://json-schema.org/draft-04/schema#")", 99, atoms, true);
}

TEST(JsonSchemaUniqueNumbersTest, IntegersCompareByValue) {
  const std::vector<std::string> atoms = {
      "0", "-0", "0.0", "1", "1.0", "10", "10.0", "1e16", "1.0e16", "10000000000000000", "1.5e16"};
  ExpectVerdicts(R"({"type": "array", "items": {"type": "integer"}, "uniqueItems": true})", atoms,
                 3);
  ExpectVerdicts(R"({"type": "array", "items": {"type": ["integer", "string"]},
      "uniqueItems": true})",
                 {"0", "-0", "1", "1.0", "\"1\"", "\"a\""}, 3);
}

bool Allows(Matcher& m, const Tokenizer& tok, const std::string& bytes) {
  std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
  m.FillMask(words);
  for (TokenId t = 0; t < tok.vocab_size(); ++t) {
    if (!tok.is_special(t) && tok.token_bytes(t) == bytes) return (words[t / 32] >> (t % 32)) & 1;
  }
  ADD_FAILURE() << "no token " << bytes;
  return false;
}

// With whitespace allowed, whitespace after a number settles it (the lexeme
// takes trailing whitespace, so only the next byte would end it): refused
// after a repeat, and so is every token that ends one.
TEST(JsonSchemaUniqueNumbersTest, WhitespaceSettlesARepeat) {
  auto g = Compile(R"({"type": "array", "items": {"type": "number"}, "uniqueItems": true})",
                   WhitespaceMode::kBounded);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes("[1, 0, 1"));
  EXPECT_FALSE(Allows(*m, tok, " "));
  EXPECT_FALSE(Allows(*m, tok, ","));
  EXPECT_FALSE(Allows(*m, tok, "]"));
  EXPECT_TRUE(Allows(*m, tok, "1 "));  // 11
  EXPECT_TRUE(Allows(*m, tok, "0"));
  EXPECT_TRUE(Allows(*m, tok, "."));
  EXPECT_TRUE(Allows(*m, tok, "e"));
  EXPECT_TRUE(Allows(*m, tok, "0 "));
  EXPECT_FALSE(m->Clone()->AcceptBytes(".0 "));
  EXPECT_FALSE(m->Clone()->AcceptBytes("e0]"));
  EXPECT_TRUE(m->Clone()->AcceptBytes("e1 ]"));
  ASSERT_TRUE(m->AcceptBytes("0 "));  // 10
  EXPECT_FALSE(m->Clone()->AcceptBytes(", 1e1 "));
  EXPECT_FALSE(m->Clone()->AcceptBytes(", 1.0e1]"));
  EXPECT_TRUE(m->Clone()->AcceptBytes(", 1.0e1"));
  EXPECT_TRUE(m->Clone()->AcceptBytes(", 1e2 ]"));
  // A zero mantissa settles at its exponent: `e` and `E` go.
  auto z = Matcher::Create(*g);
  ASSERT_TRUE(z->AcceptBytes("[0.0, -0"));
  EXPECT_FALSE(Allows(*z, tok, "e"));
  EXPECT_FALSE(Allows(*z, tok, "E"));
  EXPECT_FALSE(Allows(*z, tok, " "));
  EXPECT_TRUE(Allows(*z, tok, "."));
  ASSERT_TRUE(z->AcceptBytes(".0"));
  EXPECT_FALSE(Allows(*z, tok, "e"));
  EXPECT_TRUE(Allows(*z, tok, "1"));
}

// A rollback forgets the numbers it undoes, and a clone keeps its own.
TEST(JsonSchemaUniqueNumbersTest, Rollback) {
  auto g = Compile(R"({"type": "array", "items": {"type": "number"}, "uniqueItems": true})",
                   WhitespaceMode::kCompact);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes("[1,"));
  ASSERT_TRUE(m->AcceptBytes("2"));
  EXPECT_FALSE(m->Clone()->AcceptBytes(",2.0,"));
  EXPECT_TRUE(m->Clone()->AcceptBytes(",2.0"));  // 2.05 may follow
  EXPECT_FALSE(m->Clone()->AcceptBytes(",1e0,"));
  ASSERT_TRUE(m->Rollback(1).ok());  // Undo 2.
  EXPECT_TRUE(Allows(*m, tok, "2"));
  ASSERT_TRUE(m->AcceptBytes("3,"));
  EXPECT_TRUE(m->Clone()->AcceptBytes("2]"));
  EXPECT_FALSE(m->Clone()->AcceptBytes("3]"));
  EXPECT_FALSE(Allows(*m, tok, "1,"));
  ASSERT_TRUE(m->Rollback(1).ok());  // Undo "3,": back to "[1,".
  EXPECT_TRUE(m->Clone()->AcceptBytes("3,2]"));
  EXPECT_FALSE(m->Clone()->AcceptBytes("1]"));
}

// What stays refused, by name: integers alone (`0` and `12.0` settle before
// the number ends), bounded numbers, integers beside booleans or null.
TEST(JsonSchemaUniqueNumbersTest, OtherItemsRefusedByName) {
  for (const char* schema : {
           R"({"properties": {"n": {"type": "array", "items": {"type": "integer",
               "minimum": 0}, "uniqueItems": true}}})",
           R"({"properties": {"n": {"type": "array", "items": {"type": "number",
               "maximum": 3}, "uniqueItems": true}}})",
           R"({"properties": {"n": {"type": "array", "items": {"type": "number",
               "multipleOf": 0.5}, "uniqueItems": true}}})",
           R"({"properties": {"n": {"type": "array", "items": {"type": ["integer", "null"]},
               "uniqueItems": true}}})",
       }) {
    auto g = Compile(schema, WhitespaceMode::kBounded);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("uniqueItems")) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("/properties/n")) << schema;
  }
}

}  // namespace
}  // namespace maskd
