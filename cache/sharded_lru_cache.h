// A byte-bounded, sharded LRU cache of immutable values with single-flight
// computation, built for compiled grammars keyed by their content hash.
//
//   ShardedLruCacheOptions<CompiledGrammar> options;
//   options.max_bytes = 2ull << 30;
//   options.sizer = [](const CompiledGrammar& g) { return g.MemoryBytes(); };
//   ShardedLruCache<CompiledGrammar> cache(options);
//   absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g = cache.GetOrCompute(
//       handle, [&] { return Compile(spec); }, rpc_deadline);
//
// Keys hash to one of N shards (a power of two); each shard has its own mutex,
// LRU list and index, and an equal share of the byte budget. Values are shared
// as std::shared_ptr<const Value>, so an evicted value lives on for as long as
// a caller still holds it, and eviction never blocks on a reader.
//
// Single flight: while a key is being computed, further GetOrCompute callers
// for it wait for that one compute instead of starting their own, and all get
// its result or its error. Errors judged deterministic (see
// IsDeterministicError) are cached for `error_ttl` so a storm of requests for
// one bad spec costs one compile per TTL; values stay until evicted.
#ifndef MASKD_CACHE_SHARDED_LRU_CACHE_H_
#define MASKD_CACHE_SHARDED_LRU_CACHE_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/cache_stats.h"
#include "cache/clock.h"
#include "cache/compute_errors.h"
#include "cache/status_snapshot.h"

namespace maskd {

template <typename Value>
struct ShardedLruCacheOptions {
  // Total budget over all shards; each shard gets max_bytes / num_shards. An
  // entry bigger than one shard's budget is never kept (see stats.oversized).
  size_t max_bytes = size_t{1} << 30;
  // Rounded up to a power of two (at least 1). More shards, less contention;
  // fewer shards, a more exact global LRU order and a larger per-entry limit.
  size_t num_shards = 16;
  // Bytes charged for a value stored by GetOrCompute or the two-argument
  // Insert. Unset: sizeof(Value), which is only right for flat types.
  std::function<size_t(const Value&)> sizer;
  // How long a failed compute's error answers later calls for the key. Zero
  // or less: errors are never cached.
  absl::Duration error_ttl = absl::Seconds(5);
  // Which errors to cache. Unset: IsDeterministicError.
  std::function<bool(const absl::Status&)> should_cache_error;
  // Time source for error expiry only (waiter deadlines are real time).
  // Unset: Clock::Real(). Must outlive the cache.
  const Clock* clock = nullptr;
  // Optional event callbacks. Must outlive the cache and any compute in flight.
  CacheObserver* observer = nullptr;
  // Where computes run. Unset: on the thread of the caller that starts the
  // compute, which therefore returns only when the compute is done, whatever
  // its deadline. Set: the task is handed to the executor and every caller,
  // including the one that started it, waits at most until its deadline.
  // The executor must run every task it accepts exactly once.
  std::function<void(absl::AnyInvocable<void() &&>)> executor;
  // When every caller waiting for a compute has left (deadline passed, or
  // Ticket::Leave) before it finished: raise the compute's cancel flag (see
  // GetOrComputeAsync) and forget the flight, so the next caller for the key
  // starts afresh. Unset: the compute goes on and fills the cache.
  bool cancel_abandoned = false;
  // Entries to evict before the others when a shard is over its budget or
  // EvictBytes frees room (least recently used of them first; then plain
  // LRU). Called under a shard's lock, so it must be cheap and must not call
  // back into the cache. Unset: plain LRU. (GrammarStore: the grammars of a
  // tenant over its share of the cache.)
  std::function<bool(std::string_view key)> evict_first;
};

// One cached entry, as listed by ShardedLruCache::Entries().
struct CacheEntryInfo {
  std::string key;
  size_t bytes = 0;
  bool is_error = false;
};

template <typename Value>
class ShardedLruCache {
 public:
  using ValuePtr = std::shared_ptr<const Value>;
  using Result = absl::StatusOr<ValuePtr>;
  using Options = ShardedLruCacheOptions<Value>;

  // Bytes charged for a cached error of `key` with `status`: the strings it
  // holds plus a fixed allowance for the entry's bookkeeping.
  static size_t ErrorCharge(std::string_view key, const absl::Status& status) {
    return key.size() + StatusSnapshot(status).TextBytes() + kErrorEntryOverheadBytes;
  }

