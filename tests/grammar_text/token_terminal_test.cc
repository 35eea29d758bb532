// Token terminals (special tokens as grammar terminals) through the whole
// compiler: negation checked token by token against the language on a
// small vocabulary, the compile-time refusal of grammars where a token could
// be read both as a token terminal and as text, jump-forward stopping before
// a token terminal, and references by name looked up in the real tokenizers
// (gpt-oss, Qwen3, Llama 3).
#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/compile/compile.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "tests/support/real_tokenizer.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using testing::SmallVocabTokenizer;

bool Bit(const std::vector<uint32_t>& mask, TokenId t) { return (mask[t / 32] >> (t % 32)) & 1; }

absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileText(
    const std::string& text, EbnfDialect dialect, std::shared_ptr<const Tokenizer> tokenizer) {
  GrammarSpec spec;
  spec.kind = SpecKind::kEbnf;
  spec.dialect = dialect;
  spec.text = text;
  return CompileGrammar(spec, CompileOptions(), std::move(tokenizer));
}

std::vector<TokenId> Allowed(Matcher& m, const Tokenizer& tokenizer) {
  std::vector<uint32_t> mask((tokenizer.vocab_size() + 31) / 32);
  m.FillMask(mask);
  std::vector<TokenId> out;
  for (TokenId t = 0; t < tokenizer.vocab_size(); ++t) {
    if (Bit(mask, t)) out.push_back(t);
  }
  return out;
}

// Vocabulary: text tokens a, b, ab; special tokens <s> (3) and </s> (4);
// EOS (5).
std::shared_ptr<SmallVocabTokenizer> SmallVocab(const std::string& id) {
  auto tok = std::make_shared<SmallVocabTokenizer>(
      std::vector<std::string>{"a", "b", "ab", "<s>", "</s>"}, id);
  tok->MarkSpecial(3);
  tok->MarkSpecial(4);
  return tok;
}

// root ::= <s> !</s>* </s> "a"+ : between the tags any token but </s> (and
// EOS), text tokens included, each read as one token; after </s>, text.
// Every mask along every token sequence up to length 5 is checked against
// the language, decided directly on the token sequence. The same language
// in GBNF (`!<[4]>`) and in Lark (`<[^4]>`, and `<[^4-4,4]>` as a list).
class TokenNegationTest : public ::testing::TestWithParam<std::pair<EbnfDialect, std::string>> {};

INSTANTIATE_TEST_SUITE_P(
    Dialects, TokenNegationTest,
    ::testing::Values(
        std::make_pair(EbnfDialect::kGbnf, "root ::= <[3]> body <[4]> \"a\"+\nbody ::= !<[4]>*\n"),
        std::make_pair(EbnfDialect::kLark, "start: <[3]> body <[4]> /a+/\nbody: <[^4]>*\n"),
        std::make_pair(EbnfDialect::kLark, "start: <[3]> <[^4-4,4]>* <[4]> \"a\"+\n")));

TEST_P(TokenNegationTest, NegationMatchesEveryTokenButTheNamedOnes) {
  auto tok = SmallVocab("token-terminal-negation");
  auto g = CompileText(GetParam().second, GetParam().first, tok);
  ASSERT_TRUE(g.ok()) << g.status();
  const TokenId eos = 5;
  // Whether the token sequence `seq` (+ `next`, or EOS) starts a sentence.
  auto viable = [&](const std::vector<TokenId>& seq, bool complete) {
    size_t i = 0;
    if (seq.empty()) return !complete;
    if (seq[i++] != 3) return false;
    while (i < seq.size() && seq[i] != 4) {
      if (seq[i] == eos) return false;
      ++i;
    }
    if (i == seq.size()) return !complete;
    ++i;  // </s>
    std::string text;
    for (; i < seq.size(); ++i) {
      if (seq[i] >= 3) return false;
      text += tok->token_bytes(seq[i]);
    }
    const bool only_a = std::all_of(text.begin(), text.end(), [](char c) { return c == 'a'; });
    return only_a && (!complete || !text.empty());
  };
  int checked = 0;
  std::vector<std::vector<TokenId>> frontier = {{}};
  for (int len = 0; len < 5; ++len) {
    std::vector<std::vector<TokenId>> next_frontier;
    for (const std::vector<TokenId>& seq : frontier) {
      auto m = Matcher::Create(*g);
      for (TokenId t : seq) ASSERT_TRUE(m->AcceptToken(t));
      const std::vector<TokenId> allowed = Allowed(*m, *tok);
      for (TokenId t = 0; t < tok->vocab_size(); ++t) {
        std::vector<TokenId> longer = seq;
        longer.push_back(t);
        const bool expected = t == eos ? viable(seq, true) : viable(longer, false);
        const bool got = std::find(allowed.begin(), allowed.end(), t) != allowed.end();
        ASSERT_EQ(got, expected) << "after " << seq.size() << " tokens, token " << t;
        ++checked;
        if (expected && t != eos) next_frontier.push_back(longer);
      }
      EXPECT_EQ(m->CanStop(), viable(seq, true));
    }
    frontier = std::move(next_frontier);
  }
  EXPECT_GT(checked, 600);
}

