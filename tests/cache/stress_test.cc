// Many threads doing random GetOrCompute / Get / Insert / Erase (and the odd
// Clear) over a small key space with a tight byte budget, so evictions, joins,
// cached errors and their expiry all interleave. Afterwards the cache's byte
// and entry accounting must match its contents exactly, every result must
// belong to its key, and every value must be released after Clear.
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/clock.h"
#include "cache/sharded_lru_cache.h"
#include "gtest/gtest.h"
#include "tests/cache/test_values.h"

namespace maskd::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kOpsPerThread = 3000;
constexpr int kKeys = 24;

std::string KeyName(int i) { return "grammar-" + std::to_string(i); }
// Deterministic per key so results and charges can be checked afterwards.
size_t ValueBytes(int i) { return 40 + 37 * static_cast<size_t>(i % 9); }
bool FailsToCompile(int i) { return i % 5 == 0; }
bool Throws(int i) { return i % 7 == 3; }

struct ThreadTally {
  uint64_t lookups = 0;  // Get + GetOrCompute calls.
  uint64_t wrong_results = 0;
};

TEST(CacheStress, RandomOperationsKeepAccountingExact) {
  FakeClock clock;
  auto options = BlobOptions(/*max_bytes=*/4 * 600, /*num_shards=*/4);
  options.clock = &clock;
  options.error_ttl = absl::Milliseconds(50);
  BlobCache cache(options);
  const int live_before = Blob::live();

  std::vector<ThreadTally> tallies(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::uniform_int_distribution<int> key_dist(0, kKeys - 1);
      std::uniform_int_distribution<int> op_dist(0, 99);
      ThreadTally& tally = tallies[t];
      for (int op = 0; op < kOpsPerThread; ++op) {
        const int k = key_dist(rng);
        const std::string key = KeyName(k);
        const int choice = op_dist(rng);
        if (choice < 60) {
          ++tally.lookups;
          BlobResult r = cache.GetOrCompute(key, [k, &key]() -> BlobResult {
            if (Throws(k)) throw std::runtime_error("boom");
            if (FailsToCompile(k)) return absl::InvalidArgumentError("bad spec " + key);
            return MakeBlob(key, ValueBytes(k));
          });
          const bool should_fail = Throws(k) || FailsToCompile(k);
          if (r.ok() == should_fail || (r.ok() && (*r)->key() != key)) ++tally.wrong_results;
        } else if (choice < 75) {
          ++tally.lookups;
          auto value = cache.Get(key);
          if (value != nullptr && value->key() != key) ++tally.wrong_results;
        } else if (choice < 85) {
          cache.Erase(key);
        } else if (choice < 95) {
          if (!FailsToCompile(k) && !Throws(k)) cache.Insert(key, MakeBlob(key, ValueBytes(k)));
        } else if (choice < 99) {
          clock.Advance(absl::Milliseconds(10));
        } else if (op % 8 == 0) {
          cache.Clear();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  uint64_t lookups = 0;
  for (const ThreadTally& tally : tallies) {
    EXPECT_EQ(tally.wrong_results, 0u);
    lookups += tally.lookups;
  }

  const CacheStats stats = cache.stats();
  const std::vector<CacheEntryInfo> entries = cache.Entries();
  size_t bytes = 0;
  absl::flat_hash_map<std::string, int> seen;
  for (const CacheEntryInfo& e : entries) {
    bytes += e.bytes;
    ++seen[e.key];
    const int k = std::stoi(e.key.substr(e.key.find('-') + 1));
    if (e.is_error) {
      EXPECT_TRUE(FailsToCompile(k) || Throws(k)) << e.key;
    } else {
      EXPECT_EQ(e.bytes, ValueBytes(k)) << e.key;
    }
  }
  for (const auto& [key, count] : seen) EXPECT_EQ(count, 1) << key;
  EXPECT_EQ(stats.bytes, bytes);
  EXPECT_EQ(stats.entries, entries.size());
  EXPECT_LE(stats.bytes, stats.capacity_bytes);
  // Every lookup is exactly one of: hit, miss, error hit, join.
  EXPECT_EQ(stats.hits + stats.misses + stats.error_hits + stats.joins, lookups);
  EXPECT_GT(stats.evictions, 0u);
  EXPECT_GT(stats.error_hits, 0u);
  EXPECT_GT(stats.compute_exceptions, 0u);

  // No key is left wedged by an unfinished flight: each one computes again.
  cache.Clear();
  for (int k = 0; k < kKeys; ++k) {
    bool computed = false;
    BlobResult r = cache.GetOrCompute(KeyName(k), [&]() -> BlobResult {
      computed = true;
      return MakeBlob(KeyName(k), 1);
    });
    EXPECT_TRUE(computed) << KeyName(k);
    EXPECT_TRUE(r.ok());
  }
  cache.Clear();
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(Blob::live(), live_before);
}

}  // namespace
}  // namespace maskd::testing
