// uniqueItems over objects and arrays (items that admit any other member,
// or arrays without maxItems): items compare as JSON values (member order
// free, numbers by value, 1 == 1.0). Checked by brute force: every array of
// a few items must be accepted iff the reference validator accepts it, and
// after every prefix of every valid compact document the mask must hold
// exactly the tokens after which some valid document exists (an oracle that
// searches completions under the grammar without uniqueItems and asks the
// reference validator of each), EOS iff the prefix is one.
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_replace.h"
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

// Every byte, plus tokens that close an item and go on (`}]`, `},`), close
// a string and its object (`"}`), or span members.
std::shared_ptr<testing::SmallVocabTokenizer> Vocab() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  for (const char* t :
       {"}",   "}]",  "},",  "\"}",    "\"},",      "1}",  "0}",  "]}",    "[]",  "{}",
        "{\"", "\":", ",\"", "\"a\":", "1,",        "]]",  "],",  "],[",   "},{", "} ",
        " }",  ".0}", "[1",  "1]",     "{\"a\":1}", ", {", "e0}", "\"x\"}"}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-objects");
  return tok;
}

// For the mask oracle: the bytes of JSON's syntax and of the atoms, a
// two-byte character, and the multi-byte tokens of Vocab(). (Every byte
// inside a string is alike; fewer of them keep the search small.)
std::shared_ptr<testing::SmallVocabTokenizer> MaskVocab() {
  std::vector<std::string> vocab;
  for (char c : std::string("{}[],:\"\\ 0123456789.eE+-abcxqrtufls"))
    vocab.push_back(std::string(1, c));
  vocab.push_back("\xc3\xa9");
  for (const char* t : {"}]",  "},",  "\"}", "\"},",      "1}",  "0}",     "]}",   "[]",  "{}",
                        "{\"", "\":", ",\"", "\"a\":",    "1,",  "]]",     "],",   "],[", "},{",
                        ".0}", "[1",  "1]",  "{\"a\":1}", "e0}", "\"x\"}", "true}"}) {
    vocab.push_back(t);
  }
  static auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-objects-masks");
  return tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> Compile(
    const std::string& schema, WhitespaceMode whitespace, bool cached = true,
    bool any_order = false, std::shared_ptr<testing::SmallVocabTokenizer> vocab = Vocab()) {
  return CompileSchema(schema, whitespace, std::move(vocab), cached, any_order);
}

// Verdicts on every array of at most `max_len` atoms, spaced and compact.
void ExpectVerdicts(const std::string& schema, const std::vector<std::string>& atoms,
                    size_t max_len, bool any_order = false) {
  const json_schema::Schema reference = Reference(schema);
  auto spaced = Compile(schema, WhitespaceMode::kBounded, true, any_order);
  auto compact = Compile(schema, WhitespaceMode::kCompact, true, any_order);
  ASSERT_TRUE(spaced.ok()) << schema << ": " << spaced.status();
  ASSERT_TRUE(compact.ok()) << schema << ": " << compact.status();
  int valid = 0, repeats_refused = 0;
  for (const std::vector<std::string>& c : Arrays(atoms, max_len)) {
    const bool expected = Valid(reference, Text(c, ","));
    EXPECT_EQ(Accepts(*spaced, Spaced(Text(c, ","))), expected)
        << schema << "\n  " << Spaced(Text(c, ","));
    EXPECT_EQ(Accepts(*compact, Text(c, ",")), expected) << schema << "\n  " << Text(c, ",");
    valid += expected;
    // A repeat by value spelled differently ({"a":1,"b":2} and
    // {"b":2,"a":1.0}): what the value hash must see through.
    std::set<std::string> spellings(c.begin(), c.end());
    repeats_refused += !expected && spellings.size() == c.size() && c.size() > 1;
  }
  EXPECT_GT(valid, 10) << schema;
  EXPECT_GT(repeats_refused, 3) << schema;
}

const char* const kFreeObjects =
    R"({"type": "array", "uniqueItems": true, "items": {"type": "object"}})";
const std::vector<std::string> kObjectAtoms = {"{}",
                                               R"({"a":1})",
                                               R"({"a":1.0})",
                                               R"({"a":1e0})",
                                               R"({"a":2})",
                                               R"({"a":"1"})",
                                               R"({"a":1,"b":"x"})",
                                               R"({"b":"x","a":1})",
                                               R"({"b":"x"})",
                                               R"({"a":[1,{}]})",
                                               R"({"a":[{},1]})",
                                               R"({"a":{"c":null,"d":true}})",
                                               R"({"a":{"d":true,"c":null}})",
                                               R"({"a":"x\"}"})",
                                               R"({"a\"":1})"};