// Lark's wildcard `<[*]>` is every token but EOS; `<[^]>`, an empty
// negation, is malformed, and GBNF has no `^` (its negation is `!<...>`).
TEST(TokenTerminalTest, LarkWildcardAndMalformedNegations) {
  auto tok = SmallVocab("token-terminal-wildcard");
  auto g = CompileText("start: <[*]> <[3]>\n", EbnfDialect::kLark, tok);
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  EXPECT_EQ(Allowed(*m, *tok), (std::vector<TokenId>{0, 1, 2, 3, 4}));
  ASSERT_TRUE(m->AcceptToken(4));
  EXPECT_EQ(Allowed(*m, *tok), (std::vector<TokenId>{3}));
  for (const auto& [dialect, text] :
       std::vector<std::pair<EbnfDialect, std::string>>{{EbnfDialect::kLark, "start: <[^]>\n"},
                                                        {EbnfDialect::kLark, "start: <[^*]>\n"},
                                                        {EbnfDialect::kLark, "start: <[^3,]>\n"},
                                                        {EbnfDialect::kGbnf, "root ::= <[^3]>\n"},
                                                        {EbnfDialect::kGbnf, "root ::= <[*]>\n"}}) {
    auto bad = CompileText(text, dialect, tok);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(bad.status().message().find("malformed token"), std::string::npos) << bad.status();
  }
}

TEST(TokenTerminalTest, TokenReadBothWaysIsRefused) {
  auto tok = SmallVocab("token-terminal-ambiguous");
  for (const std::string text : {
           "root ::= \"a\" !<[4]>",    // after text, a negation (matches "b" too)
           "root ::= [ab]* <[2]>",     // an ordinary token where text may go on
           "root ::= !<[3]> | \"b\"",  // both at the start
           "root ::= <[3]> (<[0]> | \"b\")",
       }) {
    auto g = CompileText(text, EbnfDialect::kGbnf, tok);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << text;
    EXPECT_NE(g.status().message().find("may match ordinary (non-special) tokens"),
              std::string::npos)
        << g.status();
    EXPECT_NE(g.status().message().find("(line 1:"), std::string::npos) << g.status();
  }
  // Special tokens beside text are fine: text never takes a special token.
  for (const std::string text : {"root ::= \"a\"* <[3]> \"b\"", "root ::= <[3]> | \"ab\"",
                                 "root ::= <[3]> !<[4]>* <[4]> \"a\""}) {
    EXPECT_TRUE(CompileText(text, EbnfDialect::kGbnf, tok).ok()) << text;
  }
}

TEST(TokenTerminalTest, SpecialTokenBytesAreNeverText) {
  auto tok = SmallVocab("token-terminal-text");
  // The text "<s>" cannot be written with the special token <s>, and the
  // token terminal <s> cannot be written as text.
  auto text = CompileText("root ::= \"a<s>\" | \"b\"", EbnfDialect::kGbnf, tok);
  ASSERT_TRUE(text.ok()) << text.status();
  auto m = Matcher::Create(*text);
  ASSERT_TRUE(m->AcceptToken(0));
  EXPECT_FALSE(m->AcceptToken(3));
  EXPECT_TRUE(m->AcceptBytes("<s>"));
  auto token = CompileText("root ::= \"a\" <[3]>", EbnfDialect::kGbnf, tok);
  ASSERT_TRUE(token.ok()) << token.status();
  m = Matcher::Create(*token);
  ASSERT_TRUE(m->AcceptToken(0));
  EXPECT_FALSE(m->AcceptBytes("<s>"));
  EXPECT_FALSE(m->CanStop());
  EXPECT_EQ(Allowed(*m, *tok), std::vector<TokenId>{3});
  ASSERT_TRUE(m->AcceptToken(3));
  EXPECT_TRUE(m->CanStop());
  EXPECT_TRUE(m->MustStop());
  ASSERT_TRUE(m->Rollback(1).ok());
  EXPECT_FALSE(m->CanStop());
  EXPECT_EQ(Allowed(*m, *tok), std::vector<TokenId>{3});
}

