// Where a cached mask walk depends on the keys an object has had.
//
// The lexer starts a lexeme from the lexemes the parser's items allow,
// unique keys included even when the object frame has had them
// (EarleyParser::LexAllowed): that start state, and so its cached mask walk
// (mask_cache.h), is one per member position whatever keys were written,
// instead of one per set of keys (each a cold whole-trie walk). The walk
// then holds tokens the lexer reads only as keys the frame has had. Those
// are the tokens at and below the trie nodes where every lexeme still live
// is a unique key: the node table below lists them (in trie preorder, with
// the keys live there), and the matcher removes a node's subtree when none
// of its keys is allowed any more. Where the lexeme could end just before
// such a node (its parent accepts an allowed lexeme), the true lexer ends
// it there and goes on with a new lexeme: the matcher walks that subtree
// again with the parser (KeyNode::parent).
#ifndef MASKD_COMPILER_MATCHER_KEY_NODES_H_
#define MASKD_COMPILER_MATCHER_KEY_NODES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/grammar/grammar.h"
#include "compiler/grammar/lexeme_set.h"
#include "compiler/regex/lazy_dfa.h"
#include "compiler/trie/token_trie.h"

namespace maskd {

struct KeyNodeTable {
  struct KeyNode {
    uint32_t node;                  // trie node
    uint32_t end;                   // TokenTrie::subtree_end(node)
    regex::StateId parent;          // the lexer state at the node's parent
    bool parent_in_lexeme;          // a lexeme had begun at the parent (it may end there)
    uint32_t keys_begin, keys_end;  // range of `keys`: the unique keys live at node
  };
  std::vector<KeyNode> nodes;  // trie preorder
  std::vector<LexemeId> keys;
  // False when the table was cut at its size limit: the matcher must not
  // use the cached walk where keys were taken (it walks the trie instead).
  bool complete = true;

  std::span<const LexemeId> KeysAt(const KeyNode& n) const {
    return {keys.data() + n.keys_begin, n.keys_end - n.keys_begin};
  }
  size_t ByteSize() const {
    return sizeof(*this) + nodes.capacity() * sizeof(KeyNode) + keys.capacity() * sizeof(LexemeId);
  }
};

// The table for the lexer position (`state`, `in_lexeme`): every trie node
// below the root at which `state`'s walk is live and every live lexeme is a
// kUniqueKey one. At most `max_nodes` nodes (then complete = false).
KeyNodeTable BuildKeyNodeTable(const regex::LazyDfa& dfa, const Grammar& grammar,
                               const TokenTrie& trie, regex::StateId state, bool in_lexeme,
                               size_t max_nodes);

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_KEY_NODES_H_