TEST(JsonSchemaUniqueObjectsTest, ObjectsCompareAsValues) {
  ExpectVerdicts(kFreeObjects, kObjectAtoms, 2);
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "maxItems": 3, "minItems": 1,
      "items": {"type": "object", "required": ["a"],
                "properties": {"a": {"type": ["integer", "string", "array"]}}}})",
                 {"{}", R"({"a":1})", R"({"a":1.0})", R"({"a":2})", R"({"a":"1"})",
                  R"({"a":1,"b":"x"})", R"({"a":1.0,"b":"x"})", R"({"a":[1]})", R"({"a":[1.0]})"},
                 3);
}

// A string inside an item (a member's value, a key, an array's element) has
// two json.dumps spellings from U+007F up (raw or \u-escaped: json_string.h);
// the item's value hash sees through them, so `{"a":"é"}` then
// `{"a":"\u00e9"}` is a repeat.
TEST(JsonSchemaUniqueObjectsTest, StringsInItemsCompareDecoded) {
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true})",
                 {"{\"a\":\"\xc3\xa9\"}", R"({"a":"\u00e9"})", "{\"\xc3\xa9\":1}",
                  R"({"\u00e9":1})", "[\"\xf0\x9f\x98\x80\"]", R"(["\ud83d\ude00"])",
                  "\"\xc3\xa9\"", R"("\u00e9")", R"({"a":"x"})"},
                 2);
}

TEST(JsonSchemaUniqueObjectsTest, DeclaredPropertiesInAnyOrder) {
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "items": {"type": "object",
      "properties": {"a": {"type": "number"}, "b": {"type": "string"}}}})",
                 {"{}", R"({"a":1})", R"({"a":1.0})", R"({"a":1,"b":"x"})", R"({"b":"x","a":1})",
                  R"({"b":"x","a":1e0})", R"({"b":"x"})", R"({"c":1})", R"({"a":1,"c":1})",
                  R"({"c":1,"a":1})"},
                 2, /*any_order=*/true);
}

TEST(JsonSchemaUniqueObjectsTest, ArraysCompareAsValues) {
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "items": {"type": "array"}})",
                 {"[]", "[1]", "[1.0]", "[1,2]", "[2,1]", "[[]]", "[{}]", R"(["1"])",
                  R"([{"a":1,"b":2}])", R"([{"b":2,"a":1}])"},
                 2);
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true,
      "items": {"type": "array", "items": {"type": "number"}}})",
                 {"[]", "[1]", "[1.0]", "[1,2]", "[2,1]", "[0]", "[-0]", "[0,0]"}, 3);
  // Objects and arrays mixed: {} is not [].
  ExpectVerdicts(
      R"({"type": "array", "uniqueItems": true, "items": {"type": ["array", "object"]}})",
      {"[]", "{}", "[1]", "[1.0]", R"({"a":1})", "[[]]", "[{}]", R"({"a":[]})", R"({"a":{}})",
       R"({"a":1,"b":[]})", R"({"b":[],"a":1e0})"},
      2);
}

// Any value, and objects beside scalars: strings settle at their closing
// quote, numbers by value, literals at their first byte.
const char* const kAnyItems = R"({"type": "array", "uniqueItems": true, "items": {}})";

TEST(JsonSchemaUniqueObjectsTest, AnyValues) {
  ExpectVerdicts(kAnyItems,
                 {"1", "1.0", "\"1\"", "true", "false", "null", "{}", "[]", R"({"a":1})",
                  R"({"a":1e0})", "[1]", "[1.0]", R"("a\"")", "-0", "0"},
                 2);
  ExpectVerdicts(
      R"({"type": "array", "uniqueItems": true, "items": {"type": ["string", "object",
      "boolean"]}})",
      {"\"a\"", "\"b\"", "true", "false", "{}", R"({"a":"a"})", R"({"a":"a","b":true})",
       R"({"b":true,"a":"a"})", R"({"b":"a"})"},
      3);
}

