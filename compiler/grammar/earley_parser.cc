#include "compiler/grammar/earley_parser.h"

#include <algorithm>
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
  items_.clear();
  set_start_.assign(1, 0);
  accepting_.clear();
  error_ = absl::OkStatus();
  BeginSet();
  Predict(Grammar::kAugmentedStart);
  // Set 0 cannot hit the limits in practice (it is one closure), but keep the
  // invariant that FinishSet decides.
  if (!FinishSet()) {
    // Publish an empty set so the parser stays usable (it allows nothing).
    set_start_.push_back(static_cast<uint32_t>(items_.size()));
    accepting_.push_back(0);
    allowed_[0].Clear();
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
  if (leo_.size() <= set_index_) leo_.resize(set_index_ + 1);
  leo_[set_index_].clear();
  if (allowed_.size() <= set_index_) {
    allowed_.emplace_back(grammar_->num_lexemes());
  } else {
    allowed_[set_index_].Clear();
  }
  accepting_.push_back(0);
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
  for (NonterminalId c : g.prediction_closure(a)) {
    if (predicted_stamp_[c] == generation_) continue;
    predicted_stamp_[c] = generation_;
    allowed.UnionWith(g.predicted_lexemes(c));
    // Predicted items have origin == set_index_ and no other source can make
    // such an item, so they need no dedupe chain.
    for (uint32_t p : g.predicted_positions(c)) {
      items_.push_back(Item{p, set_index_});
      item_next_.push_back(kNone);
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

  Item top;
  if (LeoTop(b, origin, &top)) {
    Add(top.pos, top.origin);
    return;
  }
  const uint32_t want = Symbol::Nonterminal(b).bits();
  const Grammar& g = *grammar_;
  const uint32_t end = set_start_[origin + 1];
  for (uint32_t k = set_start_[origin]; k < end; ++k) {
    const Item item = items_[k];
    if (g.pos_symbol(item.pos) == want) Add(item.pos + 1, item.origin);
  }
}

bool EarleyParser::PenultimateItem(NonterminalId b, uint32_t set, Item* completed) const {
  const uint32_t want = Symbol::Nonterminal(b).bits();
  const Grammar& g = *grammar_;
  const uint32_t end = set_start_[set + 1];
  bool found = false;
  for (uint32_t k = set_start_[set]; k < end; ++k) {
    const Item item = items_[k];
    if (g.pos_symbol(item.pos) != want) continue;
    if (found || g.pos_symbol(item.pos + 1) != Grammar::kEndOfRule) return false;
    *completed = Item{item.pos + 1, item.origin};
    found = true;
  }
  return found;
}

bool EarleyParser::LeoTop(NonterminalId b, uint32_t origin, Item* top) {
  // Walk down the chain to a memoized or chain-ending link, then memoize
  // every link on the way back (iteratively: chains can be long).
  const Grammar& g = *grammar_;
  leo_stack_.clear();
  NonterminalId nt = b;
  uint32_t set = origin;
  Item deeper{kNone, 0};
  for (;;) {
    const LeoEntry* memo = nullptr;
    for (const LeoEntry& e : leo_[set]) {
      if (e.nt == nt) {
        memo = &e;
        break;
      }
    }
    if (memo != nullptr) {
      deeper = memo->top;
      break;
    }
    Item completed;
    if (!PenultimateItem(nt, set, &completed)) {
      leo_[set].push_back(LeoEntry{nt, Item{kNone, 0}});
      break;
    }
    leo_stack_.push_back(LeoLink{nt, set, completed});
    // Continue only into strictly earlier sets: unit cycles inside one set
    // (A -> B, B -> A) would otherwise loop.
    if (completed.origin >= set) break;
    nt = g.rule_lhs(g.pos_rule(completed.pos));
    set = completed.origin;
  }
  while (!leo_stack_.empty()) {
    const LeoLink link = leo_stack_.back();
    leo_stack_.pop_back();
    if (deeper.pos == kNone) deeper = link.completed;
    leo_[link.set].push_back(LeoEntry{link.nt, deeper});
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
  set_start_.push_back(static_cast<uint32_t>(items_.size()));
  return true;
}

bool EarleyParser::Scan(LexemeId t) {
  if (!Allowed().Contains(t)) return false;
  error_ = absl::OkStatus();
  const Grammar& g = *grammar_;
  const uint32_t begin = set_start_[set_start_.size() - 2];
  const uint32_t end = set_start_.back();
  BeginSet();
  for (uint32_t k = begin; k < end; ++k) {
    const Item item = items_[k];
    // Scanned items are distinct (distinct sources) and have a lexeme before
    // the dot, so nothing else in the set can equal them.
    if (g.pos_symbol(item.pos) == t) AddUnique(item.pos + 1, item.origin);
  }
  return FinishSet();
}

bool EarleyParser::ScanAny(const LexemeSet& lexemes) {
  if (!Allowed().Intersects(lexemes)) return false;
  error_ = absl::OkStatus();
  const Grammar& g = *grammar_;
  const uint32_t begin = set_start_[set_start_.size() - 2];
  const uint32_t end = set_start_.back();
  BeginSet();
  for (uint32_t k = begin; k < end; ++k) {
    const Item item = items_[k];
    const uint32_t sym = g.pos_symbol(item.pos);
    if ((sym & Symbol::kNonterminalBit) == 0 && lexemes.Contains(sym)) {
      AddUnique(item.pos + 1, item.origin);
    }
  }
  return FinishSet();
}

void EarleyParser::Pop(size_t n) {
  set_start_.resize(set_start_.size() - n);
  items_.resize(set_start_.back());
  accepting_.resize(set_start_.size() - 1);
}

size_t EarleyParser::ByteSizeEstimate() const {
  size_t bytes = sizeof(EarleyParser) + items_.capacity() * sizeof(Item) + accepting_.capacity();
  for (const LexemeSet& s : allowed_) bytes += sizeof(LexemeSet) + s.words().capacity() * 8;
  bytes += (set_start_.capacity() + pos_stamp_.capacity() + pos_head_.capacity() +
            item_next_.capacity() + predicted_stamp_.capacity() + done_stamp_.capacity() +
            done_head_.capacity() + done_origin_.capacity() + done_next_.capacity()) *
           sizeof(uint32_t);
  return bytes;
}

}  // namespace maskd
