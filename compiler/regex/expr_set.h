// ExprSet: a hash-consed pool of regular expressions over BYTES, closed under
// Brzozowski derivatives. Besides the usual operators it has And and Not
// (complement w.r.t. all byte strings) and a symbolic bounded repetition, so
// `x{1,1000}` is one node whose derivatives count down instead of a
// thousand-fold unrolling (DESIGN.md §3; modelled on llguidance's derivre).
//
// Every constructor simplifies (flattening, sorting and deduplicating Or/And,
// right-associating Concat, absorbing Nothing/Epsilon, Not(Not(x)) = x, length
// bounds for And, ...), and structurally equal expressions get the same id, so
// the derivatives of an expression are finitely many ids and a lazy DFA can
// use ids as states.
//
// Thread safety: an ExprSet is NOT internally synchronized; every call that
// may add nodes (constructors, Derivative, IsEmpty) needs exclusive access.
// LazyDfa (lazy_dfa.h) owns that access once it is built over a pool.
#ifndef MASKD_COMPILER_REGEX_EXPR_SET_H_
#define MASKD_COMPILER_REGEX_EXPR_SET_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "compiler/regex/byte_machine.h"
#include "compiler/regex/byte_set.h"

namespace maskd::regex {

// Id of an expression in an ExprSet (the grammar IR stores these).
using ExprId = uint32_t;

enum class ExprKind : uint8_t {
  kNothing,  // The empty language.
  kEpsilon,  // Only the empty string.
  kByteSet,  // One byte from a set (never empty).
  kConcat,   // Binary, right-associated: the left side is never a Concat.
  kOr,       // Two or more args, sorted and distinct.
  kAnd,      // Two or more args, sorted and distinct.
  kNot,      // All byte strings not in the arg.
  kRepeat,   // arg{min,max}; max may be kUnbounded.
  kMachine,  // A state of a ByteMachine (byte_machine.h): no args.
};

// A code point range, both ends inclusive.
struct CodepointRange {
  uint32_t lo;
  uint32_t hi;
  friend bool operator==(const CodepointRange&, const CodepointRange&) = default;
};

// Sorts, merges overlapping/adjacent ranges and removes the surrogates
// U+D800..U+DFFF and anything above U+10FFFF (they have no UTF-8 encoding).
std::vector<CodepointRange> NormalizeCodepointRanges(std::vector<CodepointRange> ranges);
// The complement within U+0000..U+10FFFF minus surrogates; input normalized.
std::vector<CodepointRange> ComplementCodepointRanges(std::span<const CodepointRange> ranges);

// A 128-bit structural hash of an expression that does not depend on the pool
// it lives in (ids, creation order): equal structures, up to the order of Or
// and And arguments, get equal fingerprints in any pool, so equal fingerprints
// mean equal languages (up to a 2^-128-scale collision chance). Lets caches
// share work between grammars.
struct Fingerprint {
  uint64_t hi = 0;
  uint64_t lo = 0;
  // Mixes `v` into the fingerprint (order matters).
  void Fold(uint64_t v);
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
  friend auto operator<=>(const Fingerprint&, const Fingerprint&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Fingerprint& f) {
    return H::combine(std::move(h), f.hi, f.lo);
  }
};

class ExprSet {
 public:
  static constexpr uint32_t kUnbounded = 0xFFFFFFFFu;
  // Fixed ids present in every pool.
  static constexpr ExprId kNothing = 0;
  static constexpr ExprId kEpsilon = 1;
  static constexpr ExprId kAnyByte = 2;
  static constexpr ExprId kAnyByteString = 3;  // AnyByte*, = Not(Nothing).

  ExprSet();
  ExprSet(const ExprSet&) = delete;
  ExprSet& operator=(const ExprSet&) = delete;