// anyOf/oneOf of such items: the union's values.
TEST(JsonSchemaUniqueObjectsTest, CombinatorItems) {
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "items": {"anyOf": [
      {"type": "object", "properties": {"a": {"type": "number"}}}, {"type": "string"},
      {"type": "array"}]}})",
                 {"\"a\"", "\"b\"", "{}", R"({"a":1})", R"({"a":1.0})", "[]", "[1]", "[1.0]"}, 2);
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "items": {"oneOf": [
      {"type": "string", "minLength": 1}, {"type": "number"}]}})",
                 {"\"a\"", "\"\"", "1", "1.0", "2", "\"1\""}, 3);
}

// A random JSON value over a few keys, strings, numbers and literals, written
// in a random spelling of its value (member order shuffled; 0, -0, 0.0; 1,
// 1.0, 1e0), so that equal values recur in other spellings.
std::string RandomValue(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 0 ? 7 : 5));
  switch (kind) {
    case 0: {
      const int n = static_cast<int>(rng() % 3);
      const char* spellings[3][3] = {{"0", "-0", "0.0"}, {"1", "1.0", "1e0"}, {"2", "2.0", "2e0"}};
      return spellings[n][rng() % 3];
    }
    case 1:
      return rng() % 2 ? "\"a\"" : "\"b\"";
    case 2:
      return rng() % 2 ? "true" : "null";
    case 3:
      return "{}";
    case 4:
      return "[]";
    case 5: {
      std::vector<std::string> members;
      for (const char* key : {"a", "b"}) {
        if (rng() % 2)
          members.push_back("\"" + std::string(key) + "\":" + RandomValue(rng, depth - 1));
      }
      if (members.size() == 2 && rng() % 2) std::swap(members[0], members[1]);
      std::string out = "{";
      for (size_t i = 0; i < members.size(); ++i) out += (i ? "," : "") + members[i];
      return out + "}";
    }
    default: {
      std::string out = "[";
      const int n = static_cast<int>(rng() % 3);
      for (int i = 0; i < n; ++i) out += (i ? "," : "") + RandomValue(rng, depth - 1);
      return out + "]";
    }
  }
}

// Generated item schemas and instances: random arrays of random values
// (repeats by value in other spellings included) against the reference
// validator, compact and spaced, keys in any order.
TEST(JsonSchemaUniqueObjectsTest, RandomItemsAgreeWithTheReference) {
  std::mt19937 rng(2026);
  int valid = 0, repeats = 0;
  for (
      const char* items : {
          R"({})",
          R"({"type": "object"})",
          R"({"type": "array"})",
          R"({"type": ["object", "string", "number", "null"]})",
          R"({"type": "object", "properties": {"a": {"type": "array"}, "b": {}}, "required": ["a"]})",
          R"({"anyOf": [{"type": "object", "properties": {"a": {"type": "number"}}},
                         {"type": "array", "items": {"type": "number"}}, {"type": "boolean"}]})",
          R"({"type": "array", "items": {"type": "number"}, "minItems": 1})",
      }) {
    const std::string schema =
        std::string(R"({"type": "array", "uniqueItems": true, "items": )") + items + "}";
    const json_schema::Schema reference = Reference(schema);
    auto spaced = Compile(schema, WhitespaceMode::kBounded, true, /*any_order=*/true);
    auto compact = Compile(schema, WhitespaceMode::kCompact, true, /*any_order=*/true);
    ASSERT_TRUE(spaced.ok()) << schema << ": " << spaced.status();
    ASSERT_TRUE(compact.ok()) << schema << ": " << compact.status();
    std::vector<std::string> pool;
    for (int i = 0; i < 8; ++i) pool.push_back(RandomValue(rng, 2));
    for (int doc = 0; doc < 300; ++doc) {
      std::vector<std::string> c;
      const int n = static_cast<int>(rng() % 4);
      // Mostly from a small pool, so that values repeat.
      for (int i = 0; i < n; ++i)
        c.push_back(rng() % 3 ? pool[rng() % pool.size()] : RandomValue(rng, 2));
      const std::string text = Text(c, ",");
      const bool expected = Valid(reference, text);
      ASSERT_EQ(Accepts(*compact, text), expected) << schema << "\n  " << text;
      ASSERT_EQ(Accepts(*spaced, Spaced(text)), expected) << schema << "\n  " << Spaced(text);
      valid += expected;
      const std::set<std::string> spellings(c.begin(), c.end());
      repeats += !expected && spellings.size() == c.size() && c.size() > 1;
    }
  }
  EXPECT_GT(valid, 300);
  EXPECT_GT(repeats, 20);
}

