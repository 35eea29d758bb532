// What each grammar handle was compiled from (its CompileJob: spec and
// options), for the open ops that need more than the compiled grammar: token
// healing by handle compiles the handle's spec again with a required prefix,
// and a reasoning budget needs the handle's reasoning_end_marker. Recorded
// by CompileHandler for every compile it answers (cache hits included), so a
// handle that opens on this replica usually has its recipe here.
//
// Bounded by the bytes of the specs it holds (least recently used out), and
// charged to the memory budget (MemoryKind::kRecipes) when one is set: a
// recipe the budget refuses evicts older recipes, else is not kept. A
// recipe can be gone while its grammar is still cached, and then such an
// open fails with NOT_FOUND asking for an inline compile, as for a handle
// this replica never compiled.
#ifndef MASKD_SERVICE_GRAMMAR_RECIPES_H_
#define MASKD_SERVICE_GRAMMAR_RECIPES_H_

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "service/compile_request.h"
#include "service/memory_budget.h"

namespace maskd {

class GrammarRecipes {
 public:
  explicit GrammarRecipes(size_t max_bytes = size_t{64} << 20) : max_bytes_(max_bytes) {}
  ~GrammarRecipes();

  GrammarRecipes(const GrammarRecipes&) = delete;
  GrammarRecipes& operator=(const GrammarRecipes&) = delete;

  // Charges the recipes kept from now on to `budget` (outlives this; may be
  // null). Set before the first Record.
  void SetBudget(MemoryBudget* budget) { budget_ = budget; }

  // Keeps `job` under job.handle (replacing an older copy).
  void Record(const CompileJob& job);
  // The job compiled under `handle`, or null.
  std::shared_ptr<const CompileJob> Find(const std::string& handle);

  size_t bytes() const;
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const CompileJob> job;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;  // its handle in lru_
  };
  static size_t JobBytes(const CompileJob& job);
  // Drops the least recently used recipe; false when there is none.
  bool EvictOldestLocked();

  const size_t max_bytes_;
  MemoryBudget* budget_ = nullptr;
  mutable std::mutex mu_;
  size_t bytes_ = 0;                                 // guarded by mu_
  std::list<std::string> lru_;                       // most recent first; guarded by mu_
  absl::flat_hash_map<std::string, Entry> entries_;  // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_GRAMMAR_RECIPES_H_