  // ---- Smart constructors. ----
  ExprId Bytes(const ByteSet& set);  // kNothing for the empty set.
  ExprId Byte(uint8_t b) {
    // Literals are built a byte at a time: skip hashing a 256-bit set.
    if (single_bytes_[b] == kNothing) single_bytes_[b] = Bytes(ByteSet::Single(b));
    return single_bytes_[b];
  }
  ExprId ByteRange(uint8_t lo, uint8_t hi) { return Bytes(ByteSet::Range(lo, hi)); }
  ExprId Concat(ExprId a, ExprId b);
  ExprId Concat(std::span<const ExprId> parts);
  ExprId Or(ExprId a, ExprId b) { return Or(std::span<const ExprId>({a, b})); }
  ExprId Or(std::span<const ExprId> args);
  ExprId And(ExprId a, ExprId b) { return And(std::span<const ExprId>({a, b})); }
  ExprId And(std::span<const ExprId> args);
  ExprId Not(ExprId a);
  // a{min,max}; max == kUnbounded for no upper bound; kNothing if max < min.
  ExprId Repeat(ExprId a, uint32_t min, uint32_t max);
  ExprId Star(ExprId a) { return Repeat(a, 0, kUnbounded); }
  ExprId Optional(ExprId a) { return Repeat(a, 0, 1); }

  // The language of `machine` from `state` (which must be live). Machines
  // with equal identities share one registration.
  ExprId Machine(std::shared_ptr<const ByteMachine> machine, uint64_t state);
  ExprId MachineStart(std::shared_ptr<const ByteMachine> machine) {
    const uint64_t start = machine->Start();
    return Machine(std::move(machine), start);
  }

  // ---- Helpers for front ends. ----
  ExprId Literal(std::string_view bytes);
  // The UTF-8 encodings of the code points in lo..hi (surrogates excluded).
  ExprId Codepoints(uint32_t lo, uint32_t hi);
  // The UTF-8 encodings of a set of code points (any order, may overlap).
  ExprId Codepoints(std::span<const CodepointRange> ranges);
  // One valid UTF-8 encoded code point (U+0000..U+10FFFF minus surrogates).
  ExprId AnyCodepoint();
  // Any valid UTF-8 string (AnyCodepoint*).
  ExprId AnyUtf8String() { return Star(AnyCodepoint()); }
  // e minus the empty string. Pushed into Or, Concat and Repeat where it
  // can be (x{0,n} minus the empty string is (x minus it) x{0,n-1}), so a
  // boolean-free e gives a boolean-free result: anchored patterns stay free
  // of And/Not, which keeps their states cheap (no emptiness checks) and
  // their walks shareable (horizon.h). And(e, Not(empty)) past a depth.
  ExprId NonEmpty(ExprId e) { return NonEmptyAtDepth(e, 0); }

  // ---- Inspection. ----
  size_t size() const { return nodes_.size(); }
  ExprKind kind(ExprId e) const { return nodes_[e].kind; }
  bool Nullable(ExprId e) const { return nodes_[e].flags & kNullableFlag; }
  // False when e uses neither And nor Not: such an expression (other than
  // kNothing) is never empty, so emptiness checks are free.
  bool HasBoolean(ExprId e) const { return nodes_[e].flags & kBooleanFlag; }
  // Whether e contains a bounded repetition x{lo,hi} with 2 <= hi < unbounded
  // (a counter, as maxLength and {0,99} make).
  bool HasCounter(ExprId e) const { return nodes_[e].flags & kCounterFlag; }
  // Whether e holds a repetition other than X* and X+ (X{lo,hi} with lo >= 2
  // or a finite hi): only those change under a horizon clamp (horizon.h), so
  // an expression without one, a literal's chain however long, clamps to
  // itself and needs no walk.
  bool HasBoundedRepeat(ExprId e) const { return nodes_[e].flags & kBoundedRepeatFlag; }
  // Sound bounds on the length of the strings of e (max may be kUnbounded).
  uint32_t MinLength(ExprId e) const { return nodes_[e].min_len; }
  uint32_t MaxLength(ExprId e) const { return nodes_[e].max_len; }
  // How far from acceptance a live prefix can be: for every string w that is
  // a prefix of a member of e, some member starting with w is at most
  // CompletionBound(e) bytes longer than w. A sound bound derived from the
  // structure; kUnbounded for expressions using And or Not.
  uint32_t CompletionBound(ExprId e) const { return nodes_[e].completion_bound; }
  // Args: Concat -> {left, right}; Or/And -> args; Not/Repeat -> {arg}.
  std::span<const ExprId> Args(ExprId e) const;
  const ByteSet& GetByteSet(ExprId e) const { return byte_sets_[nodes_[e].a]; }
  uint32_t RepeatMin(ExprId e) const { return nodes_[e].b; }
  uint32_t RepeatMax(ExprId e) const { return nodes_[e].c; }
  // kMachine: the machine and the state.
  const std::shared_ptr<const ByteMachine>& GetMachine(ExprId e) const {
    return machines_[nodes_[e].a];
  }
  uint64_t MachineState(ExprId e) const {
    return (uint64_t{nodes_[e].c} << 32) | uint64_t{nodes_[e].b};
  }
  // A readable rendering, for tests and debug output.
  std::string ToString(ExprId e) const;