// Each array keeps its own items, nested item arrays included, and a
// unique array of strings inside an item still compares its strings.
TEST(JsonSchemaUniqueObjectsTest, NestedArrays) {
  ExpectVerdicts(R"({"type": "array", "uniqueItems": true, "items": {"type": "object",
      "properties": {"t": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}})",
                 {"{}", R"({"t":[]})", R"({"t":["a"]})", R"({"t":["a","a"]})", R"({"t":["a","b"]})",
                  R"({"t":["b","a"]})", R"({"u":1})"},
                 2);
  ExpectVerdicts(R"({"type": "array", "maxItems": 2, "items": {"type": "array",
      "uniqueItems": true, "items": {"type": "object"}}})",
                 {"[]", "[{}]", "[{},{}]", R"([{"a":1},{"a":1.0}])", R"([{"a":1},{"a":2}])"}, 2);
}

// Whether `text` (compact JSON) is a prefix of some valid document: some
// completion of it must be accepted by `syntax` (the schema without
// uniqueItems) and by the reference validator (with uniqueItems). The
// completions tried finish the token in progress, then close every open
// container, each either at once or after one more member or item with a
// fresh key (or value): witnesses, so an engine that refuses a viable token
// fails when a witness exists, and one that allows a doomed token fails
// always.
class Oracle {
 public:
  Oracle(std::shared_ptr<const CompiledGrammar> syntax, json_schema::Schema reference)
      : syntax_(std::move(syntax)), reference_(std::move(reference)) {}

  bool Viable(const std::string& text) {
    auto [it, added] = memo_.try_emplace(text, false);
    if (!added) return it->second;
    auto m = Matcher::Create(syntax_);
    if (!m->AcceptBytes(text)) return false;
    if (!Scan(text)) return false;
    bool viable = false;
    for (const std::string& tail : tails_) {
      viable = viable || Close(text + tail, static_cast<int>(levels_.size()) - 1);
    }
    memo_[text] = viable;
    return viable;
  }

  bool Complete(const std::string& text) {
    auto m = Matcher::Create(syntax_);
    return m->AcceptBytes(text) && m->CanStop() && Valid(reference_, text);
  }

 private:
  // What an open container expects next.
  enum Expect { kFirst, kColon, kValue, kCommaOrClose, kKey };
  struct Level {
    char open;
    Expect expect;
  };

