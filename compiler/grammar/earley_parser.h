// An Earley recognizer over the lexemes of a built Grammar, shaped for mask
// computation: the trie walk pushes one Earley set per lexeme it scans and
// pops it when it backtracks, so Scan/Pop are cheap and allocate nothing once
// the buffers have grown to the working depth.
//
// Items are (position, origin) pairs of 32-bit integers; a position is a
// dotted rule (see Grammar). Sets live back to back in one vector. Nullable
// symbols use the Aycock-Horspool treatment (the dot skips a nullable symbol
// at prediction time), so empty completions never need to be revisited.
// Prediction follows precomputed left-corner lists. Leo's right-recursion optimization is
// implemented (memoized per set), so a right-recursive chain of length n
// costs O(1) items per set instead of O(n).
#ifndef MASKD_COMPILER_GRAMMAR_EARLEY_PARSER_H_
#define MASKD_COMPILER_GRAMMAR_EARLEY_PARSER_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "compiler/grammar/grammar.h"
#include "compiler/grammar/lexeme_set.h"

namespace maskd {

struct EarleyOptions {
  // A Scan whose new set would exceed this many items fails with
  // ResourceExhausted (pathological ambiguity or recursion).
  size_t max_items_per_set = size_t{1} << 16;
  // Bound on the items of all sets together (memory per matcher).
  size_t max_total_items = size_t{1} << 24;
  // A finished set is scanned linearly by its first lookups from completion
  // and indexed by waiting nonterminal after this many (tuning; tests use 0
  // and "never" to cover both paths).
  uint32_t index_set_after_lookups = 4;
};

class EarleyParser {
 public:
  explicit EarleyParser(std::shared_ptr<const Grammar> grammar, EarleyOptions options = {});

  // Copying clones the parse state (a matcher fork). Copy-assigning into an
  // existing parser of the same grammar reuses its buffers.
  EarleyParser(const EarleyParser&) = default;
  EarleyParser& operator=(const EarleyParser&) = default;
  EarleyParser(EarleyParser&&) noexcept = default;
  EarleyParser& operator=(EarleyParser&&) noexcept = default;

  // Back to the empty input.
  void Reset();
  // An isolated parse from one dotted position `pos` (a rule position of
  // nonterminal A = lhs(pos)), for the matcher's item masks (item_masks.h):
  // set 0 holds what predicting A puts in any set where A's rule instance
  // began (and nothing else), set 1 holds the item (pos, origin 0) and
  // what it predicts. A completion at origin 0 stands for one that, in a
  // real parse, also advances items outside this view: SinkCompletions()
  // lists them. Leo's chains are off in this mode (a chain through set 0
  // would skip such a completion). Reset() leaves the mode.
  void ResetInside(uint32_t pos);
  // The nonterminals completed at origin 0 while the last set was built
  // (ResetInside mode only; stale after Pop).
  const std::vector<NonterminalId>& SinkCompletions() const { return sink_completed_; }

  // Appends lexeme `t`. Returns false and changes nothing if `t` is not in
  // Allowed(), or if the new set would exceed a limit (then error() says so).
  bool Scan(LexemeId t);
  // Appends "one of `lexemes`" as a single new set: the lexer ended several
  // lexemes on the same bytes. Lexemes not in Allowed() are ignored; returns
  // false (no change) when none is allowed or a limit is hit. `value`
  // identifies the bytes of a kDistinctValue lexeme (LexemeRole) up to its
  // first accepting position; such lexemes are ignored when the innermost
  // frame has had that value already.
  bool ScanAny(const LexemeSet& lexemes, uint64_t value = 0);
  // Whether the innermost frame has scanned a kDistinctValue lexeme with
  // this value.
  bool FrameHasValue(uint64_t value) const;
  // Grammars with item values (Grammar::has_item_values): whether closing
  // the innermost container now would complete an item its array of
  // distinct items (JsonPart::kOpenItemArray) holds already. ScanAny
  // refuses such a close; the byte stepper refuses its byte.
  bool CloseRepeatsItem() const;
  // Whether the innermost frame is an array of distinct items (its scalar
  // items are written here), and whether it holds scalar value `value`.
  bool AtItemArray() const;
  bool ItemArrayHas(uint64_t value) const {
    return AtItemArray() && RepeatsItem(JsonPart::kScalar, value);
  }
  // Whether the parser is inside an array of distinct items (at any depth):
  // where the values of scanned lexemes matter.
  bool InItemArray() const {
    return grammar_->has_item_values() && frames_[Depth()].items_open != 0;
  }
  // Undoes the last `n` scans; n <= Depth().
  void Pop(size_t n);
  // Number of scans since Reset().
  size_t Depth() const { return set_start_.size() - 2; }