  // ---- Derivatives and emptiness. ----
  // The derivative of e by byte b (the strings s with b+s in e), memoized.
  ExprId Derivative(ExprId e, uint8_t b);
  // A superset of the bytes b whose derivative of e is non-empty (the first
  // bytes of e's strings; every byte under Not), memoized: a DFA step skips
  // the expressions of a state that b cannot continue without deriving them
  // (a state of 500 enum literals steps a handful per byte).
  ByteSet FirstBytes(ExprId e);
  // Whether L(e) is empty, decided exactly by exploring derivatives (memoized).
  // ResourceExhausted when more than `budget` distinct derivatives would have
  // to be explored to decide.
  absl::StatusOr<bool> IsEmpty(ExprId e, size_t budget = 20000) {
    return IsEmpty(e, budget, std::chrono::steady_clock::time_point::max());
  }
  // The same, also stopping with DeadlineExceeded once `deadline` has passed
  // (a compile's time limit: a budget of states alone can take seconds when
  // each state is a large And/Not).
  absl::StatusOr<bool> IsEmpty(ExprId e, size_t budget,
                               std::chrono::steady_clock::time_point deadline);
  // Records that L(e) is non-empty, decided another way (a language with
  // the same emptiness, e.g. the decoded strings whose spellings e is:
  // json_schema/json_string.h). IsEmpty and the emptiness checks of
  // expressions holding e answer from it.
  void RecordNonEmpty(ExprId e) { emptiness_[e] = 2; }
  // Whether e matches the whole of `bytes` (by derivatives; for tests).
  bool Matches(ExprId e, std::string_view bytes);

  // ---- Containment facts. ----
  // Tries to prove L(x) ⊆ L(u) for boolean-free x and u: runs x's structure
  // over the derivatives of u, collecting (a superset of) the derivatives
  // that x's strings lead u to; all must be nullable. On success the fact is
  // recorded and derivatives keep it (L(x) ⊆ L(u) implies d_b(x) ⊆ d_b(u)),
  // for derivatives computed before and after. False means "not proven"
  // (including when u has more than a few dozen derivatives). Exists so a
  // caller can tell an And that only counts (horizon.h) from a real one.
  bool ProveWithin(ExprId x, ExprId u);
  // Every u with a recorded L(x) ⊆ L(u) (empty when none).
  std::span<const ExprId> KnownWithin(ExprId x) const;
  // A length counter: e = And(X, P·Y{min,max}) with X boolean-free, Y at
  // least one byte long, and the recorded fact L(X) ⊆ L(P·Y*) -- a string
  // of X (a pattern) whose units (encoded code points) are also counted.
  // Such an e is X with at most `max` and at least `min` units after P.
  struct CountedAnd {
    ExprId body;  // X
    uint32_t min;
    uint32_t max;
  };
  std::optional<CountedAnd> AsCountedAnd(ExprId e) const;

