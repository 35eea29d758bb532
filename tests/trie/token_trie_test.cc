// TokenTrie against brute force on random vocabularies: every token is found
// exactly once, node strings spell their tokens, preorder and byte order
// hold, subtree skipping visits exactly the brute-force set, duplicates are
// kept.
#include "compiler/trie/token_trie.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace maskd {
namespace {

struct Vocab {
  std::vector<std::string> storage;
  std::vector<TokenBytes> tokens;
};

// Random tokens over a small alphabet (so prefixes are shared) including
// bytes >= 0x80 (unsigned ordering) and some repeated byte strings.
Vocab RandomVocab(std::mt19937& rng, size_t n) {
  const std::string alphabet("ab\xC3\xFF\0z", 6);
  Vocab v;
  v.storage.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string s;
    if (i > 0 && rng() % 10 == 0) {
      s = v.storage[rng() % i];  // Same bytes as an earlier token.
    } else {
      const size_t len = rng() % 7;  // Length 0 tokens are dropped.
      for (size_t k = 0; k < len; ++k) s.push_back(alphabet[rng() % alphabet.size()]);
    }
    v.storage.push_back(std::move(s));
  }
  for (size_t i = 0; i < n; ++i) {
    v.tokens.push_back(TokenBytes{static_cast<TokenId>(i), v.storage[i]});
  }
  // Input order must not matter.
  std::shuffle(v.tokens.begin(), v.tokens.end(), rng);
  return v;
}

// Walks the whole trie, reconstructing each node's string.
std::map<std::string, std::vector<TokenId>> Collect(const TokenTrie& trie, size_t* visits) {
  std::map<std::string, std::vector<TokenId>> out;
  std::string path;
  *visits = 0;
  trie.Walk([&](uint32_t node, size_t depth) {
    ++*visits;
    path.resize(depth - 1);
    path.push_back(static_cast<char>(trie.byte(node)));
    trie.ForEachToken(node, [&](TokenId id) { out[path].push_back(id); });
    return true;
  });
  return out;
}

TEST(TokenTrieTest, EveryTokenFoundExactlyOnceWithItsBytes) {
  std::mt19937 rng(1);
  for (int iteration = 0; iteration < 50; ++iteration) {
    Vocab v = RandomVocab(rng, 1 + rng() % 400);
    auto trie = TokenTrie::Build(v.tokens);
    ASSERT_TRUE(trie.ok()) << trie.status();

    std::map<std::string, std::vector<TokenId>> expected;
    std::set<std::string> prefixes;
    size_t max_len = 0;
    for (const TokenBytes& t : v.tokens) {
      if (t.bytes.empty()) continue;
      expected[std::string(t.bytes)].push_back(t.id);
      for (size_t k = 1; k <= t.bytes.size(); ++k)
        prefixes.insert(std::string(t.bytes.substr(0, k)));
      max_len = std::max(max_len, t.bytes.size());
    }
    size_t num_tokens = 0;
    for (auto& [bytes, ids] : expected) {
      std::sort(ids.begin(), ids.end());
      num_tokens += ids.size();
    }
    size_t visits = 0;
    EXPECT_EQ(Collect(*trie, &visits), expected);
    // One node per distinct non-empty prefix, plus the root.
    EXPECT_EQ(visits, prefixes.size());
    EXPECT_EQ(trie->num_nodes(), prefixes.size() + 1);
    EXPECT_EQ(trie->num_tokens(), num_tokens);
    EXPECT_EQ(trie->max_depth(), max_len);
    EXPECT_GE(trie->ByteSizeEstimate(), trie->num_nodes() * 8);

    // Find agrees, and absent strings are absent.
    for (const auto& [bytes, ids] : expected) {
      const uint32_t node = trie->Find(bytes);
      ASSERT_NE(node, TokenTrie::kNoNode);
      EXPECT_TRUE(trie->has_token(node));
      EXPECT_EQ(trie->token(node), ids.front());
      EXPECT_EQ(trie->has_duplicate_tokens(node), ids.size() > 1);
    }
    EXPECT_EQ(trie->Find(""), TokenTrie::kRoot);
    EXPECT_EQ(trie->Find("qqq"), TokenTrie::kNoNode);
  }
}

