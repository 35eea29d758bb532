#include "compiler/regex/expr_set.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/regex/utf8.h"

namespace maskd::regex {
namespace {

constexpr uint32_t kInf = ExprSet::kUnbounded;

uint32_t SatAdd(uint32_t a, uint32_t b) {
  uint64_t s = uint64_t{a} + b;
  return s >= kInf ? kInf : static_cast<uint32_t>(s);
}
uint32_t SatMul(uint32_t a, uint32_t b) {
  if (a == 0 || b == 0) return 0;
  uint64_t p = uint64_t{a} * b;
  return (a == kInf || b == kInf || p >= kInf) ? kInf : static_cast<uint32_t>(p);
}

constexpr uint32_t kSurrogateLo = 0xD800;
constexpr uint32_t kSurrogateHi = 0xDFFF;
constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// A UTF-8 byte-range sequence: position i takes a byte in ranges[i].
struct Utf8Seq {
  int len = 0;
  std::array<std::pair<uint8_t, uint8_t>, 4> ranges{};
};

// Splits lo..hi (no surrogates inside) into byte-range sequences, as RE2 and
// the utf8-ranges crate do: first at encoding-length boundaries, then until
// every continuation position spans a full or aligned range.
void SplitUtf8(uint32_t lo, uint32_t hi, std::vector<Utf8Seq>& out) {
  static constexpr uint32_t kLenMax[] = {0x7F, 0x7FF, 0xFFFF};
  for (uint32_t m : kLenMax) {
    if (lo <= m && hi > m) {
      SplitUtf8(lo, m, out);
      SplitUtf8(m + 1, hi, out);
      return;
    }
  }
  for (int i = 1; i < 4; ++i) {
    uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        SplitUtf8(lo, lo | m, out);
        SplitUtf8((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        SplitUtf8(lo, (hi & ~m) - 1, out);
        SplitUtf8(hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  Utf8Seq seq;
  seq.len = EncodeUtf8(lo, a);
  EncodeUtf8(hi, b);
  for (int i = 0; i < seq.len; ++i) seq.ranges[i] = {a[i], b[i]};
  out.push_back(seq);
}

}  // namespace

std::vector<CodepointRange> NormalizeCodepointRanges(std::vector<CodepointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodepointRange& x, const CodepointRange& y) { return x.lo < y.lo; });
  std::vector<CodepointRange> merged;
  for (CodepointRange r : ranges) {
    if (r.lo > r.hi || r.lo > kMaxCodepoint) continue;
    r.hi = std::min(r.hi, kMaxCodepoint);
    if (!merged.empty() && r.lo <= SatAdd(merged.back().hi, 1)) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  std::vector<CodepointRange> out;
  for (CodepointRange r : merged) {
    if (r.hi < kSurrogateLo || r.lo > kSurrogateHi) {
      out.push_back(r);
      continue;
    }
    if (r.lo < kSurrogateLo) out.push_back({r.lo, kSurrogateLo - 1});
    if (r.hi > kSurrogateHi) out.push_back({kSurrogateHi + 1, r.hi});
  }
  return out;
}

std::vector<CodepointRange> ComplementCodepointRanges(std::span<const CodepointRange> ranges) {
  std::vector<CodepointRange> out;
  uint32_t next = 0;
  for (const CodepointRange& r : ranges) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return NormalizeCodepointRanges(std::move(out));
}

ExprSet::ExprSet() {
  class_rep_.push_back(0);  // One class holding every byte.
  Intern(Key{ExprKind::kNothing, 0, 0, {}}, 0, 0, 0);
  Intern(Key{ExprKind::kEpsilon, 0, 0, {}}, kNullableFlag, 0, 0);
  Bytes(ByteSet::All());
  Intern(Key{ExprKind::kRepeat, 0, kInf, {kAnyByte}}, kNullableFlag, 0, kInf);
}

void ExprSet::ChargeWork(uint64_t cost) {
  if (work_left_ == 0) return;
  if (cost >= work_left_) {
    work_left_ = 0;
    throw WorkBudgetExhausted{};
  }
  work_left_ -= cost;
  work_limit_used_ += cost;
}

ExprId ExprSet::Intern(Key key, uint8_t flags, uint32_t min_len, uint32_t max_len) {
  ChargeWork(1 + key.args.size());
  auto [it, inserted] = interned_.try_emplace(key, static_cast<ExprId>(nodes_.size()));
  if (!inserted) return it->second;
  Node n;
  n.kind = key.kind;
  n.flags = flags;
  n.b = key.b;
  n.c = key.c;
  n.min_len = min_len;
  n.max_len = max_len;
  n.completion_bound = ComputeCompletionBound(key);
  if (key.kind == ExprKind::kRepeat && key.c != kInf && key.c >= 2) n.flags |= kCounterFlag;
  if (key.kind == ExprKind::kRepeat && (key.b >= 2 || key.c != kInf)) n.flags |= kBoundedRepeatFlag;
  if (key.kind != ExprKind::kByteSet) {
    for (ExprId a : key.args) n.flags |= nodes_[a].flags & (kCounterFlag | kBoundedRepeatFlag);
  }
  switch (key.kind) {
    case ExprKind::kByteSet:
      n.a = key.b;
      break;
    case ExprKind::kMachine:
      n.a = key.a;
      break;
    default:
      n.args_begin = static_cast<uint32_t>(args_.size());
      n.args_len = static_cast<uint32_t>(key.args.size());
      args_.insert(args_.end(), key.args.begin(), key.args.end());
  }
  nodes_.push_back(n);
  emptiness_.push_back(0);
  first_bytes_of_.push_back(0);
  const ExprId id = it->second;
  fingerprints_.push_back(ComputeFingerprint(key));
  return id;
}

void Fingerprint::Fold(uint64_t v) {
  // splitmix64's finalizer: a bijective mixer with full avalanche.
  auto mix = [](uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  };
  // Two independently seeded lanes.
  hi = mix(hi ^ mix(v ^ 0x6A09E667F3BCC908ull));
  lo = mix(lo ^ mix(v ^ 0xBB67AE8584CAA73Bull) ^ hi);
}

uint32_t ExprSet::ComputeCompletionBound(const Key& key) const {
  switch (key.kind) {
    case ExprKind::kNothing:
    case ExprKind::kEpsilon:
      return 0;
    case ExprKind::kByteSet:
      return 1;
    case ExprKind::kConcat: {
      // A live prefix of ab is live in a (then a's bound plus the shortest
      // b) or has finished an a and is live in b.
      const ExprId a = key.args[0], b = key.args[1];
      return std::max(SatAdd(CompletionBound(a), MinLength(b)), CompletionBound(b));
    }
    case ExprKind::kOr: {
      uint32_t bound = 0;
      for (ExprId a : key.args) bound = std::max(bound, CompletionBound(a));
      return bound;
    }
    case ExprKind::kRepeat: {
      // A live prefix of a{lo,hi} is j whole a's and a live prefix of one
      // more: at most that one's bound plus lo - 1 shortest a's remain.
      const ExprId a = key.args[0];
      return SatAdd(CompletionBound(a), SatMul(key.b > 0 ? key.b - 1 : 0, MinLength(a)));
    }
    case ExprKind::kAnd:
    case ExprKind::kNot:
    case ExprKind::kMachine:  // No bound is known for a machine.
      return kInf;
  }
  return kInf;
}

Fingerprint ExprSet::ComputeFingerprint(const Key& key) const {
  Fingerprint f{static_cast<uint64_t>(key.kind) + 1, ~static_cast<uint64_t>(key.kind)};
  auto fold_child = [&](const Fingerprint& c) {
    f.Fold(c.hi);
    f.Fold(c.lo);
  };
  switch (key.kind) {
    case ExprKind::kNothing:
    case ExprKind::kEpsilon:
      break;
    case ExprKind::kByteSet:
      for (uint64_t w : byte_sets_[key.b].words()) f.Fold(w);
      break;
    case ExprKind::kOr:
    case ExprKind::kAnd: {
      // Args are sorted by id, which differs between pools: sort by
      // fingerprint so equal structures fingerprint equally everywhere.
      absl::InlinedVector<Fingerprint, 8> args;
      for (ExprId a : key.args) args.push_back(fingerprints_[a]);
      std::sort(args.begin(), args.end());
      for (const Fingerprint& a : args) fold_child(a);
      break;
    }
    case ExprKind::kRepeat:
      f.Fold((uint64_t{key.b} << 32) | key.c);
      [[fallthrough]];
    case ExprKind::kConcat:
    case ExprKind::kNot:
      for (ExprId a : key.args) fold_child(fingerprints_[a]);
      break;
    case ExprKind::kMachine:
      machines_[key.a]->FoldIdentity(f);
      f.Fold((uint64_t{key.c} << 32) | key.b);
      break;
  }
  return f;
}

std::span<const ExprId> ExprSet::Args(ExprId e) const {
  const Node& n = nodes_[e];
  return std::span<const ExprId>(args_.data() + n.args_begin, n.args_len);
}

void ExprSet::RefineClasses(const ByteSet& set) {
  const int n = num_byte_classes();
  std::vector<uint8_t> has_in(n, 0), has_out(n, 0);
  for (int b = 0; b < 256; ++b) {
    (set.Contains(static_cast<uint8_t>(b)) ? has_in : has_out)[byte_class_[b]] = 1;
  }
  std::vector<int> new_id(n, -1);
  for (int b = 0; b < 256; ++b) {
    uint8_t c = byte_class_[b];
    if (!has_in[c] || !has_out[c] || !set.Contains(static_cast<uint8_t>(b))) continue;
    if (new_id[c] < 0) {
      new_id[c] = static_cast<int>(class_rep_.size());
      class_rep_.push_back(static_cast<uint8_t>(b));
    }
    byte_class_[b] = static_cast<uint8_t>(new_id[c]);
  }
  // Representatives of split classes may have moved; recompute all.
  std::vector<int> seen(class_rep_.size(), 0);
  for (int b = 0; b < 256; ++b) {
    if (!seen[byte_class_[b]]) {
      seen[byte_class_[b]] = 1;
      class_rep_[byte_class_[b]] = static_cast<uint8_t>(b);
    }
  }
}

ExprId ExprSet::Bytes(const ByteSet& set) {
  if (set.Empty()) return kNothing;
  auto it = byte_set_ids_.find(set);
  if (it != byte_set_ids_.end()) return it->second;
  uint32_t index = static_cast<uint32_t>(byte_sets_.size());
  byte_sets_.push_back(set);
  RefineClasses(set);
  ExprId id = Intern(Key{ExprKind::kByteSet, index, 0, {}}, 0, 1, 1);
  byte_set_ids_.emplace(set, id);
  return id;
}

ExprId ExprSet::Concat(ExprId a, ExprId b) {
  if (a == kNothing || b == kNothing) return kNothing;
  if (a == kEpsilon) return b;
  if (b == kEpsilon) return a;
  if (kind(a) == ExprKind::kConcat) {
    const uint64_t key = (uint64_t{a} << 32) | b;
    if (auto it = reassociated_.find(key); it != reassociated_.end()) return it->second;
    // Re-associate iteratively: a long left chain (a derivative of a long
    // literal) must not cost stack depth.
    std::vector<ExprId> items;
    for (ExprId x = a; kind(x) == ExprKind::kConcat; x = Args(x)[1]) items.push_back(Args(x)[0]);
    ExprId last = a;
    while (kind(last) == ExprKind::kConcat) last = Args(last)[1];
    items.push_back(last);
    ExprId acc = b;
    for (size_t i = items.size(); i-- > 0;) acc = Concat(items[i], acc);
    reassociated_.emplace(key, acc);
    return acc;
  }
  uint8_t flags = ((nodes_[a].flags & nodes_[b].flags) & kNullableFlag) |
                  ((nodes_[a].flags | nodes_[b].flags) & kBooleanFlag);
  return Intern(Key{ExprKind::kConcat, 0, 0, {a, b}}, flags, SatAdd(MinLength(a), MinLength(b)),
                SatAdd(MaxLength(a), MaxLength(b)));
}

ExprId ExprSet::Concat(std::span<const ExprId> parts) {
  ExprId acc = kEpsilon;
  for (size_t i = parts.size(); i-- > 0;) acc = Concat(parts[i], acc);
  return acc;
}

ExprId ExprSet::Or(std::span<const ExprId> args) {
  std::vector<ExprId> flat;
  ByteSet bytes;
  bool top = false;
  auto add = [&](ExprId a) {
    if (a == kNothing) return;
    if (a == kAnyByteString) top = true;
    if (kind(a) == ExprKind::kByteSet) {
      bytes |= GetByteSet(a);
    } else {
      flat.push_back(a);
    }
  };
  for (ExprId a : args) {
    if (kind(a) == ExprKind::kOr) {
      for (ExprId x : Args(a)) add(x);
    } else {
      add(a);
    }
  }
  if (top) return kAnyByteString;
  if (!bytes.Empty()) flat.push_back(Bytes(bytes));
  // Flattening unions of unions costs their total size (a union of n
  // suffixes derived byte by byte is n unions of n): charged like nodes.
  ChargeWork(flat.size());
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.size() > 1 && flat[0] == kEpsilon &&
      std::any_of(flat.begin() + 1, flat.end(), [&](ExprId x) { return Nullable(x); })) {
    flat.erase(flat.begin());
  }
  if (flat.empty()) return kNothing;
  if (flat.size() == 1) return flat[0];
  uint8_t flags = 0;
  uint32_t lo = kInf, hi = 0;
  for (ExprId x : flat) {
    flags |= nodes_[x].flags;
    lo = std::min(lo, MinLength(x));
    hi = std::max(hi, MaxLength(x));
  }
  return Intern(Key{ExprKind::kOr, 0, 0, {flat.begin(), flat.end()}}, flags, lo, hi);
}

ExprId ExprSet::And(std::span<const ExprId> args) {
  std::vector<ExprId> flat;
  ByteSet bytes = ByteSet::All();
  bool has_bytes = false, nothing = false;
  auto add = [&](ExprId a) {
    if (a == kNothing) nothing = true;
    if (a == kAnyByteString) return;
    if (kind(a) == ExprKind::kByteSet) {
      bytes &= GetByteSet(a);
      has_bytes = true;
    } else {
      flat.push_back(a);
    }
  };
  for (ExprId a : args) {
    if (kind(a) == ExprKind::kAnd) {
      for (ExprId x : Args(a)) add(x);
    } else {
      add(a);
    }
  }
  if (nothing) return kNothing;
  if (has_bytes) {
    if (bytes.Empty()) return kNothing;
    flat.push_back(Bytes(bytes));
  }
  ChargeWork(flat.size());  // as in Or
  std::sort(flat.begin(), flat.end());
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.empty()) return kAnyByteString;
  if (flat.size() == 1) return flat[0];
  uint32_t lo = 0, hi = kInf;
  bool all_nullable = true;
  for (ExprId x : flat) {
    lo = std::max(lo, MinLength(x));
    hi = std::min(hi, MaxLength(x));
    all_nullable = all_nullable && Nullable(x);
    // x and Not(x) together are empty, and so are x and Not(x | y). Once an
    // unanchored pattern `.*P.*` has matched, its derivative is `.*P.* |
    // .*`; a oneOf branch excluding P (`.* & ~(.*P.*) & ...`) then dies
    // here, by its structure, instead of in an emptiness search over
    // thousands of derivatives (seconds for one mask).
    if (kind(x) == ExprKind::kNot) {
      const ExprId negated = Args(x)[0];
      if (std::binary_search(flat.begin(), flat.end(), negated)) return kNothing;
      if (kind(negated) == ExprKind::kOr) {
        for (ExprId y : Args(negated)) {
          if (std::binary_search(flat.begin(), flat.end(), y)) return kNothing;
        }
      }
    }
  }
  if (lo > hi) return kNothing;
  if (hi == 0) return all_nullable ? kEpsilon : kNothing;
  uint8_t flags = kBooleanFlag | (all_nullable ? kNullableFlag : 0);
  return Intern(Key{ExprKind::kAnd, 0, 0, {flat.begin(), flat.end()}}, flags, lo, hi);
}

ExprId ExprSet::Not(ExprId a) {
  if (kind(a) == ExprKind::kNot) return Args(a)[0];
  if (a == kNothing) return kAnyByteString;
  if (a == kAnyByteString) return kNothing;
  uint8_t flags = kBooleanFlag | (Nullable(a) ? 0 : kNullableFlag);
  return Intern(Key{ExprKind::kNot, 0, 0, {a}}, flags, 0, kInf);
}

ExprId ExprSet::Repeat(ExprId a, uint32_t min, uint32_t max) {
  if (max != kInf && max < min) return kNothing;
  if (max == 0) return kEpsilon;
  if (a == kNothing) return min == 0 ? kEpsilon : kNothing;
  if (a == kEpsilon) return kEpsilon;
  // x nullable: x{m,n} = x{0,n}, one canonical form.
  if (Nullable(a)) min = 0;
  if (min == 1 && max == 1) return a;
  if (kind(a) == ExprKind::kRepeat && min == 0 && max == kInf && RepeatMin(a) == 0 &&
      RepeatMax(a) == kInf) {
    return a;  // (x*)* = x*.
  }
  return RepeatUnchecked(a, min, max);
}

ExprId ExprSet::RepeatUnchecked(ExprId a, uint32_t min, uint32_t max) {
  uint8_t flags = (nodes_[a].flags & kBooleanFlag) | (min == 0 ? kNullableFlag : 0);
  uint32_t max_len = max == kInf ? (MaxLength(a) == 0 ? 0 : kInf) : SatMul(MaxLength(a), max);
  return Intern(Key{ExprKind::kRepeat, min, max, {a}}, flags, SatMul(MinLength(a), min), max_len);
}

ExprId ExprSet::Machine(std::shared_ptr<const ByteMachine> machine, uint64_t state) {
  Fingerprint identity;
  machine->FoldIdentity(identity);
  auto [it, inserted] = machine_ids_.try_emplace(identity, static_cast<uint32_t>(machines_.size()));
  if (inserted) {
    std::vector<uint8_t> reps;
    for (const ByteSet& set : machine->ByteClasses()) {
      if (set.Empty()) continue;
      RefineClasses(set);
      for (int b = 0; b < 256; ++b) {
        if (set.Contains(static_cast<uint8_t>(b))) {
          reps.push_back(static_cast<uint8_t>(b));
          break;
        }
      }
    }
    machines_.push_back(std::move(machine));
    machine_reps_.push_back(std::move(reps));
  }
  return MachineAt(it->second, state);
}

ExprId ExprSet::MachineAt(uint32_t index, uint64_t state) {
  Key key{ExprKind::kMachine, static_cast<uint32_t>(state), static_cast<uint32_t>(state >> 32),
          absl::InlinedVector<ExprId, 3>(), index};
  if (auto it = interned_.find(key); it != interned_.end()) return it->second;
  const bool accepting = machines_[index]->Accepting(state);
  // Live states only (ByteMachine's contract): never empty, so no boolean
  // flag and no emptiness checks.
  return Intern(std::move(key), accepting ? kNullableFlag : 0, MachineDistance(index, state), kInf);
}

uint32_t ExprSet::MachineDistance(uint32_t index, uint64_t state) const {
  // Breadth-first over the machine's states, a few levels and states deep:
  // the depth of the first accepting state, or of the first level not fully
  // explored (a lower bound). An emptiness check of And(range, machine)
  // orders its search by MinLength, so a bound as flat as 0/1 sent it
  // depth-first through thousands of remainders (budget exhausted on
  // `multipleOf 13.5, maximum 100`).
  constexpr uint32_t kMaxDepth = 8;
  constexpr size_t kMaxStates = 48;
  const ByteMachine& m = *machines_[index];
  if (m.Accepting(state)) return 0;
  std::vector<uint64_t> level = {state};
  absl::flat_hash_set<uint64_t> seen = {state};
  for (uint32_t depth = 1; depth <= kMaxDepth; ++depth) {
    std::vector<uint64_t> next;
    for (uint64_t s : level) {
      for (uint8_t b : machine_reps_[index]) {
        const std::optional<uint64_t> n = m.Step(s, b);
        if (!n.has_value() || !seen.insert(*n).second) continue;
        if (m.Accepting(*n)) return depth;
        if (seen.size() > kMaxStates) return depth;  // Level `depth` not fully seen.
        next.push_back(*n);
      }
    }
    level = std::move(next);
  }
  return kMaxDepth + 1;
}

ExprId ExprSet::NonEmptyAtDepth(ExprId e, int depth) {
  if (!Nullable(e)) return e;
  // Deep structures (long runs of optional items) keep the plain form
  // rather than recursing without bound.
  constexpr int kMaxDepth = 32;
  if (depth < kMaxDepth) {
    switch (kind(e)) {
      case ExprKind::kEpsilon:
        return kNothing;
      case ExprKind::kOr: {
        std::vector<ExprId> args(Args(e).begin(), Args(e).end());
        for (ExprId& a : args) a = NonEmptyAtDepth(a, depth + 1);
        return Or(args);
      }
      case ExprKind::kConcat: {
        // ab minus the empty string: a non-empty a, then b; or an empty a,
        // then a non-empty b. (Both are nullable here.)
        const ExprId a = Args(e)[0], b = Args(e)[1];
        return Or(Concat(NonEmptyAtDepth(a, depth + 1), b), NonEmptyAtDepth(b, depth + 1));
      }
      case ExprKind::kRepeat: {
        // x{0,n} minus the empty string: a first non-empty iteration, then
        // up to n-1 more (empty iterations dropped).
        const ExprId x = Args(e)[0];
        const uint32_t max = RepeatMax(e);
        return Concat(NonEmptyAtDepth(x, depth + 1), Repeat(x, 0, max == kInf ? kInf : max - 1));
      }
      default:
        break;
    }
  }
  return And(e, Not(kEpsilon));
}

ExprId ExprSet::Literal(std::string_view bytes) {
  ExprId acc = kEpsilon;
  for (size_t i = bytes.size(); i-- > 0;) acc = Concat(Byte(static_cast<uint8_t>(bytes[i])), acc);
  return acc;
}

ExprId ExprSet::Codepoints(uint32_t lo, uint32_t hi) {
  CodepointRange r{lo, hi};
  return Codepoints(std::span<const CodepointRange>(&r, 1));
}

ExprId ExprSet::Codepoints(std::span<const CodepointRange> ranges) {
  std::vector<CodepointRange> norm =
      NormalizeCodepointRanges(std::vector<CodepointRange>(ranges.begin(), ranges.end()));
  std::vector<Utf8Seq> seqs;
  for (const CodepointRange& r : norm) SplitUtf8(r.lo, r.hi, seqs);
  // Factor common leading byte ranges so the expression is a trie, not a
  // flat union of hundreds of sequences.
  struct Builder {
    ExprSet* set;
    ExprId Build(std::span<const Utf8Seq> seqs, int pos) {
      std::map<std::pair<uint8_t, uint8_t>, std::vector<Utf8Seq>> groups;
      std::vector<ExprId> alts;
      for (const Utf8Seq& s : seqs) {
        if (s.len == pos) {
          alts.push_back(kEpsilon);
        } else {
          groups[s.ranges[pos]].push_back(s);
        }
      }
      for (auto& [range, group] : groups) {
        alts.push_back(
            set->Concat(set->ByteRange(range.first, range.second), Build(group, pos + 1)));
      }
      return set->Or(alts);
    }
  };
  return Builder{this}.Build(seqs, 0);
}

ExprId ExprSet::AnyCodepoint() {
  if (any_codepoint_ == kNothing) any_codepoint_ = Codepoints(0, kMaxCodepoint);
  return any_codepoint_;
}

ExprId ExprSet::Derivative(ExprId e, uint8_t b) {
  uint64_t key = (uint64_t{e} << 8) | b;
  auto it = derivatives_.find(key);
  if (it != derivatives_.end()) return it->second;
  ExprId d = ComputeDerivative(e, b);
  RecordDerivative(e, b, d);
  return d;
}

ByteSet ExprSet::FirstBytes(ExprId e) {
  if (const uint32_t known = first_bytes_of_[e]; known != 0) return first_byte_sets_[known - 1];
  ByteSet out;
  switch (kind(e)) {
    case ExprKind::kNothing:
    case ExprKind::kEpsilon:
      break;
    case ExprKind::kByteSet:
      out = GetByteSet(e);
      break;
    case ExprKind::kConcat:
      // Along the chain while its items are nullable (a loop, as in
      // ComputeDerivative: chains are as long as their patterns).
      for (ExprId rest = e;;) {
        const ExprId l = Args(rest)[0], r = Args(rest)[1];
        out |= FirstBytes(l);
        if (!Nullable(l)) break;
        if (kind(r) != ExprKind::kConcat) {
          out |= FirstBytes(r);
          break;
        }
        rest = r;
      }
      break;
    case ExprKind::kOr:
      for (ExprId a : Args(e)) out |= FirstBytes(a);
      break;
    case ExprKind::kAnd:
      out = ByteSet::All();
      for (ExprId a : Args(e)) out &= FirstBytes(a);
      break;
    case ExprKind::kNot:
      out = ByteSet::All();
      break;
    case ExprKind::kRepeat:
      if (RepeatMax(e) > 0) out = FirstBytes(Args(e)[0]);
      break;
    case ExprKind::kMachine: {
      const ByteMachine& m = *GetMachine(e);
      const uint64_t state = MachineState(e);
      for (int b = 0; b < 256; ++b) {
        if (m.Step(state, static_cast<uint8_t>(b)).has_value()) out.Add(static_cast<uint8_t>(b));
      }
      break;
    }
  }
  auto [it, added] =
      first_byte_set_ids_.try_emplace(out, static_cast<uint32_t>(first_byte_sets_.size()));
  if (added) first_byte_sets_.push_back(out);
  first_bytes_of_[e] = it->second + 1;
  return out;
}

void ExprSet::RecordDerivative(ExprId e, uint8_t b, ExprId d) {
  derivatives_.emplace((uint64_t{e} << 8) | b, d);
  if (!within_.empty() && d != kNothing) {
    if (auto facts = within_.find(e); facts != within_.end()) {
      // A copy: AddWithinFact may rehash within_.
      const absl::InlinedVector<ExprId, 2> us = facts->second;
      for (ExprId u : us) AddWithinFact(d, Derivative(u, b));
    }
  }
}

bool ExprSet::ProveWithin(ExprId x, ExprId u) {
  if (HasBoolean(x) || HasBoolean(u)) return false;
  // Sets of derivatives of u, sorted. Reach(e, S): the derivatives of u that
  // the strings of e lead the members of S to (a superset for repetitions).
  using States = std::vector<ExprId>;
  constexpr size_t kMaxStates = 64;
  constexpr size_t kMaxWork = 200000;
  absl::flat_hash_set<ExprId> seen_states = {u};
  absl::flat_hash_map<std::pair<ExprId, States>, States> memo;
  size_t work = 0;
  bool gave_up = false;
  auto merge = [](States& into, const States& from) {
    States out;
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(out));
    into = std::move(out);
  };
  std::function<States(ExprId, const States&)> reach = [&](ExprId e, const States& in) -> States {
    if (gave_up || in.empty()) return {};
    if (++work > kMaxWork) {
      gave_up = true;
      return {};
    }
    // Concat chains are right-associated and may be long: walk them.
    States states = in;
    for (; kind(e) == ExprKind::kConcat && !gave_up; e = Args(e)[1]) {
      states = reach(Args(e)[0], states);
    }
    if (gave_up) return {};
    const std::pair<ExprId, States> key{e, states};
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    States out;
    switch (kind(e)) {
      case ExprKind::kNothing:
        break;
      case ExprKind::kEpsilon:
        out = states;
        break;
      case ExprKind::kByteSet: {
        // Bytes of one class have equal derivatives: one per class will do.
        // (Copies: derivatives may add byte sets, moving the pool's.)
        const ByteSet set = GetByteSet(e);
        const std::vector<uint8_t> reps = class_rep_;
        absl::flat_hash_set<ExprId> next;
        for (ExprId s : states) {
          for (uint8_t rep : reps) {
            if (set.Contains(rep)) next.insert(Derivative(s, rep));
          }
        }
        out.assign(next.begin(), next.end());
        std::sort(out.begin(), out.end());
        for (ExprId s : out) {
          seen_states.insert(s);
          if (s == kNothing || seen_states.size() > kMaxStates) gave_up = true;
        }
        break;
      }
      case ExprKind::kOr: {
        // A copy: derivatives add nodes, which may move the pool's args.
        const std::vector<ExprId> args(Args(e).begin(), Args(e).end());
        for (ExprId a : args) merge(out, reach(a, states));
        break;
      }
      case ExprKind::kRepeat: {
        // Any number of iterations: the least fixpoint from `states`.
        out = states;
        for (States frontier = states; !frontier.empty() && !gave_up;) {
          States next = reach(Args(e)[0], frontier), added;
          std::set_difference(next.begin(), next.end(), out.begin(), out.end(),
                              std::back_inserter(added));
          merge(out, added);
          frontier = std::move(added);
        }
        break;
      }
      default:  // And, Not: excluded above; Concat: walked above.
        gave_up = true;
        break;
    }
    memo.emplace(key, out);
    return out;
  };
  const States end = reach(x, States{u});
  if (gave_up) return false;
  for (ExprId s : end) {
    if (!Nullable(s)) return false;
  }
  AddWithinFact(x, u);
  return true;
}

void ExprSet::AddWithinFact(ExprId x, ExprId u) {
  std::vector<std::pair<ExprId, ExprId>> work = {{x, u}};
  while (!work.empty()) {
    const auto [a, v] = work.back();
    work.pop_back();
    if (a == kNothing) continue;
    absl::InlinedVector<ExprId, 2>& facts = within_[a];
    if (std::find(facts.begin(), facts.end(), v) != facts.end()) continue;
    facts.push_back(v);
    for (int b = 0; b < 256; ++b) {
      auto it = derivatives_.find((uint64_t{a} << 8) | static_cast<uint64_t>(b));
      if (it == derivatives_.end()) continue;
      const ExprId da = it->second;
      work.push_back({da, Derivative(v, static_cast<uint8_t>(b))});
    }
  }
}

bool ExprSet::ProvablyNonEmpty(ExprId e, int depth) const {
  if (!HasBoolean(e) || Nullable(e)) return e != kNothing;
  if (emptiness_[e] != 0) return emptiness_[e] == 2;
  if (depth > 16) return false;
  switch (kind(e)) {
    case ExprKind::kConcat:
      // Right-associated chains: check the items, then the last element.
      for (; kind(e) == ExprKind::kConcat; e = Args(e)[1]) {
        if (!ProvablyNonEmpty(Args(e)[0], depth + 1)) return false;
      }
      return ProvablyNonEmpty(e, depth + 1);
    case ExprKind::kOr:
      for (ExprId a : Args(e)) {
        if (ProvablyNonEmpty(a, depth + 1)) return true;
      }
      return false;
    case ExprKind::kRepeat:
      return ProvablyNonEmpty(Args(e)[0], depth + 1);
    case ExprKind::kAnd: {
      // A length counter whose pattern has a short enough member: that
      // member has at most MinLength(body) units (each at least a byte).
      std::optional<CountedAnd> c = AsCountedAnd(e);
      return c.has_value() && c->min == 0 && MinLength(c->body) <= c->max;
    }
    default:
      return false;
  }
}

std::optional<ExprSet::CountedAnd> ExprSet::AsCountedAnd(ExprId e) const {
  if (kind(e) != ExprKind::kAnd || Args(e).size() != 2) return std::nullopt;
  // A Concat chain split into its items (left args) and its last element.
  auto split = [&](ExprId c, absl::InlinedVector<ExprId, 4>& items) {
    for (; kind(c) == ExprKind::kConcat; c = Args(c)[1]) items.push_back(Args(c)[0]);
    return c;
  };
  for (int i = 0; i < 2; ++i) {
    const ExprId body = Args(e)[i];
    if (HasBoolean(body)) continue;
    absl::InlinedVector<ExprId, 4> items;
    const ExprId counter = split(Args(e)[1 - i], items);
    if (kind(counter) != ExprKind::kRepeat) continue;
    const ExprId unit = Args(counter)[0];
    if (MinLength(unit) < 1) continue;
    for (ExprId u : KnownWithin(body)) {
      absl::InlinedVector<ExprId, 4> star_items;
      const ExprId star = split(u, star_items);
      if (star_items == items && kind(star) == ExprKind::kRepeat && Args(star)[0] == unit &&
          RepeatMin(star) == 0 && RepeatMax(star) == kInf) {
        return CountedAnd{body, RepeatMin(counter), RepeatMax(counter)};
      }
    }
  }
  return std::nullopt;
}

std::span<const ExprId> ExprSet::KnownWithin(ExprId x) const {
  auto it = within_.find(x);
  if (it == within_.end()) return {};
  return std::span<const ExprId>(it->second.data(), it->second.size());
}

ExprId ExprSet::ComputeDerivative(ExprId e, uint8_t b) {
  switch (kind(e)) {
    case ExprKind::kNothing:
    case ExprKind::kEpsilon:
      return kNothing;
    case ExprKind::kByteSet:
      return GetByteSet(e).Contains(b) ? kEpsilon : kNothing;
    case ExprKind::kConcat: {
      // d(l r) = d(l) r, or d(l) r | d(r) when l is nullable. Along a chain
      // of nullable items (`a?a?a?...`, as long as the pattern) that is one
      // flat union, collected in a loop: recursing into d(r) was one stack
      // frame per item, and memoizing every suffix's union quadratic.
      std::vector<ExprId> parts;
      ExprId rest = e;
      while (true) {
        const ExprId l = Args(rest)[0], r = Args(rest)[1];
        parts.push_back(Concat(Derivative(l, b), r));
        if (!Nullable(l)) break;
        if (auto known = derivatives_.find((uint64_t{r} << 8) | b); known != derivatives_.end()) {
          parts.push_back(known->second);
          break;
        }
        if (kind(r) != ExprKind::kConcat) {
          parts.push_back(Derivative(r, b));
          break;
        }
        rest = r;
      }
      return Or(parts);
    }
    case ExprKind::kOr:
    case ExprKind::kAnd: {
      // An argument whose first bytes exclude b has an empty derivative:
      // Nothing, without deriving it (an Or of many key literals, under
      // the Not of an object's other-keys class, mostly has one that b
      // continues).
      std::vector<ExprId> args(Args(e).begin(), Args(e).end());
      for (ExprId& a : args) {
        a = FirstBytes(a).Contains(b) ? Derivative(a, b) : kNothing;
        if (a == kNothing && kind(e) == ExprKind::kAnd) return kNothing;
      }
      return kind(e) == ExprKind::kOr ? Or(args) : And(args);
    }
    case ExprKind::kNot: {
      const ExprId a = Args(e)[0];
      return Not(FirstBytes(a).Contains(b) ? Derivative(a, b) : kNothing);
    }
    case ExprKind::kRepeat: {
      ExprId a = Args(e)[0];
      uint32_t min = RepeatMin(e), max = RepeatMax(e);
      ExprId rest = Repeat(a, min == 0 ? 0 : min - 1, max == kInf ? kInf : max - 1);
      return Concat(Derivative(a, b), rest);
    }
    case ExprKind::kMachine: {
      const uint32_t index = nodes_[e].a;
      const std::optional<uint64_t> next = machines_[index]->Step(MachineState(e), b);
      return next.has_value() ? MachineAt(index, *next) : kNothing;
    }
  }
  return kNothing;
}

absl::StatusOr<bool> ExprSet::IsEmpty(ExprId e, size_t budget,
                                      std::chrono::steady_clock::time_point deadline) {
  if (e == kNothing) return true;
  if (Nullable(e) || !HasBoolean(e)) return false;
  if (emptiness_[e] != 0) return emptiness_[e] == 1;
  if (ProvablyNonEmpty(e, 0)) {
    emptiness_[e] = 2;
    return false;
  }
  if (ProbeWitness(e)) return false;
  // Best-first search over derivatives (by one byte per class) for a nullable
  // one, expanding the expression with the smallest MinLength first (newest
  // on ties): MinLength is a lower bound on the distance to acceptance, so the
  // search heads straight for a witness instead of exploring every shorter
  // string as breadth-first does (which blows up on And with length
  // counters). An empty language still needs the whole closure, in any
  // order. parent[i] lets a success mark the whole path non-empty.
  std::vector<ExprId> found{e};
  std::vector<uint32_t> parent{0};
  absl::flat_hash_set<ExprId> seen{e};
  // (MinLength, index into found): the smallest MinLength, then the largest index.
  auto later = [](const std::pair<uint32_t, uint32_t>& a, const std::pair<uint32_t, uint32_t>& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  std::priority_queue<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint32_t, uint32_t>>,
                      decltype(later)>
      open(later);
  open.push({MinLength(e), 0});
  const std::vector<uint8_t> reps = class_rep_;
  deadline = std::min(deadline, interrupt_deadline_);
  for (uint32_t expanded = 0; !open.empty(); ++expanded) {
    if (expanded % 64 == 63) {
      if (interrupt_cancelled_ != nullptr &&
          interrupt_cancelled_->load(std::memory_order_relaxed)) {
        return absl::CancelledError(
            absl::StrCat("regex emptiness check cancelled after ", seen.size(),
                         " states: no caller waits for the compile any more"));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return absl::DeadlineExceededError(absl::StrCat(
            "regex emptiness check ran past the time limit after ", seen.size(), " states"));
      }
    }
    const uint32_t i = open.top().second;
    open.pop();
    for (uint8_t r : reps) {
      ExprId d = Derivative(found[i], r);
      if (d == kNothing || emptiness_[d] == 1) continue;
      if (Nullable(d) || !HasBoolean(d) || emptiness_[d] == 2) {
        for (uint32_t j = i;; j = parent[j]) {
          emptiness_[found[j]] = 2;
          if (j == 0) break;
        }
        return false;
      }
      if (!seen.insert(d).second) continue;
      if (seen.size() > budget) {
        return absl::ResourceExhaustedError(
            absl::StrCat("regex emptiness check exceeded its budget of ", budget, " states"));
      }
      found.push_back(d);
      parent.push_back(i);
      open.push({MinLength(d), static_cast<uint32_t>(found.size() - 1)});
    }
  }
  // Closed under derivatives and nothing nullable: all of them are empty.
  for (ExprId x : found) emptiness_[x] = 1;
  return true;
}

bool ExprSet::ProbeWitness(ExprId e) {
  // Most emptiness questions come from a lazy DFA stepping through a lexeme
  // that is far from empty; a full expansion computes one derivative per
  // byte class (often ~100) at every step. This probe descends greedily
  // instead: it takes the first derivative that lowers MinLength (a lower
  // bound, so it cannot fall forever), trying the bytes that made progress
  // recently first. Every expression on a path that reaches a non-empty one
  // is non-empty itself.
  std::vector<ExprId> path{e};
  const size_t max_steps = size_t{MinLength(e)} + 1;
  for (size_t step = 0; step < max_steps; ++step) {
    const ExprId cur = path.back();
    bool progressed = false;
    auto try_byte = [&](uint8_t b) {
      const ExprId d = Derivative(cur, b);
      if (d == kNothing || emptiness_[d] == 1) return false;
      if (Nullable(d) || !HasBoolean(d) || emptiness_[d] == 2) {
        for (ExprId x : path) emptiness_[x] = 2;
        return true;
      }
      if (MinLength(d) < MinLength(cur)) {
        path.push_back(d);
        progressed = true;
        // Move to front: a lexeme tends to make progress on the same bytes.
        std::rotate(probe_hints_.begin(), probe_hints_.end() - 1, probe_hints_.end());
        probe_hints_[0] = b;
      }
      return false;
    };
    for (size_t h = 0; h < probe_hints_.size() && !progressed; ++h) {
      if (try_byte(probe_hints_[h])) return true;
    }
    for (size_t c = 0; c < class_rep_.size() && !progressed; ++c) {
      if (try_byte(class_rep_[c])) return true;
    }
    if (!progressed) return false;
  }
  return false;
}

bool ExprSet::Matches(ExprId e, std::string_view bytes) {
  for (char c : bytes) {
    e = Derivative(e, static_cast<uint8_t>(c));
    if (e == kNothing) return false;
  }
  return Nullable(e);
}

size_t ExprSet::MemoryBytes() const {
  // flat_hash_map slots plus control bytes, roughly.
  auto map_bytes = [](size_t capacity, size_t slot) { return capacity * (slot + 1); };
  return nodes_.capacity() * sizeof(Node) + args_.capacity() * sizeof(ExprId) +
         byte_sets_.capacity() * sizeof(ByteSet) + emptiness_.capacity() +
         fingerprints_.capacity() * sizeof(Fingerprint) +
         map_bytes(interned_.capacity(), sizeof(std::pair<Key, ExprId>)) +
         map_bytes(byte_set_ids_.capacity(), sizeof(std::pair<ByteSet, ExprId>)) +
         map_bytes(derivatives_.capacity(), sizeof(std::pair<uint64_t, ExprId>)) +
         first_bytes_of_.capacity() * sizeof(uint32_t) +
         first_byte_sets_.capacity() * sizeof(ByteSet) +
         map_bytes(first_byte_set_ids_.capacity(), sizeof(std::pair<ByteSet, uint32_t>)) +
         map_bytes(reassociated_.capacity(), sizeof(std::pair<uint64_t, ExprId>));
}

namespace {

void AppendByte(uint8_t b, std::string& out) {
  if (b >= 0x21 && b < 0x7F &&
      std::string_view("\\[]-^.()|&~*+?{}").find(b) == std::string_view::npos) {
    out.push_back(static_cast<char>(b));
  } else {
    absl::StrAppendFormat(&out, "\\x%02X", b);
  }
}

}  // namespace

std::string ExprSet::ToString(ExprId e) const {
  std::string out;
  AppendString(e, 0, out);
  return out;
}

// Precedence: 0 Or, 1 And, 2 Concat, 3 unary. Parenthesize when the parent
// binds tighter.
void ExprSet::AppendString(ExprId e, int parent_prec, std::string& out) const {
  auto wrap = [&](int prec, auto body) {
    if (prec < parent_prec) out += '(';
    body();
    if (prec < parent_prec) out += ')';
  };
  switch (kind(e)) {
    case ExprKind::kNothing:
      out += "<nothing>";
      return;
    case ExprKind::kEpsilon:
      out += "<empty>";
      return;
    case ExprKind::kByteSet: {
      const ByteSet& s = GetByteSet(e);
      if (s.IsAll()) {
        out += '.';
        return;
      }
      if (s.Count() == 1) {
        for (int b = 0; b < 256; ++b) {
          if (s.Contains(static_cast<uint8_t>(b))) AppendByte(static_cast<uint8_t>(b), out);
        }
        return;
      }
      out += '[';
      for (int b = 0; b < 256; ++b) {
        if (!s.Contains(static_cast<uint8_t>(b))) continue;
        int hi = b;
        while (hi + 1 < 256 && s.Contains(static_cast<uint8_t>(hi + 1))) ++hi;
        AppendByte(static_cast<uint8_t>(b), out);
        if (hi > b) {
          if (hi > b + 1) out += '-';
          AppendByte(static_cast<uint8_t>(hi), out);
        }
        b = hi;
      }
      out += ']';
      return;
    }
    case ExprKind::kConcat:
      // Right-associated chains may be as long as a literal: walk them.
      wrap(2, [&] {
        ExprId rest = e;
        for (; kind(rest) == ExprKind::kConcat; rest = Args(rest)[1]) {
          AppendString(Args(rest)[0], 3, out);
        }
        AppendString(rest, 2, out);
      });
      return;
    case ExprKind::kOr:
    case ExprKind::kAnd: {
      int prec = kind(e) == ExprKind::kOr ? 0 : 1;
      wrap(prec, [&] {
        bool first = true;
        for (ExprId a : Args(e)) {
          if (!first) out += prec == 0 ? '|' : '&';
          first = false;
          AppendString(a, prec + 1, out);
        }
      });
      return;
    }
    case ExprKind::kNot:
      out += '~';
      AppendString(Args(e)[0], 3, out);
      return;
    case ExprKind::kRepeat: {
      AppendString(Args(e)[0], 4, out);
      uint32_t min = RepeatMin(e), max = RepeatMax(e);
      if (min == 0 && max == kInf) {
        out += '*';
      } else if (min == 1 && max == kInf) {
        out += '+';
      } else if (min == 0 && max == 1) {
        out += '?';
      } else if (max == kInf) {
        absl::StrAppend(&out, "{", min, ",}");
      } else if (min == max) {
        absl::StrAppend(&out, "{", min, "}");
      } else {
        absl::StrAppend(&out, "{", min, ",", max, "}");
      }
      return;
    }
    case ExprKind::kMachine:
      absl::StrAppend(&out, "<", GetMachine(e)->Name(), "@", MachineState(e), ">");
      return;
  }
}

}  // namespace maskd::regex