  // Exactly the lexemes t for which (scanned lexemes + t) is a prefix of some
  // sentence; in grammars with unique keys (LexemeRole), of some sentence in
  // which no kUniqueKey lexeme occurs twice in one object frame (the grammar
  // must make every frame completable without repeating a key: lowering
  // tracks required keys and member counts in the grammar itself).
  const LexemeSet& Allowed() const { return allowed_[Depth()]; }
  // Allowed() before the unique-key check took out the keys the innermost
  // object frame has had: what the items allow. It does not depend on which
  // keys were written (only on the grammar's own member states), so the
  // lexer starts from it and shares its states, and their mask walks,
  // between key sets; the matcher then drops what only the taken keys
  // allowed (KeysTaken()).
  const LexemeSet& LexAllowed() const {
    return KeysTaken() ? unfiltered_[Depth()] : allowed_[Depth()];
  }
  // Whether Allowed() lacks some lexeme of LexAllowed() (a key the frame has had).
  bool KeysTaken() const { return Depth() < keys_taken_.size() && keys_taken_[Depth()] != 0; }
  // Whether the scanned lexemes form a sentence.
  bool IsAccepting() const { return accepting_[Depth()] != 0; }

  // Calls f(dotted position, origin set index) for each item of the last
  // set, in the set's order. With the sets its origins name (and, in
  // grammars with unique keys, the object frames), it determines every
  // later Scan: the matcher's walk memo (compiler/matcher/walk_memo.h) keys
  // sets by it.
  template <typename F>
  void ForEachTopItem(F&& f) const {
    for (uint32_t k = set_start_[set_start_.size() - 2]; k < set_start_.back(); ++k) {
      f(items_[k].pos, items_[k].origin);
    }
  }

  // Calls f(dotted position, origin set index) for each item of set `set`
  // (at most Depth()), in the set's order: the matcher's state masks
  // (compiler/matcher/parse_state_key.h) key a parse state by the items
  // that later completions can reach.
  template <typename F>
  void ForEachItemOf(size_t set, F&& f) const {
    for (uint32_t k = set_start_[set]; k < set_start_[set + 1]; ++k) {
      f(items_[k].pos, items_[k].origin);
    }
  }

  // OK, or ResourceExhausted when the last failed Scan hit a limit.
  const absl::Status& error() const { return error_; }
  // How many Scans have hit a limit since construction (a mask computed
  // while it grew may lack tokens and must not be cached).
  uint64_t limit_hits() const { return limit_hits_; }

  const Grammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const Grammar>& grammar_ptr() const { return grammar_; }
  size_t num_items() const { return items_.size(); }
  size_t current_set_size() const { return items_.size() - set_start_[set_start_.size() - 2]; }
  // Approximate heap bytes held by this parser's buffers.
  size_t ByteSizeEstimate() const;
  // The same in O(1), for charging a memory budget on every token: counts
  // the per-set buffers by capacity (they never shrink: the high-water mark
  // of Depth()) and the grammar-sized scratch, with malloc's block overhead
  // (heap_bytes.h), but not the indexes of sets looked up often.
  size_t HeldBytesApprox() const;

