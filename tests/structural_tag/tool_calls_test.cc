// Tool-call presets (compiler/structural_tag/tool_calls.h) with the real
// tokenizers: a model's canonical tokenization of a realistic output passes
// through the masks token by token, EOS where the output may end, and calls
// that break the tool's schema or name an unknown tool are refused.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "compiler/structural_tag/tool_calls.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "tests/support/real_tokenizer.h"

namespace maskd {
namespace {

const std::vector<ToolSpec> kTools = {
    {"get_weather",
     R"({"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"],"additionalProperties":false})"},
    {"get_time",
     R"({"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"],"additionalProperties":false})"},
};

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

std::shared_ptr<const CompiledGrammar> Compile(ToolCallFormat format,
                                               const ToolCallOptions& options,
                                               std::shared_ptr<const Tokenizer> tokenizer) {
  absl::StatusOr<std::string> tag = ToolCallStructuralTag(kTools, format, options);
  EXPECT_TRUE(tag.ok()) << tag.status();
  GrammarSpec spec;
  spec.kind = SpecKind::kStructuralTag;
  spec.text = *tag;
  auto grammar = CompileGrammar(spec, CompileOptions{}, tokenizer);
  EXPECT_TRUE(grammar.ok()) << grammar.status();
  return grammar.ok() ? *grammar : nullptr;
}

// Feeds `ids` through masks; returns how many were allowed before the first
// refused one (ids.size() if all were), and whether EOS was allowed after.
std::pair<size_t, bool> Walk(const std::shared_ptr<const CompiledGrammar>& grammar,
                             const Tokenizer& tokenizer, const std::vector<TokenId>& ids) {
  auto matcher = Matcher::Create(grammar);
  std::vector<uint32_t> mask((tokenizer.vocab_size() + 31) / 32);
  for (size_t i = 0; i < ids.size(); ++i) {
    matcher->FillMask(mask);
    if (!Bit(mask, ids[i])) return {i, false};
    EXPECT_TRUE(matcher->AcceptToken(ids[i]));
  }
  matcher->FillMask(mask);
  return {ids.size(), Bit(mask, tokenizer.eos_ids()[0])};
}

TEST(ToolCallsTest, Qwen3CallsInsideFreeText) {
  auto tokenizer = testing::LoadRealTokenizer("qwen3");
  ASSERT_NE(tokenizer, nullptr);
  auto grammar = Compile(ToolCallFormat::kQwen3, {}, tokenizer);
  ASSERT_NE(grammar, nullptr);
  const std::string good =
      "I will check the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\nAnd the time:\n<tool_call>\n"
      "{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\"}}\n</tool_call>";
  const std::vector<TokenId> ids = tokenizer->Encode(good);
  // The tokenizer writes <tool_call> as its own added token.
  EXPECT_NE(std::find(ids.begin(), ids.end(), TokenId{151657}), ids.end());
  auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  // Free text alone may end; a call to an unknown tool or with a bad argument may not go on.
  EXPECT_TRUE(Walk(grammar, *tokenizer, tokenizer->Encode("Just text, no call.")).second);
  for (const std::string bad :
       {"<tool_call>\n{\"name\": \"get_stock\", \"arguments\": {}}\n</tool_call>",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}}\n</tool_call>"}) {
    const std::vector<TokenId> bad_ids = tokenizer->Encode(bad);
    EXPECT_LT(Walk(grammar, *tokenizer, bad_ids).first, bad_ids.size()) << bad;
  }
}

TEST(ToolCallsTest, Qwen3RequireOneCall) {
  auto tokenizer = testing::LoadRealTokenizer("qwen3");
  ASSERT_NE(tokenizer, nullptr);
  ToolCallOptions options;
  options.require_call = true;
  options.single_call = true;
  auto grammar = Compile(ToolCallFormat::kQwen3, options, tokenizer);
  ASSERT_NE(grammar, nullptr);
  EXPECT_FALSE(Walk(grammar, *tokenizer, tokenizer->Encode("No call.")).second);
  const std::string call =
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}\n</tool_call>";
  const std::vector<TokenId> ids = tokenizer->Encode(call);
  auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  // After the first call the output must end.
  const std::vector<TokenId> two = tokenizer->Encode(call + " more");
  EXPECT_EQ(Walk(grammar, *tokenizer, two).first, ids.size());
}