  // Reads `text` into levels_ and tails_ (ways to finish the token in
  // progress: as it stands, or one character longer for a fresh value);
  // false on what compact JSON cannot hold.
  bool Scan(const std::string& text) {
    levels_.clear();
    tails_ = {""};
    bool in_string = false, escaped = false, key = false;
    std::string atom;
    auto value_done = [&] {
      if (!levels_.empty()) levels_.back().expect = kCommaOrClose;
    };
    auto end_atom = [&] {
      if (atom.empty()) return;
      atom.clear();
      value_done();
    };
    for (char c : text) {
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
          if (key) {
            levels_.back().expect = kColon;
          } else {
            value_done();
          }
        }
        continue;
      }
      if (std::string("{}[],:\"").find(c) != std::string::npos) end_atom();
      switch (c) {
        case '{':
        case '[':
          value_done();  // what the parent expects once this one closes
          levels_.push_back({c, kFirst});
          break;
        case '}':
        case ']':
          levels_.pop_back();
          value_done();
          break;
        case ',':
          if (levels_.empty()) return false;
          levels_.back().expect = levels_.back().open == '{' ? kKey : kValue;
          break;
        case ':':
          if (levels_.empty()) return false;
          levels_.back().expect = kValue;
          break;
        case '"':
          in_string = true;
          key = !levels_.empty() && levels_.back().open == '{' &&
                (levels_.back().expect == kFirst || levels_.back().expect == kKey);
          break;
        default:
          atom.push_back(c);
      }
    }
    if (in_string) {
      tails_ = {escaped ? "n\"" : "\"", escaped ? "nq\"" : "q\""};
      if (key) {
        for (std::string& t : tails_) t += ":0";
        levels_.back().expect = kCommaOrClose;
      } else {
        value_done();
      }
    } else if (!atom.empty()) {
      bool word_prefix = false;
      for (const char* word : {"true", "false", "null"}) {
        if (!std::string_view(word).starts_with(atom)) continue;
        tails_ = {std::string(word).substr(atom.size())};
        word_prefix = true;
      }
      if (!word_prefix) {
        tails_ = {std::string(".eE+-").find(atom.back()) != std::string::npos ? "0" : "", "7",
                  ".5"};
      }
      value_done();
    }
    return true;
  }

  // Tries to close levels_[0..k] after `text`.
  bool Close(const std::string& text, int k) {
    if (k < 0) return Complete(text);
    const Level& level = levels_[k];
    const bool object = level.open == '{';
    const std::string close(1, object ? '}' : ']');
    const std::string fresh = object ? "\"q" + std::to_string(k) + "\":0" : "0";
    std::vector<std::string> options;
    switch (level.expect) {
      case kFirst:
        options = {close};
        if (object) {
          options.push_back(fresh + close);
        } else {
          for (const char* v : kValues) options.push_back(v + close);
        }
        break;
      case kColon:
      case kValue:
        for (const char* v : kValues) {
          options.push_back(std::string(level.expect == kColon ? ":" : "") + v + close);
        }
        if (level.expect == kValue && object) {
          for (const char* v : kValues) options.push_back(std::string(v) + "," + fresh + close);
        }
        break;
      case kCommaOrClose:
        options = {close};
        if (object) {
          options.push_back("," + fresh + close);
        } else {
          for (const char* v : kValues) options.push_back(std::string(",") + v + close);
        }
        break;
      case kKey:
        options = {fresh + close};
        break;
    }
    for (const std::string& o : options) {
      if (Close(text + o, k - 1)) return true;
    }
    return false;
  }

  static constexpr const char* kValues[] = {"0", "7", "{}", "[]", "{\"q9\":0}", "[9]", "\"s\""};

  std::shared_ptr<const CompiledGrammar> syntax_;
  json_schema::Schema reference_;
  std::map<std::string, bool> memo_;
  std::vector<Level> levels_;
  std::vector<std::string> tails_;
};

void ExpectExactMasks(const std::string& schema, const std::vector<std::string>& atoms,
                      bool cached) {
  auto g = Compile(schema, WhitespaceMode::kCompact, cached, false, MaskVocab());
  ASSERT_TRUE(g.ok()) << schema << ": " << g.status();
  const std::string plain =
      absl::StrReplaceAll(schema, {{R"("uniqueItems": true)", R"("uniqueItems": false)"}});
  ASSERT_NE(plain, schema);
  auto syntax = Compile(plain, WhitespaceMode::kCompact, true, false, MaskVocab());
  ASSERT_TRUE(syntax.ok()) << syntax.status();
  Oracle oracle(*syntax, Reference(schema));
  const json_schema::Schema reference = Reference(schema);
  const Tokenizer& tok = (*g)->tokenizer();
  std::set<std::string> checked;
  int docs = 0, refused = 0;
  for (const std::vector<std::string>& c : Arrays(atoms, 2)) {
    const std::string doc = Text(c, ",");
    if (!Valid(reference, doc)) continue;
    ++docs;
    auto m = Matcher::Create(*g);
    for (size_t i = 0; i <= doc.size(); ++i) {
      const std::string prefix = doc.substr(0, i);
      if (checked.insert(prefix).second) {
        std::vector<uint32_t> words((tok.vocab_size() + 31) / 32);
        m->FillMask(words);
        auto syntax_only = Matcher::Create(*syntax);
        ASSERT_TRUE(syntax_only->AcceptBytes(prefix));
        std::vector<uint32_t> plain_words(words.size());
        syntax_only->FillMask(plain_words);
        for (TokenId t = 0; t < tok.vocab_size(); ++t) {
          const bool got = (words[t / 32] >> (t % 32)) & 1;
          if (tok.is_special(t)) {
            ASSERT_EQ(got, oracle.Complete(prefix)) << schema << "\n  EOS after " << prefix;
            continue;
          }
          const std::string bytes(tok.token_bytes(t));
          const bool want = oracle.Viable(prefix + bytes);
          refused += !want && ((plain_words[t / 32] >> (t % 32)) & 1);
          ASSERT_EQ(got, want) << schema << "\n  after " << prefix << " token " << bytes;
        }
      }
      if (i < doc.size()) {
        ASSERT_TRUE(m->AcceptBytes(doc.substr(i, 1))) << doc;
      }
    }
  }
  EXPECT_GT(docs, 10) << schema;
  EXPECT_GT(refused, 5) << schema;
}

