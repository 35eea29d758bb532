#include "compiler/trie/token_trie.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace maskd {

absl::StatusOr<TokenTrie> TokenTrie::Build(std::span<const TokenBytes> tokens) {
  // Sorting (bytes, id) puts every string right after its prefixes and gives
  // children in ascending byte order (string_view compares bytes unsigned),
  // so one pass with a stack of the current path emits preorder directly.
  std::vector<uint32_t> order;
  order.reserve(tokens.size());
  for (uint32_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].id > kMaxTokenId) {
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", tokens[i].id, " is too large for the token trie"));
    }
    if (!tokens[i].bytes.empty()) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const int c = tokens[a].bytes.compare(tokens[b].bytes);
    return c != 0 ? c < 0 : tokens[a].id < tokens[b].id;
  });

  TokenTrie trie;
  trie.nodes_.reserve(order.size() * 2 + 1);
  trie.nodes_.push_back(Node{kNoTokenField, 0});
  std::vector<uint32_t> path{kRoot};  // path[d] = node at depth d.
  std::string_view prev;
  auto set_end = [&](uint32_t node) {
    Node& n = trie.nodes_[node];
    n.byte_and_end = (n.byte_and_end & 0xFFu) | (static_cast<uint32_t>(trie.nodes_.size()) << 8);
  };
  for (uint32_t i : order) {
    const std::string_view bytes = tokens[i].bytes;
    const TokenId id = tokens[i].id;
    size_t common = 0;
    const size_t limit = std::min(bytes.size(), prev.size());
    while (common < limit && bytes[common] == prev[common]) ++common;
    while (path.size() - 1 > common) {
      set_end(path.back());
      path.pop_back();
    }
    for (size_t d = common; d < bytes.size(); ++d) {
      if (trie.nodes_.size() >= kMaxNodes) {
        return absl::InvalidArgumentError(absl::StrCat("token trie exceeds ", kMaxNodes, " nodes"));
      }
      path.push_back(static_cast<uint32_t>(trie.nodes_.size()));
      trie.nodes_.push_back(Node{kNoTokenField, static_cast<uint8_t>(bytes[d])});
    }
    Node& node = trie.nodes_[path.back()];
    if (node.token == kNoTokenField) {
      node.token = id;
      ++trie.num_tokens_;
    } else if ((node.token & kIdMask) != id &&
               (trie.extra_ids_.empty() ||
                trie.extra_ids_.back() != std::pair<uint32_t, TokenId>{path.back(), id})) {
      node.token |= kDuplicateBit;
      trie.extra_ids_.emplace_back(path.back(), id);
      ++trie.num_tokens_;
    }
    trie.max_depth_ = std::max(trie.max_depth_, bytes.size());
    prev = bytes;
  }
  while (!path.empty()) {
    set_end(path.back());
    path.pop_back();
  }
  trie.nodes_.shrink_to_fit();
  return trie;
}

uint32_t TokenTrie::Find(std::string_view bytes) const {
  if (nodes_.empty()) return kNoNode;
  uint32_t node = kRoot;
  for (char c : bytes) {
    const uint8_t b = static_cast<uint8_t>(c);
    const uint32_t end = subtree_end(node);
    uint32_t child = node + 1;
    while (child < end && byte(child) < b) child = subtree_end(child);
    if (child >= end || byte(child) != b) return kNoNode;
    node = child;
  }
  return node;
}

}  // namespace maskd
