// Token healing (compiler/compile/token_healing.h) with the real Llama-3
// tokenizer: the tail removed from prompts ending in "https:", " {", a partial
// word and an emoji's first bytes, and a brute-force oracle over the whole
// vocabulary for the first mask of the healed spec: token t is allowed iff
// bytes(t) is a prefix of removed_bytes + some choice.
#include <span>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/compile/token_healing.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/real_tokenizer.h"

namespace maskd {
namespace {

struct HealCase {
  std::string name;
  std::string prompt;
  std::vector<std::string> continuations;  // the choices spec after the prompt
  // Bytes after the prompt as single-byte tokens (an emoji cut in the middle
  // is no UTF-8 text to encode, but a worker's prompt can end that way).
  std::string raw_bytes;
};

class TokenHealingTest : public ::testing::TestWithParam<HealCase> {};
INSTANTIATE_TEST_SUITE_P(
    Prompts, TokenHealingTest,
    ::testing::Values(HealCase{"Url", "See https:", {"//example.com", "//maskd.dev/x"}, ""},
                      HealCase{"Brace", "Answer in JSON: {", {"\"a\": 1}", "}"}, ""},
                      HealCase{"PartialWord", "The capital of France is Par", {"is.", "isian"}, ""},
                      HealCase{"EmojiFirstBytes", "Smile ", {"\x98\x80!", "\x98\x81"}, "\xF0\x9F"}),
    [](const auto& info) { return info.param.name; });

TEST_P(TokenHealingTest, HealedMasksMatchBruteForce) {
  const HealCase& c = GetParam();
  auto tokenizer = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  std::vector<TokenId> prompt = tokenizer->Encode(c.prompt);
  for (char byte : c.raw_bytes) {
    TokenId single = tokenizer->vocab_size();
    for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
      if (tokenizer->token_bytes(t) == std::string(1, byte)) single = t;
    }
    ASSERT_LT(single, tokenizer->vocab_size());
    prompt.push_back(single);
  }
  ASSERT_FALSE(prompt.empty());
  const Healing healing = HealPromptTail(*tokenizer, prompt);
  // The sorted-vocabulary version (the service's) agrees with the reference
  // on every tail of the prompt.
  for (size_t n = 0; n <= prompt.size(); ++n) {
    const std::span<const TokenId> tail(prompt.data() + prompt.size() - n, n);
    const Healing reference = HealPromptTail(*tokenizer, tail);
    const Healing fast = HealPromptTail(tokenizer, tail);
    EXPECT_EQ(fast.tokens_to_drop, reference.tokens_to_drop) << n;
    EXPECT_EQ(fast.removed_bytes, reference.removed_bytes) << n;
  }
  ASSERT_GT(healing.tokens_to_drop, 0u);
  ASSERT_LE(healing.tokens_to_drop, prompt.size());
  // The removed bytes are exactly the dropped tokens' bytes, the prompt's end.
  std::string dropped;
  for (size_t i = prompt.size() - healing.tokens_to_drop; i < prompt.size(); ++i) {
    dropped += tokenizer->token_bytes(prompt[i]);
  }
  EXPECT_EQ(healing.removed_bytes, dropped);
  EXPECT_TRUE((c.prompt + c.raw_bytes).ends_with(dropped));
  // Longest: one more token is no prefix of any longer token.
  if (healing.tokens_to_drop < prompt.size()) {
    const std::string longer =
        std::string(tokenizer->token_bytes(prompt[prompt.size() - healing.tokens_to_drop - 1])) +
        dropped;
    for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
      const std::string_view b = tokenizer->token_bytes(t);
      ASSERT_FALSE(!tokenizer->is_special(t) && b.size() > longer.size() && b.starts_with(longer))
          << "token " << t << " covers a longer tail";
    }
  }

  GrammarSpec spec;
  spec.kind = SpecKind::kChoices;
  spec.choices = c.continuations;
  CompileOptions options;
  options.required_prefix = healing.removed_bytes;
  auto grammar = CompileGrammar(spec, options, tokenizer);
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  auto matcher = Matcher::Create(*grammar);
  std::vector<uint32_t> mask((tokenizer->vocab_size() + 31) / 32);
  matcher->FillMask(mask);
  size_t allowed = 0, healing_tokens = 0;
  for (TokenId t = 0; t < tokenizer->vocab_size(); ++t) {
    const std::string_view b = tokenizer->token_bytes(t);
    bool expected = false;
    if (!tokenizer->is_special(t) && !b.empty()) {
      for (const std::string& choice : c.continuations) {
        if ((healing.removed_bytes + choice).starts_with(b)) expected = true;
      }
    }
    ASSERT_EQ(((mask[t / 32] >> (t % 32)) & 1) != 0, expected) << "token " << t << " '" << b << "'";
    allowed += expected;
    if (expected && b.size() > healing.removed_bytes.size()) ++healing_tokens;
  }
  EXPECT_GT(allowed, 0u);
  // The point of healing: some token now covers the removed bytes and more.
  EXPECT_GT(healing_tokens, 0u) << c.name;
}

TEST(TokenHealingTailTest, NothingToHealAndSpecialTokens) {
  auto tokenizer = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(HealPromptTail(*tokenizer, {}).tokens_to_drop, 0u);
  const TokenId eos = tokenizer->eos_ids()[0];
  EXPECT_EQ(HealPromptTail(*tokenizer, std::vector<TokenId>{eos}).tokens_to_drop, 0u);
}

}  // namespace
}  // namespace maskd
