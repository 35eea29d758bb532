#include "compiler/regex/horizon.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace maskd::regex {
namespace {

// Seeds no ExprSet fingerprint uses, so a clamped node never fingerprints
// like an unclamped one by construction.
constexpr uint64_t kHorizonSeedHi = 0x486F72697A6F6E31ull;  // "Horizon1"
constexpr uint64_t kHorizonSeedLo = 0x436C616D70656421ull;  // "Clamped!"

uint32_t SatAdd(uint32_t a, uint32_t b) {
  return a > ExprSet::kUnbounded - b ? ExprSet::kUnbounded : a + b;
}

// For e = And(X, P·Y{0,n}) that agrees with X on every string of at most
// `horizon` bytes (see horizon.h), X; else nullopt.
std::optional<ExprId> CountedAndBody(const ExprSet& pool, ExprId e, uint32_t horizon) {
  std::optional<ExprSet::CountedAnd> c = pool.AsCountedAnd(e);
  if (!c.has_value() || c->min != 0) return std::nullopt;
  if (c->max != ExprSet::kUnbounded && c->max < SatAdd(horizon, pool.CompletionBound(c->body))) {
    return std::nullopt;
  }
  return c->body;
}

// Whether clamp_h(e) is e itself: leaves, expressions with nothing to clamp
// within h bytes, Not, and And other than a length counter with room.
// (Fingerprints keep to this list: the fingerprint of a clamped expression
// is its own combination, so one found equal to e's without clamping is not
// e's exact fingerprint.)
bool ClampsToItself(const ExprSet& pool, ExprId e, uint32_t horizon) {
  const ExprKind kind = pool.kind(e);
  return pool.Args(e).empty() || pool.MaxLength(e) <= horizon || kind == ExprKind::kNot ||
         (kind == ExprKind::kAnd && !CountedAndBody(pool, e, horizon).has_value());
}

// The bounds of the repetition `e` = X{lo,hi} in clamp_h(e): with X at
// least m >= 1 bytes long, at most h / m whole iterations fit in h bytes.
std::pair<uint32_t, uint32_t> ClampedBounds(const ExprSet& pool, ExprId e, uint32_t horizon) {
  uint32_t lo = pool.RepeatMin(e);
  uint32_t hi = pool.RepeatMax(e);
  if (const uint32_t m = pool.MinLength(pool.Args(e)[0]); m >= 1) {
    const uint32_t most = horizon / m;
    if (lo > most) lo = most + 1;
    if (hi > most) hi = ExprSet::kUnbounded;
  }
  return {lo, hi};
}

// Links of a Concat chain between two whose horizon result is kept in the
// caller's memo (by id, so every walk keeps the same ones). The lexer states
// inside a literal are its successive suffixes: a later state's walk stops
// within about this many links at a kept one, and a literal longer than a
// memo's bound does not fill (and clear) it at every state. A hash of the
// id picks them: ids along a chain may go in any stride, and a stride that
// shares a factor with a plain modulus would keep all or none.
bool IsChainCheckpoint(ExprId e) { return (uint32_t{e} * 0x9E3779B1u) >> 27 == 0; }  // 1 in 32

class Fingerprinter {
 public:
  Fingerprinter(const ExprSet& pool, uint32_t horizon, HorizonMemo& memo)
      : pool_(pool), horizon_(horizon), memo_(memo) {}

  // Post-order with an explicit stack: Concat chains of long literals are as
  // deep as the literal is long.
  Fingerprint Run(ExprId root) {
    if (std::optional<Fingerprint> f = Known(root)) return *f;
    std::vector<std::pair<ExprId, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [e, children_done] = stack.back();
      stack.pop_back();
      if (Known(e).has_value()) continue;
      std::optional<ExprId> counted_body;
      if (pool_.kind(e) == ExprKind::kAnd) counted_body = CountedAndBody(pool_, e, horizon_);
      if (!children_done) {
        stack.push_back({e, true});
        if (counted_body.has_value()) {
          stack.push_back({*counted_body, false});
        } else {
          for (ExprId a : pool_.Args(e)) stack.push_back({a, false});
        }
        continue;
      }
      const Fingerprint f = counted_body.has_value() ? *Known(*counted_body) : Combine(e);
      // Chain links other than checkpoints are kept for this walk only.
      if (pool_.kind(e) != ExprKind::kConcat || IsChainCheckpoint(e) || e == root) {
        memo_[Key(e)] = f;
      } else {
        walk_memo_[e] = f;
      }
    }
    return *Known(root);
  }

 private:
  uint64_t Key(ExprId e) const { return (uint64_t{e} << 32) | horizon_; }