TEST(ToolCallsTest, Llama3JsonCall) {
  auto tokenizer = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  auto grammar = Compile(ToolCallFormat::kLlama3Json, {}, tokenizer);
  ASSERT_NE(grammar, nullptr);
  const std::vector<TokenId> ids =
      tokenizer->Encode(R"({"name": "get_weather", "parameters": {"city": "Oslo"}})");
  auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  const std::vector<TokenId> bad =
      tokenizer->Encode(R"({"name": "get_weather", "parameters": {}})");
  EXPECT_LT(Walk(grammar, *tokenizer, bad).first, bad.size());
  EXPECT_LT(Walk(grammar, *tokenizer, tokenizer->Encode("Sure!")).first, 1u);
}

// Reasoning first (CompileOptions::reasoning_end_marker) with Qwen3's </think>:
// anything until the marker, then the spec; the marker may not be skipped.
TEST(ReasoningTest, Qwen3ThinkThenJson) {
  auto tokenizer = testing::LoadRealTokenizer("qwen3");
  ASSERT_NE(tokenizer, nullptr);
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})";
  CompileOptions options;
  options.reasoning_end_marker = "</think>";
  auto grammar = CompileGrammar(spec, options, tokenizer);
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  const std::string good = "<think>\nThe user wants {\"a\": x}; pick 3.\n</think>\n\n{\"a\": 3}";
  const std::vector<TokenId> ids = tokenizer->Encode(good);
  EXPECT_NE(std::find(ids.begin(), ids.end(), TokenId{151668}), ids.end());  // </think>
  auto [allowed, eos] = Walk(*grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  // Before the marker anything goes but EOS; after it, only the schema.
  const std::vector<TokenId> thinking = tokenizer->Encode("<think>\nhmm");
  EXPECT_EQ(Walk(*grammar, *tokenizer, thinking), std::make_pair(thinking.size(), false));
  const std::vector<TokenId> bad = tokenizer->Encode("<think>ok</think>{\"b\": 1}");
  EXPECT_LT(Walk(*grammar, *tokenizer, bad).first, bad.size());
  // Without the option the same reasoning text is refused at once.
  auto plain = CompileGrammar(spec, CompileOptions{}, tokenizer);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Walk(*plain, *tokenizer, ids).first, 0u);
}