  explicit ShardedLruCache(Options options = Options())
      : impl_(std::make_shared<Impl>(std::move(options))) {}

  ShardedLruCache(const ShardedLruCache&) = delete;
  ShardedLruCache& operator=(const ShardedLruCache&) = delete;

  // The cached value for `key`, or null when there is none (a cached error
  // counts as none here). Counts a hit or a miss and refreshes LRU order.
  ValuePtr Get(std::string_view key) { return impl_->Get(key); }

  // Stores `value` charged at `bytes`, replacing any entry for `key`, then
  // evicts least recently used entries of its shard until the shard is within
  // budget. Returns false, keeping nothing and dropping any old entry for the
  // key, when `bytes` exceeds a shard's budget. A null `value` is refused
  // (false, nothing changes).
  bool Insert(std::string_view key, ValuePtr value, size_t bytes) {
    return impl_->Insert(key, std::move(value), bytes);
  }
  // As above, charged at options.sizer(*value).
  bool Insert(std::string_view key, ValuePtr value) {
    if (value == nullptr) return false;
    const size_t bytes = impl_->SizeOf(*value);
    return impl_->Insert(key, std::move(value), bytes);
  }

  // Drops the entry (value or cached error) for `key`; true if there was one.
  // A compute in flight for the key is not affected and will store its result.
  bool Erase(std::string_view key) { return impl_->Erase(key); }

  // Drops every entry. Computes in flight are not affected.
  void Clear() { impl_->Clear(); }

  // Values that grow after they are stored (a grammar's lazily built
  // automata) were charged only their size at insert. Re-measures every
  // value with options.sizer, charges the difference, and evicts least
  // recently used entries of each shard past its budget (a value grown past
  // a whole shard's budget goes itself; callers holding it keep it).
  void Recharge() { impl_->Recharge(); }

  // Recharge for one key, as its value grows (called where it is used, so
  // growth is charged when it happens rather than at the next sweep): its
  // shard evicts least recently used entries past its budget, the grown
  // value itself last (it goes if it alone passes the shard's budget).
  // Returns the bytes now charged for the key (0 if it is not cached).
  size_t Remeasure(std::string_view key) { return impl_->Remeasure(key); }

  // Evicts least recently used entries, the largest shard's first, until at
  // least `bytes` were freed or nothing evictable is left; returns the bytes
  // freed. Values held outside the cache (a grammar live sequences use) are
  // skipped: evicting them would free nothing. For a process-wide memory
  // budget that needs room for something else.
  size_t EvictBytes(size_t bytes) { return impl_->EvictBytes(bytes); }

  // Drops `key`'s value unless someone else holds it (evicting it would free
  // nothing and its handle would stop opening); the bytes freed (0: absent,
  // in use, or a cached error).
  size_t EraseIfUnused(std::string_view key) { return impl_->EraseIfUnused(key); }

  // The cached value or cached error for `key`; otherwise the result of a
  // compute, shared with every concurrent caller for the same key, which is
  // started now (running `compute`) unless one is already in flight (then
  // `compute` is not called). `compute` must return a non-null value or an
  // error; a null value or an exception becomes INTERNAL. A caller still
  // waiting at `deadline` gets DEADLINE_EXCEEDED while the compute goes on and
  // fills the cache (see Options::executor for who waits).
  template <typename ComputeFn>
  Result GetOrCompute(std::string_view key, ComputeFn&& compute,
                      absl::Time deadline = absl::InfiniteFuture()) {
    static_assert(std::is_convertible_v<std::invoke_result_t<ComputeFn&>, Result>,
                  "compute must return absl::StatusOr<std::shared_ptr<const Value>>");
    return impl_->GetOrCompute(impl_, key, std::forward<ComputeFn>(compute), deadline);
  }

  // One asynchronous caller's wait (GetOrComputeAsync).
  class Ticket;