// Jump-forward takes a special token where the grammar allows nothing else
// (one token terminal naming one token, no byte, no EOS): the bytes carry
// its text, the tokens the token itself, each text run tokenized on its own,
// and every jump-forward token is the mask's, the special one alone in it.
// A choice, a negation, an id range or a byte beside the terminal stops it.
TEST(TokenTerminalTest, JumpForwardTakesAForcedSpecialToken) {
  auto tok = SmallVocab("token-terminal-jump");
  auto g = CompileText("root ::= \"ab\" <[3]> \"ba\" (<[4]> | \"a\")", EbnfDialect::kGbnf, tok);
  ASSERT_TRUE(g.ok()) << g.status();
  auto m = Matcher::Create(*g);
  const JumpForward jump = m->ComputeJumpForward();
  EXPECT_EQ(jump.bytes, "ab<s>ba");
  EXPECT_EQ(jump.tokens, (std::vector<TokenId>{2, 3, 1, 0}));
  for (TokenId t : jump.tokens) {
    const std::vector<TokenId> allowed = Allowed(*m, *tok);
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), t), allowed.end()) << t;
    if (t == 3) {
      EXPECT_EQ(allowed, std::vector<TokenId>{3});
    }
    ASSERT_TRUE(m->AcceptToken(t));
  }
  EXPECT_EQ(m->ComputeJumpForward().bytes, "");  // </s> or "a"
  EXPECT_EQ(Allowed(*m, *tok), (std::vector<TokenId>{0, 4}));
  // Rollback is unaffected by computing a jump-forward.
  ASSERT_TRUE(m->Rollback(4).ok());
  EXPECT_EQ(m->ComputeJumpForward().tokens, jump.tokens);

  for (const auto& [dialect, text, bytes] :
       std::vector<std::tuple<EbnfDialect, std::string, std::string>>{
           {EbnfDialect::kGbnf, "root ::= <[3]> !<[4]>", "<s>"},
           {EbnfDialect::kLark, "start: \"a\" <[3-4]> \"b\"\n", "a"},
           {EbnfDialect::kGbnf, "root ::= \"a\" (<[3]> | \"b\")", "a"},
           {EbnfDialect::kGbnf, "root ::= \"a\" <[3]>?", "a"},
           {EbnfDialect::kLark, "start: <[3]> <[4]> \"ab\"\n", "<s></s>ab"}}) {
    auto other = CompileText(text, dialect, tok);
    ASSERT_TRUE(other.ok()) << text << other.status();
    EXPECT_EQ(Matcher::Create(*other)->ComputeJumpForward().bytes, bytes) << text;
  }
}

// Walks `ids` through the masks: how many were allowed, and EOS after.
std::pair<size_t, bool> Walk(const std::shared_ptr<const CompiledGrammar>& g,
                             const Tokenizer& tokenizer, const std::vector<TokenId>& ids) {
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((tokenizer.vocab_size() + 31) / 32);
  for (size_t i = 0; i < ids.size(); ++i) {
    m->FillMask(mask);
    if (!Bit(mask, ids[i])) return {i, false};
    EXPECT_TRUE(m->AcceptToken(ids[i]));
  }
  m->FillMask(mask);
  return {ids.size(), Bit(mask, tokenizer.eos_ids()[0])};
}

