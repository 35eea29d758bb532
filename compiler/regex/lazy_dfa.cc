#include "compiler/regex/lazy_dfa.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/regex/horizon.h"

namespace maskd::regex {
namespace {

// One fingerprint for a state's expression fingerprints, in any order: tags
// differ between grammars, so a state is the multiset of its expressions.
// `seed` keeps kinds of fingerprint apart.
Fingerprint MultisetFingerprint(std::vector<Fingerprint> parts, uint64_t seed) {
  std::sort(parts.begin(), parts.end());
  Fingerprint out{parts.size() + seed, ~uint64_t{parts.size()}};
  for (const Fingerprint& p : parts) {
    out.Fold(p.hi);
    out.Fold(p.lo);
  }
  return out;
}

}  // namespace

LazyDfa::LazyDfa(ExprSet* pool, Options options)
    : options_(options),
      byte_class_(pool->byte_class()),
      num_classes_(pool->num_byte_classes()),
      class_rep_(pool->class_representatives()),
      pool_(pool) {
  class_bytes_.resize(num_classes_);
  for (int b = 0; b < 256; ++b) class_bytes_[byte_class_[b]].Add(static_cast<uint8_t>(b));
  max_blocks_ = (std::max<size_t>(options_.max_states, 1) + kBlockMask) >> kBlockShift;
  blocks_ = std::make_unique<Block[]>(max_blocks_);
  std::lock_guard<std::mutex> lock(mu_);
  // State 0 is the dead state; its row loops to itself.
  absl::StatusOr<StateId> dead = InternLocked({});
  if (dead.ok()) {
    for (int c = 0; c < num_classes_; ++c)
      blocks_[0].next[c].store(kDead, std::memory_order_release);
  } else {
    status_ = dead.status();
  }
}

LazyDfa::~LazyDfa() = default;

absl::StatusOr<StateId> LazyDfa::InternLocked(std::vector<TaggedExpr> exprs) const {
  std::vector<uint64_t> key;
  key.reserve(exprs.size());
  for (const TaggedExpr& t : exprs) key.push_back((uint64_t{t.tag} << 32) | t.expr);
  auto it = state_ids_.find(key);
  if (it != state_ids_.end()) return it->second;

  const size_t id = num_states_.load(std::memory_order_relaxed);
  if (id >= options_.max_states) {
    return absl::ResourceExhaustedError(
        absl::StrCat("regex DFA exceeded its limit of ", options_.max_states, " states"));
  }
  const size_t block_index = id >> kBlockShift;
  if (block_index >= num_blocks_) {
    const size_t block_bytes =
        (kBlockMask + 1) * (num_classes_ * sizeof(std::atomic<uint32_t>) + sizeof(StateInfo));
    if (MemoryBytesLocked() + block_bytes > options_.max_memory_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("regex DFA exceeded its memory limit of ",
                                                       options_.max_memory_bytes, " bytes"));
    }
    Block& block = blocks_[block_index];
    const size_t slots = (kBlockMask + 1) * static_cast<size_t>(num_classes_);
    block.next = std::make_unique<std::atomic<uint32_t>[]>(slots);
    for (size_t i = 0; i < slots; ++i) block.next[i].store(kUnknown, std::memory_order_relaxed);
    block.info = std::make_unique<StateInfo[]>(kBlockMask + 1);
    num_blocks_ = block_index + 1;
  }
  StateInfo& info = blocks_[block_index].info[id & kBlockMask];
  for (const TaggedExpr& t : exprs) {
    if (pool_->Nullable(t.expr)) info.accepting_tags.push_back(t.tag);
  }
  info.accepting = !info.accepting_tags.empty();
  state_bytes_ += key.size() * (sizeof(uint64_t) + sizeof(TaggedExpr)) +
                  info.accepting_tags.size() * sizeof(uint32_t) + 64;
  info.exprs = std::move(exprs);
  state_ids_.emplace(std::move(key), static_cast<StateId>(id));
  // Release: a thread that learns the id from num_states_ or from a
  // transition slot sees the block and the info written above.
  num_states_.store(id + 1, std::memory_order_release);
  return static_cast<StateId>(id);
}

