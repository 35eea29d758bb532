#include "service/grammar_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "compiler/compile/compile.h"

namespace maskd {

using GrammarCache = ShardedLruCache<CompiledGrammar>;

// One caller's wait: answered once, by whichever comes first of the cache
// (the compile's result), the timer (time limit or deadline) or Abandon.
class GrammarStore::Wait final : public CompileWait,
                                 public std::enable_shared_from_this<GrammarStore::Wait> {
 public:
  Wait(DeadlineTimer* timer, CompileCallback done, absl::Duration time_limit, absl::Time start)
      : timer_(timer), done_(std::move(done)), time_limit_(time_limit), start_(start) {}

  // The cache's ticket, once GetOrComputeAsync has returned. A wait already
  // answered by then leaves at once (it no longer keeps the compile alive).
  void SetTicket(GrammarCache::Ticket ticket, bool leave_if_answered) {
    std::lock_guard<std::mutex> lock(mu_);
    ticket_ = std::move(ticket);
    has_ticket_ = true;
    if (answered_ && leave_if_answered && !keep_compile_) ticket_.Leave();
  }

  void StartTimer(absl::Time deadline) {
    const absl::Time limit = start_ + time_limit_;
    const bool limit_first = limit <= deadline;
    std::weak_ptr<Wait> weak = weak_from_this();
    const uint64_t id =
        timer_->Schedule(std::min(limit, deadline), [weak, limit_first, this_limit = time_limit_] {
          std::shared_ptr<Wait> self = weak.lock();
          if (self == nullptr) return;
          if (limit_first) {
            // The compile goes on (up to the server's limit) for the caller
            // that asks again: this wait keeps it alive.
            self->Answer(
                absl::DeadlineExceededError(absl::StrCat(
                    "compile did not finish within its time limit of ",
                    absl::FormatDuration(this_limit),
                    " (options.compile_time_limit, capped by --compile_time_limit); it goes on in "
                    "the background up to --compile_time_limit and an identical request will "
                    "find it cached once done")),
                /*about_call=*/false, /*keep_compile=*/true);
          } else {
            self->Answer(absl::DeadlineExceededError(
                             "the call's deadline passed while the grammar was compiling"),
                         /*about_call=*/true, /*keep_compile=*/false);
          }
        });
    std::lock_guard<std::mutex> lock(mu_);
    timer_id_ = id;
    if (answered_ && id != 0) timer_->Cancel(id);
  }

  // Admission refused to start the compute (then Finish comes at once).
  void MarkRefused() { refused_.store(true); }

  void Abandon() override {
    Answer(absl::CancelledError("the caller went away before the compile finished"),
           /*about_call=*/true, /*keep_compile=*/false);
  }

  // From the cache: the compile's outcome.
  void Finish(absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar, bool cache_hit) {
    if (!grammar.ok()) {
      Answer(grammar.status(), /*about_call=*/refused_.load(), /*keep_compile=*/true);
      return;
    }
    CompiledHandle out;
    out.grammar = *std::move(grammar);
    out.cache_hit = cache_hit;
    out.wait_time = absl::Now() - start_;
    Answer(std::move(out), false, true);
  }

  void Answer(absl::StatusOr<CompiledHandle> result, bool about_call, bool keep_compile) {
    CompileCallback done;
    uint64_t timer_id = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (answered_) return;
      answered_ = true;
      keep_compile_ = keep_compile;
      done = std::move(done_);
      timer_id = timer_id_;
      if (has_ticket_ && !keep_compile) ticket_.Leave();
    }
    if (timer_id != 0) timer_->Cancel(timer_id);
    std::move(done)(std::move(result), about_call);
  }

 private:
  DeadlineTimer* const timer_;
  std::mutex mu_;
  CompileCallback done_;         // guarded by mu_
  bool answered_ = false;        // guarded by mu_
  bool keep_compile_ = false;    // guarded by mu_
  bool has_ticket_ = false;      // guarded by mu_
  GrammarCache::Ticket ticket_;  // guarded by mu_
  uint64_t timer_id_ = 0;        // guarded by mu_
  const absl::Duration time_limit_;
  const absl::Time start_;
  std::atomic<bool> refused_{false};
};

