// Memo of the parser steps of one mask walk, so that a character-level
// grammar (every byte its own lexeme: GBNF's arithmetic, c) does not run the
// Earley parser at every trie node.
//
// Why it is exact: an Earley set's future (which lexemes every later Scan
// allows, and the sets it builds) is a function of its items and of the sets
// its items' origins name, recursively. Within one walk the sets at or below
// the walk's base depth never change, so a set pushed during the walk is
// named by its items with each origin written as: the absolute set index
// (at or below the base), "this set", or the id of the walk set it names.
// Two sets with the same id therefore behave the same under every byte
// string, and a step (set id, lexer state, byte) -> (lexer state, set id) or
// "not viable" found once holds wherever the walk meets it again. Grammars
// with unique keys carry object frames beside the items and are not memoized.
#ifndef MASKD_COMPILER_MATCHER_WALK_MEMO_H_
#define MASKD_COMPILER_MATCHER_WALK_MEMO_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/grammar/earley_parser.h"
#include "compiler/grammar/heap_bytes.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

class WalkMemo {
 public:
  // The id of the set the walk starts from.
  static constexpr uint32_t kBaseSet = 0;

  struct Step {
    regex::StateId lexer;  // regex::LazyDfa::kDead: the byte is not viable
    uint32_t set;
  };

  // Starts a walk whose parser stands at `base_depth`; forgets the last walk.
  void Begin(size_t base_depth);

  // The id of the parser's top set, which the walk pushed (every set between
  // the base and it was named by Intern before); remembers it for its depth.
  uint32_t Intern(const EarleyParser& parser);

  // Approximate heap bytes held (Matcher::MemoryBytes counts them): the
  // buffers with malloc's block overhead (heap_bytes.h), the hash maps'
  // slots and control bytes, and the interned keys (key_bytes_).
  size_t HeldBytesApprox() const {
    return VectorHeapBytes(depth_ids_) + VectorHeapBytes(key_) +
           MallocBlockBytes(ids_.capacity() *
                            (sizeof(std::vector<uint64_t>) + sizeof(uint32_t) + 1)) +
           key_bytes_ + MallocBlockBytes(steps_.capacity() * (sizeof(Key) + sizeof(Step) + 1));
  }

  const Step* Find(uint32_t set, regex::StateId lexer, uint8_t byte) const {
    auto it = steps_.find(Key{set, lexer, byte});
    return it == steps_.end() ? nullptr : &it->second;
  }
  void Put(uint32_t set, regex::StateId lexer, uint8_t byte, Step step) {
    steps_.emplace(Key{set, lexer, byte}, step);
  }

 private:
  struct Key {
    uint32_t set;
    regex::StateId lexer;
    uint8_t byte;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.set, k.lexer, k.byte);
    }
  };

  size_t base_depth_ = 0;
  // Per depth above the base (index depth - base_depth), the id of the set
  // the walk's current path holds there.
  std::vector<uint32_t> depth_ids_;
  absl::flat_hash_map<std::vector<uint64_t>, uint32_t> ids_;
  absl::flat_hash_map<Key, Step> steps_;
  size_t key_bytes_ = 0;       // the heap of the keys in ids_
  std::vector<uint64_t> key_;  // scratch
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_WALK_MEMO_H_