  // Byte classes: bytes no byte set in the pool tells apart, so derivatives
  // by any two bytes of a class are equal. Refined as byte sets are added.
  const std::array<uint8_t, 256>& byte_class() const { return byte_class_; }
  int num_byte_classes() const { return static_cast<int>(class_rep_.size()); }
  // One byte of each class, by class id.
  const std::vector<uint8_t>& class_representatives() const { return class_rep_; }

  const Fingerprint& GetFingerprint(ExprId e) const { return fingerprints_[e]; }

  // Approximate heap use in bytes.
  size_t MemoryBytes() const;

  // ---- Interruption. ----
  // From now on every emptiness check (IsEmpty, also those the lazy DFA
  // makes) stops with Cancelled once `*cancelled` is true, and with
  // DeadlineExceeded past `deadline` (the earlier of it and its own). A
  // compile sets this while it runs (ScopedInterrupt) so a compile no caller
  // waits for, or past its time limit, stops inside a long check.
  void SetInterrupt(const std::atomic<bool>* cancelled,
                    std::chrono::steady_clock::time_point deadline) {
    interrupt_cancelled_ = cancelled;
    interrupt_deadline_ = deadline;
  }
  // SetInterrupt for a scope; the pool must outlive it.
  class ScopedInterrupt {
   public:
    ScopedInterrupt(ExprSet* pool, const std::atomic<bool>* cancelled,
                    std::chrono::steady_clock::time_point deadline)
        : pool_(pool) {
      pool_->SetInterrupt(cancelled, deadline);
    }
    ~ScopedInterrupt() {
      pool_->SetInterrupt(nullptr, std::chrono::steady_clock::time_point::max());
    }
    ScopedInterrupt(const ScopedInterrupt&) = delete;
    ScopedInterrupt& operator=(const ScopedInterrupt&) = delete;

   private:
    ExprSet* pool_;
  };

  // ---- Work budget. ----
  // Thrown out of whatever is building nodes (a derivative, an emptiness
  // check) when the budget set by LimitWork runs out; thrown before the
  // pool changes, so the pool stays consistent. Derivatives of some small
  // patterns cost quadratic work per byte (`a?` x n then `a` x n: each
  // derivative is a union of n suffixes, and the next one n such unions),
  // and a single one cannot otherwise be stopped midway.
  struct WorkBudgetExhausted {};
  // From now on, node constructions may use `units` units of work (one per
  // node looked up or made, plus one per argument it has); 0: no limit.
  void LimitWork(uint64_t units) {
    work_left_ = units;
    work_limit_used_ = 0;
  }
  // Units used since the last LimitWork (0 when unlimited).
  uint64_t work_used() const { return work_limit_used_; }

 private:
  static constexpr uint8_t kNullableFlag = 1;
  static constexpr uint8_t kBooleanFlag = 2;
  static constexpr uint8_t kCounterFlag = 4;
  static constexpr uint8_t kBoundedRepeatFlag = 8;