GrammarStore::GrammarStore(const GrammarStoreOptions& options, ServiceMetrics* metrics)
    : options_(options), metrics_(metrics), observer_(metrics) {
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
  cache_options.cancel_abandoned = true;
  cache_options.evict_first = [this](std::string_view handle) { return EvictFirst(handle); };
  ThreadPool* pool = compile_pool_.get();
  cache_options.executor = [pool](absl::AnyInvocable<void() &&> task) {
    pool->Submit(std::move(task));
  };
  cache_ = std::make_unique<GrammarCache>(std::move(cache_options));
  observer_.set_stats_source([cache = cache_.get()] { return cache->stats(); });
  if (options_.budget != nullptr) {
    options_.budget->SetCache([this] { return cached_bytes(); },
                              [this](size_t bytes) { return Reclaim(bytes); });
  }
  if (options_.recharge_interval > absl::ZeroDuration()) {
    recharger_ = std::thread([this] { RechargeLoop(); });
  }
}

GrammarStore::~GrammarStore() {
  {
    std::lock_guard<std::mutex> lock(recharge_mu_);
    stopping_ = true;
  }
  recharge_cv_.notify_all();
  if (recharger_.joinable()) recharger_.join();
  // Finish queued compiles while the cache and the observer still exist.
  compile_pool_.reset();
}

void GrammarStore::RechargeLoop() {
  const auto interval = absl::ToChronoNanoseconds(options_.recharge_interval);
  std::unique_lock<std::mutex> lock(recharge_mu_);
  while (!recharge_cv_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    cache_->Recharge();
    {
      // Expired holds go too; the others are measured again.
      std::vector<std::shared_ptr<const CompiledGrammar>> dropped;
      std::lock_guard<std::mutex> held_lock(held_mu_);
      const absl::Time now = absl::Now();
      size_t held_bytes = 0;
      for (auto it = held_.begin(); it != held_.end();) {
        if (it->second.until <= now) {
          dropped.push_back(std::move(it->second.grammar));
          held_.erase(it++);
        } else {
          held_bytes += it->second.grammar->SizeBytes();
          ++it;
        }
      }
      held_bytes_.store(held_bytes);
    }
    if (options_.budget != nullptr) options_.budget->FitCache();
    PruneOwners();
    RefreshTenantBytes();
    lock.lock();
  }
}

void GrammarStore::Hold(const std::string& handle, std::shared_ptr<const CompiledGrammar> grammar) {
  std::shared_ptr<const CompiledGrammar> dropped;  // freed after the lock
  std::lock_guard<std::mutex> lock(held_mu_);
  if (held_.size() >= options_.max_oversized_held && !held_.contains(handle)) {
    auto oldest = held_.begin();
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->second.until < oldest->second.until) oldest = it;
    }
    if (oldest != held_.end()) {
      dropped = std::move(oldest->second.grammar);
      held_.erase(oldest);
    }
  }
  if (options_.max_oversized_held == 0) return;
  held_[handle] = Held{std::move(grammar), absl::Now() + options_.oversized_hold};
  size_t held_bytes = 0;
  for (const auto& [key, held] : held_) held_bytes += held.grammar->SizeBytes();
  held_bytes_.store(held_bytes);
}

size_t GrammarStore::cached_bytes() const { return cache_->stats().bytes + held_bytes_.load(); }

size_t GrammarStore::Reclaim(size_t bytes) {
  size_t freed = 0;
  std::vector<std::shared_ptr<const CompiledGrammar>> dropped;  // freed after the lock
  {
    std::lock_guard<std::mutex> lock(held_mu_);
    while (freed < bytes) {
      // Oldest first, and only grammars no sequence uses (dropping those
      // would free nothing).
      auto oldest = held_.end();
      for (auto it = held_.begin(); it != held_.end(); ++it) {
        if (it->second.grammar.use_count() > 1) continue;
        if (oldest == held_.end() || it->second.until < oldest->second.until) oldest = it;
      }
      if (oldest == held_.end()) break;
      const size_t size = oldest->second.grammar->SizeBytes();
      freed += size;
      held_bytes_.fetch_sub(std::min(size, held_bytes_.load()));
      dropped.push_back(std::move(oldest->second.grammar));
      held_.erase(oldest);
    }
  }
  if (freed < bytes) freed += cache_->EvictBytes(bytes - freed);
  return freed;
}

