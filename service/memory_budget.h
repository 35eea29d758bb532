// The process-wide memory budget (--memory_budget_bytes): what sessions,
// sequences (their parser state), mask dictionaries, compiles in flight,
// the specs kept for healing and the compile cache may hold together. Each draws on it before it
// grows; a charge that would pass the limit is refused with RESOURCE_EXHAUSTED naming the budget,
// what asked and what holds the memory, so only that op (or compile) fails and every other stream
// goes on.
//
// The compile cache is not charged here: it is measured (its own byte count
// plus the oversized grammars held outside it, see GrammarStore) through a
// `cache_bytes` source, and it yields first: a refused charge first asks the
// cache's reclaimer to evict least recently used grammars, and only then
// refuses. Grammars are recompiled on demand; live sequences are not.
//
// Amounts are the engine's own estimates of its heap use (vector capacities,
// automata sizes), not allocator truth: the budget is set below the cgroup
// limit (DefaultMemoryBudgetBytes) to leave room for what is not counted
// (gRPC buffers, allocator overhead, fragmentation).
#ifndef MASKD_SERVICE_MEMORY_BUDGET_H_
#define MASKD_SERVICE_MEMORY_BUDGET_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace maskd {

enum class MemoryKind {
  kSessions,      // per-stream bookkeeping
  kSequences,     // each open sequence's matcher: parser sets, rollback history
  kDictionaries,  // masks stored in streams' mask dictionaries
  kCompiles,      // compiles running now (an estimate per compile)
  kRecipes,       // specs kept for token healing by handle (GrammarRecipes)
  kCache,         // compiled grammars (measured, not charged; see above)
};
inline constexpr int kMemoryKinds = 6;
// "sessions", "sequences", ...: the metric label and the word in errors.
const char* MemoryKindName(MemoryKind kind);

class MemoryBudget {
 public:
  // `limit_bytes` 0: no limit (charges are counted, never refused).
  explicit MemoryBudget(size_t limit_bytes) : limit_(limit_bytes) {}

  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Where the cache's bytes come from, and how to make it give back at least
  // `bytes` (returns what it freed). Set once, before any charge.
  void SetCache(std::function<size_t()> cache_bytes, std::function<size_t(size_t bytes)> reclaim);

  // Takes `bytes` for `kind` if the total stays within the limit (after
  // evicting cached grammars if needed); otherwise RESOURCE_EXHAUSTED naming
  // `what` (e.g. "sequence 7's parser state"), the budget and its use.
  absl::Status TryCharge(MemoryKind kind, size_t bytes, absl::string_view what);
  // Takes `bytes` whatever the total (memory that is already allocated).
  void Charge(MemoryKind kind, size_t bytes);
  void Release(MemoryKind kind, size_t bytes);

  // Evicts cached grammars until the total is within the limit again (the
  // cache grew, or other kinds did): what the cache gets is what is left.
  void FitCache();

  size_t limit() const { return limit_; }
  size_t used(MemoryKind kind) const;
  size_t used_total() const;
  // Charges refused so far, by kind.
  uint64_t refusals(MemoryKind kind) const {
    return refusals_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }

 private:
  size_t charged_total() const;
  std::string Usage() const;

  const size_t limit_;
  std::array<std::atomic<size_t>, kMemoryKinds> charged_{};
  std::array<std::atomic<uint64_t>, kMemoryKinds> refusals_{};
  std::function<size_t()> cache_bytes_;
  std::function<size_t(size_t)> reclaim_;
  // Serializes refusal decisions with reclaims, so two charges do not both
  // pass on the same free bytes (charges that fit take no lock).
  std::mutex reclaim_mu_;
};

// The default --memory_budget_bytes: 3/5 of the cgroup's memory limit
// (cgroup v2 `memory.max`, else v1 `memory/memory.limit_in_bytes`, under
// `cgroup_root`), else 3/5 of physical memory. The rest is for what the
// budget does not count (gRPC buffers, allocator slack, stacks, the
// tokenizers): at the budget's peak in memory_budget_e2e_test RSS had grown
// 1.50x what the budget charged, so a budget of 3/5 peaks near 0.9 of the
// limit.
size_t DefaultMemoryBudgetBytes(const std::string& cgroup_root = "/sys/fs/cgroup");
// The limit read from a cgroup root (0: none found, or "max").
size_t CgroupMemoryLimitBytes(const std::string& cgroup_root);

}  // namespace maskd

#endif  // MASKD_SERVICE_MEMORY_BUDGET_H_