TEST(ToolCallsTest, BadToolListsAreRefused) {
  EXPECT_EQ(ToolCallStructuralTag({}, ToolCallFormat::kQwen3, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ToolCallStructuralTag({{"a", "{}"}, {"a", "{}"}}, ToolCallFormat::kQwen3, {}).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToolCallStructuralTag({{"a", "{"}}, ToolCallFormat::kQwen3, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// gpt-oss harmony: the special tokens are token terminals. The model's own
// tokenization of a call passes; at the start only <|channel|> is allowed
// (never its text spelled with ordinary tokens); EOS only after <|call|>.
TEST(ToolCallsTest, HarmonyCallWithSpecialTokens) {
  auto tokenizer = testing::LoadRealTokenizer("gptoss");
  ASSERT_NE(tokenizer, nullptr);
  auto grammar = Compile(ToolCallFormat::kHarmony, {}, tokenizer);
  ASSERT_NE(grammar, nullptr);
  constexpr TokenId kChannel = 200005, kConstrain = 200003, kMessage = 200008, kCall = 200012;
  const std::string call =
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"city\": \"Paris\", \"unit\": \"c\"}<|call|>";
  const std::vector<TokenId> ids = tokenizer->Encode(call);
  for (TokenId special : {kChannel, kConstrain, kMessage, kCall}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), special), ids.end()) << special;
  }
  auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  // Before <|call|>, EOS is refused.
  const std::vector<TokenId> open(ids.begin(), ids.end() - 1);
  auto [open_allowed, open_eos] = Walk(grammar, *tokenizer, open);
  EXPECT_EQ(open_allowed, open.size());
  EXPECT_FALSE(open_eos);

  auto matcher = Matcher::Create(grammar);
  std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
  matcher->FillMask(mask);
  // At the start: <|channel|>, or the text of a recipient in the role header
  // (" to=functions.NAME"), and nothing else.
  size_t text_tokens = 0;
  for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
    if (!Bit(mask, t) || t == kChannel) continue;
    const std::string text(tokenizer->token_bytes(t));
    EXPECT_TRUE(std::string(" to=functions.get_weather").starts_with(text) ||
                std::string(" to=functions.get_time").starts_with(text))
        << "token " << t << " '" << text << "'";
    ++text_tokens;
  }
  EXPECT_GT(text_tokens, 0u);
  EXPECT_TRUE(Bit(mask, kChannel));
  // The special token's text as ordinary bytes is not the token.
  EXPECT_FALSE(matcher->AcceptBytes("<|channel|>"));
  // No jump-forward over a token terminal; after it, the forced text is
  // never a special token's bytes.
  EXPECT_TRUE(matcher->ComputeJumpForward().bytes.empty());
  ASSERT_TRUE(matcher->AcceptToken(kChannel));
  // Unknown tool and bad arguments are refused; a final answer may end.
  for (const std::string bad :
       {"<|channel|>commentary to=functions.get_stock <|constrain|>json<|message|>{}<|call|>",
        "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>"}) {
    const std::vector<TokenId> bad_ids = tokenizer->Encode(bad);
    EXPECT_LT(Walk(grammar, *tokenizer, bad_ids).first, bad_ids.size()) << bad;
  }
  EXPECT_TRUE(
      Walk(grammar, *tokenizer, tokenizer->Encode("<|channel|>final<|message|>Hi.")).second);
  // Required call: the final channel is gone.
  ToolCallOptions required;
  required.require_call = true;
  auto must_call = Compile(ToolCallFormat::kHarmony, required, tokenizer);
  ASSERT_NE(must_call, nullptr);
  const std::vector<TokenId> final_ids = tokenizer->Encode("<|channel|>final<|message|>Hi.");
  EXPECT_LT(Walk(must_call, *tokenizer, final_ids).first, final_ids.size());
}