 private:
  struct Item {
    uint32_t pos;
    uint32_t origin;
  };
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // Calls f(id) for each lexeme of `lexemes` the parser allows now, in
  // increasing order, until f returns false (RoleOf, PartOf).
  template <typename F>
  void ForEachAllowedOf(const LexemeSet& lexemes, F&& f) const {
    const LexemeSet& allowed = Allowed();
    for (size_t w = 0; w < lexemes.words().size(); ++w) {
      for (uint64_t bits = lexemes.words()[w] & allowed.words()[w]; bits != 0; bits &= bits - 1) {
        if (!f(static_cast<LexemeId>(w * 64 + static_cast<size_t>(std::countr_zero(bits))))) return;
      }
    }
  }

  void BeginSet();
  // Object frames: after scanning `role` (key: the unique-key lexeme) into
  // the set being built, from the previous set's frame.
  void TrackFrame(LexemeRole role, LexemeId key, uint64_t value);
  // The role a ScanAny of `lexemes` plays (a unique key wins), and its key.
  LexemeRole RoleOf(const LexemeSet& lexemes, LexemeId* key) const;
  // Item values: the JsonPart a ScanAny of `lexemes` plays (an item array's
  // `[` wins over a plain one), and the value hashes after scanning it with
  // `value` into the set being built.
  JsonPart PartOf(const LexemeSet& lexemes) const;
  void TrackValue(JsonPart part, uint64_t value);
  // Whether scanning `part` with `value` would complete a repeated item.
  bool RepeatsItem(JsonPart part, uint64_t value) const;
  // Whether the value chain from set `last` (FrameState::last_value) holds `value`.
  bool ChainHas(uint32_t last, uint64_t value) const;
  // Runs prediction and completion to a fixpoint; on success publishes the
  // set. On a limit error, removes the partial set and returns false.
  bool FinishSet();
  void Predict(NonterminalId a);
  void Complete(NonterminalId b, uint32_t origin);
  // Leo: if completing `b` from set `origin` only ever completes a
  // deterministic chain of items, sets *top to the chain's last item.
  bool LeoTop(NonterminalId b, uint32_t origin, Item* top);
  // The unique item of `set` waiting on `b` when it is penultimate
  // (A -> alpha . b), as the completed item it would become.
  bool PenultimateItem(NonterminalId b, uint32_t set, Item* completed);
  // Calls f(Item) for each item of finished set `set` whose dot is before
  // nonterminal `b`.
  template <typename F>
  void ForEachWaiting(NonterminalId b, uint32_t set, F&& f);
  // Counts a lookup into `set`; indexes the set once it is looked up often.
  void NoteLookup(uint32_t set);
  void BuildIndex(uint32_t set);
  // Leo memo of `set` for `nt`: false if unknown, else *top (pos kNone: no
  // chain).
  bool LeoMemoGet(uint32_t set, NonterminalId nt, Item* top);
  void LeoMemoPut(uint32_t set, NonterminalId nt, Item top);
  // Adds a non-predicted item unless the set already holds it.
  void Add(uint32_t pos, uint32_t origin);
  void AddUnique(uint32_t pos, uint32_t origin);
  void NextGeneration();

  std::shared_ptr<const Grammar> grammar_;
  EarleyOptions options_;

