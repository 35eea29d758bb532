// The grammar-text front ends (GBNF, EBNF, Lark) through the whole compiler:
// which strings each grammar accepts, and the errors, with their positions,
// for what it refuses.
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/grammar_text/grammar_text.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using grammar_text::TextErrorPosition;
using testing::SmallVocabTokenizer;

std::shared_ptr<SmallVocabTokenizer> ByteVocab() {
  // Every byte as a token, so any text can be fed token by token.
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  return std::make_shared<SmallVocabTokenizer>(vocab, "bytes");
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileText(
    std::string_view text, EbnfDialect dialect, std::string start = "",
    const CompileOptions& options = CompileOptions()) {
  static const auto* vocab = new std::shared_ptr<SmallVocabTokenizer>(ByteVocab());
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = dialect;
  spec.text = std::string(text);
  spec.start_rule = std::move(start);
  return CompileGrammar(spec, options, *vocab);
}

// Whether `s` is a whole sentence of the grammar.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, std::string_view s) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(s) && m->CanStop();
}
// Whether `s` starts some sentence.
bool Viable(const std::shared_ptr<const CompiledGrammar>& g, std::string_view s) {
  return Matcher::Create(g)->AcceptBytes(s);
}

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(MASKD_GRAMMAR_TEXT_DATA) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// --- GBNF: the llama.cpp-style grammars in data/ ---

struct DataCase {
  const char* file;
  std::vector<std::string> accepted;
  std::vector<std::string> rejected;
};

// Stable CTest names (gtest would print the struct's bytes, addresses included).
void PrintTo(const DataCase& c, std::ostream* out) { *out << c.file; }

class GbnfDataTest : public ::testing::TestWithParam<DataCase> {};

TEST_P(GbnfDataTest, CompilesAndAcceptsExactlyItsSentences) {
  const DataCase& c = GetParam();
  const std::string text = ReadData(c.file);
  ASSERT_FALSE(text.empty()) << c.file;
  auto g = CompileText(text, EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << c.file << ": " << g.status();
  EXPECT_TRUE((*g)->stats().warnings.empty()) << (*g)->stats().warnings[0];
  for (const std::string& s : c.accepted) EXPECT_TRUE(Accepts(*g, s)) << c.file << ": " << s;
  for (const std::string& s : c.rejected) EXPECT_FALSE(Accepts(*g, s)) << c.file << ": " << s;
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCppGrammars, GbnfDataTest,
    ::testing::Values(
        DataCase{"arithmetic.gbnf",
                 {"1+2= 3\n", "(x1 *22)= y\n", "a=b\nc/4= 5\n"},
                 {"", "1+2\n", "1+= 3\n", "X= 1\n"}},
        DataCase{"c.gbnf",
                 {"", "int main(){return 0;}", "int f(int x){while(x<10){x = x+1;}return x;}",
                  "float g(){/* c */// d\nif(a==b){}else{}}"},
                 {"int main(){return 0}", "main(){}", "int f(){x = ;}"}},
        DataCase{"chess.gbnf",
                 {"1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O-O Qxd8#\n"},
                 {"1. e4 e5\n", "1. e9 e5\n2. a3 a6\n", "2. e4 e5\n3. a3 a6\n"}},
        DataCase{"english.gbnf",
                 {"Hello, world!", "a b\tc\nd", "[x]\\y"},
                 {"", "two  spaces", "trailing ", "caf\xc3\xa9"}},
        DataCase{"japanese.gbnf",
                 {"\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf",  // こんにちは
                  "\xe6\x97\xa5\xe6\x9c\xac\xe3\x80\x81\xe3\x82\xab\xe3\x83\x8a"},  // 日本、カナ
                 {"", "abc", "\xe3\x81"}},
        DataCase{
            "json.gbnf",
            {"{}", "{\"a\": [1, 2.5e3, true, null, \"x\\n\\u00e9\"]}", "{\"k\":{\"n\":-0.5}}\n  "},
            {"[]", "{\"a\":01}", "{\"a\":\"\x01\"}", "{\"a\" 1}", "{\"a\":1,}"}},
        DataCase{"json_arr.gbnf",
                 {"[\n]", "[\n{\"a\": 1},\n{\"b\": [true]}]"},
                 {"[]", "[\n{\"a\": 1}]\n"}},
        DataCase{"list.gbnf", {"- a\n", "- one\n- two\n"}, {"", "- \n", "-a\n", "- a"}}));

TEST(GrammarExamplesTest, TheReadmeExamplesCompileAndAcceptASentence) {
  const std::string dir = std::string(MASKD_GRAMMAR_TEXT_DATA) + "/../../../scripts/examples/";
  const struct {
    const char* file;
    EbnfDialect dialect;
    const char* sentence;
  } examples[] = {{"chess.gbnf", EbnfDialect::kGbnf, "1. e4 e5\n2. Nf3 Nc6\n"},
                  {"call.lark", EbnfDialect::kLark, "weather({\"city\": \"Oslo\"})"},
                  {"list.ebnf", EbnfDialect::kW3cEbnf, "[1, -20,0]"}};
  for (const auto& e : examples) {
    std::ifstream in(dir + e.file);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << e.file;
    auto g = CompileText(text.str(), e.dialect);
    ASSERT_TRUE(g.ok()) << e.file << ": " << g.status();
    EXPECT_TRUE(Accepts(*g, e.sentence)) << e.file;
  }
}

TEST(GbnfTest, RepetitionForms) {
  auto g = CompileText("root ::= \"a\"{2} \"b\"{1,} \"c\"{,2} \"d\"{1,3} (\"e\" \"f\"){0,1}",
                       EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "aabd"));
  EXPECT_TRUE(Accepts(*g, "aabbbccdddef"));
  EXPECT_FALSE(Accepts(*g, "abd"));      // {2}
  EXPECT_FALSE(Accepts(*g, "aad"));      // {1,}
  EXPECT_FALSE(Accepts(*g, "aabcccd"));  // {,2}
  EXPECT_FALSE(Accepts(*g, "aabdddd"));  // {1,3}
  EXPECT_FALSE(Accepts(*g, "aabde"));    // a group repeats whole
  // `*` `+` `?` after a string literal apply to the whole literal.
  auto lit = CompileText("root ::= \"ab\"+ \"c\"?", EbnfDialect::kGbnf);
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_TRUE(Accepts(*lit, "ababc"));
  EXPECT_FALSE(Accepts(*lit, "abbc"));
}

