// The replica's compiled grammars: a byte-bounded, sharded LRU cache keyed by
// grammar handle, with single-flight compiles on a dedicated thread pool, so
// a caller waits for a compile no longer than its time limit or deadline
// (the compile goes on and fills the cache for the next caller).
#ifndef MASKD_SERVICE_GRAMMAR_STORE_H_
#define MASKD_SERVICE_GRAMMAR_STORE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cache/sharded_lru_cache.h"
#include "compiler/matcher/matcher.h"
#include "service/compile_request.h"
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
};

struct CompiledHandle {
  std::shared_ptr<const CompiledGrammar> grammar;
  // This call did not compile: the grammar (or error) came from the cache or
  // from a compile another caller started.
  bool cache_hit = false;
  // Time this call waited for the grammar.
  absl::Duration wait_time;
};

class GrammarStore {
 public:
  // `metrics` must outlive the store.
  GrammarStore(const GrammarStoreOptions& options, ServiceMetrics* metrics);
  ~GrammarStore();

  // The grammar for `job`, compiled against `tokenizer` unless cached (or in
  // flight). Errors: the engine's (INVALID_ARGUMENT, UNIMPLEMENTED,
  // RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED past the server's time limit...
  // with its message); DEADLINE_EXCEEDED "time limit" when job.time_limit
  // passes first (the compile goes on, up to the server's limit, and fills
  // the cache); DEADLINE_EXCEEDED with *call_deadline set when `deadline`
  // (the RPC's) passes first. Only the last is about the call, not the spec.
  absl::StatusOr<CompiledHandle> Compile(const CompileJob& job,
                                         std::shared_ptr<const Tokenizer> tokenizer,
                                         absl::Time deadline, bool* call_deadline);

  // The cached grammar for `handle`, or null when this replica does not hold
  // it (never compiled here, evicted, or its compile failed).
  std::shared_ptr<const CompiledGrammar> Find(const std::string& handle);

  CacheStats stats() const { return cache_->stats(); }

 private:
  ServiceMetrics* metrics_;
  CacheMetricsObserver observer_;
  // Declared after what compile tasks use (observer, metrics) and destroyed
  // first: the pool runs its queued compiles before the rest goes away.
  std::unique_ptr<ShardedLruCache<CompiledGrammar>> cache_;
  std::unique_ptr<ThreadPool> compile_pool_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_GRAMMAR_STORE_H_