absl::StatusOr<StateId> LazyDfa::Start(std::span<const TaggedExpr> exprs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  if (pool_->num_byte_classes() != num_classes_) {
    return absl::FailedPreconditionError(
        "regex DFA: an expression was added to the pool after the DFA was built");
  }
  std::vector<TaggedExpr> live;
  for (const TaggedExpr& t : exprs) {
    if (t.expr >= pool_->size()) {
      return absl::InvalidArgumentError(absl::StrCat("regex DFA: unknown expression id ", t.expr));
    }
    absl::StatusOr<bool> empty = pool_->IsEmpty(t.expr, options_.emptiness_budget);
    if (!empty.ok()) return empty.status();
    if (!*empty) live.push_back(t);
  }
  std::sort(live.begin(), live.end(),
            [](const TaggedExpr& a, const TaggedExpr& b) { return a.tag < b.tag; });
  for (size_t i = 1; i < live.size(); ++i) {
    if (live[i].tag == live[i - 1].tag) {
      return absl::InvalidArgumentError(absl::StrCat("regex DFA: duplicate tag ", live[i].tag));
    }
  }
  return InternLocked(std::move(live));
}

LazyDfa::WorkLimit LazyDfa::NextWorkLimit() const {
  const std::optional<uint64_t> used = MaskWorkScope::Used();
  if (used.has_value() && options_.max_mask_work != 0) {
    if (*used >= options_.max_mask_work) return {0, true, true};
    const uint64_t left = options_.max_mask_work - *used;
    if (options_.max_transition_work == 0 || left < options_.max_transition_work) {
      return {left, true, false};
    }
  }
  return {options_.max_transition_work, false, false};
}

void LazyDfa::ChargeWork(const WorkLimit& limit, bool exhausted) const {
  MaskWorkScope::Charge(exhausted ? limit.units : pool_->work_used());
}

absl::Status LazyDfa::WorkExhausted(const WorkLimit& limit) const {
  if (limit.mask_bound) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "regex DFA: one mask needed more than ", options_.max_mask_work,
        " units of derivative work for its new states (max_mask_work); the pattern is too "
        "costly to match byte by byte (e.g. a long run of optional items before required ones)"));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "regex DFA: one new state needed more than ", options_.max_transition_work,
      " units of derivative work (max_transition_work); the pattern is too costly to match "
      "byte by byte (e.g. a long run of optional items before required ones)"));
}

StateId LazyDfa::StepSlow(StateId s, uint8_t b) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint8_t cls = byte_class_[b];
  std::atomic<uint32_t>& slot =
      blocks_[s >> kBlockShift].next[(s & kBlockMask) * num_classes_ + cls];
  uint32_t known = slot.load(std::memory_order_acquire);
  if (known != kUnknown) return known;  // Another thread filled it meanwhile.
  if (!status_.ok()) return kDead;
  const uint8_t rep = class_rep_[cls];
  const WorkLimit limit = NextWorkLimit();
  if (limit.spent) {
    status_ = WorkExhausted(limit);
    return kDead;
  }
  std::vector<TaggedExpr> next;
  pool_->LimitWork(limit.units);
  try {
    for (const TaggedExpr& t : Info(s).exprs) {
      // A byte outside the expression's first bytes leaves it empty: dropped.
      if (!pool_->FirstBytes(t.expr).Contains(rep)) continue;
      ExprId d = pool_->Derivative(t.expr, rep);
      if (d == ExprSet::kNothing) continue;
      absl::StatusOr<bool> empty = pool_->IsEmpty(d, options_.emptiness_budget);
      if (!empty.ok()) {
        ChargeWork(limit, false);
        pool_->LimitWork(0);
        status_ = empty.status();
        return kDead;
      }
      if (!*empty) next.push_back({t.tag, d});
    }
  } catch (const ExprSet::WorkBudgetExhausted&) {
    ChargeWork(limit, true);
    status_ = WorkExhausted(limit);
    return kDead;
  }
  ChargeWork(limit, false);
  pool_->LimitWork(0);
  if (MemoryBytesLocked() > options_.max_memory_bytes) {
    status_ = absl::ResourceExhaustedError(absl::StrCat("regex DFA exceeded its memory limit of ",
                                                        options_.max_memory_bytes, " bytes"));
    return kDead;
  }
  absl::StatusOr<StateId> id = InternLocked(std::move(next));
  if (!id.ok()) {
    status_ = id.status();
    return kDead;
  }
  slot.store(*id, std::memory_order_release);
  return *id;
}

