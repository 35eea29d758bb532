#include "compiler/tokenizer/bpe_merger.h"

#include <limits>
#include <queue>
#include <tuple>

namespace maskd::tokenizer_internal {
namespace {

constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();
// Below this many symbols a linear scan for the best pair beats a heap.
constexpr size_t kShortPiece = 48;

}  // namespace

void BpeMerger::Merge(std::vector<Symbol>& symbols) const {
  if (symbols.size() < 2) return;
  if (symbols.size() < kShortPiece) {
    MergeShort(symbols);
  } else {
    MergeLong(symbols);
  }
}

void BpeMerger::MergeShort(std::vector<Symbol>& symbols) const {
  // ranks[i]: rank of the pair (symbols[i], symbols[i + 1]).
  std::vector<uint32_t> ranks(symbols.size() - 1);
  std::vector<TokenId> merged(symbols.size() - 1);
  auto update = [&](size_t i) {
    const Merge_* m = Find(symbols[i].id, symbols[i + 1].id);
    ranks[i] = m == nullptr ? kNoRank : m->rank;
    merged[i] = m == nullptr ? kUnknownSymbol : m->merged;
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i) update(i);
  while (!ranks.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < ranks.size(); ++i) {
      if (ranks[i] < ranks[best]) best = i;  // Strict: the leftmost wins ties.
    }
    if (ranks[best] == kNoRank) break;
    symbols[best].id = merged[best];
    symbols[best].end = symbols[best + 1].end;
    symbols.erase(symbols.begin() + static_cast<ptrdiff_t>(best) + 1);
    ranks.erase(ranks.begin() + static_cast<ptrdiff_t>(best));
    merged.erase(merged.begin() + static_cast<ptrdiff_t>(best));
    if (best > 0) update(best - 1);
    if (best < ranks.size()) update(best);
  }
}

void BpeMerger::MergeLong(std::vector<Symbol>& symbols) const {
  // Symbols stay in place; merged-away ones are unlinked. A queued pair is
  // stale once either side changed, which the ids it recorded reveal.
  const size_t n = symbols.size();
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? kNone : i - 1;
    next[i] = i + 1 == n ? kNone : i + 1;
  }
  // (rank, left index, left id, right id, merged id); the smallest first.
  using Entry = std::tuple<uint32_t, size_t, TokenId, TokenId, TokenId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  auto push = [&](size_t i) {
    if (i == kNone || next[i] == kNone) return;
    const Merge_* m = Find(symbols[i].id, symbols[next[i]].id);
    if (m != nullptr) queue.emplace(m->rank, i, symbols[i].id, symbols[next[i]].id, m->merged);
  };
  for (size_t i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    const auto [rank, i, left_id, right_id, merged_id] = queue.top();
    queue.pop();
    if (!alive[i] || next[i] == kNone) continue;
    const size_t j = next[i];
    if (symbols[i].id != left_id || symbols[j].id != right_id) continue;
    symbols[i].id = merged_id;
    symbols[i].end = symbols[j].end;
    alive[j] = false;
    next[i] = next[j];
    if (next[j] != kNone) prev[next[j]] = i;
    push(prev[i]);
    push(i);
  }
  size_t out = 0;
  for (size_t i = 0; i != kNone && i < n; i = next[i]) symbols[out++] = symbols[i];
  symbols.resize(out);
}

}  // namespace maskd::tokenizer_internal
