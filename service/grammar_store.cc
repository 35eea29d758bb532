#include "service/grammar_store.h"

#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"

namespace maskd {

GrammarStore::GrammarStore(const GrammarStoreOptions& options, ServiceMetrics* metrics)
    : metrics_(metrics), observer_(metrics) {
  const size_t threads = options.compile_threads != 0
                             ? options.compile_threads
                             : std::max<size_t>(1, std::thread::hardware_concurrency());
  compile_pool_ = std::make_unique<ThreadPool>(threads);
  ShardedLruCacheOptions<CompiledGrammar> cache_options;
  cache_options.max_bytes = options.max_bytes;
  cache_options.num_shards = options.num_shards;
  cache_options.error_ttl = options.error_ttl;
  cache_options.sizer = [](const CompiledGrammar& g) { return g.SizeBytes(); };
  cache_options.observer = &observer_;
  ThreadPool* pool = compile_pool_.get();
  cache_options.executor = [pool](absl::AnyInvocable<void() &&> task) {
    pool->Submit(std::move(task));
  };
  cache_ = std::make_unique<ShardedLruCache<CompiledGrammar>>(std::move(cache_options));
  observer_.set_stats_source([cache = cache_.get()] { return cache->stats(); });
}

GrammarStore::~GrammarStore() {
  // Finish queued compiles while the cache and the observer still exist.
  compile_pool_.reset();
}

absl::StatusOr<CompiledHandle> GrammarStore::Compile(const CompileJob& job,
                                                     std::shared_ptr<const Tokenizer> tokenizer,
                                                     absl::Time deadline, bool* call_deadline) {
  *call_deadline = false;
  const absl::Time start = absl::Now();
  if (deadline <= start) {
    // The caller is gone: starting a compile for it would only burn CPU.
    *call_deadline = true;
    return absl::DeadlineExceededError("the call's deadline passed before the compile started");
  }
  const absl::Time limit = start + job.time_limit;
  // Set by the compute if this call is the one that started it; shared
  // because the compute may outlive this call (it runs on the pool).
  auto started_here = std::make_shared<std::atomic<bool>>(false);
  ServiceMetrics* metrics = metrics_;
  auto compute = [spec = job.spec, options = job.options, kind = job.kind, tokenizer, metrics,
                  started_here]() -> absl::StatusOr<std::shared_ptr<const CompiledGrammar>> {
    started_here->store(true);
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar =
        CompileGrammar(spec, options, tokenizer);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    metrics->RecordCompile(kind, grammar.status(), took.count());
    return grammar;
  };
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar =
      cache_->GetOrCompute(job.handle, std::move(compute), std::min(deadline, limit));
  const absl::Time end = absl::Now();
  if (!grammar.ok()) {
    if (grammar.status().code() == absl::StatusCode::kDeadlineExceeded && end >= limit &&
        limit <= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "compile did not finish within its time limit of ", absl::FormatDuration(job.time_limit),
          " (options.compile_time_limit, capped by --compile_time_limit); it goes on in the "
          "background up to --compile_time_limit and an identical request will find it cached "
          "once done"));
    }
    if (grammar.status().code() == absl::StatusCode::kDeadlineExceeded && end >= deadline) {
      *call_deadline = true;
      return absl::DeadlineExceededError(
          "the call's deadline passed while the grammar was compiling; the compile goes on in "
          "the background");
    }
    return grammar.status();
  }
  CompiledHandle out;
  out.grammar = *std::move(grammar);
  out.cache_hit = !started_here->load();
  out.wait_time = end - start;
  return out;
}

std::shared_ptr<const CompiledGrammar> GrammarStore::Find(const std::string& handle) {
  return cache_->Get(handle);
}

}  // namespace maskd