  // As GetOrCompute, without blocking: `done` gets the result exactly once,
  // on this thread when it is at hand (a cached value or error, a refusal by
  // `admit`), otherwise on the thread that finishes the compute, unless the
  // caller leaves first (Ticket::Leave). `compute` is called as
  // compute(const std::atomic<bool>& cancelled) and should stop soon after
  // `cancelled` turns true (Options::cancel_abandoned). `admit` runs, under
  // the shard's lock, only when this call would start a new compute: a
  // non-OK status refuses it (`done` gets that status, nothing is cached).
  template <typename ComputeFn>
  Ticket GetOrComputeAsync(std::string_view key, ComputeFn&& compute,
                           absl::AnyInvocable<void(Result) &&> done,
                           absl::FunctionRef<absl::Status()> admit = NoAdmission) {
    return impl_->GetOrComputeAsync(impl_, key, std::forward<ComputeFn>(compute), std::move(done),
                                    admit);
  }

  // Counters and current size; cheap (no locks).
  CacheStats stats() const { return impl_->counters.Snapshot(); }

  // Every entry, most recently used first within each shard. Locks each shard
  // in turn; meant for tests and debug pages, not hot paths.
  std::vector<CacheEntryInfo> Entries() const { return impl_->Entries(); }

  // Raises the cancel flag of every compute in flight (the server is
  // stopping): each stops at its next check, and its outcome is not cached.
  // Returns how many there were.
  size_t CancelInFlight() { return impl_->CancelInFlight(); }

  size_t num_shards() const { return impl_->shard_count; }
  size_t shard_budget_bytes() const { return impl_->shard_budget; }

 private:
  static constexpr size_t kErrorEntryOverheadBytes = 128;
  static absl::Status NoAdmission() { return absl::OkStatus(); }

  struct Entry {
    std::string key;
    ValuePtr value;        // Null for a cached error.
    StatusSnapshot error;  // Set for a cached error.
    absl::Time expires;    // Cached errors only.
    size_t bytes = 0;
  };
  using EntryList = std::list<Entry>;

  using Callback = absl::AnyInvocable<void(Result) &&>;

  // One compute in flight, finished exactly once by whoever runs it.
  class Flight {
   public:
    explicit Flight(std::string_view k) : key(k) {}

    void Finish(const Result& result) {
      std::vector<Callback> callbacks;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (result.ok()) {
          value_ = *result;
        } else {
          error_ = StatusSnapshot(result.status());
        }
        done_ = true;
        for (auto& [id, callback] : callbacks_) {
          if (callback) callbacks.push_back(std::move(callback));
        }
        callbacks_.clear();
      }
      done_cv_.notify_all();
      for (Callback& callback : callbacks) std::move(callback)(Outcome());
    }

    // Registers a waiter (with `callback` for an asynchronous one) unless the
    // flight was abandoned (cancelled); returns its id, or 0 when abandoned.
    // A finished flight still takes waiters: Wait answers them at once, and
    // the caller of an asynchronous one checks `done` (TakeIfDone).
    // `callback` is taken only when accepted.
    uint64_t AddWaiter(Callback& callback) {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled.load()) return 0;
      const uint64_t id = ++last_id_;
      callbacks_.emplace_back(id, std::move(callback));
      return id;
    }