TEST(GbnfTest, EscapesClassesAndDot) {
  auto g = CompileText(
      "root ::= \"\\x41\\u00e9\\U0001F600\\t\\\"\" [^a-c\\]] [\\-\\^x] . \"\\\\\"  # comment",
      EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "A\xc3\xa9\xf0\x9f\x98\x80\t\"d-\xe2\x82\xac\\"));
  EXPECT_TRUE(Accepts(*g, "A\xc3\xa9\xf0\x9f\x98\x80\t\"\xe2\x82\xac^x\\"));
  EXPECT_FALSE(Accepts(*g, "A\xc3\xa9\xf0\x9f\x98\x80\t\"b-x\\"));         // [^a-c]
  EXPECT_FALSE(Accepts(*g, "A\xc3\xa9\xf0\x9f\x98\x80\t\"]-x\\"));         // \] is in the class
  EXPECT_FALSE(Accepts(*g, "A\xc3\xa9\xf0\x9f\x98\x80\t\"d-\xe2\x82\\"));  // . is a code point
}

TEST(GbnfTest, LeftRecursionAndAmbiguityWork) {
  auto g = CompileText("root ::= root \"+\" root | root \"a\" | \"b\"", EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "baaa+b+ba"));
  EXPECT_FALSE(Accepts(*g, "ab"));
  EXPECT_TRUE(Viable(*g, "baa+"));
  EXPECT_FALSE(Accepts(*g, "baa+"));
}

TEST(GbnfTest, NewlinesContinueAfterBarAndInsideGroups) {
  auto g = CompileText("root ::= \"a\" |\n  \"b\" | (\n \"c\"\n \"d\")\nother ::= root",
                       EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "b"));
  EXPECT_TRUE(Accepts(*g, "cd"));
  ASSERT_EQ((*g)->stats().warnings.size(), 1u);
  EXPECT_EQ((*g)->stats().warnings[0], "rule 'other' (line 5:1) is unreachable from 'root'");
}

