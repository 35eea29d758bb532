// The replica's compiled grammars: a byte-bounded, sharded LRU cache keyed by
// grammar handle, with single-flight compiles on a dedicated thread pool.
//
// Callers wait without holding a thread (CompileAsync). A caller is answered when the grammar is
// ready, at its time limit (the compile goes on, up to the server's limit, and fills the cache for
// the next caller) or at its deadline. A compile that every caller has left (deadline passed, call
// cancelled, stream gone) is cancelled: the engine stops at its next deadline check.
//
// Admission: each new compile (not a cache hit, not a join of one in flight)
// takes a place in the compile queue, in all and per tenant, until it
// finishes; beyond either bound the call fails with RESOURCE_EXHAUSTED
// naming the flag.
#ifndef MASKD_SERVICE_GRAMMAR_STORE_H_
#define MASKD_SERVICE_GRAMMAR_STORE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/sharded_lru_cache.h"
#include "compiler/matcher/matcher.h"
#include "service/compile_request.h"
#include "service/deadline_timer.h"
#include "service/memory_budget.h"
#include "service/service_metrics.h"
#include "service/thread_pool.h"

namespace maskd {

struct GrammarStoreOptions {
  // Memory budget of the cache (sum of the grammars' SizeBytes()).
  size_t max_bytes = size_t{1} << 30;
  size_t num_shards = 16;
  // Threads that run compiles (0: one per core).
  size_t compile_threads = 0;
  // How long a deterministic compile error answers repeats of its request.
  absl::Duration error_ttl = absl::Seconds(5);
  // Compiles queued or running at once, in all (--max_queued_compiles) and
  // per tenant (--max_queued_compiles_per_tenant).
  size_t max_queued_compiles = 256;
  size_t max_queued_compiles_per_tenant = 64;
  // How often grammars' growth since they were cached (lazy DFA states,
  // mask caches) is charged to the budget, evicting what no longer fits
  // (ShardedLruCache::Recharge). Zero: never.
  absl::Duration recharge_interval = absl::Seconds(1);
  // A grammar larger than a cache shard's budget (1/16 of max_bytes) is not
  // cached; it is held this long after its compile or last open so its
  // handle still opens (at most max_oversized_held of them, oldest out).
  absl::Duration oversized_hold = absl::Seconds(60);
  size_t max_oversized_held = 4;
  // Most bytes of cached grammars charged to one tenant (the tenant that
  // last compiled each, cache hits included); 0: no bound. Past it, that
  // tenant's own least recently used grammars no sequence uses are evicted
  // after each of its compiles (never another tenant's; nothing is
  // refused). Whatever the bound, a shard over its budget, and the memory
  // budget's reclaim, evict first the grammars of tenants holding more than
  // their fair share (max_bytes / tenants holding grammars, or this bound
  // if lower).
  size_t max_bytes_per_tenant = 0;
  // The process-wide memory budget (may be null): compiles in flight draw
  // on it, the cache and held grammars count in it and give way first.
  MemoryBudget* budget = nullptr;
};

// What a compile in flight is charged to the memory budget before it runs:
// an estimate (a compile's peak is not known in advance), 1 MiB plus 64 bytes
// per spec byte (a 1 MiB schema: 65 MiB).
size_t CompileMemoryEstimate(size_t spec_bytes);

struct CompiledHandle {
  std::shared_ptr<const CompiledGrammar> grammar;
  // This call did not compile: the grammar (or error) came from the cache or
  // from a compile another caller started.
  bool cache_hit = false;
  // Time this call waited for the grammar.
  absl::Duration wait_time;
};

// What a compile caller gets, exactly once: the grammar or an error, and
// whether the error is about the call (its deadline passed, it was
// cancelled, the queue was full) rather than the spec.
using CompileCallback =
    absl::AnyInvocable<void(absl::StatusOr<CompiledHandle> result, bool about_call) &&>;

// One caller's wait for a compile.
class CompileWait {
 public:
  virtual ~CompileWait() = default;
  // The caller goes away: its callback gets CANCELLED now (unless it was
  // answered already), and the compile is cancelled if no one else waits.
  virtual void Abandon() = 0;
};

class GrammarStore {
 public:
  // `metrics` must outlive the store.
  GrammarStore(const GrammarStoreOptions& options, ServiceMetrics* metrics);
  ~GrammarStore();

  // The grammar for `job`, compiled against `tokenizer` unless cached (or in
  // flight), handed to `done` on this thread (cached) or another (the
  // compile's, or the timer's). Errors: the engine's (INVALID_ARGUMENT,
  // UNIMPLEMENTED, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED past the server's
  // time limit... with its message); DEADLINE_EXCEEDED "time limit" when
  // job.time_limit passes first; about the call: DEADLINE_EXCEEDED when
  // `deadline` (the RPC's) passes first, RESOURCE_EXHAUSTED when the queue
  // of `tenant` or the whole queue is full, CANCELLED after Abandon.
  std::shared_ptr<CompileWait> CompileAsync(const CompileJob& job,
                                            std::shared_ptr<const Tokenizer> tokenizer,
                                            const std::string& tenant, absl::Time deadline,
                                            CompileCallback done);