// gpt-oss harmony beyond one message: an analysis message before a call,
// the recipient in the role header, several calls (unless single_call), an
// analysis message before a final answer; each as the model's own
// tokenization, token by token. After the analysis text's <|end|>, only
// <|start|> may come.
TEST(ToolCallsTest, HarmonyAnalysisRoleHeaderAndSeveralCalls) {
  auto tokenizer = testing::LoadRealTokenizer("gptoss");
  ASSERT_NE(tokenizer, nullptr);
  auto grammar = Compile(ToolCallFormat::kHarmony, {}, tokenizer);
  ASSERT_NE(grammar, nullptr);
  constexpr TokenId kStart = 200006, kEnd = 200007;
  const std::string analysis =
      "<|channel|>analysis<|message|>The user wants Paris weather; call get_weather.<|end|>"
      "<|start|>assistant";
  const std::string weather_call =
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"city\": \"Paris\"}<|call|>";
  const std::string time_in_role =
      " to=functions.get_time<|channel|>commentary <|constrain|>json<|message|>"
      "{\"tz\": \"UTC\"}<|call|>";
  const std::string final_answer = "<|channel|>final<|message|>It is sunny.";
  for (const std::string& output :
       {analysis + weather_call, time_in_role, analysis + time_in_role,
        weather_call + "<|start|>assistant" + time_in_role,
        weather_call + "<|start|>assistant" + analysis + weather_call, analysis + final_answer}) {
    const std::vector<TokenId> ids = tokenizer->Encode(output);
    auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
    EXPECT_EQ(allowed, ids.size()) << output;
    EXPECT_TRUE(eos) << output;
  }
  // Inside the analysis text EOS is refused; after its <|end|> only <|start|>.
  auto matcher = Matcher::Create(grammar);
  std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
  for (TokenId t : tokenizer->Encode("<|channel|>analysis<|message|>Thinking")) {
    ASSERT_TRUE(matcher->AcceptToken(t));
  }
  matcher->FillMask(mask);
  EXPECT_FALSE(Bit(mask, tokenizer->eos_ids()[0]));
  EXPECT_TRUE(Bit(mask, kEnd));
  ASSERT_TRUE(matcher->AcceptToken(kEnd));
  matcher->FillMask(mask);
  for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
    ASSERT_EQ(Bit(mask, t), t == kStart) << t;
  }
  // Broken shapes: a second analysis in a row, a role-header call without
  // <|constrain|>, text after <|call|> other than <|start|>assistant.
  for (const std::string& bad :
       {analysis + analysis + weather_call,
        std::string(" to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>"),
        weather_call + "More text"}) {
    const std::vector<TokenId> ids = tokenizer->Encode(bad);
    EXPECT_LT(Walk(grammar, *tokenizer, ids).first, ids.size()) << bad;
  }
  // Jump-forward after the recipient takes the forced special tokens too:
  // " <|constrain|>json<|message|>" (then whitespace may open the
  // arguments), every token
  // of it allowed by the masks in turn, each special one alone in its mask.
  auto forced = Matcher::Create(grammar);
  for (TokenId t : tokenizer->Encode("<|channel|>commentary to=functions.get_weather")) {
    ASSERT_TRUE(forced->AcceptToken(t));
  }
  const JumpForward jump = forced->ComputeJumpForward();
  EXPECT_TRUE(jump.bytes.starts_with(" <|constrain|>json<|message|>")) << jump.bytes;
  constexpr TokenId kConstrain = 200003, kMessage = 200008;
  EXPECT_NE(std::find(jump.tokens.begin(), jump.tokens.end(), kConstrain), jump.tokens.end());
  EXPECT_NE(std::find(jump.tokens.begin(), jump.tokens.end(), kMessage), jump.tokens.end());
  EXPECT_EQ(tokenizer->Decode(jump.tokens), jump.bytes);
  for (TokenId t : jump.tokens) {
    forced->FillMask(mask);
    ASSERT_TRUE(Bit(mask, t)) << t;
    if (t == kConstrain || t == kMessage) {
      size_t count = 0;
      for (TokenId u = 0; u < tokenizer->vocab_size(); ++u) count += Bit(mask, u) ? 1 : 0;
      EXPECT_EQ(count, 1u) << t;
    }
    ASSERT_TRUE(forced->AcceptToken(t));
  }
  // single_call: the output ends at the first <|call|>.
  ToolCallOptions single;
  single.single_call = true;
  auto one = Compile(ToolCallFormat::kHarmony, single, tokenizer);
  ASSERT_NE(one, nullptr);
  const std::vector<TokenId> two =
      tokenizer->Encode(weather_call + "<|start|>assistant" + time_in_role);
  const size_t first_call = tokenizer->Encode(weather_call).size();
  EXPECT_EQ(Walk(one, *tokenizer, two).first, first_call);
  EXPECT_TRUE(Walk(one, *tokenizer, tokenizer->Encode(analysis + weather_call)).second);
}