TEST(GbnfTest, RegularRulesBecomeLexemesOnlyWhereExact) {
  // json.gbnf: string, number and ws become lexemes (a handful of lexemes
  // instead of one per character class and literal character).
  auto json = CompileText(ReadData("json.gbnf"), EbnfDialect::kGbnf);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_LE((*json)->stats().lexemes, 16u);
  // Here `item` as one greedy lexeme would swallow the newline root needs:
  // it must stay character-level, and both readings of "ab \n" work.
  auto g =
      CompileText("root ::= item \"\\n\"\nitem ::= [a-z]+ ws\nws ::= [ \\n]*", EbnfDialect::kGbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "ab\n"));
  EXPECT_TRUE(Accepts(*g, "ab \n\n"));
  EXPECT_TRUE(Viable(*g, "ab\n"));
  EXPECT_FALSE(Accepts(*g, "ab"));
}

TEST(GbnfTest, StartRuleCanBeChosen) {
  auto g = CompileText("root ::= \"a\"\nalt ::= \"b\" root", EbnfDialect::kGbnf, "alt");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "ba"));
  EXPECT_FALSE(Accepts(*g, "a"));
}

struct ErrorCase {
  const char* text;
  absl::StatusCode code;
  uint32_t line, column;
  const char* message_part;
};

void PrintTo(const ErrorCase& c, std::ostream* out) {
  *out << "line " << c.line << " column " << c.column;
}

class GbnfErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(GbnfErrorTest, NamesTheProblemAndItsPosition) {
  const ErrorCase& c = GetParam();
  auto g = CompileText(c.text, EbnfDialect::kGbnf);
  ASSERT_FALSE(g.ok()) << c.text;
  EXPECT_EQ(g.status().code(), c.code) << g.status();
  EXPECT_NE(g.status().message().find(c.message_part), std::string::npos) << g.status();
  auto p = TextErrorPosition(g.status());
  ASSERT_TRUE(p.has_value()) << g.status();
  EXPECT_EQ(p->line, c.line) << g.status();
  EXPECT_EQ(p->column, c.column) << g.status();
  EXPECT_NE(g.status().message().find(absl::StrCat("line ", c.line, ":", c.column, ": ")),
            std::string::npos)
      << g.status();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, GbnfErrorTest,
    ::testing::Values(
        ErrorCase{"root ::= \"a\" item\n", absl::StatusCode::kInvalidArgument, 1, 14,
                  "undefined rule 'item'"},
        ErrorCase{"root ::= \"a\"\nroot ::= \"b\"", absl::StatusCode::kInvalidArgument, 2, 1,
                  "rule 'root' is defined twice (first at line 1:1)"},
        ErrorCase{"root = \"a\"", absl::StatusCode::kInvalidArgument, 1, 6,
                  "expected '::=' after rule name 'root'"},
        ErrorCase{"root ::= \"abc", absl::StatusCode::kInvalidArgument, 1, 10,
                  "unterminated string literal"},
        ErrorCase{"root ::= \"a\\q\"", absl::StatusCode::kInvalidArgument, 1, 12,
                  "unknown escape '\\q'"},
        ErrorCase{"root ::= [z-a]", absl::StatusCode::kInvalidArgument, 1, 12,
                  "character range is out of order"},
        ErrorCase{"root ::= (\"a\"", absl::StatusCode::kInvalidArgument, 1, 10, "unbalanced '('"},
        ErrorCase{"root ::= \"a\"{3,1}", absl::StatusCode::kInvalidArgument, 1, 13, "min > max"},
        ErrorCase{"root ::= \"a\"{1000000}", absl::StatusCode::kResourceExhausted, 1, 14,
                  "repetition count over the limit"},
        ErrorCase{"root ::= x\nx ::= \"a\" x", absl::StatusCode::kInvalidArgument, 1, 1,
                  "the grammar matches nothing"},
        ErrorCase{"item ::= \"a\"", absl::StatusCode::kInvalidArgument, 1, 1,
                  "no rule 'root' to start from"},
        ErrorCase{"root ::= \"a\" <[1000]>", absl::StatusCode::kInvalidArgument, 1, 14,
                  "'<[1000]>': token id 1000 is outside the vocabulary"},
        ErrorCase{"root ::= !<think> \"a\"", absl::StatusCode::kInvalidArgument, 1, 10,
                  "unknown token '<think>'"},
        ErrorCase{"root ::= \"a\" <[256]>", absl::StatusCode::kInvalidArgument, 1, 14,
                  "names the end-of-sequence token 256"},
        ErrorCase{"root ::= <[12", absl::StatusCode::kInvalidArgument, 1, 10,
                  "unterminated token reference"},
        ErrorCase{"root ::= <[1-2]>", absl::StatusCode::kInvalidArgument, 1, 10,
                  "malformed token id reference '<[1-2]>'"},
        ErrorCase{"root ::= \"a\" ) \"b\"", absl::StatusCode::kInvalidArgument, 1, 14,
                  "unexpected ')'"},
        ErrorCase{"root ::= [^\\x00-\\U0010FFFF]", absl::StatusCode::kInvalidArgument, 1, 10,
                  "character class matches no character"}));

