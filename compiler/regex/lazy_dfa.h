// LazyDfa: a DFA over bytes whose states are built on demand from regex
// derivatives. A state is a set of (tag, expression) pairs -- one per lexeme
// still possible, as in derivre's RegexVec -- so one DFA serves a whole
// lexer: a state accepts tag t when t's expression is nullable, and pairs
// whose language became EMPTY are dropped (decided exactly by
// ExprSet::IsEmpty, not just syntactically), so IsDead(s) holds iff no byte
// string leads from s to acceptance. A single regex is the case of one tag.
//
// Speed: Step() is a table lookup once the transition is known -- one load
// of the byte's class and one acquire load of the transition slot.
//
// Thread safety: one LazyDfa is meant to be shared by every matcher of a
// compiled grammar, on any thread. Filled transition slots are read without
// locks (each slot is an atomic written once, with release order, after the
// target state's row and info were fully built; state storage lives in
// fixed blocks that never move). A miss takes a per-DFA mutex that also
// guards the ExprSet, computes the derivative and publishes the slot. So the
// ExprSet must not be touched by anyone else while the DFA is in use.
//
// Limits: the state count and the memory of the DFA plus its pool are
// bounded (Options). When a limit is hit (or an emptiness check runs out of
// budget) the DFA becomes FAILED: status() says why and Step() returns kDead
// for transitions it could not compute. A caller must check status() after
// using the DFA and report the error rather than trust such a result.
#ifndef MASKD_COMPILER_REGEX_LAZY_DFA_H_
#define MASKD_COMPILER_REGEX_LAZY_DFA_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/regex/byte_set.h"
#include "compiler/regex/expr_set.h"
#include "compiler/regex/horizon.h"
#include "compiler/regex/mask_work.h"

namespace maskd::regex {

using StateId = uint32_t;

struct TaggedExpr {
  uint32_t tag;
  ExprId expr;
  friend bool operator==(const TaggedExpr&, const TaggedExpr&) = default;
};

class LazyDfa {
 public:
  struct Options {
    size_t max_states = 100000;
    // Bound on MemoryBytes() (DFA tables plus the ExprSet).
    size_t max_memory_bytes = size_t{256} << 20;
    // States an emptiness check may explore (ExprSet::IsEmpty).
    size_t emptiness_budget = 20000;
    // Work (ExprSet::LimitWork units) one new transition may take: its
    // derivatives and their emptiness checks. A pattern whose transitions
    // cost more would hold a step thread for seconds to minutes per mask
    // (`a?` x 3,000 then `a` x 3,000: 100 s for the first mask), so the DFA
    // fails instead (RESOURCE_EXHAUSTED naming this limit). 0: no limit.
    uint64_t max_transition_work = 20'000'000;
    // Work all the new states built on one thread within a MaskWorkScope
    // (one mask) may take together (mask_work.h): many states each under
    // max_transition_work can still add up to a stall. 0: no limit.
    uint64_t max_mask_work = 20'000'000;
  };

  // The state with no live expression: nothing can be accepted from it.
  static constexpr StateId kDead = 0;

  // `pool` must outlive the DFA and hold every expression later passed to
  // Start(); after this, only the DFA may mutate it (see the file comment).
  explicit LazyDfa(ExprSet* pool) : LazyDfa(pool, Options()) {}
  LazyDfa(ExprSet* pool, Options options);
  ~LazyDfa();
  LazyDfa(const LazyDfa&) = delete;
  LazyDfa& operator=(const LazyDfa&) = delete;

  // The state for a set of (tag, expression) pairs; tags must be distinct.
  // Expressions with an empty language are dropped. FailedPrecondition when an
  // expression was built after the DFA refined byte classes differently.
  absl::StatusOr<StateId> Start(std::span<const TaggedExpr> exprs);
  absl::StatusOr<StateId> Start(ExprId e) {
    TaggedExpr t{0, e};
    return Start(std::span<const TaggedExpr>(&t, 1));
  }

  // The state after byte b. Lock-free when already computed.
  StateId Step(StateId s, uint8_t b) const {
    const Block& block = blocks_[s >> kBlockShift];
    uint32_t t = block.next[(s & kBlockMask) * num_classes_ + byte_class_[b]].load(
        std::memory_order_acquire);
    if (t != kUnknown) [[likely]]
      return t;
    return StepSlow(s, b);
  }
  // Steps over a byte string; stops early at kDead.
  StateId Walk(StateId s, std::string_view bytes) const;

  bool IsDead(StateId s) const { return s == kDead; }
  // Some expression of s accepts the empty string.
  bool IsAccepting(StateId s) const { return Info(s).accepting; }
  // The tags whose expression accepts the empty string in s, ascending.
  std::span<const uint32_t> AcceptingTags(StateId s) const { return Info(s).accepting_tags; }
  // The live (non-empty) (tag, expression) pairs of s, ascending by tag.
  std::span<const TaggedExpr> Exprs(StateId s) const { return Info(s).exprs; }
  // The bytes after which s is not dead (computes missing transitions).
  ByteSet FirstBytes(StateId s) const;