  struct Node {
    ExprKind kind;
    uint8_t flags;
    // Meaning depends on kind: ByteSet -> a = byte set index; Concat ->
    // args; Or/And -> args_begin/args_len; Not -> args; Repeat -> args, b =
    // min, c = max; Machine -> a = machine index, b/c = state low/high half.
    uint32_t a = 0;
    uint32_t b = 0;
    uint32_t c = 0;
    uint32_t args_begin = 0;
    uint32_t args_len = 0;
    uint32_t min_len = 0;
    uint32_t max_len = 0;
    uint32_t completion_bound = 0;
  };
  struct Key {
    ExprKind kind;
    uint32_t b = 0;
    uint32_t c = 0;
    absl::InlinedVector<ExprId, 3> args;
    uint32_t a = 0;  // kMachine: the machine's index in machines_.
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.kind, k.b, k.c, k.args, k.a);
    }
  };

  ExprId Intern(Key key, uint8_t flags, uint32_t min_len, uint32_t max_len);
  // Takes `cost` units of LimitWork's budget; throws WorkBudgetExhausted
  // when it runs out (before anything changes).
  void ChargeWork(uint64_t cost);
  ExprId RepeatUnchecked(ExprId a, uint32_t min, uint32_t max);
  // The state of the registered machine machines_[index].
  ExprId MachineAt(uint32_t index, uint64_t state);
  // A lower bound on the length of the strings from a machine state (exact
  // when small): its MinLength.
  uint32_t MachineDistance(uint32_t index, uint64_t state) const;
  void RefineClasses(const ByteSet& set);
  ExprId ComputeDerivative(ExprId e, uint8_t b);
  // Memoizes d as e's derivative by b and passes containment facts on.
  void RecordDerivative(ExprId e, uint8_t b, ExprId d);
  ExprId NonEmptyAtDepth(ExprId e, int depth);
  // True when e is non-empty by its structure alone (boolean-free parts,
  // length counters with room); false means "unknown".
  bool ProvablyNonEmpty(ExprId e, int depth) const;
  uint32_t ComputeCompletionBound(const Key& key) const;
  // Records L(x) ⊆ L(u) and passes it on to the derivatives of x already
  // computed (and theirs).
  void AddWithinFact(ExprId x, ExprId u);
  // A cheap greedy search for a member of L(e); true (and e marked
  // non-empty) when found. False means "unknown", not "empty".
  bool ProbeWitness(ExprId e);
  Fingerprint ComputeFingerprint(const Key& key) const;
  void AppendString(ExprId e, int parent_prec, std::string& out) const;

  std::vector<Node> nodes_;
  std::vector<ExprId> args_;
  std::vector<ByteSet> byte_sets_;
  absl::flat_hash_map<Key, ExprId> interned_;
  absl::flat_hash_map<ByteSet, ExprId> byte_set_ids_;
  absl::flat_hash_map<uint64_t, ExprId> derivatives_;
  // FirstBytes by node: 0 unknown, else 1 + an index into first_byte_sets_
  // (few distinct sets). A lazy DFA step asks it of every expression of its
  // state, and derivatives of every Or/And/Not argument: an array read, not
  // a hash probe (a fifth of a cold mask's time went to those probes).
  std::vector<uint32_t> first_bytes_of_;
  std::vector<ByteSet> first_byte_sets_;
  absl::flat_hash_map<ByteSet, uint32_t> first_byte_set_ids_;
  // Concat(a, b) for a Concat `a`, which rebuilds a's whole chain ending in
  // b: lowering appends whitespace and colons to the same key literals over
  // and over, by (a, b).
  absl::flat_hash_map<uint64_t, ExprId> reassociated_;
  // Byte(b) by b; kNothing until built.
  std::array<ExprId, 256> single_bytes_{};
  // Per node: 0 unknown, 1 empty, 2 non-empty.
  std::vector<uint8_t> emptiness_;
  std::vector<Fingerprint> fingerprints_;  // Per node.
  // SetInterrupt's flag (may be null) and deadline.
  const std::atomic<bool>* interrupt_cancelled_ = nullptr;
  std::chrono::steady_clock::time_point interrupt_deadline_ =
      std::chrono::steady_clock::time_point::max();
  // LimitWork's budget left (0: unlimited) and what was used of it.
  uint64_t work_left_ = 0;
  uint64_t work_limit_used_ = 0;
  // Containment facts (ProveWithin), by the contained expression.
  absl::flat_hash_map<ExprId, absl::InlinedVector<ExprId, 2>> within_;
  std::array<uint8_t, 256> byte_class_{};
  std::vector<uint8_t> class_rep_;
  // Bytes that recently led ProbeWitness closer to acceptance, most recent first.
  std::array<uint8_t, 4> probe_hints_{'a', '"', '0', ' '};
  ExprId any_codepoint_ = kNothing;
  // Registered machines, and their indices by identity.
  std::vector<std::shared_ptr<const ByteMachine>> machines_;
  // Per machine, one byte of each of its byte classes.
  std::vector<std::vector<uint8_t>> machine_reps_;
  absl::flat_hash_map<Fingerprint, uint32_t> machine_ids_;
};

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_EXPR_SET_H_