  std::vector<Item> items_;          // All sets, back to back.
  std::vector<uint32_t> set_start_;  // Set i = items_[set_start_[i], set_start_[i + 1]).
  std::vector<LexemeSet> allowed_;   // Per set; never shrinks so Pop/Scan reuse storage.
  std::vector<uint8_t> accepting_;   // Per set.
  // Per set, in grammars with unique keys (empty otherwise): whether the
  // unique-key check erased a lexeme from allowed_, and then allowed_ as it
  // was before. Every finished set writes its entry.
  std::vector<uint8_t> keys_taken_;
  std::vector<LexemeSet> unfiltered_;
  // Per set, for grammars with unique keys: the set that opened the
  // innermost object frame (kNone outside any), the last set in that frame
  // that scanned a unique key (kNone: none yet), and per set that did, its
  // key and the frame's previous key set; per set that opened a frame, the
  // enclosing frame to return to when it closes.
  // Distinct values chain the same way: the frame's last set that scanned
  // one, per such set its value and the frame's previous one.
  struct FrameState {
    uint32_t open = kNone;
    uint32_t last_key = kNone;
    uint32_t prev_key = kNone;
    uint32_t key = 0;  // Grammar::unique_key_group
    uint32_t parent_open = kNone;
    uint32_t parent_last_key = kNone;
    uint32_t last_value = kNone;
    uint32_t prev_value = kNone;
    uint32_t parent_last_value = kNone;
    uint64_t value = 0;
    // Item values (Grammar::has_item_values): the hash of the innermost
    // container so far (acc), its kind (ContainerKind), the hash of the key
    // whose value comes next in an object, and how many arrays of distinct
    // items enclose this set; per set that opened a container, the
    // enclosing container's.
    uint64_t acc = 0;
    uint64_t member_key = 0;
    uint64_t parent_acc = 0;
    uint64_t parent_member_key = 0;
    uint32_t items_open = 0;
    uint32_t parent_items_open = 0;
    uint8_t kind = 0;
    uint8_t parent_kind = 0;
  };
  // Whether frame state `at` (a set index) has seen `value`.
  bool FrameHasValueAt(uint32_t at, uint64_t value) const;
  std::vector<FrameState> frames_;
  absl::Status error_;
  uint64_t limit_hits_ = 0;

  // Scratch for building one set, valid where the stamp equals generation_:
  // chains of the set's items by position (dedupe without hashing), the
  // nonterminals predicted, and the (nonterminal, origin) completions done.
  uint32_t generation_ = 0;
  uint32_t set_begin_ = 0;  // Index in items_ of the set being built.
  uint32_t set_index_ = 0;
  std::vector<uint32_t> pos_stamp_, pos_head_;
  std::vector<uint32_t> item_next_;  // Parallel to the set being built.
  std::vector<uint32_t> predicted_stamp_;
  std::vector<NonterminalId> predict_stack_;
  std::vector<uint32_t> done_stamp_, done_head_;
  std::vector<uint32_t> done_origin_, done_next_;

  // Per finished set: lookups by completion (which items wait on B?) and
  // the Leo memo. Entries of set j depend only on sets <= j, so they stay
  // valid until set j is popped; BeginSet clears the slot when set j is
  // rebuilt (keeping capacity: no allocation in steady state). A set is
  // scanned linearly for its first few lookups (most sets get one or two),
  // then indexed: waiting items grouped by nonterminal, Leo memo per group.
  struct LeoEntry {
    NonterminalId nt;
    Item top;  // top.pos == kNone: no Leo chain.
  };
  struct WaitingGroup {
    NonterminalId nt;
    uint32_t begin, end;  // Range in SetMemo::waiting.
    bool leo_known;
    Item leo_top;
  };
  struct SetMemo {
    uint32_t lookups = 0;
    bool indexed = false;
    std::vector<LeoEntry> leo;         // While not indexed.
    std::vector<uint32_t> waiting;     // Item indices grouped by nonterminal.
    std::vector<WaitingGroup> groups;  // Sorted by nonterminal.
  };
  std::vector<SetMemo> memo_;
  std::vector<std::pair<NonterminalId, uint32_t>> index_scratch_;
  LexemeSet distinct_scratch_{0};  // ScanAny without the repeated distinct values.
  struct LeoLink {
    NonterminalId nt;
    uint32_t set;
    Item completed;
  };
  std::vector<LeoLink> leo_stack_;             // Scratch.
  bool inside_mode_ = false;                   // ResetInside
  std::vector<NonterminalId> sink_completed_;  // SinkCompletions
};

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_EARLEY_PARSER_H_