TEST(JsonSchemaUniqueObjectsTest, MasksAreExact) {
  for (bool cached : {true, false}) {
    ExpectExactMasks(kFreeObjects,
                     {"{}", R"({"a":1})", R"({"a":1.0})", R"({"a":1,"b":"x"})",
                      R"({"b":"x","a":1})", R"({"a":[1]})", R"({"a":true})"},
                     cached);
    ExpectExactMasks(R"({"type": "array", "uniqueItems": true, "items": {"type": "array",
        "items": {"type": "number"}}})",
                     {"[]", "[1]", "[1.0]", "[1,0]", "[0,1]", "[1e0]"}, cached);
    ExpectExactMasks(R"({"type": "array", "uniqueItems": true, "items": {"anyOf": [
        {"type": "object"}, {"type": "string"}, {"type": ["number", "boolean"]}]}})",
                     {"\"a\"", "\"\"", "1", "1.0", "true", "{}", R"({"a":1})"}, cached);
    ExpectExactMasks(kAnyItems,
                     {"1", "1.0", "0", "\"a\"", "true", "null", "{}", "[]", R"({"a":1})", "[1]"},
                     cached);
  }
}

// The cached walk (lexeme ends of keys and scalars resumed from their own
// paths, boundaries uncached only where a close would repeat an item) must
// equal uncached walks, on a vocabulary of many multi-byte tokens mixing
// brackets, quotes, digits and separators, along random mask-guided
// documents that repeat items.
TEST(JsonSchemaUniqueObjectsTest, CachedMasksEqualUncachedWalks) {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]\"\":,a1.0 e";
  std::set<std::string> seen(vocab.begin(), vocab.end());
  while (vocab.size() < 2500) {
    std::string t;
    const size_t len = 2 + rng() % 4;
    for (size_t i = 0; i < len; ++i) t.push_back(alphabet[rng() % alphabet.size()]);
    if (seen.insert(t).second) vocab.push_back(t);
  }
  auto tok = std::make_shared<testing::SmallVocabTokenizer>(vocab, "unique-objects-cache");
  int steps = 0;
  for (const char* schema : {kFreeObjects, kAnyItems,
                             R"({"type": "array", "uniqueItems": true, "items": {"type": "array",
                                 "items": {"type": "number"}}})",
                             R"({"type": "array", "uniqueItems": true, "items": {"type": "object",
                                 "properties": {"a": {"type": "array"}, "e": {"type": "number"},
                                 "1": {"type": "string"}}}})"}) {
    for (int mode = 0; mode < 3; ++mode) {
      const WhitespaceMode ws = mode == 1 ? WhitespaceMode::kBounded : WhitespaceMode::kCompact;
      GrammarSpec spec;
      spec.kind = SpecKind::kJsonSchema;
      spec.text = schema;
      CompileOptions cached_options;
      cached_options.whitespace = ws;
      // Declared keys in any order: the parser's key frames beside the items'.
      if (mode == 2) cached_options.property_order = PropertyOrder::kAnyOrder;
      CompileOptions uncached_options = cached_options;
      uncached_options.mask_cache_bytes = 0;
      auto cached = CompileGrammar(spec, cached_options, tok);
      auto uncached = CompileGrammar(spec, uncached_options, tok);
      ASSERT_TRUE(cached.ok()) << cached.status();
      ASSERT_TRUE(uncached.ok()) << uncached.status();
      for (int doc = 0; doc < 20; ++doc) {
        auto a = Matcher::Create(*cached);
        auto b = Matcher::Create(*uncached);
        std::string text;
        for (int step = 0; step < 40; ++step) {
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
          // Short tokens of few kinds of bytes, so that items repeat.
          TokenId pick = allowed[rng() % allowed.size()];
          for (int tries = 0;
               tries < 12 &&
               (tok->token_bytes(pick).size() > 3 ||
                tok->token_bytes(pick).find_first_not_of("{}[]\"a1,:") != std::string::npos);
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
  EXPECT_GT(steps, 1000);
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

// The closing brace of a repeat goes, and so does every token holding it;
// whitespace before it does not (a member may still follow).
TEST(JsonSchemaUniqueObjectsTest, ClosingBraceOfARepeat) {
  auto g = Compile(kFreeObjects, WhitespaceMode::kBounded);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes(R"([{"a": 1, "b": "x"}, {"b": "x", "a": 1.0)"));
  EXPECT_FALSE(Allows(*m, tok, "}"));
  EXPECT_FALSE(Allows(*m, tok, "}]"));
  EXPECT_FALSE(Allows(*m, tok, "0}"));  // 1.00
  EXPECT_FALSE(Allows(*m, tok, "e0}"));
  EXPECT_TRUE(Allows(*m, tok, " "));
  EXPECT_FALSE(Allows(*m, tok, " }"));
  EXPECT_TRUE(Allows(*m, tok, "1}"));  // 1.01
  EXPECT_TRUE(Allows(*m, tok, ","));
  EXPECT_FALSE(m->Clone()->AcceptBytes(" }"));
  EXPECT_TRUE(m->Clone()->AcceptBytes(", \"c\": 1}]"));
}

// A rollback across an item boundary forgets the item it undoes; a clone
// keeps its own items.
TEST(JsonSchemaUniqueObjectsTest, RollbackAcrossItems) {
  auto g = Compile(kFreeObjects, WhitespaceMode::kCompact);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tokenizer& tok = (*g)->tokenizer();
  auto m = Matcher::Create(*g);
  ASSERT_TRUE(m->AcceptBytes("["));
  ASSERT_TRUE(m->AcceptBytes(R"({"a":1})"));  // one token
  ASSERT_TRUE(m->AcceptBytes(","));
  ASSERT_TRUE(m->AcceptBytes(R"({"a":1)"));
  EXPECT_FALSE(Allows(*m, tok, "}"));
  auto fork = m->Clone();
  ASSERT_TRUE(m->Rollback(3).ok());  // back to "["
  EXPECT_TRUE(m->Clone()->AcceptBytes(R"({"a":1}])"));
  ASSERT_TRUE(m->AcceptBytes(R"({"a":2},{"a":1)"));
  EXPECT_TRUE(Allows(*m, tok, "}"));
  EXPECT_FALSE(fork->AcceptBytes("}"));
  ASSERT_TRUE(m->AcceptBytes("}"));
  EXPECT_FALSE(m->Clone()->AcceptBytes(R"(,{"a":2.0})"));
  ASSERT_TRUE(m->Rollback(1).ok());  // undo the closing brace
  EXPECT_TRUE(Allows(*m, tok, "}"));
  ASSERT_TRUE(m->AcceptBytes("}]"));
  EXPECT_TRUE(m->CanStop());
}

// What stays refused, by name: objects that cannot always take another
// member, bounded arrays, untyped and combinator items.
TEST(JsonSchemaUniqueObjectsTest, OtherItemsRefusedByName) {
  for (const char* items : {
           R"({"type": "object", "additionalProperties": false,
               "properties": {"a": {"type": "boolean"}}})",
           R"({"type": "object", "maxProperties": 2})",
           R"({"type": "object", "propertyNames": {"maxLength": 1}})",
           R"({"type": "object", "patternProperties": {"^x": {"type": "string"}}})",
           R"({"type": "array", "maxItems": 2})",
           R"({"type": "array", "items": {"type": "boolean"}})",
           R"({"anyOf": [{"type": "object"}, {"type": "integer"}]})",
           R"({"oneOf": [{"type": "object"}, {"type": "string", "maxLength": 2}]})",
           R"({"type": ["integer", "object"]})",
           R"({"type": ["string", "object"], "maxLength": 3})",
           R"({"type": ["number", "null"], "maximum": 3})",
       }) {
    const std::string schema =
        std::string(R"({"properties": {"n": {"type": "array", "uniqueItems": true, "items": )") +
        items + "}}}";
    auto g = Compile(schema, WhitespaceMode::kBounded);
    ASSERT_FALSE(g.ok()) << schema;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("uniqueItems")) << schema;
    EXPECT_THAT(g.status().message(), HasSubstr("/properties/n")) << schema;
  }
}

}  // namespace
}  // namespace maskd