// llama.cpp's README example with Qwen3, whose <think> and </think> are
// added tokens (not special): the think block is any tokens but </think>.
TEST(TokenTerminalTest, Qwen3ThinkBlockByTokenText) {
  auto qwen = testing::LoadRealTokenizer("qwen3");
  ASSERT_NE(qwen, nullptr);
  auto g = CompileText("root ::= <think> thinking </think> [a-zA-Z .]+\nthinking ::= !</think>*\n",
                       EbnfDialect::kGbnf, qwen);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<TokenId> ids =
      qwen->Encode("<think>\nThe user greets me. <tool_call> is text here.\n</think>Hello there.");
  auto [allowed, eos] = Walk(*g, *qwen, ids);
  EXPECT_EQ(allowed, ids.size());
  EXPECT_TRUE(eos);
  auto m = Matcher::Create(*g);
  EXPECT_EQ(Allowed(*m, *qwen), std::vector<TokenId>{151667});  // only <think>
}

TEST(TokenTerminalTest, GptOssChannelsByName) {
  auto gptoss = testing::LoadRealTokenizer("gptoss");
  ASSERT_NE(gptoss, nullptr);
  auto g = CompileText("root ::= <|channel|> \"final\" <|message|> [a-z ]+\n", EbnfDialect::kGbnf,
                       gptoss);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<TokenId> ids = gptoss->Encode("<|channel|>final<|message|>hello world");
  EXPECT_EQ(Walk(*g, *gptoss, ids).first, ids.size());
  auto lark = CompileText("start: <|channel|> \"final\" <|message|> /[a-z ]+/\n",
                          EbnfDialect::kLark, gptoss);
  ASSERT_TRUE(lark.ok()) << lark.status();
  EXPECT_EQ(Walk(*lark, *gptoss, ids).first, ids.size());
  // <|return|> is gpt-oss's EOS: the grammar's end governs it.
  auto eos = CompileText("root ::= \"a\" | \"b\" <|return|>\n", EbnfDialect::kGbnf, gptoss);
  ASSERT_FALSE(eos.ok());
  EXPECT_EQ(eos.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(eos.status().message().find("end-of-sequence"), std::string::npos) << eos.status();
}

// Lark's llguidance example for Llama 3.1 tool calls, with the Llama 3
// tokenizer made a Llama 3.1 one (3.1 names reserved ids 128008 and 128010
// <|eom_id|> and <|python_tag|>; the vocabulary is otherwise the same).
TEST(TokenTerminalTest, LarkPythonTagWithLlama31) {
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
  auto llama31 = Tokenizer::FromJson(json, read(dir + "/tokenizer_config.json"));
  ASSERT_TRUE(llama31.ok()) << llama31.status();
  const std::string grammar =
      "start: TEXT | fun_call\n"
      "TEXT: /[^{](.|\\n)*/\n"
      "fun_call: <|python_tag|> %json {\"type\": \"object\", \"properties\": {\"name\": "
      "{\"const\": \"get_weather\"}}, \"required\": [\"name\"]}\n";
  auto g = CompileText(grammar, EbnfDialect::kLark, *llama31);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<TokenId> call = (*llama31)->Encode("<|python_tag|>{\"name\": \"get_weather\"}");
  ASSERT_EQ(call[0], 128010u);
  auto [allowed, eos] = Walk(*g, **llama31, call);
  EXPECT_EQ(allowed, call.size());
  EXPECT_TRUE(eos);
  EXPECT_TRUE(Walk(*g, **llama31, (*llama31)->Encode("Just text.")).second);
  // The same grammar for Llama 3, which has no <|python_tag|>: a precise error.
  auto llama3 = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(llama3, nullptr);
  auto refused = CompileText(grammar, EbnfDialect::kLark, llama3);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("line 3:11: unknown token '<|python_tag|>'"),
            std::string::npos)
      << refused.status();
  // By id and by id range.
  auto by_id =
      CompileText("start: <[128006]> \"user\" <[128007-128007]>\n", EbnfDialect::kLark, llama3);
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  const std::vector<TokenId> header = llama3->Encode("<|start_header_id|>user<|end_header_id|>");
  EXPECT_EQ(Walk(*by_id, *llama3, header).first, header.size());
}

