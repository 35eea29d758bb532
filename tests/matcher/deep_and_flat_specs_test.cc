// Specs shaped to overflow a stack: megabyte-long flat inputs (literals,
// classes, alternations, property lists, choices) and inputs nested 10,000
// deep, through every front end. Each compiles, or fails with the precise
// error the spec deserves; none may crash. Compiles run on a thread with the
// stack the service's compile pool gets (std::thread under the default
// `ulimit -s` of 8 MiB), because that, not the main thread, is where a
// crash takes the server down.
#include <pthread.h>

#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::SmallVocabTokenizer;

constexpr size_t kServiceStackBytes = size_t{8} << 20;
constexpr size_t kMiB = size_t{1} << 20;
// Sanitizer builds run ~50x slower: flat inputs shrink there (they still
// make expression chains thousands of links long, and ASan's larger frames
// are what the deep inputs, kept at full depth, are for).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kShrink = 32;
#else
constexpr size_t kShrink = 1;
#endif
// A spec of about `bytes` bytes, divided by kShrink.
constexpr size_t Flat(size_t bytes) { return bytes / kShrink; }

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

// Runs `fn` on a new thread with a stack of `stack_bytes` and waits for it.
void RunOnThreadWithStack(size_t stack_bytes, std::function<void()> fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, &fn), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
}

std::shared_ptr<const SmallVocabTokenizer> Vocab() {
  static const auto* tok = new std::shared_ptr<const SmallVocabTokenizer>(
      std::make_shared<SmallVocabTokenizer>(std::vector<std::string>{
          "a", "b", "ab", "ba", "aaaa", "\"", "{",  "}",    "[",     "]",
          ":", ",", "0",  "1",  "x",    " ",  "\\", "null", "\"a\"", "c"}));
  return *tok;
}

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileOnServiceStack(
    const GrammarSpec& spec, CompileOptions options = {}) {
  options.time_limit_ms = 120'000;  // ASan builds are slow; no case here needs a limit
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> out =
      absl::InternalError("compile thread did not run");
  RunOnThreadWithStack(kServiceStackBytes, [&] { out = CompileGrammar(spec, options, Vocab()); });
  return out;
}

GrammarSpec Regex(std::string text) {
  GrammarSpec spec;
  spec.kind = SpecKind::kRegex;
  spec.text = std::move(text);
  return spec;
}
GrammarSpec Schema(std::string text) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = std::move(text);
  return spec;
}
GrammarSpec Choices(std::vector<std::string> choices) {
  GrammarSpec spec;
  spec.kind = SpecKind::kChoices;
  spec.choices = std::move(choices);
  return spec;
}

// Feeds `text` (tokenized greedily; masks are byte-level, so any
// tokenization of a viable prefix is accepted) and reports whether the
// matcher accepted all of it and may stop there.
bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  std::unique_ptr<Matcher> m = Matcher::Create(g);
  const std::vector<TokenId> tokens = Vocab()->Encode(text);
  if (Vocab()->Decode(tokens) != text) return false;  // not encodable: a test bug
  for (TokenId t : tokens) {
    if (!m->AcceptToken(t)) return false;
  }
  return m->CanStop();
}

// ---- Regex specs. ----

TEST(DeepAndFlatSpecsTest, RegexMegabyteLiteralCompiles) {
  const std::string text = Repeat("ab", Flat(kMiB / 2));
  auto g = CompileOnServiceStack(Regex(text));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(Accepts(*g, "abab"));
  EXPECT_FALSE(Accepts(*g, "b"));
}

TEST(DeepAndFlatSpecsTest, RegexMegabyteOfClassesAndOptionalsCompiles) {
  auto classes = CompileOnServiceStack(Regex(Repeat("[ab]", Flat(kMiB / 4))));
  ASSERT_TRUE(classes.ok()) << classes.status();
  EXPECT_FALSE(Accepts(*classes, "ab"));
  // A chain of nullable items: derivatives walk it, not recurse down it.
  auto optionals = CompileOnServiceStack(Regex(Repeat("a?", Flat(kMiB / 2))));
  ASSERT_TRUE(optionals.ok()) << optionals.status();
  EXPECT_TRUE(Accepts(*optionals, ""));
  EXPECT_TRUE(Accepts(*optionals, "a"));
  EXPECT_FALSE(Accepts(*optionals, "b"));
  // (Not further: after one byte every state is a union of up to 500,000
  // suffixes, which derivatives do not see are nested; each step is then
  // quadratic. Slow, not a crash.)
}