StateId LazyDfa::Walk(StateId s, std::string_view bytes) const {
  for (char c : bytes) {
    if (s == kDead) break;
    s = Step(s, static_cast<uint8_t>(c));
  }
  return s;
}

ByteSet LazyDfa::FirstBytes(StateId s) const {
  ByteSet out;
  for (int c = 0; c < num_classes_; ++c) {
    if (Step(s, class_rep_[c]) != kDead) out |= class_bytes_[c];
  }
  return out;
}

Fingerprint LazyDfa::StateFingerprint(StateId s) const {
  std::vector<Fingerprint> parts;
  {
    // The pool grows under mu_ (a fingerprint vector may move).
    std::lock_guard<std::mutex> lock(mu_);
    for (const TaggedExpr& t : Info(s).exprs) parts.push_back(pool_->GetFingerprint(t.expr));
  }
  return MultisetFingerprint(std::move(parts), 0);
}

Fingerprint LazyDfa::StateHorizonFingerprint(StateId s, uint32_t horizon) const {
  std::vector<Fingerprint> parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (horizon_memo_.size() > kMaxHorizonMemo) horizon_memo_.clear();
    for (const TaggedExpr& t : Info(s).exprs) {
      parts.push_back(HorizonFingerprint(*pool_, t.expr, horizon, &horizon_memo_));
    }
  }
  return MultisetFingerprint(std::move(parts), 0x486F72697A6F6Eull);  // "Horizon"
}

StateId LazyDfa::HorizonState(StateId s, uint32_t horizon) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t key = (uint64_t{s} << 32) | horizon;
  if (auto it = horizon_states_.find(key); it != horizon_states_.end()) return it->second;
  if (!status_.ok()) return kDead;
  if (clamp_memo_.size() > kMaxHorizonMemo) clamp_memo_.clear();
  // Same tags, same order; a clamped expression is empty exactly when its
  // original is (they agree on the empty prefix), so none drops out.
  std::vector<TaggedExpr> clamped;
  const WorkLimit limit = NextWorkLimit();
  if (limit.spent) {
    status_ = WorkExhausted(limit);
    return kDead;
  }
  pool_->LimitWork(limit.units);
  try {
    for (const TaggedExpr& t : Info(s).exprs) {
      clamped.push_back({t.tag, HorizonClamp(*pool_, t.expr, horizon, &clamp_memo_)});
    }
  } catch (const ExprSet::WorkBudgetExhausted&) {
    ChargeWork(limit, true);
    clamp_memo_.clear();  // may hold a clamp cut short
    status_ = WorkExhausted(limit);
    return kDead;
  }
  ChargeWork(limit, false);
  pool_->LimitWork(0);
  absl::StatusOr<StateId> id = InternLocked(std::move(clamped));
  if (!id.ok()) {
    status_ = id.status();
    return kDead;
  }
  horizon_states_.emplace(key, *id);
  return *id;
}

bool LazyDfa::StateHasCounter(StateId s) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const TaggedExpr& t : Info(s).exprs) {
    if (pool_->HasCounter(t.expr)) return true;
  }
  return false;
}

absl::Status LazyDfa::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

size_t LazyDfa::MemoryBytesLocked() const {
  const size_t block_bytes =
      (kBlockMask + 1) * (num_classes_ * sizeof(std::atomic<uint32_t>) + sizeof(StateInfo));
  return pool_->MemoryBytes() + num_blocks_ * block_bytes + max_blocks_ * sizeof(Block) +
         state_ids_.capacity() * (sizeof(std::pair<std::vector<uint64_t>, StateId>) + 1) +
         horizon_memo_.capacity() * (sizeof(std::pair<uint64_t, Fingerprint>) + 1) +
         horizon_states_.capacity() * (sizeof(std::pair<uint64_t, StateId>) + 1) +
         clamp_memo_.capacity() * (sizeof(std::pair<uint64_t, ExprId>) + 1) + state_bytes_;
}

size_t LazyDfa::MemoryBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return MemoryBytesLocked();
}

}  // namespace maskd::regex
