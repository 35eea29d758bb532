// The vocabulary's token byte strings as a trie laid out FLAT in depth-first
// preorder, children in ascending byte order. Each node is 8 bytes: its byte,
// the id of a token ending there (if any) and the index one past its subtree,
// so a mask walk that finds a subtree dead (the lexer rejects the byte) skips
// it in O(1) by jumping to that index.
//
// Tokens with identical bytes are all kept: the node holds the smallest id and
// a side table the others.
#ifndef MASKD_COMPILER_TRIE_TOKEN_TRIE_H_
#define MASKD_COMPILER_TRIE_TOKEN_TRIE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"  // TokenId (header only).

namespace maskd {

struct TokenBytes {
  TokenId id;
  std::string_view bytes;
};

class TokenTrie {
 public:
  static constexpr uint32_t kNoNode = 0xFFFFFFFFu;
  // Largest node count the 24-bit subtree-end field can address.
  static constexpr size_t kMaxNodes = (size_t{1} << 24) - 1;
  // Token ids must be below this (the top bit of the node's id field flags
  // duplicates).
  static constexpr TokenId kMaxTokenId = 0x7FFFFFFEu;

  // Builds the trie of `tokens` (the caller leaves out special tokens).
  // Tokens with empty bytes are dropped (they can never be emitted usefully);
  // repeated (id, bytes) pairs count once. InvalidArgument when an id is too
  // large or the trie would exceed kMaxNodes.
  static absl::StatusOr<TokenTrie> Build(std::span<const TokenBytes> tokens);

  TokenTrie() = default;

  // Node 0 is the root (the empty string, no byte, no token).
  static constexpr uint32_t kRoot = 0;
  size_t num_nodes() const { return nodes_.size(); }
  uint8_t byte(uint32_t node) const { return static_cast<uint8_t>(nodes_[node].byte_and_end); }
  // One past the last node of `node`'s subtree = its next sibling (or an
  // ancestor's next sibling).
  uint32_t subtree_end(uint32_t node) const { return nodes_[node].byte_and_end >> 8; }
  bool has_token(uint32_t node) const { return nodes_[node].token != kNoTokenField; }
  // The smallest id of the tokens ending at `node`; has_token(node) required.
  TokenId token(uint32_t node) const { return nodes_[node].token & kIdMask; }
  bool has_duplicate_tokens(uint32_t node) const {
    return has_token(node) && (nodes_[node].token & kDuplicateBit) != 0;
  }
  // Calls f(TokenId) for every token ending at `node`, smallest id first.
  template <typename F>
  void ForEachToken(uint32_t node, F&& f) const {
    if (!has_token(node)) return;
    f(token(node));
    if (!has_duplicate_tokens(node)) return;
    auto it = std::lower_bound(extra_ids_.begin(), extra_ids_.end(),
                               std::pair<uint32_t, TokenId>{node, 0});
    for (; it != extra_ids_.end() && it->first == node; ++it) f(it->second);
  }

  // Calls f(node) for each child of the root, in byte order.
  template <typename F>
  void ForEachRootChild(F&& f) const {
    ForEachChild(kRoot, std::forward<F>(f));
  }
  // Calls f(child) for each child of `node`, in byte order.
  template <typename F>
  void ForEachChild(uint32_t node, F&& f) const {
    const uint32_t end = node == kRoot ? static_cast<uint32_t>(nodes_.size()) : subtree_end(node);
    for (uint32_t c = node + 1; c < end; c = subtree_end(c)) f(c);
  }
  // Nodes in `node`'s subtree, itself included (all of them for the root).
  uint32_t subtree_size(uint32_t node) const {
    return (node == kRoot ? static_cast<uint32_t>(nodes_.size()) : subtree_end(node)) - node;
  }

  // The node whose path spells `bytes` (kRoot for ""), or kNoNode.
  uint32_t Find(std::string_view bytes) const;

  // Depth-first preorder walk over all nodes but the root. Calls
  // visit(node, depth) -> bool, depth = length of the node's byte string
  // (1 for the root's children); returning false skips the node's subtree.
  // A caller keeping per-depth state (lexer states) indexes it by depth.
  template <typename Visit>
  void Walk(Visit&& visit) const {
    if (nodes_.size() > 1) WalkBelow(kRoot, std::forward<Visit>(visit));
  }

  // The same walk over the nodes strictly below `root`, depth counted from
  // it (1 for root's children).
  template <typename Visit>
  void WalkBelow(uint32_t root, Visit&& visit) const {
    const uint32_t n = root == kRoot ? static_cast<uint32_t>(nodes_.size()) : subtree_end(root);
    // ends[d] = subtree end of the node at depth d on the current path.
    absl::InlinedVector<uint32_t, 64> ends(max_depth_ + 1);
    ends[0] = n;
    size_t depth = 0;  // Depth of the parent of node i.
    for (uint32_t i = root + 1; i < n;) {
      while (i >= ends[depth]) --depth;
      if (visit(i, depth + 1)) {
        ends[++depth] = subtree_end(i);
        ++i;
      } else {
        i = subtree_end(i);
      }
    }
  }

  size_t num_tokens() const { return num_tokens_; }
  // Length in bytes of the longest token.
  size_t max_depth() const { return max_depth_; }
  size_t ByteSizeEstimate() const {
    return sizeof(TokenTrie) + nodes_.capacity() * sizeof(Node) +
           extra_ids_.capacity() * sizeof(std::pair<uint32_t, TokenId>);
  }

 private:
  static constexpr uint32_t kNoTokenField = 0xFFFFFFFFu;
  static constexpr uint32_t kDuplicateBit = 0x80000000u;
  static constexpr uint32_t kIdMask = 0x7FFFFFFFu;

  struct Node {
    uint32_t token;         // kNoTokenField, or id | kDuplicateBit if more ids.
    uint32_t byte_and_end;  // Byte in bits 0-7, subtree end in bits 8-31.
  };

  std::vector<Node> nodes_;
  std::vector<std::pair<uint32_t, TokenId>> extra_ids_;  // (node, id), sorted.
  size_t num_tokens_ = 0;
  size_t max_depth_ = 0;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_TRIE_TOKEN_TRIE_H_
