// TokenTrie over a real vocabulary (the non-special tokens of Llama 3):
// every token is reachable exactly once by a walk, with its exact
// bytes, and Find agrees. Fails when a tokenizer is missing.
#include <chrono>
#include <string>
#include <vector>

#include "compiler/tokenizer/tokenizer.h"
#include "compiler/trie/token_trie.h"
#include "gtest/gtest.h"
#include "tests/support/real_tokenizer.h"

namespace maskd {
namespace {

class RealVocabTrieTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealVocabTrieTest, EveryTokenReachableOnceWithItsBytes) {
  auto tokenizer = testing::LoadRealTokenizer(GetParam());
  ASSERT_NE(tokenizer, nullptr);
  std::vector<TokenBytes> tokens;
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    if (!tokenizer->is_special(id)) tokens.push_back({id, tokenizer->token_bytes(id)});
  }
  ASSERT_GT(tokens.size(), 100000u);

  const auto start = std::chrono::steady_clock::now();
  auto trie = TokenTrie::Build(tokens);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(trie.ok()) << trie.status();
  RecordProperty("build_ms", std::to_string(ms));
  RecordProperty("nodes", std::to_string(trie->num_nodes()));

  std::vector<int> seen(tokenizer->vocab_size(), 0);
  std::string path;
  size_t mismatches = 0;
  trie->Walk([&](uint32_t node, size_t depth) {
    path.resize(depth - 1);
    path.push_back(static_cast<char>(trie->byte(node)));
    trie->ForEachToken(node, [&](TokenId id) {
      ++seen[id];
      if (tokenizer->token_bytes(id) != path) ++mismatches;
    });
    return true;
  });
  EXPECT_EQ(mismatches, 0u);
  size_t expected = 0;
  for (const TokenBytes& t : tokens) {
    if (t.bytes.empty()) continue;
    ++expected;
    ASSERT_EQ(seen[t.id], 1) << "token " << t.id;
  }
  EXPECT_EQ(trie->num_tokens(), expected);
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    if (tokenizer->is_special(id)) {
      ASSERT_EQ(seen[id], 0) << "special token " << id << " in trie";
    }
  }
  for (size_t i = 0; i < tokens.size(); i += 997) {
    const uint32_t node = trie->Find(tokens[i].bytes);
    ASSERT_NE(node, TokenTrie::kNoNode);
    bool found = false;
    trie->ForEachToken(node, [&](TokenId id) { found = found || id == tokens[i].id; });
    EXPECT_TRUE(found) << "token " << tokens[i].id;
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, RealVocabTrieTest, ::testing::Values("llama3"));

}  // namespace
}  // namespace maskd