void GrammarStore::ChargeGrowth(const std::string& handle) {
  {
    // A step used it: it counts as recently used for its tenant's quota.
    std::lock_guard<std::mutex> lock(owners_mu_);
    if (auto it = owners_.find(handle); it != owners_.end()) it->second.last_use = absl::Now();
  }
  cache_->Remeasure(handle);
  if (options_.budget != nullptr) options_.budget->FitCache();
}

void GrammarStore::NoteOwner(const std::string& handle, const std::string& tenant) {
  std::lock_guard<std::mutex> lock(owners_mu_);
  Owner& owner = owners_[handle];
  owner.tenant = tenant;
  owner.last_use = absl::Now();
}

void GrammarStore::PruneOwners() {
  absl::flat_hash_set<std::string> live;
  for (const CacheEntryInfo& e : cache_->Entries()) live.insert(e.key);
  {
    std::lock_guard<std::mutex> lock(held_mu_);
    for (const auto& [key, held] : held_) live.insert(key);
  }
  std::lock_guard<std::mutex> lock(owners_mu_);
  for (auto it = owners_.begin(); it != owners_.end();) {
    if (live.contains(it->first)) {
      ++it;
    } else {
      owners_.erase(it++);
    }
  }
}

void GrammarStore::RefreshTenantBytes() {
  const std::vector<CacheEntryInfo> entries = cache_->Entries();
  std::lock_guard<std::mutex> lock(owners_mu_);
  tenant_bytes_.clear();
  for (const CacheEntryInfo& e : entries) {
    auto it = owners_.find(e.key);
    if (it != owners_.end()) tenant_bytes_[it->second.tenant] += e.bytes;
  }
  size_t share =
      tenant_bytes_.empty() ? options_.max_bytes : options_.max_bytes / tenant_bytes_.size();
  if (options_.max_bytes_per_tenant > 0) share = std::min(share, options_.max_bytes_per_tenant);
  tenant_share_ = share;
}

bool GrammarStore::EvictFirst(std::string_view handle) {
  std::lock_guard<std::mutex> lock(owners_mu_);
  if (tenant_bytes_.size() < 2 && options_.max_bytes_per_tenant == 0) return false;
  auto owner = owners_.find(absl::string_view(handle.data(), handle.size()));
  if (owner == owners_.end()) return false;
  auto bytes = tenant_bytes_.find(owner->second.tenant);
  return bytes != tenant_bytes_.end() && bytes->second > tenant_share_;
}

void GrammarStore::EnforceTenantQuota(const std::string& tenant) {
  if (options_.max_bytes_per_tenant == 0) return;
  const std::vector<CacheEntryInfo> entries = cache_->Entries();
  std::vector<std::pair<absl::Time, const CacheEntryInfo*>> mine;  // by last use
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(owners_mu_);
    for (const CacheEntryInfo& e : entries) {
      auto it = owners_.find(e.key);
      if (it == owners_.end() || it->second.tenant != tenant) continue;
      bytes += e.bytes;
      mine.emplace_back(it->second.last_use, &e);
    }
  }
  if (bytes <= options_.max_bytes_per_tenant) return;
  std::sort(mine.begin(), mine.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  uint64_t evicted = 0;
  for (const auto& [last_use, entry] : mine) {
    if (bytes <= options_.max_bytes_per_tenant) break;
    const size_t freed = cache_->EraseIfUnused(entry->key);
    if (freed == 0) continue;  // in use (or gone): it stays charged
    bytes -= std::min(bytes, freed);
    ++evicted;
  }
  if (evicted > 0) {
    std::lock_guard<std::mutex> lock(owners_mu_);
    quota_evictions_[tenant] += evicted;
  }
}

absl::flat_hash_map<std::string, uint64_t> GrammarStore::TenantQuotaEvictions() const {
  std::lock_guard<std::mutex> lock(owners_mu_);
  return quota_evictions_;
}