TEST(ToolCallsTest, HarmonyNeedsATokenizerWithItsSpecialTokens) {
  auto tokenizer = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  absl::StatusOr<std::string> tag = ToolCallStructuralTag(kTools, ToolCallFormat::kHarmony, {});
  ASSERT_TRUE(tag.ok()) << tag.status();
  GrammarSpec spec;
  spec.kind = SpecKind::kStructuralTag;
  spec.text = *tag;
  auto grammar = CompileGrammar(spec, CompileOptions{}, tokenizer);
  ASSERT_FALSE(grammar.ok());
  EXPECT_EQ(grammar.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(grammar.status().message().find("\"<|channel|>\" is not a special token"),
            std::string::npos)
      << grammar.status();
}

// gpt-oss: the reasoning ends at the final channel, <|channel|>final<|message|>,
// made of special tokens. Before it any text and special tokens (EOS
// excepted); <|channel|> followed by other text is not the marker.
TEST(ReasoningTest, GptOssFinalChannelThenJson) {
  auto tokenizer = testing::LoadRealTokenizer("gptoss");
  ASSERT_NE(tokenizer, nullptr);
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})";
  CompileOptions options;
  options.reasoning_end_marker = "<|channel|>final<|message|>";
  auto grammar = CompileGrammar(spec, options, tokenizer);
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  const std::string reasoning =
      "<|channel|>analysis<|message|>Think: {\"a\": is wanted. <|channel|>final is text "
      "here<|end|><|start|>assistant";
  const std::vector<TokenId> thinking = tokenizer->Encode(reasoning);
  auto [allowed, eos] = Walk(*grammar, *tokenizer, thinking);
  EXPECT_EQ(allowed, thinking.size());
  EXPECT_FALSE(eos);
  const std::vector<TokenId> ids =
      tokenizer->Encode(reasoning + "<|channel|>final<|message|>{\"a\": 1}");
  std::tie(allowed, eos) = Walk(*grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  // After the marker, only the JSON: no special token, no other text.
  const std::vector<TokenId> bad =
      tokenizer->Encode("<|channel|>final<|message|><|channel|>final<|message|>{\"a\": 1}");
  EXPECT_EQ(Walk(*grammar, *tokenizer, bad).first, 3u);
  const std::vector<TokenId> text_after = tokenizer->Encode("<|channel|>final<|message|>Sure");
  EXPECT_EQ(Walk(*grammar, *tokenizer, text_after).first, 3u);
  // A marker of special tokens that ends in text cannot be exact here.
  options.reasoning_end_marker = "<|channel|>final";
  auto refused = CompileGrammar(spec, options, tokenizer);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented) << refused.status();
}

// The Llama 3 tokenizer made a Llama 3.1 one: 3.1 names the reserved ids
// 128008 and 128010 <|eom_id|> and <|python_tag|>; the vocabulary is the same.
std::shared_ptr<const Tokenizer> Llama31() {
  const std::string dir = testing::TokenizerDir("llama3");
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string json = absl::StrReplaceAll(read(dir + "/tokenizer.json"),
                                               {{"<|reserved_special_token_5|>", "<|python_tag|>"},
                                                {"<|reserved_special_token_4|>", "<|eom_id|>"}});
  auto tokenizer = Tokenizer::FromJson(json, read(dir + "/tokenizer_config.json"));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return tokenizer.ok() ? *tokenizer : nullptr;
}

TEST(ToolCallsTest, Llama3PythonTagCall) {
  auto tokenizer = Llama31();
  ASSERT_NE(tokenizer, nullptr);
  auto grammar = Compile(ToolCallFormat::kLlama3PythonTag, {}, tokenizer);
  ASSERT_NE(grammar, nullptr);
  const std::vector<TokenId> ids =
      tokenizer->Encode(R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}})");
  ASSERT_EQ(ids[0], 128010u);
  auto [allowed, eos] = Walk(grammar, *tokenizer, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  EXPECT_TRUE(Walk(grammar, *tokenizer, tokenizer->Encode("Just text.")).second);
  // A call after the tag must follow the tool's schema.
  const std::vector<TokenId> bad =
      tokenizer->Encode(R"(<|python_tag|>{"name": "get_weather", "parameters": {}})");
  EXPECT_LT(Walk(grammar, *tokenizer, bad).first, bad.size());
  ToolCallOptions required;
  required.require_call = true;
  auto must_call = Compile(ToolCallFormat::kLlama3PythonTag, required, tokenizer);
  ASSERT_NE(must_call, nullptr);
  EXPECT_EQ(Walk(must_call, *tokenizer, tokenizer->Encode("Just text.")).first, 0u);
  // Llama 3.0 has no <|python_tag|>: refused, not approximated by text.
  auto llama3 = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(llama3, nullptr);
  GrammarSpec spec;
  spec.kind = SpecKind::kStructuralTag;
  spec.text = *ToolCallStructuralTag(kTools, ToolCallFormat::kLlama3PythonTag, {});
  auto refused = CompileGrammar(spec, CompileOptions{}, llama3);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("\"<|python_tag|>\" is not a special token"),
            std::string::npos)
      << refused.status();
}

}  // namespace
}  // namespace maskd
