#include "compiler/regex/horizon.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace maskd::regex {
namespace {

// Seeds no ExprSet fingerprint uses, so a clamped node never fingerprints
// like an unclamped one by construction.
constexpr uint64_t kHorizonSeedHi = 0x486F72697A6F6E31ull;  // "Horizon1"
constexpr uint64_t kHorizonSeedLo = 0x436C616D70656421ull;  // "Clamped!"

class Fingerprinter {
 public:
  Fingerprinter(const ExprSet& pool, uint32_t horizon) : pool_(pool), horizon_(horizon) {}

  // Post-order with an explicit stack: Concat chains of long literals are as
  // deep as the literal is long.
  Fingerprint Run(ExprId root) {
    std::vector<std::pair<ExprId, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [e, children_done] = stack.back();
      stack.pop_back();
      if (memo_.contains(e)) continue;
      // Leaves, and expressions with nothing to clamp within h bytes: the
      // exact fingerprint will do.
      if (pool_.Args(e).empty() || pool_.MaxLength(e) <= horizon_) {
        memo_[e] = pool_.GetFingerprint(e);
        continue;
      }
      if (!children_done) {
        stack.push_back({e, true});
        for (ExprId a : pool_.Args(e)) {
          if (!memo_.contains(a)) stack.push_back({a, false});
        }
        continue;
      }
      memo_[e] = Combine(e);
    }
    return memo_.at(root);
  }

 private:
  Fingerprint Combine(ExprId e) {
    const ExprKind kind = pool_.kind(e);
    Fingerprint f{kHorizonSeedHi + static_cast<uint64_t>(kind), kHorizonSeedLo};
    auto fold = [&](const Fingerprint& c) {
      f.Fold(c.hi);
      f.Fold(c.lo);
    };
    std::span<const ExprId> args = pool_.Args(e);
    switch (kind) {
      case ExprKind::kOr: {
        // Argument order follows pool ids: sort, as ExprSet fingerprints do.
        absl::InlinedVector<Fingerprint, 8> parts;
        for (ExprId a : args) parts.push_back(memo_.at(a));
        std::sort(parts.begin(), parts.end());
        for (const Fingerprint& p : parts) fold(p);
        break;
      }
      case ExprKind::kRepeat: {
        uint32_t lo = pool_.RepeatMin(e);
        uint32_t hi = pool_.RepeatMax(e);
        if (pool_.MinLength(args[0]) >= 1) {
          if (lo > horizon_) lo = horizon_ + 1;
          if (hi > horizon_) hi = ExprSet::kUnbounded;
        }
        f.Fold((uint64_t{lo} << 32) | hi);
        fold(memo_.at(args[0]));
        break;
      }
      default:  // Concat (And and Not are refused before; leaves are exact)
        for (ExprId a : args) fold(memo_.at(a));
        break;
    }
    return f;
  }

  const ExprSet& pool_;
  const uint32_t horizon_;
  absl::flat_hash_map<ExprId, Fingerprint> memo_;
};

}  // namespace

std::optional<Fingerprint> HorizonFingerprint(const ExprSet& pool, ExprId e, uint32_t horizon) {
  if (pool.HasBoolean(e)) return std::nullopt;
  return Fingerprinter(pool, horizon).Run(e);
}

}  // namespace maskd::regex
