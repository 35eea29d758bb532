// Loading the three real tokenizers: sizes, bytes, special sets, EOS and a
// few encodings checked against the JavaScript reference by hand.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "compiler/tokenizer/tokenizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/real_tokenizer.h"

namespace maskd {
namespace {

using ::testing::ElementsAre;
using testing::LoadRealTokenizer;

TEST(RealTokenizerTest, Llama3LoadsBytesSpecialsAndEos) {
  auto tokenizer = LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->name(), "llama3");
  EXPECT_EQ(tokenizer->kind(), TokenizerKind::kByteLevelBpe);
  EXPECT_EQ(tokenizer->vocab_size(), 128256u);
  EXPECT_EQ(tokenizer->id().size(), 32u);
  EXPECT_EQ(tokenizer->token_bytes(9906), "Hello");
  EXPECT_EQ(tokenizer->token_bytes(1917), " world");
  EXPECT_EQ(tokenizer->token_bytes(220), " ");
  EXPECT_EQ(tokenizer->token_bytes(128009), "<|eot_id|>");
  EXPECT_TRUE(tokenizer->is_special(128000));
  EXPECT_TRUE(tokenizer->is_special(128255));
  EXPECT_FALSE(tokenizer->is_special(9906));
  EXPECT_TRUE(tokenizer->is_special(128256));  // Out of range.
  EXPECT_THAT(tokenizer->eos_ids(), ElementsAre(128001u));
  // Byte tokens: the GPT-2 map puts byte 0 at "Ā" (id 188 in Llama 3).
  int single_bytes = 0;
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    single_bytes += !tokenizer->is_special(id) && tokenizer->token_bytes(id).size() == 1;
  }
  EXPECT_EQ(single_bytes, 256);
}

TEST(RealTokenizerTest, Llama3EncodesLikeReference) {
  auto tokenizer = LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_THAT(tokenizer->Encode("Hello world <|eot_id|> <think>x"),
              ElementsAre(9906, 1917, 220, 128009, 366, 27963, 29357));
  EXPECT_TRUE(tokenizer->Encode("").empty());
}

TEST(RealTokenizerTest, Qwen3NonSpecialAddedTokensStayAllowed) {
  auto tokenizer = LoadRealTokenizer("qwen3");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->vocab_size(), 151669u);
  EXPECT_THAT(tokenizer->eos_ids(), ElementsAre(151645u));
  EXPECT_FALSE(tokenizer->is_special(151667));  // <think>
  EXPECT_TRUE(tokenizer->is_special(151643));   // <|endoftext|>
  EXPECT_EQ(tokenizer->token_bytes(151667), "<think>");
  EXPECT_THAT(tokenizer->Encode("Hello world <|eot_id|> <think>x"),
              ElementsAre(9707, 1879, 82639, 68, 354, 842, 91, 29, 220, 151667, 87));
}

TEST(RealTokenizerTest, GptOssEosFromConfig) {
  auto tokenizer = LoadRealTokenizer("gptoss");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->vocab_size(), 200019u);
  EXPECT_THAT(tokenizer->eos_ids(), ElementsAre(200002u));
  EXPECT_EQ(tokenizer->token_bytes(200002), "<|return|>");
  EXPECT_THAT(tokenizer->Encode("Hello world <|eot_id|> <think>x"),
              ElementsAre(13225, 2375, 464, 91, 68, 346, 1537, 91, 29, 464, 49631, 173405));
}

TEST(RealTokenizerTest, EosOverrideReplacesConfig) {
  TokenizerOptions options;
  options.eos_override = {128009, 128001};
  options.name = "llama3-instruct";
  auto tokenizer = Tokenizer::FromDirectory(testing::TokenizerDir("llama3"), options);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ((*tokenizer)->name(), "llama3-instruct");
  EXPECT_THAT((*tokenizer)->eos_ids(), ElementsAre(128009u, 128001u));
  options.eos_override = {999999};
  auto bad = Tokenizer::FromDirectory(testing::TokenizerDir("llama3"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("eos_override"));
}

TEST(RealTokenizerTest, DecodeConcatenatesBytes) {
  auto tokenizer = LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<TokenId> ids = {9906, 1917, 128009};
  EXPECT_EQ(tokenizer->Decode(ids), "Hello world<|eot_id|>");
}

}  // namespace
}  // namespace maskd

namespace maskd {
namespace {

// Encode is const and keeps no shared scratch state: concurrent calls on one
// tokenizer (as the service makes) give the single-threaded results.
TEST(RealTokenizerTest, ConcurrentEncodesAgree) {
  auto tokenizer = testing::LoadRealTokenizer("llama3");
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<std::string> texts = {"{\"name\": \"x\", \"values\": [1, 2, 3]}",
                                          "Hello   world\n\n  ",
                                          "\xE4\xBD\xA0\xE5\xA5\xBD",
                                          std::string(300, 'a'),
                                          "<|eot_id|>don't STOP'LL",
                                          "\xFF\xFE bad bytes"};
  std::vector<std::vector<TokenId>> expected;
  for (const std::string& text : texts) expected.push_back(tokenizer->Encode(text));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches = 0;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        for (size_t i = 0; i < texts.size(); ++i) {
          if (tokenizer->Encode(texts[i]) != expected[i]) ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace maskd