    // The callback of waiter `id` back, if the flight finished before it
    // could be called by Finish (registered after Finish).
    std::optional<std::pair<Callback, Result>> TakeIfDone(uint64_t id) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!done_) return std::nullopt;
      for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
        if (it->first != id) continue;
        Callback callback = std::move(it->second);
        callbacks_.erase(it);
        return std::make_pair(std::move(callback), Outcome());
      }
      return std::nullopt;
    }

    // Waiter `id` leaves. True when it was the last one and the flight is
    // not done: the flight is then cancelled (if `cancel_abandoned`).
    bool RemoveWaiter(uint64_t id, bool cancel_abandoned) {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
        if (it->first == id) {
          callbacks_.erase(it);
          break;
        }
      }
      if (done_ || !callbacks_.empty() || !cancel_abandoned) return false;
      cancelled.store(true);
      return true;
    }

    // The result, or nullopt if `deadline` passed first.
    std::optional<Result> Wait(absl::Time deadline) {
      std::unique_lock<std::mutex> lock(mu_);
      auto finished = [this] { return done_; };
      if (deadline == absl::InfiniteFuture()) {
        done_cv_.wait(lock, finished);
      } else if (deadline <= absl::Now()) {
        if (!done_) return std::nullopt;  // Too late to wait at all.
      } else if (!done_cv_.wait_until(lock, absl::ToChronoTime(deadline), finished)) {
        return std::nullopt;
      }
      return Outcome();
    }

    const std::string key;  // Viewed by the shard's `flights` index.
    // Raised when every waiter left before the compute finished.
    std::atomic<bool> cancelled{false};

   private:
    // std::mutex rather than absl::Mutex here and in Shard: the system's
    // absl is not built with ThreadSanitizer, so TSan cannot see absl::Mutex
    // synchronise and would report false races; it does see pthread mutexes.
    std::mutex mu_;
    std::condition_variable done_cv_;
    bool done_ = false;  // Guarded by mu_.
    // The outcome; the error as text so waiters share no absl::Status (see
    // status_snapshot.h). Guarded by mu_.
    ValuePtr value_;
    StatusSnapshot error_;
    // Waiters still waiting: id and callback (empty for a blocking waiter).
    std::vector<std::pair<uint64_t, Callback>> callbacks_;  // Guarded by mu_.
    uint64_t last_id_ = 0;                                  // Guarded by mu_.

    // Fixed once done_ is set.
    Result Outcome() const {
      if (value_ != nullptr) return value_;
      return error_.ToStatus();
    }
  };

  struct alignas(64) Shard {
    std::mutex mu;
    // All below guarded by mu.
    EntryList lru;  // Front: most recently used.
    // Keys view the strings owned by the list nodes, which never move.
    absl::flat_hash_map<std::string_view, typename EntryList::iterator> index;
    absl::flat_hash_map<std::string_view, std::shared_ptr<Flight>> flights;
    size_t bytes = 0;
  };

  // Work collected under a shard lock and finished after releasing it:
  // destroying values (possibly large) and calling the observer.
  struct Aftermath {
    EntryList dropped;
    std::vector<size_t> evicted_bytes;
    size_t oversized_bytes = 0;
    bool oversized = false;
  };

  // Shared with compute tasks handed to an executor, so a task that outlives
  // the cache object still has somewhere to put its result.
  struct Impl {
    explicit Impl(Options opts)
        : options(std::move(opts)),
          shard_count(std::bit_ceil(options.num_shards == 0 ? size_t{1} : options.num_shards)),
          shard_shift(64 - std::countr_zero(shard_count)),
          shard_budget(options.max_bytes / shard_count),
          clock(options.clock != nullptr ? *options.clock : Clock::Real()),
          shards(std::make_unique<Shard[]>(shard_count)),
          counters(options.observer, shard_budget * shard_count) {
      if (!options.sizer) options.sizer = [](const Value&) { return sizeof(Value); };
      if (!options.should_cache_error) options.should_cache_error = IsDeterministicError;
    }

    Shard& ShardFor(std::string_view key) const {
      // The top bits pick the shard; flat_hash_map uses the low bits of the
      // same hash inside the shard, so the two choices stay independent.
      const uint64_t hash = absl::HashOf(key);
      return shards[shard_count == 1 ? 0 : static_cast<size_t>(hash >> shard_shift)];
    }

    size_t SizeOf(const Value& value) const { return options.sizer(value); }

    ValuePtr Get(std::string_view key) {
      Shard& shard = ShardFor(key);
      Aftermath after;
      ValuePtr value;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        const Entry* entry = FindLocked(shard, key, after);
        if (entry != nullptr && entry->value != nullptr) value = entry->value;
      }
      if (value != nullptr) {
        counters.Hit();
      } else {
        counters.Miss();
      }
      return value;
    }

    bool Insert(std::string_view key, ValuePtr value, size_t bytes) {
      if (value == nullptr) return false;
      Shard& shard = ShardFor(key);
      Aftermath after;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        StoreValueLocked(shard, key, std::move(value), bytes, after);
      }
      const bool kept = !after.oversized;
      Report(after);
      return kept;
    }

    size_t EraseIfUnused(std::string_view key) {
      Shard& shard = ShardFor(key);
      Aftermath after;
      size_t bytes = 0;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        auto it = shard.index.find(key);
        if (it == shard.index.end() || it->second->value == nullptr ||
            it->second->value.use_count() > 1) {
          return 0;
        }
        bytes = it->second->bytes;
        after.evicted_bytes.push_back(bytes);
        RemoveLocked(shard, it->second, after);
      }
      Report(after);
      return bytes;
    }

    // The entry a shard over its budget evicts next: the least recently used
    // one Options::evict_first picks, else the least recently used; never
    // `keep` unless it is the only one.
    typename EntryList::iterator VictimLocked(Shard& shard,
                                              typename EntryList::iterator keep) const {
      if (options.evict_first) {
        for (auto it = shard.lru.end(); it != shard.lru.begin();) {
          --it;
          if (it != keep && options.evict_first(it->key)) return it;
        }
      }
      auto victim = std::prev(shard.lru.end());
      if (victim == keep && shard.lru.size() > 1) victim = std::prev(victim);
      return victim;
    }

    bool Erase(std::string_view key) {
      Shard& shard = ShardFor(key);
      Aftermath after;
      std::lock_guard<std::mutex> lock(shard.mu);
      auto it = shard.index.find(key);
      if (it == shard.index.end()) return false;
      RemoveLocked(shard, it->second, after);
      // `after` (and the dropped value) is destroyed after the lock is
      // released: locals are destroyed in reverse order of construction.
      return true;
    }

    void Clear() {
      for (size_t i = 0; i < shard_count; ++i) {
        Shard& shard = shards[i];
        EntryList dropped;
        std::lock_guard<std::mutex> lock(shard.mu);
        counters.AddResident(-static_cast<int64_t>(shard.bytes),
                             -static_cast<int64_t>(shard.lru.size()));
        shard.index.clear();
        dropped.splice(dropped.end(), shard.lru);
        shard.bytes = 0;
      }
    }

    void Recharge() {
      for (size_t i = 0; i < shard_count; ++i) {
        Shard& shard = shards[i];
        // Measured outside the lock (a sizer may walk a large value).
        std::vector<ValuePtr> values;
        {
          std::lock_guard<std::mutex> lock(shard.mu);
          for (const Entry& e : shard.lru) {
            if (e.value != nullptr) values.push_back(e.value);
          }
        }
        absl::flat_hash_map<const Value*, size_t> sizes;
        for (const ValuePtr& v : values) sizes[v.get()] = SizeOf(*v);
        Aftermath after;
        {
          std::lock_guard<std::mutex> lock(shard.mu);
          for (Entry& e : shard.lru) {
            auto it = e.value != nullptr ? sizes.find(e.value.get()) : sizes.end();
            if (it == sizes.end() || it->second == e.bytes) continue;
            shard.bytes = shard.bytes - e.bytes + it->second;
            counters.AddResident(static_cast<int64_t>(it->second) - static_cast<int64_t>(e.bytes),
                                 0);
            e.bytes = it->second;
          }
          while (shard.bytes > shard_budget && !shard.lru.empty()) {
            auto victim = VictimLocked(shard, shard.lru.end());
            after.evicted_bytes.push_back(victim->bytes);
            RemoveLocked(shard, victim, after);
          }
        }
        Report(after);
        // `values` (possibly the last references) go after the lock.
      }
    }

    size_t Remeasure(std::string_view key) {
      Shard& shard = ShardFor(key);
      ValuePtr value;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        auto it = shard.index.find(key);
        if (it == shard.index.end() || it->second->value == nullptr) return 0;
        value = it->second->value;
      }
      const size_t size = SizeOf(*value);  // outside the lock, like Recharge
      Aftermath after;
      size_t charged = 0;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        auto it = shard.index.find(key);
        if (it == shard.index.end() || it->second->value != value) return 0;
        Entry& e = *it->second;
        if (size != e.bytes) {
          shard.bytes = shard.bytes - e.bytes + size;
          counters.AddResident(static_cast<int64_t>(size) - static_cast<int64_t>(e.bytes), 0);
          e.bytes = size;
        }
        charged = size;
        while (shard.bytes > shard_budget && !shard.lru.empty()) {
          auto victim = VictimLocked(shard, it->second);
          if (victim == it->second) charged = 0;
          after.evicted_bytes.push_back(victim->bytes);
          RemoveLocked(shard, victim, after);
        }
      }
      Report(after);
      return charged;
    }

    size_t EvictBytes(size_t bytes) {
      // Largest shard first: the global LRU order is only known per shard.
      std::vector<std::pair<size_t, size_t>> order;  // (bytes, shard)
      for (size_t i = 0; i < shard_count; ++i) {
        std::lock_guard<std::mutex> lock(shards[i].mu);
        order.emplace_back(shards[i].bytes, i);
      }
      std::sort(order.begin(), order.end(), std::greater<>());
      size_t freed = 0;
      // Options::evict_first's entries in every shard first, then any.
      for (const bool preferred_only : {true, false}) {
        if (preferred_only && !options.evict_first) continue;
        for (const auto& [unused_bytes, index] : order) {
          if (freed >= bytes) break;
          Shard& shard = shards[index];
          Aftermath after;
          {
            std::lock_guard<std::mutex> lock(shard.mu);
            for (auto it = shard.lru.end(); it != shard.lru.begin() && freed < bytes;) {
              auto victim = std::prev(it);
              // A value someone else holds frees nothing when evicted (and
              // its handle would stop opening): it stays.
              if ((victim->value != nullptr && victim->value.use_count() > 1) ||
                  (preferred_only && !options.evict_first(victim->key))) {
                it = victim;
                continue;
              }
              freed += victim->bytes;
              after.evicted_bytes.push_back(victim->bytes);
              RemoveLocked(shard, victim, after);
            }
          }
          Report(after);
        }
      }
      return freed;
    }

    template <typename ComputeFn>
    Result GetOrCompute(const std::shared_ptr<Impl>& self, std::string_view key,
                        ComputeFn&& compute, absl::Time deadline) {
      Shard& shard = ShardFor(key);
      std::shared_ptr<Flight> flight;
      bool leader = false;
      ValuePtr cached_value;
      StatusSnapshot cached_error;
      {
        Aftermath after;  // Only ever holds an expired error; freed after unlock.
        std::lock_guard<std::mutex> lock(shard.mu);
        if (const Entry* entry = FindLocked(shard, key, after); entry != nullptr) {
          cached_value = entry->value;
          cached_error = entry->error;
        } else {
          if (auto it = shard.flights.find(key); it != shard.flights.end()) {
            flight = it->second;
          } else {
            flight = std::make_shared<Flight>(key);
            shard.flights.emplace(flight->key, flight);
            leader = true;
          }
        }
      }
      if (flight == nullptr) {
        if (cached_value != nullptr) {
          counters.Hit();
          return cached_value;
        }
        counters.ErrorHit();
        return cached_error.ToStatus();
      }
      if (!leader) {
        counters.Join();
        return Await(*flight, deadline);
      }
      counters.Miss();
      if (!options.executor) {
        return RunCompute(key, compute, *flight);
      }
      options.executor([self, key = std::string(key),
                        compute = std::decay_t<ComputeFn>(std::forward<ComputeFn>(compute)),
                        flight]() mutable { (void)self->RunCompute(key, compute, *flight); });
      return Await(*flight, deadline);
    }

    template <typename ComputeFn>
    Ticket GetOrComputeAsync(const std::shared_ptr<Impl>& self, std::string_view key,
                             ComputeFn&& compute, Callback done,
                             absl::FunctionRef<absl::Status()> admit) {
      Shard& shard = ShardFor(key);
      std::shared_ptr<Flight> flight;
      bool leader = false;
      uint64_t id = 0;
      std::optional<Result> at_hand;
      bool cached = false;
      {
        Aftermath after;  // Only ever holds an expired error; freed after unlock.
        std::lock_guard<std::mutex> lock(shard.mu);
        if (const Entry* entry = FindLocked(shard, key, after); entry != nullptr) {
          cached = true;
          if (entry->value != nullptr) {
            at_hand = Result(entry->value);
          } else {
            at_hand = Result(entry->error.ToStatus());
          }
        } else {
          if (auto it = shard.flights.find(key); it != shard.flights.end()) {
            id = it->second->AddWaiter(done);
            // 0: every waiter left that flight; it is being cancelled.
            if (id != 0) flight = it->second;
          }
          if (flight == nullptr) {
            if (absl::Status admitted = admit(); !admitted.ok()) {
              at_hand = Result(std::move(admitted));
            } else {
              flight = std::make_shared<Flight>(key);
              shard.flights.insert_or_assign(flight->key, flight);
              id = flight->AddWaiter(done);
              leader = true;
            }
          }
        }
      }
      if (at_hand.has_value()) {
        if (cached && at_hand->ok()) {
          counters.Hit();
        } else if (cached) {
          counters.ErrorHit();
        }
        std::move(done)(*std::move(at_hand));
        return Ticket();
      }
      if (!leader) {
        counters.Join();
        // The flight may have finished between the lookup and AddWaiter.
        if (auto finished = flight->TakeIfDone(id)) {
          std::move(finished->first)(std::move(finished->second));
          return Ticket();
        }
        return Ticket(self, std::move(flight), id);
      }
      counters.Miss();
      auto run = [self, key = std::string(key),
                  compute = std::decay_t<ComputeFn>(std::forward<ComputeFn>(compute)),
                  flight]() mutable {
        auto bound = [&] {
          return compute(static_cast<const std::atomic<bool>&>(flight->cancelled));
        };
        (void)self->RunCompute(key, bound, *flight);
      };
      Ticket ticket(self, flight, id);
      if (options.executor) {
        options.executor(std::move(run));
      } else {
        run();
      }
      return ticket;
    }

    void Leave(Flight& flight, uint64_t id) {
      if (!flight.RemoveWaiter(id, options.cancel_abandoned)) return;
      // Abandoned: the next caller for the key starts a fresh compute.
      Shard& shard = ShardFor(flight.key);
      std::lock_guard<std::mutex> lock(shard.mu);
      if (auto it = shard.flights.find(flight.key);
          it != shard.flights.end() && it->second.get() == &flight) {
        shard.flights.erase(it);
      }
    }

    Result Await(Flight& flight, absl::Time deadline) {
      std::optional<Result> result = flight.Wait(deadline);
      if (!result.has_value()) {
        counters.DeadlineExceeded();
        return absl::DeadlineExceededError(
            "deadline passed while waiting for the compute of this key; it goes on and will "
            "fill the cache");
      }
      return *std::move(result);
    }

    // Runs `compute`, stores its outcome, ends the flight and wakes waiters.
    // Returns the outcome too, for a caller that ran it inline.
    template <typename ComputeFn>
    Result RunCompute(std::string_view key, ComputeFn& compute, Flight& flight) {
      const absl::Time start = absl::Now();
      Result result{absl::UnknownError("unset")};
      bool threw = false;
      size_t bytes = 0;
      try {
        result = compute();
        if (result.ok() && *result == nullptr) {
          result = absl::InternalError("compute returned a null value");
        }
        if (result.ok()) bytes = SizeOf(**result);
      } catch (...) {
        threw = true;
        result = InternalErrorFromException(std::current_exception());
      }
      const absl::Duration elapsed = absl::Now() - start;

      Shard& shard = ShardFor(key);
      Aftermath after;
      {
        std::lock_guard<std::mutex> lock(shard.mu);
        if (result.ok()) {
          StoreValueLocked(shard, key, *result, bytes, after);
        } else if (options.error_ttl > absl::ZeroDuration() && !flight.cancelled.load() &&
                   options.should_cache_error(result.status())) {
          StoreErrorLocked(shard, key, result.status(), after);
        }
        // Under the same lock as the store: a caller that no longer finds
        // the flight finds the entry (or, if it was not kept, computes anew).
        // An abandoned flight may already have been replaced by a new one.
        if (auto it = shard.flights.find(key);
            it != shard.flights.end() && it->second.get() == &flight) {
          shard.flights.erase(it);
        }
      }
      counters.ComputeDone(elapsed, result.status(), threw);
      flight.Finish(result);
      Report(after);
      return result;
    }

    // The live entry for `key`, moved to the front of the LRU list, or null.
    // An expired cached error is dropped and reported as absent.
    const Entry* FindLocked(Shard& shard, std::string_view key, Aftermath& after) {
      auto it = shard.index.find(key);
      if (it == shard.index.end()) return nullptr;
      auto node = it->second;
      if (node->value == nullptr && clock.Now() >= node->expires) {
        RemoveLocked(shard, node, after);
        return nullptr;
      }
      shard.lru.splice(shard.lru.begin(), shard.lru, node);
      return &*node;
    }

    void StoreValueLocked(Shard& shard, std::string_view key, ValuePtr value, size_t bytes,
                          Aftermath& after) {
      Entry entry;
      entry.value = std::move(value);
      entry.bytes = bytes;
      StoreLocked(shard, key, std::move(entry), after);
    }

    void StoreErrorLocked(Shard& shard, std::string_view key, const absl::Status& error,
                          Aftermath& after) {
      Entry entry;
      entry.error = StatusSnapshot(error);
      entry.expires = clock.Now() + options.error_ttl;
      entry.bytes = ErrorCharge(key, error);
      StoreLocked(shard, key, std::move(entry), after);
    }

    void StoreLocked(Shard& shard, std::string_view key, Entry entry, Aftermath& after) {
      if (auto it = shard.index.find(key); it != shard.index.end()) {
        RemoveLocked(shard, it->second, after);
      }
      if (entry.bytes > shard_budget) {
        after.oversized = true;
        after.oversized_bytes = entry.bytes;
        // Keep the value alive until the lock is released, like any drop.
        after.dropped.push_back(std::move(entry));
        return;
      }
      entry.key = std::string(key);
      const size_t bytes = entry.bytes;
      shard.lru.push_front(std::move(entry));
      shard.index.emplace(shard.lru.front().key, shard.lru.begin());
      shard.bytes += bytes;
      counters.AddResident(static_cast<int64_t>(bytes), 1);
      // The new entry fits the budget on its own, so this stops before it.
      while (shard.bytes > shard_budget) {
        auto victim = VictimLocked(shard, shard.lru.begin());
        after.evicted_bytes.push_back(victim->bytes);
        RemoveLocked(shard, victim, after);
      }
    }

    void RemoveLocked(Shard& shard, typename EntryList::iterator node, Aftermath& after) {
      shard.index.erase(node->key);
      shard.bytes -= node->bytes;
      counters.AddResident(-static_cast<int64_t>(node->bytes), -1);
      after.dropped.splice(after.dropped.end(), shard.lru, node);
    }

    void Report(const Aftermath& after) {
      for (size_t bytes : after.evicted_bytes) counters.Eviction(bytes);
      if (after.oversized) counters.Oversized(after.oversized_bytes);
    }

    size_t CancelInFlight() {
      size_t n = 0;
      for (size_t i = 0; i < shard_count; ++i) {
        Shard& shard = shards[i];
        std::lock_guard<std::mutex> lock(shard.mu);
        for (auto& [key, flight] : shard.flights) {
          flight->cancelled.store(true);
          ++n;
        }
      }
      return n;
    }

    std::vector<CacheEntryInfo> Entries() const {
      std::vector<CacheEntryInfo> out;
      for (size_t i = 0; i < shard_count; ++i) {
        Shard& shard = shards[i];
        std::lock_guard<std::mutex> lock(shard.mu);
        for (const Entry& e : shard.lru) {
          out.push_back(CacheEntryInfo{e.key, e.bytes, e.value == nullptr});
        }
      }
      return out;
    }

    Options options;
    const size_t shard_count;
    const int shard_shift;
    const size_t shard_budget;
    const Clock& clock;
    const std::unique_ptr<Shard[]> shards;
    CacheCounters counters;
  };

  const std::shared_ptr<Impl> impl_;

 public:
  class Ticket {
   public:
    Ticket() = default;
    // Stops waiting: the caller's `done` is not called after Leave returns
    // (it may be running on another thread while Leave is called: the
    // caller settles that race itself). When this was the compute's last
    // waiter and Options::cancel_abandoned is set, the compute is cancelled.
    void Leave() {
      if (flight_ != nullptr && id_ != 0) impl_->Leave(*flight_, id_);
      flight_ = nullptr;
    }

   private:
    friend struct Impl;
    Ticket(std::shared_ptr<Impl> impl, std::shared_ptr<Flight> flight, uint64_t id)
        : impl_(std::move(impl)), flight_(std::move(flight)), id_(id) {}
    std::shared_ptr<Impl> impl_;
    std::shared_ptr<Flight> flight_;
    uint64_t id_ = 0;
  };
};

}  // namespace maskd

#endif  // MASKD_CACHE_SHARDED_LRU_CACHE_H_