  // A fingerprint of s's live expressions that depends on neither this DFA,
  // its pool nor the tags (see Fingerprint): two states, of any DFAs, with
  // equal fingerprints step alike along every byte string -- dead where the
  // other is dead, accepting where it accepts (under their own tags).
  Fingerprint StateFingerprint(StateId s) const;
  // The same over the horizon fingerprints of s's expressions (horizon.h):
  // two states with equal ones agree, along every byte string of at most
  // `horizon` bytes, on where they are dead and which of their expressions
  // accept.
  Fingerprint StateHorizonFingerprint(StateId s, uint32_t horizon) const;
  // The state of s's expressions clamped to `horizon` (HorizonClamp): it
  // agrees with s along every byte string of at most `horizon` bytes on
  // where it is dead and which expressions accept, and positions of a
  // counted string map to the same one, so a mask walk from it below a
  // trie node that deep meets states it has met before instead of building
  // new ones per position. kDead when the DFA fails (status()).
  StateId HorizonState(StateId s, uint32_t horizon) const;
  // Whether an expression of s has a counter (ExprSet::HasCounter): its
  // nearby states tend to differ only in counts.
  bool StateHasCounter(StateId s) const;

  // OK, or why the DFA failed (limits); sticky.
  absl::Status status() const;
  size_t num_states() const { return num_states_.load(std::memory_order_acquire); }
  int num_byte_classes() const { return num_classes_; }
  // Approximate heap use of the DFA and its pool, in bytes.
  size_t MemoryBytes() const;

 private:
  static constexpr uint32_t kUnknown = 0xFFFFFFFFu;
  static constexpr int kBlockShift = 8;
  static constexpr uint32_t kBlockMask = (1u << kBlockShift) - 1;

  struct StateInfo {
    std::vector<TaggedExpr> exprs;
    std::vector<uint32_t> accepting_tags;
    bool accepting = false;
  };
  struct Block {
    std::unique_ptr<std::atomic<uint32_t>[]> next;
    std::unique_ptr<StateInfo[]> info;
  };

  const StateInfo& Info(StateId s) const { return blocks_[s >> kBlockShift].info[s & kBlockMask]; }
  StateId StepSlow(StateId s, uint8_t b) const;
  // The work the next new state may take: Options::max_transition_work, or
  // less where the thread's mask budget (MaskWorkScope) has less left.
  struct WorkLimit {
    uint64_t units;   // for ExprSet::LimitWork; 0: none
    bool mask_bound;  // the mask budget, not the state's own, set `units`
    bool spent;       // the mask budget is used up already
  };
  WorkLimit NextWorkLimit() const;
  // Charges the pool's work since LimitWork to the thread's mask budget.
  void ChargeWork(const WorkLimit& limit, bool exhausted) const;
  // The error of a state that ran out of its work limit.
  absl::Status WorkExhausted(const WorkLimit& limit) const;
  // Interns a state whose pairs are all non-empty and sorted by tag.
  absl::StatusOr<StateId> InternLocked(std::vector<TaggedExpr> exprs) const;
  size_t MemoryBytesLocked() const;

  const Options options_;
  std::array<uint8_t, 256> byte_class_;
  int num_classes_;
  std::vector<uint8_t> class_rep_;
  std::vector<ByteSet> class_bytes_;
  size_t max_blocks_;
  // Fixed array of blocks; a block is allocated (under mu_) before any state
  // in it is published, and never moves or shrinks.
  std::unique_ptr<Block[]> blocks_;
  mutable std::atomic<size_t> num_states_{0};

  // std::mutex rather than absl::Mutex so ThreadSanitizer (which sees
  // libstdc++/pthread locks but not an uninstrumented absl) can check this.
  // Guards pool_, state_ids_, num_blocks_, state_bytes_, status_, horizon_memo_ and block
  // allocation; the *Locked functions require it.
  mutable std::mutex mu_;
  ExprSet* const pool_;
  mutable absl::flat_hash_map<std::vector<uint64_t>, StateId> state_ids_;
  mutable size_t num_blocks_ = 0;
  mutable size_t state_bytes_ = 0;
  mutable absl::Status status_;
  // Horizon fingerprints of subexpressions (StateHorizonFingerprint), kept
  // while they number at most kMaxHorizonMemo; guarded by mu_.
  static constexpr size_t kMaxHorizonMemo = size_t{1} << 18;
  mutable HorizonMemo horizon_memo_;
  // HorizonState's results by (state, horizon), and the clamped expressions
  // behind them; guarded by mu_.
  mutable absl::flat_hash_map<uint64_t, StateId> horizon_states_;
  mutable HorizonClampMemo clamp_memo_;
};

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_LAZY_DFA_H_