// SmallVocabTokenizer's Encode never produces special tokens; this one
// encodes the reasoning marker "<c>ab<m>" as a real tokenizer would.
class MarkerTokenizer final : public Tokenizer {
 public:
  explicit MarkerTokenizer(std::shared_ptr<const SmallVocabTokenizer> base)
      : base_(std::move(base)) {}
  const std::string& id() const override { return base_->id(); }
  const std::string& name() const override { return base_->name(); }
  TokenizerKind kind() const override { return base_->kind(); }
  size_t vocab_size() const override { return base_->vocab_size(); }
  std::string_view token_bytes(TokenId id) const override { return base_->token_bytes(id); }
  bool is_special(TokenId id) const override { return base_->is_special(id); }
  const std::vector<TokenId>& eos_ids() const override { return base_->eos_ids(); }
  std::vector<TokenId> Encode(std::string_view text) const override {
    if (text == "<c>ab<m>") return {4, 2, 5};
    return base_->Encode(text);
  }
  std::string Decode(std::span<const TokenId> ids) const override { return base_->Decode(ids); }

 private:
  std::shared_ptr<const SmallVocabTokenizer> base_;
};

// Reasoning first with a marker of special tokens and text (<c>ab<m>): every
// mask along every token sequence up to length 5 against a reference that
// splits the sequence into special tokens and text segments and finds the
// marker's first occurrence; after it, the spec (regex b+).
TEST(TokenReasoningTest, MasksMatchBruteForce) {
  auto tok = std::make_shared<SmallVocabTokenizer>(
      std::vector<std::string>{"a", "b", "ab", "ba", "<c>", "<m>", "<o>"}, "token-reasoning");
  for (TokenId t : {4u, 5u, 6u}) tok->MarkSpecial(t);
  const TokenId eos = 7;
  GrammarSpec spec;
  spec.kind = SpecKind::kRegex;
  spec.text = "b+";
  CompileOptions options;
  options.reasoning_end_marker = "<c>ab<m>";
  auto marker_tok = std::make_shared<MarkerTokenizer>(tok);
  auto g = CompileGrammar(spec, options, marker_tok);
  ASSERT_TRUE(g.ok()) << g.status();

  // (viable, complete) of a token sequence: split into special tokens and
  // text segments; the reasoning ends at the first <c> "ab" <m>; then b+.
  auto judge = [&](const std::vector<TokenId>& seq) -> std::pair<bool, bool> {
    struct Item {
      TokenId special;  // 0: a text segment
      std::string text;
    };
    std::vector<Item> items;
    size_t end = 0;
    bool found = false;
    for (size_t i = 0; i < seq.size() && !found; ++i) {
      if (seq[i] == eos) return {false, false};
      if (seq[i] >= 4) {
        items.push_back({seq[i], ""});
      } else if (!items.empty() && items.back().special == 0) {
        items.back().text += tok->token_bytes(seq[i]);
      } else {
        items.push_back({0, std::string(tok->token_bytes(seq[i]))});
      }
      const size_t k = items.size();
      found = k >= 3 && items[k - 1].special == 5 && items[k - 2].special == 0 &&
              items[k - 2].text == "ab" && items[k - 3].special == 4;
      end = i + 1;
    }
    if (!found) return {true, false};
    std::string rest;
    for (size_t i = end; i < seq.size(); ++i) {
      if (seq[i] >= 4) return {false, false};
      rest += tok->token_bytes(seq[i]);
    }
    const bool bs = std::all_of(rest.begin(), rest.end(), [](char c) { return c == 'b'; });
    return {bs, bs && !rest.empty()};
  };

  int checked = 0;
  std::function<void(const std::vector<TokenId>&, Matcher&)> visit =
      [&](const std::vector<TokenId>& seq, Matcher& m) {
        std::vector<uint32_t> mask(1);
        m.FillMask(mask);
        ASSERT_EQ(m.CanStop(), judge(seq).second);
        for (TokenId t = 0; t <= eos; ++t) {
          std::vector<TokenId> longer = seq;
          longer.push_back(t);
          const bool expected = t == eos ? judge(seq).second : judge(longer).first;
          ASSERT_EQ(Bit(mask, t), expected)
              << "sequence " << absl::StrJoin(seq, ",") << " token " << t;
          ++checked;
          if (expected && t != eos && longer.size() < 5) {
            std::unique_ptr<Matcher> child = m.Clone();
            ASSERT_TRUE(child->AcceptToken(t));
            visit(longer, *child);
          }
        }
      };
  auto m = Matcher::Create(*g);
  visit({}, *m);
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace maskd