  // The fingerprint of e when it needs no clamping (the exact one) or was
  // computed before; else nullopt.
  std::optional<Fingerprint> Known(ExprId e) {
    if (ClampsToItself(pool_, e, horizon_)) return pool_.GetFingerprint(e);
    if (auto it = memo_.find(Key(e)); it != memo_.end()) return it->second;
    if (auto it = walk_memo_.find(e); it != walk_memo_.end()) return it->second;
    return std::nullopt;
  }

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
        for (ExprId a : args) parts.push_back(*Known(a));
        std::sort(parts.begin(), parts.end());
        for (const Fingerprint& p : parts) fold(p);
        break;
      }
      case ExprKind::kRepeat: {
        const auto [lo, hi] = ClampedBounds(pool_, e, horizon_);
        f.Fold((uint64_t{lo} << 32) | hi);
        fold(*Known(args[0]));
        break;
      }
      default:  // Concat (And and Not are handled in Run; leaves are exact)
        for (ExprId a : args) fold(*Known(a));
        break;
    }
    return f;
  }

  const ExprSet& pool_;
  const uint32_t horizon_;
  HorizonMemo& memo_;
  absl::flat_hash_map<ExprId, Fingerprint> walk_memo_;
};

class Clamper {
 public:
  Clamper(ExprSet& pool, uint32_t horizon, HorizonClampMemo& memo)
      : pool_(pool), horizon_(horizon), memo_(memo) {}

  ExprId Clamp(ExprId e) {
    // Without a repetition clamping changes (a length counter holds one), e
    // is its own clamp: a literal's chain, however long, needs no walk.
    if (ClampsToItself(pool_, e, horizon_) || !pool_.HasBoundedRepeat(e)) return e;
    const uint64_t key = Key(e);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    ExprId out = e;
    switch (pool_.kind(e)) {
      case ExprKind::kAnd:  // a length counter with room: its pattern
        out = Clamp(*CountedAndBody(pool_, e, horizon_));
        break;
      case ExprKind::kOr: {
        // Copies: clamping adds nodes, which may move the pool's args.
        std::vector<ExprId> args(pool_.Args(e).begin(), pool_.Args(e).end());
        for (ExprId& a : args) a = Clamp(a);
        out = pool_.Or(args);
        break;
      }
      case ExprKind::kConcat:
        out = ClampChain(e);
        break;
      case ExprKind::kRepeat: {
        const auto [lo, hi] = ClampedBounds(pool_, e, horizon_);
        out = pool_.Repeat(Clamp(pool_.Args(e)[0]), lo, hi);
        break;
      }
      default:
        break;
    }
    memo_.emplace(key, out);
    return out;
  }

 private:
  uint64_t Key(ExprId e) const { return (uint64_t{e} << 32) | horizon_; }

  // A right-associated chain item·rest clamps to Clamp(item)·Clamp(rest).
  // Chains are as long as a literal, so this walks down in a loop to the
  // first suffix whose clamp is known (memoized, or itself), then rebuilds
  // upwards, memoizing suffixes on the way. The lexer states inside a
  // literal are its successive suffixes: each later state's clamp is then a
  // short walk to a memoized suffix, not a walk and re-interning of the
  // whole rest (a 40,000-byte literal cost ~20 ms per mask that way).

  ExprId ClampChain(ExprId e) {
    std::vector<ExprId> suffixes;  // still to clamp, outermost first
    ExprId rest = e;
    ExprId out = e;
    while (true) {
      if (ClampsToItself(pool_, rest, horizon_) || !pool_.HasBoundedRepeat(rest)) {
        out = rest;
        break;
      }
      if (auto it = memo_.find(Key(rest)); it != memo_.end()) {
        out = it->second;
        break;
      }
      if (pool_.kind(rest) != ExprKind::kConcat) {
        out = Clamp(rest);
        break;
      }
      suffixes.push_back(rest);
      rest = pool_.Args(rest)[1];
    }
    for (size_t i = suffixes.size(); i-- > 0;) {
      const ExprId suffix = suffixes[i];
      // Read before clamping: new nodes may move the pool's args.
      const ExprId item = pool_.Args(suffix)[0];
      const ExprId tail = pool_.Args(suffix)[1];
      const ExprId clamped_item = Clamp(item);
      out = clamped_item == item && out == tail ? suffix : pool_.Concat(clamped_item, out);
      // Checkpoints keep their clamp (IsChainCheckpoint).
      if (IsChainCheckpoint(suffix) || i == 0) memo_.emplace(Key(suffix), out);
    }
    return out;
  }

  ExprSet& pool_;
  const uint32_t horizon_;
  HorizonClampMemo& memo_;
};

}  // namespace

ExprId HorizonClamp(ExprSet& pool, ExprId e, uint32_t horizon, HorizonClampMemo* memo) {
  HorizonClampMemo local;
  return Clamper(pool, horizon, memo != nullptr ? *memo : local).Clamp(e);
}

Fingerprint HorizonFingerprint(const ExprSet& pool, ExprId e, uint32_t horizon, HorizonMemo* memo) {
  HorizonMemo local;
  return Fingerprinter(pool, horizon, memo != nullptr ? *memo : local).Run(e);
}

}  // namespace maskd::regex