TEST(DeepAndFlatSpecsTest, RegexAnchoredLongLiteralCompiles) {
  // ^ and $ take the anchored translation, once a recursion per character.
  const std::string literal = Repeat("a", Flat(40'000));
  auto g = CompileOnServiceStack(Regex("^" + literal + "$|b"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "b"));
  EXPECT_FALSE(Accepts(*g, "ab"));
}

TEST(DeepAndFlatSpecsTest, RegexTenThousandDeepGroupsNameTheLimitAndOffset) {
  auto g = CompileOnServiceStack(Regex(Repeat("(", 10'000) + "a" + Repeat(")", 10'000)));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(),
              AllOf(HasSubstr("more than 128 levels"), HasSubstr("max_recursion_depth"),
                    HasSubstr("at offset 129")));
}

TEST(DeepAndFlatSpecsTest, RegexNestedToTheHighestLimitCompiles) {
  // (a(a(a...)*)*)* with 1000 levels: nested repetitions that do not
  // collapse, so every stage sees the whole depth.
  const int depth = static_cast<int>(kMaxRecursionDepthLimit);
  CompileOptions options;
  options.max_recursion_depth = kMaxRecursionDepthLimit;
  auto g =
      CompileOnServiceStack(Regex(Repeat("(a", depth) + Repeat(")*", depth - 1) + ")"), options);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(Accepts(*g, "aaa"));
  EXPECT_FALSE(Accepts(*g, "b"));
  options.max_recursion_depth = kMaxRecursionDepthLimit + 1;
  auto over = CompileOnServiceStack(Regex("a"), options);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(over.status().message(), HasSubstr("max_recursion_depth"));
}

// `a?` x n then `a` x n: each derivative after the first byte is a union of
// n suffixes, the next a union of n such unions: the first mask of n = 3,000
// took 100 s of one step thread. Each new state costs ~10M units of
// derivative work, under the per-state limit (max_transition_work), but the
// first mask builds many: past the DFA's work limit per mask (max_mask_work)
// the grammar fails (its status names the limit) and the mask comes at once.
TEST(DeepAndFlatSpecsTest, SlowToMatchPatternFailsItsGrammarInsteadOfStalling) {
  // Not shrunk under sanitizers: the work limit bounds the cost, and a
  // shorter pattern would stay under it.
  const size_t n = 3000;
  auto g = CompileOnServiceStack(Regex(Repeat("a?", n) + Repeat("a", n)));
  ASSERT_TRUE(g.ok()) << g.status();
  std::unique_ptr<Matcher> m = Matcher::Create(*g);
  std::vector<uint32_t> words(((*g)->tokenizer().vocab_size() + 31) / 32);
  RunOnThreadWithStack(kServiceStackBytes, [&] {
    m->FillMask(words);
    if (m->AcceptBytes("a")) m->FillMask(words);
  });
  EXPECT_EQ((*g)->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT((*g)->status().message(), HasSubstr("max_mask_work"));

  // Short runs of the same shape stay exact.
  auto small = CompileOnServiceStack(Regex(Repeat("a?", 50) + Repeat("a", 50)));
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(Accepts(*small, Repeat("a", 100)));
  EXPECT_TRUE(Accepts(*small, Repeat("a", 50)));
  EXPECT_FALSE(Accepts(*small, Repeat("a", 49)));
  EXPECT_FALSE(Accepts(*small, Repeat("a", 101)));
  EXPECT_TRUE((*small)->status().ok()) << (*small)->status();
}

// ---- JSON Schema specs. ----

TEST(DeepAndFlatSpecsTest, SchemaFortyKilobytePatternsCompile) {
  // The shapes that overflowed the stack in JsonQuote (issue 13, 1.1).
  const std::string a40k = Repeat("a", Flat(40'000));
  auto literal = CompileOnServiceStack(Schema(R"({"type":"string","pattern":")" + a40k + "\"}"));
  ASSERT_TRUE(literal.ok()) << literal.status();
  // (Walking a whole match is quadratic here: every state of a search for
  // a 40,000-byte literal is a union of up to 40,000 partial matches.)
  EXPECT_FALSE(Accepts(*literal, "\"ab\""));

  auto classes = CompileOnServiceStack(
      Schema(R"({"type":"string","pattern":")" + Repeat("[ab]", Flat(50'000)) + "\"}"));
  ASSERT_TRUE(classes.ok()) << classes.status();

  auto names = CompileOnServiceStack(Schema(R"({"type":"object","propertyNames":{"pattern":"^)" +
                                            Repeat("a", Flat(50'000)) + "$\"}}"));
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_TRUE(Accepts(*names, "{}"));

  const std::string long_name = Repeat("a", Flat(100'000));
  auto property = CompileOnServiceStack(Schema(R"({"type":"object","properties":{")" + long_name +
                                               R"(":{"type":"null"}},)"
                                               R"("required":[")" +
                                               long_name + "\"]}"));
  ASSERT_TRUE(property.ok()) << property.status();
  EXPECT_FALSE(Accepts(*property, "{}"));
  EXPECT_TRUE((*property)->status().ok());
  // Writing the name takes one lexer state per byte: 100,000 pass the lexer's
  // state budget, and the grammar says so (a sequence error in the service).
  const bool past_budget = long_name.size() >= 100'000;
  EXPECT_EQ(Accepts(*property, "{\"" + long_name + "\":null}"), !past_budget);
  EXPECT_EQ((*property)->status().code(),
            past_budget ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kOk)
      << (*property)->status();
  const std::string name_30k = Repeat("a", Flat(30'000));
  auto shorter =
      CompileOnServiceStack(Schema(R"({"type":"object","properties":{")" + name_30k +
                                   R"(":{"type":"null"}},"required":[")" + name_30k + "\"]}"));
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  EXPECT_TRUE(Accepts(*shorter, "{\"" + name_30k + "\":null}"));
  EXPECT_FALSE(Accepts(*shorter, "{}"));
}

TEST(DeepAndFlatSpecsTest, SchemaQuarterMegabytePatternCompiles) {
  // A quarter: a megabyte compiles too, in ~6 s of CPU (hash-consing four
  // million nodes), too slow for the suite.
  auto pattern = CompileOnServiceStack(
      Schema(R"({"type":"string","pattern":"^)" + Repeat("ab", Flat(kMiB / 8)) + "$\"}"));
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  EXPECT_FALSE(Accepts(*pattern, "\"ab\""));
}

TEST(DeepAndFlatSpecsTest, SchemaMegabyteEnumCompiles) {
  std::string values;
  for (size_t i = 0; i < Flat(100'000); ++i) {
    absl::StrAppend(&values, i > 0 ? "," : "", "\"a", i, "\"");
  }
  ASSERT_GT(values.size(), Flat(kMiB / 2));
  auto enumeration = CompileOnServiceStack(Schema(R"({"enum":[)" + values + "]}"));
  ASSERT_TRUE(enumeration.ok()) << enumeration.status();
  EXPECT_TRUE(Accepts(*enumeration, "\"a10\""));
  EXPECT_FALSE(Accepts(*enumeration, "\"a100000\""));
}

TEST(DeepAndFlatSpecsTest, SchemaMegabyteOfPropertiesMeetsItsGrammarBound) {
  // 50,000 optional properties need 4 grammar states each: past the bound of
  // 200,000, a precise error. (Shrunk under sanitizers: then they compile.)
  const size_t count = Flat(50'000);
  std::string properties;
  for (size_t i = 0; i < count; ++i) {
    absl::StrAppend(&properties, i > 0 ? "," : "", "\"x", i, "\":{\"type\":\"null\"}");
  }
  ASSERT_GT(properties.size(), Flat(kMiB));
  auto object = CompileOnServiceStack(Schema(
      R"({"type":"object","additionalProperties":false,"properties":{)" + properties + "}}"));
  if (count == 50'000) {
    ASSERT_FALSE(object.ok());
    EXPECT_EQ(object.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(object.status().message(), HasSubstr("grammar states"));
  } else {
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_TRUE(Accepts(*object, "{\"x1\":null}"));
    EXPECT_FALSE(Accepts(*object, "{\"c\":null}"));
  }
}

TEST(DeepAndFlatSpecsTest, SchemaTenThousandDeepNamesTheLimitAndOffset) {
  auto items =
      CompileOnServiceStack(Schema(Repeat(R"({"items":)", 10'000) + "true" + Repeat("}", 10'000)));
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(items.status().message(),
              AllOf(HasSubstr("deeper than 128 (max_recursion_depth)"), HasSubstr("at byte 1152")));

  auto groups =
      CompileOnServiceStack(Schema(R"({"properties":{"s":{"pattern":")" + Repeat("(", 10'000) +
                                   "a" + Repeat(")", 10'000) + "\"}}}"));
  ASSERT_FALSE(groups.ok());
  EXPECT_EQ(groups.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(groups.status().message(),
              AllOf(HasSubstr("/properties/s"), HasSubstr("max_recursion_depth")));

  auto value = CompileOnServiceStack(
      Schema(R"({"const":)" + Repeat("[", 10'000) + Repeat("]", 10'000) + "}"));
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.status().message(), HasSubstr("max_recursion_depth"));
}

TEST(DeepAndFlatSpecsTest, SchemaNestedToTheHighestLimitCompiles) {
  CompileOptions options;
  options.max_recursion_depth = kMaxRecursionDepthLimit;
  const size_t levels = kMaxRecursionDepthLimit - 1;
  auto items = CompileOnServiceStack(
      Schema(Repeat(R"({"items":)", levels) + R"({"type":"null"})" + Repeat("}", levels)), options);
  ASSERT_TRUE(items.ok()) << items.status();
  // Only the innermost schema has a type: arrays 999 deep hold nulls only.
  EXPECT_TRUE(Accepts(*items, "[null]"));
  EXPECT_FALSE(Accepts(*items, Repeat("[", levels) + "1" + Repeat("]", levels)));

  auto any_of = CompileOnServiceStack(Schema(Repeat(R"({"anyOf":[{"type":"null"},)", levels / 2) +
                                             R"({"type":"string"})" + Repeat("]}", levels / 2)),
                                      options);
  ASSERT_TRUE(any_of.ok()) << any_of.status();
  EXPECT_TRUE(Accepts(*any_of, "null"));

  auto value = CompileOnServiceStack(
      Schema(R"({"const":)" + Repeat("[", levels) + Repeat("]", levels) + "}"), options);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_TRUE(Accepts(*value, Repeat("[", levels) + Repeat("]", levels)));
}

// ---- Grammar texts and structural tags. ----

GrammarSpec Grammar(EbnfDialect dialect, std::string text) {
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = dialect;
  spec.text = std::move(text);
  return spec;
}
GrammarSpec Tag(std::string text) {
  GrammarSpec spec;
  spec.kind = SpecKind::kStructuralTag;
  spec.text = std::move(text);
  return spec;
}

// `depth` nested groups around "a": `open` ... `close`.
std::string Nested(std::string_view open, std::string_view close, size_t depth) {
  return Repeat(open, depth) + "\"a\"" + Repeat(close, depth);
}

TEST(DeepAndFlatSpecsTest, GrammarTextTenThousandDeepGroupsNameTheLimit) {
  const struct {
    const char* name;
    GrammarSpec spec;
    std::string where;  // the group that passes the limit: 9 + 128 bytes in
  } cases[] = {
      {"gbnf", Grammar(EbnfDialect::kGbnf, "root ::= " + Nested("(", ")", 10'000)), "line 1:138"},
      {"ebnf", Grammar(EbnfDialect::kW3cEbnf, "root ::= " + Nested("(", ")", 10'000)),
       "line 1:138"},
      {"lark", Grammar(EbnfDialect::kLark, "start:   " + Nested("(", ")", 10'000)), "line 1:138"},
      {"lark optional", Grammar(EbnfDialect::kLark, "start:   " + Nested("[", "]", 10'000)),
       "line 1:138"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto g = CompileOnServiceStack(c.spec);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(g.status().message(),
                AllOf(HasSubstr("groups nested more than 128 deep (max_recursion_depth)"),
                      HasSubstr(c.where)));
  }
  // A Lark /regex/ takes the same limit.
  auto regex = CompileOnServiceStack(Grammar(
      EbnfDialect::kLark, "start: /" + Repeat("(", 10'000) + "a" + Repeat(")", 10'000) + "/"));
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(regex.status().message(),
              AllOf(HasSubstr("more than 128 levels"), HasSubstr("max_recursion_depth")));
}

TEST(DeepAndFlatSpecsTest, GrammarTextNestedToTheLimitCompiles) {
  CompileOptions options;
  options.max_recursion_depth = kMaxRecursionDepthLimit;
  const size_t depth = kMaxRecursionDepthLimit;
  for (const auto& [dialect, head] :
       {std::pair{EbnfDialect::kGbnf, "root ::= "}, std::pair{EbnfDialect::kLark, "start: "}}) {
    auto g = CompileOnServiceStack(Grammar(dialect, head + Nested("(", ")*", depth)), options);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(Accepts(*g, "aaa"));
    EXPECT_FALSE(Accepts(*g, "b"));
    // One level more than the limit is refused.
    auto over =
        CompileOnServiceStack(Grammar(dialect, head + Nested("(", ")", depth + 1)), options);
    EXPECT_THAT(over.status().message(), HasSubstr("more than 1000 deep (max_recursion_depth)"));
  }
}

// Lark terminals T0: T1, T1: T2, ... (each `body` with NEXT for the next
// one), the last "a"; `start: T0`.
std::string LarkTerminalChain(std::string_view body, size_t links) {
  std::string text = "start: T0\n";
  for (size_t i = 0; i < links; ++i) {
    std::string b(body);
    b.replace(b.find("NEXT"), 4, absl::StrCat("T", i + 1));
    absl::StrAppend(&text, "T", i, ": ", b, "\n");
  }
  absl::StrAppend(&text, "T", links, ": \"a\"\n");
  return text;
}

// Inlining a terminal recursed once per link of a chain of references, and
// group nesting did not bound it: a reference now counts as a group level.
TEST(DeepAndFlatSpecsTest, LarkTerminalChainsNameTheLimitAndTheReference) {
  // T129, referred to on line 130 (T128's body), is the first past 128; in
  // a group, each link is two levels.
  for (const auto& [body, first_too_deep, line] :
       {std::tuple{"NEXT", "T129", "line 130:"},
        std::tuple{"\"x\" NEXT | \"c\"", "T129", "line 130:"},
        std::tuple{"(NEXT)~2", "T65", "line 66:"}}) {
    SCOPED_TRACE(body);
    auto g = CompileOnServiceStack(Grammar(EbnfDialect::kLark, LarkTerminalChain(body, 10'000)));
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(g.status().message(),
                AllOf(HasSubstr(absl::StrCat("terminal '", first_too_deep,
                                             "': terminal references and groups nested more "
                                             "than 128 deep (max_recursion_depth)")),
                      HasSubstr(line)));
  }
  // Within the limit the chain is the language it spells.
  auto plain = CompileOnServiceStack(Grammar(EbnfDialect::kLark, LarkTerminalChain("NEXT", 128)));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(Accepts(*plain, "a"));
  EXPECT_FALSE(Accepts(*plain, "aa"));
  CompileOptions options;
  options.max_recursion_depth = kMaxRecursionDepthLimit;
  auto wrapping = CompileOnServiceStack(
      Grammar(EbnfDialect::kLark, LarkTerminalChain("\"x\" NEXT | \"c\"", 999)), options);
  ASSERT_TRUE(wrapping.ok()) << wrapping.status();
  EXPECT_TRUE(Accepts(*wrapping, "xxc"));
  EXPECT_TRUE(Accepts(*wrapping, Repeat("x", 999) + "a"));
  EXPECT_FALSE(Accepts(*wrapping, Repeat("x", 1000) + "a"));
  // A terminal used deeper than where it was first inlined is still bounded:
  // D (a chain of 100) is fine at the top and too deep under 40 groups.
  std::string shared = "start: D | E\nE: " + Repeat("(", 40) + "D" + Repeat(")", 40) + "\n";
  const std::string d_chain = LarkTerminalChain("NEXT", 100);
  shared += "D: T0\n" + d_chain.substr(d_chain.find('\n') + 1);
  auto reused = CompileOnServiceStack(Grammar(EbnfDialect::kLark, shared));
  ASSERT_FALSE(reused.ok());
  EXPECT_THAT(reused.status().message(),
              AllOf(HasSubstr("terminal 'D': terminal references and groups nested"),
                    HasSubstr("line 2:")));
}

// Lark's postfix operators nested a tree node per operator (a megabyte of
// `?`: a tree, and the recursions over it, a million deep).
TEST(DeepAndFlatSpecsTest, LarkRepeatedPostfixOperatorsNameTheLimit) {
  for (const std::string& ops : {Repeat("?", 10'000), Repeat("*", Flat(kMiB)), Repeat("~1", 500)}) {
    auto g = CompileOnServiceStack(Grammar(EbnfDialect::kLark, "start: \"a\"" + ops));
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    // The 130th operator (column 11 + 129) is the first past 128 levels.
    EXPECT_THAT(g.status().message(),
                AllOf(HasSubstr("groups and repetition operators nested more than 128 deep "
                                "(max_recursion_depth)"),
                      HasSubstr(ops[1] == '1' ? "line 1:269" : "line 1:140")));
  }
  auto one = CompileOnServiceStack(Grammar(EbnfDialect::kLark, "start: \"a\"*"));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(Accepts(*one, "aaa"));
}

// Megabyte-flat Lark rules and terminals compile.
TEST(DeepAndFlatSpecsTest, LarkMegabyteFlatInputsCompile) {
  const std::string flat = Repeat("\"a\" ", Flat(kMiB) / 4);
  auto terminal = CompileOnServiceStack(Grammar(EbnfDialect::kLark, "start: T\nT: " + flat));
  ASSERT_TRUE(terminal.ok()) << terminal.status();
  // (Feeding all of it is quadratic: each step derives the long literal.)
  std::unique_ptr<Matcher> m = Matcher::Create(*terminal);
  for (const char* text : {"aaaa", "a", "aaaa"}) {
    EXPECT_TRUE(m->AcceptToken(Vocab()->Encode(text)[0])) << text;
    EXPECT_FALSE(m->CanStop());
  }
  EXPECT_FALSE(m->AcceptToken(Vocab()->Encode("b")[0]));
  EXPECT_FALSE(Accepts(*terminal, "aa"));
  std::string alternation = "start: T\nT: ";
  for (size_t i = 0; alternation.size() < Flat(kMiB); ++i)
    absl::StrAppend(&alternation, "\"a", i, "\" | ");
  alternation += "\"b\"";
  auto alternatives = CompileOnServiceStack(Grammar(EbnfDialect::kLark, alternation));
  ASSERT_TRUE(alternatives.ok()) << alternatives.status();
  EXPECT_TRUE(Accepts(*alternatives, "a10"));
  EXPECT_FALSE(Accepts(*alternatives, "c"));
}

TEST(DeepAndFlatSpecsTest, StructuralTagTenThousandDeepNamesTheLimit) {
  std::string sequences = R"({"format":)";
  for (int i = 0; i < 10'000; ++i) sequences += R"({"type":"sequence","elements":[)";
  sequences += R"({"type":"const_string","value":"a"})";
  for (int i = 0; i < 10'000; ++i) sequences += "]}";
  sequences += "}";
  auto deep = CompileOnServiceStack(Tag(sequences));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.status().message(),
              HasSubstr("nesting deeper than 128 (max_recursion_depth) at byte"));

  // A grammar format inside a tag: its groups take the limit too.
  auto grammar =
      CompileOnServiceStack(Tag(R"({"format":{"type":"grammar","grammar":"root ::= )" +
                                Repeat("(", 10'000) + R"(\"a\")" + Repeat(")", 10'000) + "\"}}"));
  ASSERT_FALSE(grammar.ok());
  EXPECT_EQ(grammar.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(grammar.status().message(),
              AllOf(HasSubstr("groups nested more than 128 deep (max_recursion_depth)"),
                    HasSubstr("line 1:138")));
}

// ---- Choices. ----

TEST(DeepAndFlatSpecsTest, ChoicesMegabyteFlatInputsCompile) {
  auto one = CompileOnServiceStack(Choices({Repeat("ab", Flat(kMiB / 2))}));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(Accepts(*one, "ab"));

  std::vector<std::string> many;
  for (size_t i = 0; i < Flat(100'000); ++i) many.push_back(absl::StrCat("a", i, "b"));
  auto lots = CompileOnServiceStack(Choices(many));
  ASSERT_TRUE(lots.ok()) << lots.status();
  EXPECT_TRUE(Accepts(*lots, "a10b"));
  EXPECT_FALSE(Accepts(*lots, "a100000b"));

  // Brackets mean nothing in a choice: ten thousand of them are a literal.
  const std::string brackets = Repeat("[", 10'000) + Repeat("]", 10'000);
  auto deep = CompileOnServiceStack(Choices({brackets}));
  ASSERT_TRUE(deep.ok()) << deep.status();
  EXPECT_TRUE(Accepts(*deep, brackets));
}

}  // namespace
}  // namespace maskd
