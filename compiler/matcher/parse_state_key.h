// Names a parse state by what its future depends on, so that masks can be
// cached across positions and sequences (state_mask_cache.h).
//
// Why it is exact: the future of an Earley parser (every later Scan, the sets
// it builds, which lexemes they allow) reads the top set's items, and reads an
// older set s only when an item whose origin is s completes its nonterminal A:
// then it looks at the items of s waiting on A, and, for those predicted in s
// (origin s), at the items of s waiting on their left-hand sides, and so on
// (Leo's chains read the same items). So an older set enters the name only as
// the CONTEXT (s, A): the items of s that completing A there can reach, each
// with its position and, for an origin before s, the context it completes
// into. Contexts are interned (equal names, equal futures), so the name of
// the top set does not grow with the output: after `a+b+c` in arithmetic,
// the items still waiting for `b`'s trailing blanks are out of every context.
// Two states with the same name build the same sets up to the renaming of
// origins by their contexts, so every mask walk from them allows the same
// tokens (duplicates of an item under the renaming do not change which
// lexemes and bytes are viable). Completed items are left out: later sets
// never read them (only acceptance does, and EOS is not part of a cached
// mask), which also lets a context that only completes items and then one
// older context BE that context (Leo's chains; parse_state_key.cc).
#ifndef MASKD_COMPILER_MATCHER_PARSE_STATE_KEY_H_
#define MASKD_COMPILER_MATCHER_PARSE_STATE_KEY_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/grammar/earley_parser.h"
#include "compiler/matcher/state_mask_cache.h"

namespace maskd {

class ParseStateKeyer {
 public:
  // "No name": contexts nested deeper than kMaxNesting, or the cache's
  // budget is spent.
  static constexpr uint32_t kNoKey = 0;
  static constexpr size_t kMaxNesting = 512;

  // The name of the parser's state (its top set and the contexts it can
  // complete into); interned in `cache`.
  uint32_t Key(const EarleyParser& parser, const StateMaskCache& cache);

  // Sets from index `set` on were popped (Rollback, Reset): forgets their
  // contexts. Sets below never change while they stay.
  void Forget(size_t set) {
    if (memo_.size() > set) memo_.resize(set);
  }

  size_t HeldBytesApprox() const {
    size_t bytes = memo_.capacity() * sizeof(memo_[0]);
    for (const auto& m : memo_) bytes += m.capacity() * sizeof(m[0]);
    return bytes;
  }

 private:
  // The id of context (set, nt), kNoKey when it cannot be named.
  uint32_t Context(const EarleyParser& parser, const StateMaskCache& cache, uint32_t set,
                   NonterminalId nt, size_t nesting);

  // Per set index: the contexts named so far.
  std::vector<std::vector<std::pair<NonterminalId, uint32_t>>> memo_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_PARSE_STATE_KEY_H_
