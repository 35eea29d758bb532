#include "compiler/grammar/earley_parser.h"

#include "compiler/grammar/heap_bytes.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"

namespace maskd {

EarleyParser::EarleyParser(std::shared_ptr<const Grammar> grammar, EarleyOptions options)
    : grammar_(std::move(grammar)), options_(options) {
  const size_t num_pos = grammar_->num_positions();
  const size_t num_nts = grammar_->num_nonterminals();
  pos_stamp_.assign(num_pos, 0);
  pos_head_.assign(num_pos, kNone);
  predicted_stamp_.assign(num_nts, 0);
  done_stamp_.assign(num_nts, 0);
  done_head_.assign(num_nts, kNone);
  Reset();
}

void EarleyParser::Reset() {
  inside_mode_ = false;
  items_.clear();
  set_start_.assign(1, 0);
  accepting_.clear();
  error_ = absl::OkStatus();
  BeginSet();
  Predict(Grammar::kAugmentedStart);
  // Set 0 cannot hit the limits in practice (it is one prediction), but keep the
  // invariant that FinishSet decides.
  if (!FinishSet()) {
    // Publish an empty set so the parser stays usable (it allows nothing).
    set_start_.push_back(static_cast<uint32_t>(items_.size()));
    accepting_.push_back(0);
    allowed_[0].Clear();
  }
}

void EarleyParser::ResetInside(uint32_t pos) {
  items_.clear();
  set_start_.assign(1, 0);
  accepting_.clear();
  error_ = absl::OkStatus();
  inside_mode_ = true;
  BeginSet();
  Predict(grammar_->rule_lhs(grammar_->pos_rule(pos)));
  set_start_.push_back(static_cast<uint32_t>(items_.size()));
  accepting_[0] = 0;
  BeginSet();
  Add(pos, 0);
  if (!FinishSet()) {
    set_start_.push_back(static_cast<uint32_t>(items_.size()));
    accepting_.push_back(0);
    allowed_[1].Clear();
  }
}

void EarleyParser::NextGeneration() {
  if (++generation_ == 0) {
    // Wrapped after 4 billion sets: old stamps could alias, so clear them.
    std::fill(pos_stamp_.begin(), pos_stamp_.end(), 0);
    std::fill(predicted_stamp_.begin(), predicted_stamp_.end(), 0);
    std::fill(done_stamp_.begin(), done_stamp_.end(), 0);
    generation_ = 1;
  }
}

void EarleyParser::BeginSet() {
  NextGeneration();
  set_begin_ = static_cast<uint32_t>(items_.size());
  set_index_ = static_cast<uint32_t>(set_start_.size() - 1);
  item_next_.clear();
  done_origin_.clear();
  done_next_.clear();
  sink_completed_.clear();
  if (memo_.size() <= set_index_) memo_.resize(set_index_ + 1);
  SetMemo& memo = memo_[set_index_];
  memo.lookups = 0;
  memo.indexed = false;
  memo.leo.clear();
  memo.waiting.clear();
  memo.groups.clear();
  if (allowed_.size() <= set_index_) {
    allowed_.emplace_back(grammar_->num_lexemes());
  } else {
    allowed_[set_index_].Clear();
  }
  accepting_.push_back(0);
  if (grammar_->has_frames()) {
    if (frames_.size() <= set_index_) frames_.resize(set_index_ + 1);
    frames_[set_index_] = FrameState();
  }
}

LexemeRole EarleyParser::RoleOf(const LexemeSet& lexemes, LexemeId* key) const {
  LexemeRole role = LexemeRole::kNone;
  ForEachAllowedOf(lexemes, [&](LexemeId id) {
    const LexemeRole r = grammar_->lexeme(id).flags.role;
    if (r == LexemeRole::kUniqueKey) {
      *key = id;
      role = r;
      return false;
    }
    if (r != LexemeRole::kNone && role != LexemeRole::kDistinctValue) role = r;
    return true;
  });
  return role;
}

void EarleyParser::TrackFrame(LexemeRole role, LexemeId key, uint64_t value) {
  const FrameState& before = frames_[set_index_ - 1];
  FrameState& now = frames_[set_index_];
  switch (role) {
    case LexemeRole::kNone:
      now.open = before.open;
      now.last_key = before.last_key;
      now.last_value = before.last_value;
      break;
    case LexemeRole::kOpenObject:
      now.open = set_index_;
      now.last_key = kNone;
      now.last_value = kNone;
      now.parent_open = before.open;
      now.parent_last_key = before.last_key;
      now.parent_last_value = before.last_value;
      break;
    case LexemeRole::kCloseObject:
      if (before.open != kNone) {
        now.open = frames_[before.open].parent_open;
        now.last_key = frames_[before.open].parent_last_key;
        now.last_value = frames_[before.open].parent_last_value;
      }
      break;
    case LexemeRole::kUniqueKey:
      now.open = before.open;
      now.last_key = set_index_;
      now.prev_key = before.last_key;
      now.key = grammar_->unique_key_group(key);
      now.last_value = before.last_value;
      break;
    case LexemeRole::kDistinctValue:
      now.open = before.open;
      now.last_key = before.last_key;
      now.last_value = set_index_;
      now.prev_value = before.last_value;
      now.value = value;
      break;
  }
}

namespace {

// Container kinds of FrameState::kind.
constexpr uint8_t kNoContainer = 0;
constexpr uint8_t kObjectKind = 1;
constexpr uint8_t kArrayKind = 2;
constexpr uint8_t kItemArrayKind = 3;  // JsonPart::kOpenItemArray

// 128-bit multiply-fold, as the byte stepper hashes strings.
uint64_t Mix(uint64_t h, uint64_t x) {
  const unsigned __int128 m =
      static_cast<unsigned __int128>(h ^ (x + 0xa0761d6478bd642full)) * 0xe7037ed1a0b428dbull;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

// The value of a finished container: objects sum their members (order
// free), arrays chain their items; the kind is salted in so that {} != [].
uint64_t ContainerValue(uint8_t kind, uint64_t acc) {
  return Mix(acc, kind == kObjectKind ? 0x6f626a656374ull : 0x6172726179ull);
}

}  // namespace

JsonPart EarleyParser::PartOf(const LexemeSet& lexemes) const {
  JsonPart part = JsonPart::kNone;
  ForEachAllowedOf(lexemes, [&](LexemeId id) {
    const JsonPart p = grammar_->json_part(id);
    // The item array's `[` wins over a plain one; a number over other
    // scalars (the byte stepper hashes numbers by value then).
    if (p == JsonPart::kOpenItemArray) {
      part = p;
      return false;
    }
    if (part == JsonPart::kNone || p == JsonPart::kNumber) part = p;
    return true;
  });
  return part;
}

bool EarleyParser::ChainHas(uint32_t last, uint64_t value) const {
  for (uint32_t k = last; k != kNone; k = frames_[k].prev_value) {
    if (frames_[k].value == value) return true;
  }
  return false;
}

bool EarleyParser::RepeatsItem(JsonPart part, uint64_t value) const {
  const FrameState& f = frames_[Depth()];
  switch (part) {
    case JsonPart::kCloseObject:
    case JsonPart::kCloseArray: {
      if (f.open == kNone || f.kind == kNoContainer) return false;
      const FrameState& o = frames_[f.open];
      return o.parent_kind == kItemArrayKind &&
             ChainHas(o.parent_last_value, ContainerValue(f.kind, f.acc));
    }
    case JsonPart::kScalar:
    case JsonPart::kNumber:
      return f.kind == kItemArrayKind && ChainHas(f.last_value, value);
    default:
      return false;
  }
}

bool EarleyParser::AtItemArray() const {
  return grammar_->has_item_values() && frames_[Depth()].kind == kItemArrayKind;
}

bool EarleyParser::CloseRepeatsItem() const {
  return grammar_->has_item_values() && RepeatsItem(JsonPart::kCloseObject, 0);
}

void EarleyParser::TrackValue(JsonPart part, uint64_t value) {
  const FrameState& before = frames_[set_index_ - 1];
  FrameState& now = frames_[set_index_];
  now.acc = before.acc;
  now.member_key = before.member_key;
  now.kind = before.kind;
  now.items_open = before.items_open;
  uint64_t item = 0;
  bool completes = false;
  switch (part) {
    case JsonPart::kOpenObject:
    case JsonPart::kOpenArray:
    case JsonPart::kOpenItemArray:
      now.parent_acc = before.acc;
      now.parent_member_key = before.member_key;
      now.parent_kind = before.kind;
      now.parent_items_open = before.items_open;
      now.acc = 0;
      now.member_key = 0;
      now.kind = part == JsonPart::kOpenObject  ? kObjectKind
                 : part == JsonPart::kOpenArray ? kArrayKind
                                                : kItemArrayKind;
      if (part == JsonPart::kOpenItemArray) ++now.items_open;
      return;
    case JsonPart::kCloseObject:
    case JsonPart::kCloseArray:
      // TrackFrame ran first: `now` is back in the enclosing frame.
      if (before.open == kNone || before.kind == kNoContainer) return;
      item = ContainerValue(before.kind, before.acc);
      now.acc = frames_[before.open].parent_acc;
      now.member_key = frames_[before.open].parent_member_key;
      now.kind = frames_[before.open].parent_kind;
      now.items_open = frames_[before.open].parent_items_open;
      completes = true;
      break;
    case JsonPart::kKey:
      now.member_key = value;
      return;
    case JsonPart::kScalar:
    case JsonPart::kNumber:
      item = Mix(value, part == JsonPart::kNumber ? 0x6e756dull : 0x736361ull);
      // Numbers and strings hash apart; the item array compares the raw
      // value (RepeatsItem) as its scalar items are written.
      completes = true;
      break;
    default:
      return;
  }
  if (!completes) return;
  switch (now.kind) {
    case kObjectKind:
      now.acc += Mix(now.member_key, item);
      break;
    case kArrayKind:
      now.acc = Mix(now.acc, item);
      break;
    case kItemArrayKind:
      now.acc = Mix(now.acc, item);
      // An item of the array of distinct items: its value joins the frame's
      // chain (containers by their value, scalars by the raw value).
      now.prev_value = now.last_value;
      now.last_value = set_index_;
      now.value = part == JsonPart::kCloseObject || part == JsonPart::kCloseArray ? item : value;
      break;
    default:
      break;
  }
}

bool EarleyParser::FrameHasValueAt(uint32_t at, uint64_t value) const {
  for (uint32_t k = frames_[at].last_value; k != kNone; k = frames_[k].prev_value) {
    if (frames_[k].value == value) return true;
  }
  return false;
}

bool EarleyParser::FrameHasValue(uint64_t value) const {
  return grammar_->has_distinct_values() && FrameHasValueAt(static_cast<uint32_t>(Depth()), value);
}

void EarleyParser::AddUnique(uint32_t pos, uint32_t origin) {
  if (pos_stamp_[pos] != generation_) {
    pos_stamp_[pos] = generation_;
    pos_head_[pos] = kNone;
  }
  const uint32_t index = static_cast<uint32_t>(items_.size());
  items_.push_back(Item{pos, origin});
  item_next_.push_back(pos_head_[pos]);
  pos_head_[pos] = index;
}

void EarleyParser::Add(uint32_t pos, uint32_t origin) {
  if (pos_stamp_[pos] == generation_) {
    for (uint32_t k = pos_head_[pos]; k != kNone; k = item_next_[k - set_begin_]) {
      if (items_[k].origin == origin) return;
    }
  }
  AddUnique(pos, origin);
}

void EarleyParser::Predict(NonterminalId a) {
  // A predicted nonterminal always brings its whole closure, so a stamped
  // one has nothing left to add.
  if (predicted_stamp_[a] == generation_) return;
  const Grammar& g = *grammar_;
  LexemeSet& allowed = allowed_[set_index_];
  predict_stack_.clear();
  predict_stack_.push_back(a);
  predicted_stamp_[a] = generation_;
  while (!predict_stack_.empty()) {
    const NonterminalId c = predict_stack_.back();
    predict_stack_.pop_back();
    for (LexemeId t : g.predicted_lexemes(c)) allowed.Insert(t);
    // Predicted items have origin == set_index_ and no other source can make
    // such an item, so they need no dedupe chain.
    for (uint32_t p : g.predicted_positions(c)) {
      items_.push_back(Item{p, set_index_});
      item_next_.push_back(kNone);
    }
    for (NonterminalId d : g.left_corners(c)) {
      if (predicted_stamp_[d] != generation_) {
        predicted_stamp_[d] = generation_;
        predict_stack_.push_back(d);
      }
    }
    if (set_index_ == 0 && c == Grammar::kAugmentedStart && g.accepts_empty()) {
      accepting_[0] = 1;
    }
  }
}

void EarleyParser::Complete(NonterminalId b, uint32_t origin) {
  if (done_stamp_[b] != generation_) {
    done_stamp_[b] = generation_;
    done_head_[b] = kNone;
  } else {
    for (uint32_t e = done_head_[b]; e != kNone; e = done_next_[e]) {
      if (done_origin_[e] == origin) return;
    }
  }
  done_origin_.push_back(origin);
  done_next_.push_back(done_head_[b]);
  done_head_[b] = static_cast<uint32_t>(done_origin_.size() - 1);

  if (inside_mode_) {
    if (origin == 0) sink_completed_.push_back(b);
    ForEachWaiting(b, origin, [&](Item item) { Add(item.pos + 1, item.origin); });
    return;
  }
  Item top;
  if (LeoTop(b, origin, &top)) {
    Add(top.pos, top.origin);
    return;
  }
  ForEachWaiting(b, origin, [&](Item item) { Add(item.pos + 1, item.origin); });
}

void EarleyParser::NoteLookup(uint32_t set) {
  SetMemo& memo = memo_[set];
  if (!memo.indexed && ++memo.lookups > options_.index_set_after_lookups) BuildIndex(set);
}

void EarleyParser::BuildIndex(uint32_t set) {
  const Grammar& g = *grammar_;
  SetMemo& memo = memo_[set];
  index_scratch_.clear();
  const uint32_t end = set_start_[set + 1];
  for (uint32_t k = set_start_[set]; k < end; ++k) {
    const uint32_t sym = g.pos_symbol(items_[k].pos);
    if (sym != Grammar::kEndOfRule && (sym & Symbol::kNonterminalBit) != 0) {
      index_scratch_.emplace_back(Symbol::FromBits(sym).id(), k);
    }
  }
  std::sort(index_scratch_.begin(), index_scratch_.end());
  memo.waiting.clear();
  memo.groups.clear();
  for (size_t i = 0; i < index_scratch_.size(); ++i) {
    const NonterminalId nt = index_scratch_[i].first;
    if (memo.groups.empty() || memo.groups.back().nt != nt) {
      const uint32_t at = static_cast<uint32_t>(memo.waiting.size());
      memo.groups.push_back(WaitingGroup{nt, at, at, false, Item{kNone, 0}});
    }
    memo.waiting.push_back(index_scratch_[i].second);
    ++memo.groups.back().end;
  }
  memo.indexed = true;
  // Carry over the Leo memo gathered before indexing.
  for (const LeoEntry& e : memo.leo) LeoMemoPut(set, e.nt, e.top);
  memo.leo.clear();
}

template <typename F>
void EarleyParser::ForEachWaiting(NonterminalId b, uint32_t set, F&& f) {
  NoteLookup(set);
  const SetMemo& memo = memo_[set];
  if (memo.indexed) {
    auto it =
        std::lower_bound(memo.groups.begin(), memo.groups.end(), b,
                         [](const WaitingGroup& grp, NonterminalId nt) { return grp.nt < nt; });
    if (it == memo.groups.end() || it->nt != b) return;
    for (uint32_t i = it->begin; i < it->end; ++i) f(items_[memo.waiting[i]]);
    return;
  }
  const uint32_t want = Symbol::Nonterminal(b).bits();
  const Grammar& g = *grammar_;
  const uint32_t end = set_start_[set + 1];
  for (uint32_t k = set_start_[set]; k < end; ++k) {
    const Item item = items_[k];
    if (g.pos_symbol(item.pos) == want) f(item);
  }
}

bool EarleyParser::LeoMemoGet(uint32_t set, NonterminalId nt, Item* top) {
  NoteLookup(set);
  SetMemo& memo = memo_[set];
  if (memo.indexed) {
    auto it = std::lower_bound(memo.groups.begin(), memo.groups.end(), nt,
                               [](const WaitingGroup& grp, NonterminalId n) { return grp.nt < n; });
    if (it == memo.groups.end() || it->nt != nt) {
      *top = Item{kNone, 0};  // Nothing waits on nt: no chain.
      return true;
    }
    if (!it->leo_known) return false;
    *top = it->leo_top;
    return true;
  }
  for (const LeoEntry& e : memo.leo) {
    if (e.nt == nt) {
      *top = e.top;
      return true;
    }
  }
  return false;
}

void EarleyParser::LeoMemoPut(uint32_t set, NonterminalId nt, Item top) {
  SetMemo& memo = memo_[set];
  if (!memo.indexed) {
    memo.leo.push_back(LeoEntry{nt, top});
    return;
  }
  auto it = std::lower_bound(memo.groups.begin(), memo.groups.end(), nt,
                             [](const WaitingGroup& grp, NonterminalId n) { return grp.nt < n; });
  if (it == memo.groups.end() || it->nt != nt) return;  // Implied "no chain".
  it->leo_known = true;
  it->leo_top = top;
}

bool EarleyParser::PenultimateItem(NonterminalId b, uint32_t set, Item* completed) {
  const Grammar& g = *grammar_;
  int found = 0;
  bool penultimate = false;
  ForEachWaiting(b, set, [&](Item item) {
    if (++found == 1) {
      penultimate = g.pos_symbol(item.pos + 1) == Grammar::kEndOfRule;
      *completed = Item{item.pos + 1, item.origin};
    }
  });
  return found == 1 && penultimate;
}

bool EarleyParser::LeoTop(NonterminalId b, uint32_t origin, Item* top) {
  // Walk down the chain to a memoized or chain-ending link, then memoize
  // every link on the way back (iteratively: chains can be long).
  const Grammar& g = *grammar_;
  leo_stack_.clear();
  NonterminalId nt = b;
  uint32_t set = origin;
  Item deeper{kNone, 0};
  // Links that stayed in one set: a unit rule predicted there (A -> . B).
  // The chain must go on through them (a right-recursive `ws ::= ([ ] ws)?`
  // reaches the previous set only through its group and option rules, and
  // cut there every set would hold the whole run's items), but a unit cycle
  // (A -> B, B -> A) would loop: no set holds more distinct such links than
  // there are nonterminals.
  size_t same_set_links = 0;
  for (;;) {
    if (LeoMemoGet(set, nt, &deeper)) break;
    Item completed;
    if (!PenultimateItem(nt, set, &completed)) {
      deeper = Item{kNone, 0};
      LeoMemoPut(set, nt, deeper);
      break;
    }
    leo_stack_.push_back(LeoLink{nt, set, completed});
    same_set_links = completed.origin == set ? same_set_links + 1 : 0;
    if (same_set_links > g.num_nonterminals()) {
      deeper = Item{kNone, 0};
      break;
    }
    nt = g.rule_lhs(g.pos_rule(completed.pos));
    set = completed.origin;
  }
  while (!leo_stack_.empty()) {
    const LeoLink link = leo_stack_.back();
    leo_stack_.pop_back();
    if (deeper.pos == kNone) deeper = link.completed;
    LeoMemoPut(link.set, link.nt, deeper);
  }
  *top = deeper;
  return deeper.pos != kNone;
}

bool EarleyParser::FinishSet() {
  const Grammar& g = *grammar_;
  LexemeSet& allowed = allowed_[set_index_];
  const uint32_t accept_pos = g.accept_pos();
  for (size_t k = set_begin_; k < items_.size(); ++k) {
    const Item item = items_[k];
    // Predicted items (origin == this set) are final: their lexemes are in
    // `allowed` already, their nonterminals are in the closure, and their
    // completions are empty ones, which Aycock-Horspool made redundant.
    if (item.origin == set_index_) continue;
    if (items_.size() - set_begin_ > options_.max_items_per_set ||
        items_.size() > options_.max_total_items) {
      error_ = absl::ResourceExhaustedError(
          absl::StrCat("Earley set ", set_index_, " exceeds the item limit (",
                       items_.size() - set_begin_, " items in set, ", items_.size(), " in total)"));
      items_.resize(set_begin_);
      accepting_.pop_back();
      ++limit_hits_;
      return false;
    }
    const uint32_t sym = g.pos_symbol(item.pos);
    if (sym == Grammar::kEndOfRule) {
      if (item.pos == accept_pos && item.origin == 0) accepting_[set_index_] = 1;
      Complete(g.rule_lhs(g.pos_rule(item.pos)), item.origin);
      continue;
    }
    const Symbol s = Symbol::FromBits(sym);
    if (s.is_lexeme()) {
      allowed.Insert(s.id());
    } else {
      Predict(s.id());
      if (g.nullable(s.id())) Add(item.pos + 1, item.origin);
    }
  }
  if (grammar_->has_unique_keys()) {
    // Keys this object frame has already had may not come again.
    if (keys_taken_.size() <= set_index_) keys_taken_.resize(set_index_ + 1);
    keys_taken_[set_index_] = 0;
    for (uint32_t k = frames_[set_index_].last_key; k != kNone; k = frames_[k].prev_key) {
      for (LexemeId l : g.unique_key_lexemes(frames_[k].key)) {
        if (!allowed.Contains(l)) continue;
        if (keys_taken_[set_index_] == 0) {
          keys_taken_[set_index_] = 1;
          while (unfiltered_.size() <= set_index_) unfiltered_.emplace_back(g.num_lexemes());
          unfiltered_[set_index_].Clear();
          unfiltered_[set_index_].UnionWith(allowed);
        }
        allowed.Erase(l);
      }
    }
  }
  set_start_.push_back(static_cast<uint32_t>(items_.size()));
  return true;
}

bool EarleyParser::Scan(LexemeId t) {
  if (!Allowed().Contains(t)) return false;
  error_ = absl::OkStatus();
  const Grammar& g = *grammar_;
  if (g.has_item_values() && RepeatsItem(g.json_part(t), 0)) return false;
  const uint32_t begin = set_start_[set_start_.size() - 2];
  const uint32_t end = set_start_.back();
  BeginSet();
  if (g.has_frames()) TrackFrame(g.lexeme(t).flags.role, t, 0);
  if (g.has_item_values()) TrackValue(g.json_part(t), 0);
  for (uint32_t k = begin; k < end; ++k) {
    const Item item = items_[k];
    // Scanned items are distinct (distinct sources) and have a lexeme before
    // the dot, so nothing else in the set can equal them.
    if (g.pos_symbol(item.pos) == t) AddUnique(item.pos + 1, item.origin);
  }
  return FinishSet();
}

bool EarleyParser::ScanAny(const LexemeSet& lexemes, uint64_t value) {
  const LexemeSet* scanned = &lexemes;
  const Grammar& g = *grammar_;
  if (g.has_distinct_values() && FrameHasValue(value)) {
    // A repeated value: only the lexemes that are not distinct values remain.
    if (distinct_scratch_.universe_size() != lexemes.universe_size()) {
      distinct_scratch_ = LexemeSet(lexemes.universe_size());
    }
    distinct_scratch_.Clear();
    distinct_scratch_.UnionWith(lexemes);
    lexemes.ForEach([&](LexemeId id) {
      if (g.is_distinct_value(id)) distinct_scratch_.Erase(id);
    });
    scanned = &distinct_scratch_;
  }
  if (!Allowed().Intersects(*scanned)) return false;
  error_ = absl::OkStatus();
  const uint32_t begin = set_start_[set_start_.size() - 2];
  const uint32_t end = set_start_.back();
  LexemeId key = 0;
  const LexemeRole role = g.has_frames() ? RoleOf(*scanned, &key) : LexemeRole::kNone;
  const JsonPart part = g.has_item_values() ? PartOf(*scanned) : JsonPart::kNone;
  // A repeated item of an array of distinct items: no parse goes on.
  if (part != JsonPart::kNone && RepeatsItem(part, value)) return false;
  const size_t before = Depth();  // BeginSet may grow allowed_: index, not reference.
  BeginSet();
  if (g.has_frames()) TrackFrame(role, key, value);
  if (g.has_item_values()) TrackValue(part, value);
  const LexemeSet& allowed = allowed_[before];
  for (uint32_t k = begin; k < end; ++k) {
    const Item item = items_[k];
    const uint32_t sym = g.pos_symbol(item.pos);
    // Only allowed lexemes: a repeated key is in the items, not in Allowed().
    if ((sym & Symbol::kNonterminalBit) == 0 && scanned->Contains(sym) && allowed.Contains(sym)) {
      AddUnique(item.pos + 1, item.origin);
    }
  }
  return FinishSet();
}

void EarleyParser::Pop(size_t n) {
  assert(n <= Depth());
  set_start_.resize(set_start_.size() - n);
  items_.resize(set_start_.back());
  accepting_.resize(set_start_.size() - 1);
}

size_t EarleyParser::ByteSizeEstimate() const {
  size_t bytes = sizeof(EarleyParser) + items_.capacity() * sizeof(Item) + accepting_.capacity();
  for (const LexemeSet& s : allowed_) bytes += sizeof(LexemeSet) + s.words().capacity() * 8;
  for (const LexemeSet& s : unfiltered_) bytes += sizeof(LexemeSet) + s.words().capacity() * 8;
  bytes += keys_taken_.capacity();
  for (const SetMemo& m : memo_) {
    bytes += sizeof(SetMemo) + m.leo.capacity() * sizeof(LeoEntry) +
             m.waiting.capacity() * sizeof(uint32_t) + m.groups.capacity() * sizeof(WaitingGroup);
  }
  bytes +=
      memo_.capacity() > memo_.size() ? (memo_.capacity() - memo_.size()) * sizeof(SetMemo) : 0;
  bytes += (set_start_.capacity() + pos_stamp_.capacity() + pos_head_.capacity() +
            item_next_.capacity() + predicted_stamp_.capacity() + done_stamp_.capacity() +
            done_head_.capacity() + done_origin_.capacity() + done_next_.capacity()) *
           sizeof(uint32_t);
  return bytes;
}

size_t EarleyParser::HeldBytesApprox() const {
  // Every buffer the parser owns, with malloc's block overhead (heap_bytes.h):
  // the per-set vectors and, as large as the grammar, the scratch of set
  // building, which dominates for grammars with thousands of positions. Of
  // the per-set memos, only the usual small Leo memo (one or two lookups:
  // one block) is counted, to stay O(1); the indexes of sets looked up often
  // are left out.
  size_t bytes =
      sizeof(EarleyParser) + VectorHeapBytes(items_) + VectorHeapBytes(set_start_) +
      VectorHeapBytes(allowed_) + VectorHeapBytes(accepting_) + VectorHeapBytes(frames_) +
      VectorHeapBytes(pos_stamp_) + VectorHeapBytes(pos_head_) + VectorHeapBytes(item_next_) +
      VectorHeapBytes(predicted_stamp_) + VectorHeapBytes(predict_stack_) +
      VectorHeapBytes(done_stamp_) + VectorHeapBytes(done_head_) + VectorHeapBytes(done_origin_) +
      VectorHeapBytes(done_next_) + VectorHeapBytes(memo_) + VectorHeapBytes(index_scratch_) +
      distinct_scratch_.HeapBytes() + VectorHeapBytes(leo_stack_) + VectorHeapBytes(keys_taken_) +
      VectorHeapBytes(unfiltered_);
  // Every set's LexemeSet has the same size (allowed_ never shrinks: its
  // size is the high-water mark of the sets that hold words).
  bytes += (allowed_.size() + unfiltered_.size()) *
           MallocBlockBytes((grammar_->num_lexemes() + 63) / 64 * 8);
  bytes += memo_.size() * MallocBlockBytes(2 * sizeof(LeoEntry));
  return bytes;
}

}  // namespace maskd
