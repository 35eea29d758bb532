#include "compiler/matcher/walk_memo.h"

#include <algorithm>
#include <cassert>

namespace maskd {
namespace {

// Origin codes in a set's key: absolute indices sit below kWalkSetBit (a
// parser holds far fewer than 2^31 sets: EarleyOptions::max_total_items).
constexpr uint32_t kWalkSetBit = 0x80000000u;
constexpr uint32_t kThisSet = 0xFFFFFFFFu;
constexpr uint32_t kCompletedInWalk = 0xFFFFFFFEu;

}  // namespace

void WalkMemo::Begin(size_t base_depth) {
  base_depth_ = base_depth;
  depth_ids_.assign(1, kBaseSet);
  ids_.clear();
  key_bytes_ = 0;
  steps_.clear();
}

uint32_t WalkMemo::Intern(const EarleyParser& parser) {
  const size_t depth = parser.Depth();
  assert(depth > base_depth_);
  key_.clear();
  const Grammar& grammar = parser.grammar();
  parser.ForEachTopItem([&](uint32_t pos, uint32_t origin) {
    uint32_t code;
    if (origin <= base_depth_) {
      code = origin;
    } else if (grammar.pos_symbol(pos) == Grammar::kEndOfRule) {
      // A completed item did its work while its set was built: later scans
      // and completions look only at items waiting on a symbol. Its origin
      // matters only to acceptance, and that is origin 0, never a walk set.
      // Without this, a loop through a nonterminal (a string's characters)
      // would name every set after the one before it and never meet a
      // known step.
      code = kCompletedInWalk;
    } else if (origin == depth) {
      code = kThisSet;
    } else {
      code = kWalkSetBit | depth_ids_[origin - base_depth_];
    }
    key_.push_back(uint64_t{pos} << 32 | code);
  });
  std::sort(key_.begin(), key_.end());
  const uint32_t fresh = static_cast<uint32_t>(ids_.size()) + 1;  // 0 is the base
  const auto [it, inserted] = ids_.try_emplace(key_, fresh);
  if (inserted) key_bytes_ += MallocBlockBytes(key_.size() * sizeof(uint64_t));
  const uint32_t id = it->second;
  const size_t slot = depth - base_depth_;
  if (depth_ids_.size() <= slot) depth_ids_.resize(slot + 1);
  depth_ids_[slot] = id;
  return id;
}

}  // namespace maskd
