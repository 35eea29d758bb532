#include "compiler/json_schema/string_disjointness.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/regex/ecma_regex.h"

namespace maskd::json_schema {
namespace {

// Past this many expressions the pool starts over (answers are kept): each
// emptiness check may add up to its budget of derivatives.
constexpr size_t kMaxPoolExprs = 200'000;
// States one emptiness check may explore.
constexpr size_t kEmptinessBudget = 2000;

// The string constraints of a node, as a key (patterns in order, lengths).
std::string ConstraintKey(const SchemaNode& n) {
  std::string key = absl::StrCat(n.min_length, ":", n.max_length ? *n.max_length : ~uint64_t{0});
  for (const std::string& p : n.patterns) absl::StrAppend(&key, "\x1F", p.size(), ":", p);
  return key;
}

}  // namespace

StringDisjointness::StringDisjointness() : pool_(std::make_unique<regex::ExprSet>()) {}

std::optional<regex::ExprId> StringDisjointness::Parse(const std::string& pattern) {
  if (auto it = parsed_.find(pattern); it != parsed_.end()) return it->second;
  absl::StatusOr<regex::ExprId> e =
      regex::ParseEcmaRegex(pattern, pool_.get(), regex::MatchMode::kSearch);
  std::optional<regex::ExprId> out;
  if (e.ok()) out = *e;
  parsed_.emplace(pattern, out);
  return out;
}

bool StringDisjointness::ProvablyDisjoint(const SchemaNode& a, const SchemaNode& b) {
  const uint64_t lo = std::max(a.min_length, b.min_length);
  std::optional<uint64_t> hi = a.max_length;
  if (b.max_length && (!hi || *b.max_length < *hi)) hi = b.max_length;
  if (hi && lo > *hi) return true;
  if (a.patterns.empty() || b.patterns.empty()) return false;

  const std::string key_a = ConstraintKey(a), key_b = ConstraintKey(b);
  const std::string key =
      key_a < key_b ? absl::StrCat(key_a, "\x1E", key_b) : absl::StrCat(key_b, "\x1E", key_a);
  if (auto it = answers_.find(key); it != answers_.end()) return it->second;

  if (pool_->size() > kMaxPoolExprs) {
    pool_ = std::make_unique<regex::ExprSet>();
    parsed_.clear();
  }
  bool disjoint = false;
  std::vector<regex::ExprId> parts;
  bool parsed_all = true;
  for (const SchemaNode* n : {&a, &b}) {
    for (const std::string& pattern : n->patterns) {
      std::optional<regex::ExprId> e = Parse(pattern);
      if (!e) {
        parsed_all = false;
        break;
      }
      parts.push_back(*e);
    }
  }
  if (parsed_all) {
    constexpr uint64_t kMaxCount = regex::ExprSet::kUnbounded - 1;
    if (lo > 0 || hi) {
      parts.push_back(pool_->Repeat(
          pool_->AnyCodepoint(), static_cast<uint32_t>(std::min(lo, kMaxCount)),
          hi ? static_cast<uint32_t>(std::min(*hi, kMaxCount)) : regex::ExprSet::kUnbounded));
    }
    absl::StatusOr<bool> empty = pool_->IsEmpty(pool_->And(parts), kEmptinessBudget);
    disjoint = empty.ok() && *empty;
  }
  answers_.emplace(key, disjoint);
  return disjoint;
}

}  // namespace maskd::json_schema