TEST(GbnfTest, SizeLimitIsResourceExhausted) {
  // 20 nested x{0,99999}: each level is within the count limit, the whole
  // expansion is not.
  std::string text = "root ::= ";
  for (int i = 0; i < 20; ++i) text += "(";
  text += "\"a\"";
  for (int i = 0; i < 20; ++i) text += "){90000}";
  auto g = CompileText(text, EbnfDialect::kGbnf);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kResourceExhausted) << g.status();
  EXPECT_NE(g.status().message().find("size limit"), std::string::npos) << g.status();
}

TEST(EbnfTest, XGrammarNotationCompilesAndLookaheadIsRefused) {
  auto g = CompileText("root ::= \"[\" item (\",\" item)* \"]\"\nitem ::= [0-9]+",
                       EbnfDialect::kW3cEbnf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "[1,23]"));
  auto look = CompileText("root ::= item \"a\"\nitem ::= [0-9]+ (= \"a\")", EbnfDialect::kW3cEbnf);
  ASSERT_FALSE(look.ok());
  EXPECT_EQ(look.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(look.status().message().find("lookahead"), std::string::npos) << look.status();
  EXPECT_EQ(TextErrorPosition(look.status())->line, 2u);
}

// --- Lark ---

TEST(LarkTest, RulesTerminalsAndOperators) {
  auto g = CompileText(R"lark(
// a list of key = value pairs
start: pair ("," pair)* [";"]
pair: KEY "=" value
?value: NUMBER | word~2..3 | "x"i
word: /[a-z]+/
KEY: LETTER (LETTER | "_")*
LETTER: "a".."z"
%import common.NUMBER
)lark",
                       EbnfDialect::kLark);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "a=1,b_c=2.5e3;"));
  EXPECT_TRUE(Accepts(*g, "a=X"));
  EXPECT_FALSE(Accepts(*g, "a=1;;"));
  EXPECT_FALSE(Accepts(*g, "A=1"));
  // word~2..3 with greedy /[a-z]+/ lexemes and no separator: "ab" is one
  // lexeme, so two words cannot be written back to back.
  EXPECT_FALSE(Accepts(*g, "a=ab"));
}

TEST(LarkTest, IgnoreAndCommonImports) {
  auto g = CompileText(R"lark(
start: "[" [item ("," item)*] "]"
item: SIGNED_NUMBER | ESCAPED_STRING | CNAME
%import common (SIGNED_NUMBER, ESCAPED_STRING, CNAME)
%import common.WS
%ignore WS
)lark",
                       EbnfDialect::kLark);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "[1,-2.5,\"a\\\"b\",x_1]"));
  EXPECT_TRUE(Accepts(*g, " [ 1 ,\n \"s\" ] \n"));
  EXPECT_FALSE(Accepts(*g, "[1 2]"));
  EXPECT_FALSE(Accepts(*g, "[\"unterminated]"));
}