absl::flat_hash_map<std::string, size_t> GrammarStore::CachedBytesByTenant() {
  std::vector<std::pair<std::string, size_t>> entries;
  for (const CacheEntryInfo& e : cache_->Entries()) entries.emplace_back(e.key, e.bytes);
  {
    std::lock_guard<std::mutex> lock(held_mu_);
    for (const auto& [key, held] : held_) entries.emplace_back(key, held.grammar->SizeBytes());
  }
  absl::flat_hash_map<std::string, size_t> out;
  std::lock_guard<std::mutex> lock(owners_mu_);
  for (const auto& [key, bytes] : entries) {
    auto it = owners_.find(key);
    out[it != owners_.end() ? it->second.tenant : std::string("-")] += bytes;
  }
  return out;
}

namespace {
absl::Status ShuttingDownError() {
  return absl::UnavailableError(
      "the server is shutting down: this compile was cancelled; retry on another replica");
}
}  // namespace

void GrammarStore::Track(const std::shared_ptr<Wait>& wait) {
  std::lock_guard<std::mutex> lock(waits_mu_);
  // Forget answered waits once the list has doubled since the last prune
  // (amortized O(1) per call).
  if (waits_.size() >= 2 * waits_pruned_at_ + 16) {
    std::erase_if(waits_, [](const std::weak_ptr<Wait>& w) { return w.expired(); });
    waits_pruned_at_ = waits_.size();
  }
  waits_.push_back(wait);
}

void GrammarStore::BeginShutdown() {
  if (shutting_down_.exchange(true)) return;
  std::vector<std::weak_ptr<Wait>> waits;
  {
    std::lock_guard<std::mutex> lock(waits_mu_);
    waits.swap(waits_);
  }
  // Answering leaves each wait's flight, which cancels a compile no one
  // else waits for; the rest are cancelled below.
  for (const std::weak_ptr<Wait>& weak : waits) {
    if (std::shared_ptr<Wait> wait = weak.lock()) {
      wait->Answer(ShuttingDownError(), /*about_call=*/true, /*keep_compile=*/false);
    }
  }
  cache_->CancelInFlight();
}

size_t CompileMemoryEstimate(size_t spec_bytes) { return (size_t{1} << 20) + 64 * spec_bytes; }

std::shared_ptr<const CompiledGrammar> GrammarStore::FindHeld(const std::string& handle) {
  std::lock_guard<std::mutex> lock(held_mu_);
  auto it = held_.find(handle);
  if (it == held_.end() || it->second.until <= absl::Now()) return nullptr;
  it->second.until = absl::Now() + options_.oversized_hold;
  return it->second.grammar;
}

absl::Status GrammarStore::Admit(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  // Looked up, not inserted: a refused tenant leaves no entry behind.
  auto it = per_tenant_.find(tenant);
  const size_t mine = it == per_tenant_.end() ? 0 : it->second;
  if (mine >= options_.max_queued_compiles_per_tenant) {
    return absl::ResourceExhaustedError(
        absl::StrCat(mine, " compiles of tenant \"", tenant, "\" are queued or running, its limit ",
                     "(--max_queued_compiles_per_tenant); retry later"));
  }
  if (queued_ >= options_.max_queued_compiles) {
    return absl::ResourceExhaustedError(
        absl::StrCat(queued_, " compiles are queued or running, this server's limit ",
                     "(--max_queued_compiles); retry later or on another replica"));
  }
  ++per_tenant_[tenant];
  ++queued_;
  return absl::OkStatus();
}

size_t GrammarStore::tenants_with_queued_compiles() const {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return per_tenant_.size();
}

void GrammarStore::Release(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(queue_mu_);
  auto it = per_tenant_.find(tenant);
  if (it != per_tenant_.end() && --it->second == 0) per_tenant_.erase(it);
  --queued_;
}

size_t GrammarStore::queued_compiles() const {
  std::lock_guard<std::mutex> lock(queue_mu_);
  return queued_;
}