  // The cached grammar for `handle`, or null when this replica does not hold
  // it (never compiled here, evicted, or its compile failed).
  std::shared_ptr<const CompiledGrammar> Find(const std::string& handle);

  // `grammar` (the cached grammar for `handle`, in use by a sequence) may
  // have grown: charge its size now, evicting what no longer fits, in its
  // cache shard and in the memory budget. Cheap (a few locks); the session
  // calls it after each step for the grammars that step used.
  void ChargeGrowth(const std::string& handle);

  // Bytes of cached and held grammars, in all and by the tenant whose
  // compile put each there (tenant of the first compile of a handle).
  size_t cached_bytes() const;
  absl::flat_hash_map<std::string, size_t> CachedBytesByTenant();
  // Grammars evicted to keep each tenant within max_bytes_per_tenant.
  absl::flat_hash_map<std::string, uint64_t> TenantQuotaEvictions() const;

  CacheStats stats() const { return cache_->stats(); }
  // Compiles queued or running now (all tenants).
  size_t queued_compiles() const;
  // Tenants with a compile queued or running now.
  size_t tenants_with_queued_compiles() const;

  // The server is stopping (SIGTERM): every caller still waiting for a
  // compile is answered UNAVAILABLE now, every compile queued or running is
  // cancelled (a running one stops at the engine's next check, its outcome
  // not cached), and later calls are answered UNAVAILABLE without starting
  // one. Idempotent.
  void BeginShutdown();

 private:
  class Wait;

  // Keeps an oversized grammar for options_.oversized_hold.
  void Hold(const std::string& handle, std::shared_ptr<const CompiledGrammar> grammar);
  // The held grammar for `handle` (its hold renewed), or null.
  std::shared_ptr<const CompiledGrammar> FindHeld(const std::string& handle);
  void RechargeLoop();
  // `tenant` asked for `handle` (compiled or hit): the grammar is charged
  // to it from now on, and counts as used now.
  void NoteOwner(const std::string& handle, const std::string& tenant);
  // Evicts `tenant`'s least recently used grammars no one holds until it is
  // within max_bytes_per_tenant.
  void EnforceTenantQuota(const std::string& tenant);
  // Measures each tenant's cached bytes again (for EvictFirst).
  void RefreshTenantBytes();
  // ShardedLruCacheOptions::evict_first: `handle`'s tenant holds more than
  // its share.
  bool EvictFirst(std::string_view handle);
  void PruneOwners();
  // Frees at least `bytes` for the memory budget: held grammars first
  // (oldest first), then the cache's least recently used; what was freed.
  size_t Reclaim(size_t bytes);

  // Remembers `wait` for BeginShutdown (forgetting waits already gone).
  void Track(const std::shared_ptr<Wait>& wait);

  // Takes a queue place for `tenant`, or says which bound is reached.
  absl::Status Admit(const std::string& tenant);
  void Release(const std::string& tenant);

  const GrammarStoreOptions options_;
  ServiceMetrics* metrics_;
  CacheMetricsObserver observer_;
  mutable std::mutex queue_mu_;
  size_t queued_ = 0;                                    // guarded by queue_mu_
  absl::flat_hash_map<std::string, size_t> per_tenant_;  // guarded by queue_mu_
  struct Held {
    std::shared_ptr<const CompiledGrammar> grammar;
    absl::Time until;
  };
  mutable std::mutex held_mu_;
  absl::flat_hash_map<std::string, Held> held_;  // guarded by held_mu_
  // Their sizes, measured when held and by each recharge (read on every
  // budget charge, so kept here rather than measured).
  std::atomic<size_t> held_bytes_{0};
  // handle -> tenant whose compile stored it (pruned as entries go).
  // Locked inside a cache shard's lock (EvictFirst): never call the cache
  // while holding it.
  mutable std::mutex owners_mu_;
  struct Owner {
    std::string tenant;
    absl::Time last_use;
  };
  absl::flat_hash_map<std::string, Owner> owners_;  // guarded by owners_mu_
  // Each tenant's cached bytes at the last RefreshTenantBytes, and their fair
  // share of the cache then. Guarded by owners_mu_.
  absl::flat_hash_map<std::string, size_t> tenant_bytes_;
  size_t tenant_share_ = 0;
  absl::flat_hash_map<std::string, uint64_t> quota_evictions_;  // guarded by owners_mu_
  DeadlineTimer timer_;
  std::atomic<bool> shutting_down_{false};
  // Callers waiting for a compile, for BeginShutdown to answer.
  std::mutex waits_mu_;
  std::vector<std::weak_ptr<Wait>> waits_;  // guarded by waits_mu_
  size_t waits_pruned_at_ = 0;              // guarded by waits_mu_: size after the last prune
  std::mutex recharge_mu_;
  std::condition_variable recharge_cv_;
  bool stopping_ = false;  // guarded by recharge_mu_
  std::thread recharger_;
  // Declared after what compile tasks use (observer, metrics, queue) and
  // destroyed first: the pool runs its queued compiles before the rest goes.
  std::unique_ptr<ShardedLruCache<CompiledGrammar>> cache_;
  std::unique_ptr<ThreadPool> compile_pool_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_GRAMMAR_STORE_H_
