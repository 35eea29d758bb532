#include "compiler/json_schema/pattern_match.h"

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {
namespace {

// One pool per thread (normalization runs on compile threads), with the
// parsed patterns. Derivatives are memoized in the pool, so repeated values
// and patterns are cheap; the pool is dropped once it grows large, which
// bounds the memory a long-running server spends here.
struct PatternCache {
  static constexpr size_t kMaxPoolNodes = 200'000;
  std::unique_ptr<regex::ExprSet> pool = std::make_unique<regex::ExprSet>();
  absl::flat_hash_map<std::string, absl::StatusOr<regex::ExprId>> parsed;

  void ResetIfLarge() {
    if (pool->size() <= kMaxPoolNodes) return;
    pool = std::make_unique<regex::ExprSet>();
    parsed.clear();
  }
};

}  // namespace

absl::StatusOr<bool> EcmaPatternMatches(const std::string& pattern, std::string_view value) {
  thread_local PatternCache cache;
  cache.ResetIfLarge();
  auto it = cache.parsed.find(pattern);
  if (it == cache.parsed.end()) {
    it = cache.parsed
             .emplace(pattern,
                      regex::ParseEcmaRegex(pattern, cache.pool.get(), regex::MatchMode::kSearch))
             .first;
  }
  if (!it->second.ok()) return it->second.status();
  return cache.pool->Matches(*it->second, value);
}

}  // namespace maskd::json_schema