TEST(TokenTrieTest, PreorderLayoutAndByteOrder) {
  std::mt19937 rng(2);
  Vocab v = RandomVocab(rng, 500);
  auto trie = TokenTrie::Build(v.tokens);
  ASSERT_TRUE(trie.ok());
  EXPECT_EQ(trie->subtree_end(TokenTrie::kRoot), trie->num_nodes());
  for (uint32_t node = 0; node < trie->num_nodes(); ++node) {
    const uint32_t end = trie->subtree_end(node);
    ASSERT_GT(end, node);
    ASSERT_LE(end, trie->num_nodes());
    // Children tile the subtree exactly, in strictly ascending byte order.
    int last_byte = -1;
    uint32_t child = node + 1;
    for (; child < end; child = trie->subtree_end(child)) {
      ASSERT_GT(static_cast<int>(trie->byte(child)), last_byte);
      last_byte = trie->byte(child);
    }
    ASSERT_EQ(child, end);
    // Every leaf ends a token (no dead branches).
    if (end == node + 1 && node != TokenTrie::kRoot) {
      ASSERT_TRUE(trie->has_token(node));
    }
  }
}

TEST(TokenTrieTest, SkippedSubtreesMatchBruteForce) {
  std::mt19937 rng(3);
  for (int iteration = 0; iteration < 30; ++iteration) {
    Vocab v = RandomVocab(rng, 300);
    auto trie = TokenTrie::Build(v.tokens);
    ASSERT_TRUE(trie.ok());
    // A random but deterministic "lexer": refuses some prefixes.
    const uint32_t salt = rng();
    auto descend = [&](const std::string& s) {
      return (std::hash<std::string>()(s) ^ salt) % 3 != 0;
    };
    std::multiset<TokenId> visited;
    std::string path;
    trie->Walk([&](uint32_t node, size_t depth) {
      path.resize(depth - 1);
      path.push_back(static_cast<char>(trie->byte(node)));
      if (!descend(path)) return false;
      trie->ForEachToken(node, [&](TokenId id) { visited.insert(id); });
      return true;
    });
    // Brute force: a token is reached iff every prefix (itself included)
    // is accepted.
    std::multiset<TokenId> expected;
    std::set<std::pair<std::string, TokenId>> seen;
    for (const TokenBytes& t : v.tokens) {
      if (t.bytes.empty()) continue;
      bool ok = true;
      for (size_t k = 1; k <= t.bytes.size() && ok; ++k) {
        ok = descend(std::string(t.bytes.substr(0, k)));
      }
      if (ok && seen.insert({std::string(t.bytes), t.id}).second) expected.insert(t.id);
    }
    EXPECT_EQ(visited, expected);
  }
}

TEST(TokenTrieTest, DuplicatesAndDegenerateInputs) {
  const std::vector<TokenBytes> tokens = {{7, "ab"}, {3, "ab"}, {9, "ab"}, {3, "ab"},
                                          {1, ""},   {2, "a"},  {5, "b"}};
  auto trie = TokenTrie::Build(tokens);
  ASSERT_TRUE(trie.ok());
  const uint32_t ab = trie->Find("ab");
  std::vector<TokenId> ids;
  trie->ForEachToken(ab, [&](TokenId id) { ids.push_back(id); });
  EXPECT_EQ(ids, (std::vector<TokenId>{3, 7, 9}));  // Repeated (3, "ab") kept once.
  EXPECT_EQ(trie->num_tokens(), 5u);                // Empty token dropped.
  EXPECT_FALSE(trie->has_token(TokenTrie::kRoot));

  auto empty = TokenTrie::Build({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->num_nodes(), 1u);
  size_t visits = 0;
  empty->Walk([&](uint32_t, size_t) { return ++visits, true; });
  EXPECT_EQ(visits, 0u);

  const std::vector<TokenBytes> bad = {{0x80000000u, "x"}};
  EXPECT_FALSE(TokenTrie::Build(bad).ok());
}

}  // namespace
}  // namespace maskd