std::shared_ptr<CompileWait> GrammarStore::CompileAsync(const CompileJob& job,
                                                        std::shared_ptr<const Tokenizer> tokenizer,
                                                        const std::string& tenant,
                                                        absl::Time deadline, CompileCallback done) {
  const absl::Time start = absl::Now();
  auto wait = std::make_shared<Wait>(&timer_, std::move(done), job.time_limit, start);
  if (shutting_down_.load()) {
    wait->Answer(ShuttingDownError(), /*about_call=*/true, /*keep_compile=*/false);
    return wait;
  }
  if (deadline <= start) {
    // The caller is gone: starting a compile for it would only burn CPU.
    wait->Answer(
        absl::DeadlineExceededError("the call's deadline passed before the compile started"),
        /*about_call=*/true, /*keep_compile=*/false);
    return wait;
  }
  if (std::shared_ptr<const CompiledGrammar> held = FindHeld(job.handle)) {
    NoteOwner(job.handle, tenant);
    CompiledHandle out;
    out.grammar = std::move(held);
    out.cache_hit = true;
    wait->Answer(std::move(out), false, false);
    return wait;
  }
  // Set by the compute if this call is the one that started it.
  auto started_here = std::make_shared<std::atomic<bool>>(false);
  ServiceMetrics* metrics = metrics_;
  auto compute = [this, spec = job.spec, options = job.options, kind = job.kind, tokenizer, metrics,
                  started_here, tenant, handle = job.handle](const std::atomic<bool>& cancelled)
      -> absl::StatusOr<std::shared_ptr<const CompiledGrammar>> {
    started_here->store(true);
    CompileOptions run = options;
    run.cancelled = &cancelled;
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar = absl::CancelledError(
        "compile cancelled before it started: no caller waits for it any more");
    if (shutting_down_.load()) {
      grammar = ShuttingDownError();
    } else if (!cancelled.load()) {
      // Compiles in flight draw on the memory budget (an estimate: the
      // cache gives way first); a refusal is not cached.
      size_t spec_bytes = spec.text.size();
      for (const std::string& choice : spec.choices) spec_bytes += choice.size();
      for (const SchemaResource& r : options.schema_resources) spec_bytes += r.text.size();
      const size_t estimate = CompileMemoryEstimate(spec_bytes);
      absl::Status charged =
          options_.budget == nullptr
              ? absl::OkStatus()
              : options_.budget->TryCharge(MemoryKind::kCompiles, estimate, "this compile");
      if (!charged.ok()) {
        grammar = charged;
      } else {
        try {
          grammar = CompileGrammar(spec, run, tokenizer);
        } catch (const std::bad_alloc&) {
          // Out of memory (a low RLIMIT_AS, a cgroup at its limit): this
          // compile fails, the server goes on.
          grammar = absl::ResourceExhaustedError(
              "the server ran out of memory while compiling this spec (std::bad_alloc); retry "
              "later or on another replica");
        }
        if (options_.budget != nullptr) options_.budget->Release(MemoryKind::kCompiles, estimate);
      }
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    metrics->RecordCompile(kind, grammar.status(), took.count());
    // Too large for a cache shard: held, so the handle answered still opens.
    if (grammar.ok() && (*grammar)->SizeBytes() > cache_->shard_budget_bytes()) {
      Hold(handle, *grammar);
    }
    Release(tenant);
    return grammar;
  };
  GrammarCache::Ticket ticket = cache_->GetOrComputeAsync(
      job.handle, std::move(compute),
      [this, wait, started_here, tenant,
       handle = job.handle](absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g) {
        if (g.ok()) {
          // Charged to the tenant that asked last (hits included).
          NoteOwner(handle, tenant);
          if (started_here->load()) {
            // A new grammar is in the cache: its tenant's own older ones
            // make room if it is past its bound.
            EnforceTenantQuota(tenant);
            RefreshTenantBytes();
          }
          // It takes what the budget has left (least recently used
          // grammars go).
          if (options_.budget != nullptr) options_.budget->FitCache();
        }
        wait->Finish(std::move(g), !started_here->load());
      },
      [this, &tenant, &wait]() -> absl::Status {
        absl::Status admitted = Admit(tenant);
        if (!admitted.ok()) wait->MarkRefused();
        return admitted;
      });
  wait->SetTicket(std::move(ticket), /*leave_if_answered=*/true);
  wait->StartTimer(deadline);
  Track(wait);
  // A shutdown that began since the check above may have missed this wait.
  if (shutting_down_.load()) {
    wait->Answer(ShuttingDownError(), /*about_call=*/true, /*keep_compile=*/false);
  }
  return wait;
}

std::shared_ptr<const CompiledGrammar> GrammarStore::Find(const std::string& handle) {
  if (std::shared_ptr<const CompiledGrammar> cached = cache_->Get(handle)) return cached;
  return FindHeld(handle);
}

}  // namespace maskd