TEST(LarkTest, JsonEmbedding) {
  auto g = CompileText(R"lark(
start: "call " name " " args
name: /[a-z]+/
args: %json {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
               "additionalProperties": false}
)lark",
                       EbnfDialect::kLark);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "call f {\"n\": 3}"));
  EXPECT_FALSE(Accepts(*g, "call f {\"n\": \"3\"}"));
  EXPECT_FALSE(Accepts(*g, "call f {}"));
}

// An embedded schema is read with the compile's own JSON Schema options:
// property order, the nesting limit, the format policy.
TEST(LarkTest, JsonEmbeddingTakesTheCompileOptions) {
  const std::string text = R"lark(
start: %json {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "required": ["a", "b"], "additionalProperties": false}
)lark";
  auto in_order = CompileText(text, EbnfDialect::kLark);
  ASSERT_TRUE(in_order.ok()) << in_order.status();
  EXPECT_TRUE(Accepts(*in_order, "{\"a\": 1, \"b\": 2}"));
  EXPECT_FALSE(Accepts(*in_order, "{\"b\": 2, \"a\": 1}"));

  CompileOptions any_order;
  any_order.property_order = PropertyOrder::kAnyOrder;
  auto g = CompileText(text, EbnfDialect::kLark, "", any_order);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "{\"b\": 2, \"a\": 1}"));
  EXPECT_FALSE(Accepts(*g, "{\"b\": 2, \"a\": 1, \"a\": 1}"));

  CompileOptions shallow;
  shallow.max_recursion_depth = 2;
  auto deep = CompileText(R"lark(start: %json {"items": {"items": {"items": {}}}})lark",
                          EbnfDialect::kLark, "", shallow);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("in %json"), std::string::npos) << deep.status();

  CompileOptions ignore_formats;
  ignore_formats.unknown_formats = UnknownFormats::kIgnore;
  EXPECT_TRUE(CompileText(R"lark(start: %json {"type": "string", "format": "topic"})lark",
                          EbnfDialect::kLark, "", ignore_formats)
                  .ok());
}

TEST(LarkTest, LeftRecursion) {
  auto g = CompileText("start: start \"+\" NUM | NUM\nNUM: /[0-9]+/", EbnfDialect::kLark);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "1+22+3"));
  EXPECT_FALSE(Accepts(*g, "1++2"));
}

class LarkErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(LarkErrorTest, NamesTheProblemAndItsPosition) {
  const ErrorCase& c = GetParam();
  auto g = CompileText(c.text, EbnfDialect::kLark);
  ASSERT_FALSE(g.ok()) << c.text;
  EXPECT_EQ(g.status().code(), c.code) << g.status();
  EXPECT_NE(g.status().message().find(c.message_part), std::string::npos) << g.status();
  auto p = TextErrorPosition(g.status());
  ASSERT_TRUE(p.has_value()) << g.status();
  EXPECT_EQ(p->line, c.line) << g.status();
  EXPECT_EQ(p->column, c.column) << g.status();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, LarkErrorTest,
    ::testing::Values(
        ErrorCase{"start: item", absl::StatusCode::kInvalidArgument, 1, 8, "undefined rule 'item'"},
        ErrorCase{"start: A\n", absl::StatusCode::kInvalidArgument, 1, 8, "undefined terminal 'A'"},
        ErrorCase{"start: A\nA: \"a\" A", absl::StatusCode::kInvalidArgument, 2, 8,
                  "terminal 'A' refers to itself"},
        ErrorCase{"start: A\nA: \"a\" b\nb: \"b\"", absl::StatusCode::kInvalidArgument, 2, 8,
                  "a terminal cannot refer to rule 'b'"},
        ErrorCase{"start: <|python_tag|> \"x\"", absl::StatusCode::kInvalidArgument, 1, 8,
                  "unknown token '<|python_tag|>'"},
        ErrorCase{"start: A\nA: \"a\" <[5]>", absl::StatusCode::kInvalidArgument, 2, 8,
                  "cannot be used inside a terminal"},
        ErrorCase{"start: <[5-3]>", absl::StatusCode::kInvalidArgument, 1, 8,
                  "malformed token id range"},
        ErrorCase{"start: \"a\"\n%llguidance {\"no_forcing\": true}",
                  absl::StatusCode::kUnimplemented, 2, 1,
                  "%llguidance option 'no_forcing': true is not supported"},
        ErrorCase{"start: \"a\"\n%llguidance {\"skip_repetition\": \"once\", \"x\": 1}",
                  absl::StatusCode::kUnimplemented, 2, 1,
                  "%llguidance option 'x' is not supported"},
        ErrorCase{"start: \"a\"\n%llguidance {\"skip_repetition\": 1}",
                  absl::StatusCode::kInvalidArgument, 2, 1,
                  "'skip_repetition' must be \"many\" or \"once\""},
        ErrorCase{"start: /a/m", absl::StatusCode::kUnimplemented, 1, 11,
                  "regex flag 'm' is not supported"},
        ErrorCase{"start: A\nA.2: \"a\"", absl::StatusCode::kUnimplemented, 2, 2,
                  "priority on 'A'"},
        ErrorCase{"start: text\ntext[max_tokens=5]: /[a-z]+/", absl::StatusCode::kUnimplemented, 2,
                  6, "option 'max_tokens' on 'text' is not supported"},
        ErrorCase{"start: text\ntext[ lazy, stop=\"\\n\"]: /.+/", absl::StatusCode::kUnimplemented,
                  2, 13, "option 'stop' on 'text' is not supported (llguidance hides"},
        ErrorCase{"start: text\ntext[temperature=0.5]: /.+/", absl::StatusCode::kUnimplemented, 2,
                  6, "option 'temperature' on 'text'"},
        ErrorCase{"start: text\ntext[capture]: /.+/", absl::StatusCode::kUnimplemented, 2, 6,
                  "option 'capture' on 'text'"},
        ErrorCase{"start: T\nT[lazy]: /.+/", absl::StatusCode::kUnimplemented, 2, 3,
                  "option 'lazy' on terminal 'T'"},
        ErrorCase{"start: text\ntext[lazy suffix=\";\"]: /.+/", absl::StatusCode::kInvalidArgument,
                  2, 11, "expected ',' or ']'"},
        ErrorCase{"start: text\ntext[lazy]: A b\nb: \"b\"\nA: \"a\"",
                  absl::StatusCode::kInvalidArgument, 2, 15, "a terminal cannot refer to rule 'b'"},
        // Longest match would read on past the lazy match where llguidance
        // ends it: WORD may go on after "ab;".
        ErrorCase{"start: (item | WORD)+\nitem[lazy]: /[a-z]+;/\nWORD: /[a-z;]+/",
                  absl::StatusCode::kUnimplemented, 2, 1,
                  "lazy rule 'item': lexeme WORD may match text that starts with a match of it"},
        ErrorCase{"start: \"a\"\n%import foo.BAR", absl::StatusCode::kUnimplemented, 2, 9,
                  "%import of 'foo'"},
        ErrorCase{"start: \"a\"\n%import common.NOPE", absl::StatusCode::kUnimplemented, 2, 16,
                  "'common.NOPE' is not in the common library"},
        ErrorCase{"start: \"a\"\n%declare X", absl::StatusCode::kUnimplemented, 2, 1,
                  "directive '%declare'"},
        ErrorCase{"start: /(?=a)a/", absl::StatusCode::kInvalidArgument, 1, 8, "in /(?=a)a/"},
        // The schema compiles to the empty language, so the grammar has none.
        ErrorCase{"start: %json {\"not\": {}}", absl::StatusCode::kInvalidArgument, 1, 1,
                  "the grammar matches nothing"},
        ErrorCase{"start: %json {\"type\": \"string\", \"format\": \"topic\"}",
                  absl::StatusCode::kUnimplemented, 1, 8, "in %json"},
        ErrorCase{"start: (\"a\"", absl::StatusCode::kInvalidArgument, 1, 8, "unbalanced '('"},
        ErrorCase{"rule: \"a\"", absl::StatusCode::kInvalidArgument, 1, 1,
                  "no rule 'start' to start from"}));

}  // namespace
}  // namespace maskd
