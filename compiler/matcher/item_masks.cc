#include "compiler/matcher/item_masks.h"

#include <algorithm>
#include <utility>

#include "compiler/grammar/earley_parser.h"
#include "compiler/matcher/byte_stepper.h"
#include "compiler/matcher/compiled_grammar_impl.h"

namespace maskd {
namespace {

using regex::ByteSet;

// Past this many dotted positions the compile would spend more on walks
// than the masks save.
constexpr size_t kMaxPositions = 4096;
// Trie nodes the walks of one grammar may visit (c.gbnf takes 3.3M, 0.5 s; a
// count, not a clock, so that a loaded machine builds the same table).
constexpr uint64_t kMaxWalkNodes = uint64_t{1} << 24;

// FIRST and FOLLOW over bytes (first bytes of lexemes; token terminals have
// none: they are never bytes).
class ByteFirstFollow {
 public:
  ByteFirstFollow(const Grammar& g, const std::vector<ByteSet>& lexeme_first)
      : g_(g), lexeme_first_(lexeme_first) {
    const size_t n = g.num_nonterminals();
    first_.assign(n, ByteSet());
    follow_.assign(n, ByteSet());
    for (bool changed = true; changed;) {
      changed = false;
      for (RuleId r = 0; r < g.num_rules(); ++r) {
        bool nullable;
        const ByteSet f = first_[g.rule_lhs(r)] | SuffixFirst(r, 0, &nullable);
        if (!(f == first_[g.rule_lhs(r)])) first_[g.rule_lhs(r)] = f, changed = true;
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (RuleId r = 0; r < g.num_rules(); ++r) {
        const std::span<const Symbol> rhs = g.rule_rhs(r);
        for (size_t k = 0; k < rhs.size(); ++k) {
          if (!rhs[k].is_nonterminal()) continue;
          bool nullable;
          ByteSet f = follow_[rhs[k].id()] | SuffixFirst(r, k + 1, &nullable);
          if (nullable) f |= follow_[g.rule_lhs(r)];
          if (!(f == follow_[rhs[k].id()])) follow_[rhs[k].id()] = f, changed = true;
        }
      }
    }
  }

  // The first bytes of rule r's symbols from index `from` on; *nullable:
  // whether they may derive the empty string.
  ByteSet SuffixFirst(RuleId r, size_t from, bool* nullable) const {
    ByteSet out;
    const std::span<const Symbol> rhs = g_.rule_rhs(r);
    for (size_t k = from; k < rhs.size(); ++k) {
      const Symbol s = rhs[k];
      if (s.is_lexeme()) {
        if (!g_.lexeme(s.id()).is_token()) out |= lexeme_first_[s.id()];
        *nullable = false;
        return out;
      }
      out |= first_[s.id()];
      if (!g_.nullable(s.id())) {
        *nullable = false;
        return out;
      }
    }
    *nullable = true;
    return out;
  }
  const ByteSet& follow(NonterminalId a) const { return follow_[a]; }

 private:
  const Grammar& g_;
  const std::vector<ByteSet>& lexeme_first_;
  std::vector<ByteSet> first_, follow_;
};

// Walks the token trie from the isolated parse of one position
// (EarleyParser::ResetInside), collecting the tokens it allows and the
// frontier nodes (item_masks.h).
class InsideWalker {
 public:
  InsideWalker(const CompiledGrammarImpl& g, const ByteFirstFollow& bytes)
      : g_(g),
        grammar_(g.grammar()),
        parser_(g.grammar_ptr()),
        stepper_(g),
        trie_(g.vocab().trie()),
        dfa_(g.dfa()),
        bytes_(bytes),
        modeled_(grammar_.num_positions(), 0),
        waiting_on_(grammar_.num_nonterminals()) {
    for (uint32_t q = 0; q < grammar_.num_positions(); ++q) {
      const uint32_t sym = grammar_.pos_symbol(q);
      if (sym != Grammar::kEndOfRule && (sym & Symbol::kNonterminalBit) != 0) {
        waiting_on_[Symbol::FromBits(sym).id()].push_back(q);
      }
    }
  }

  // Trie nodes the walks visited so far.
  uint64_t visited() const { return visited_; }

  // False when the parser or the lexer hit a limit (the entry may lack tokens).
  bool Walk(uint32_t pos, ItemMasks::Entry* out) {
    const uint64_t hits = parser_.limit_hits();
    parser_.ResetInside(pos);
    if (parser_.limit_hits() != hits || parser_.Depth() != 1) return false;
    for (uint32_t q : marked_) modeled_[q] = 0;
    marked_.clear();
    // Set 0's items at the start of their rule exist in every origin set of
    // the item (A was predicted there); items after a nullable prefix may
    // also stand there with an older origin, so only the first are modeled.
    parser_.ForEachItemOf(0, [&](uint32_t q, uint32_t) {
      if (q == grammar_.rule_first_pos(grammar_.pos_rule(q)) && !modeled_[q]) {
        modeled_[q] = 1;
        marked_.push_back(q);
      }
    });
    ext_follow_.clear();
    out_ = out;
    // No frontier at the root: what completing at origin 0 in set 1 would
    // reach, the real top set reached already (its completions ran when it
    // was built), and those items are kernel items with entries of their own.
    Boundary(TokenTrie::kRoot, g_.LexerStart(parser_.LexAllowed()), ByteSet());
    std::sort(out->frontier.begin(), out->frontier.end());
    std::sort(out->tokens.begin(), out->tokens.end());
    return parser_.limit_hits() == hits && g_.status().ok();
  }

 private:
  // The bytes that may start what follows, outside the view, the
  // nonterminals the last set completed at origin 0.
  ByteSet Outside() {
    ByteSet out;
    for (NonterminalId b : parser_.SinkCompletions()) out |= ExtFollow(b);
    return out;
  }

  // The first bytes after b by the rule positions waiting on b that set 0
  // does not model.
  ByteSet ExtFollow(NonterminalId b) {
    for (const auto& [nt, set] : ext_follow_) {
      if (nt == b) return set;
    }
    ByteSet out;
    for (uint32_t q : waiting_on_[b]) {
      if (modeled_[q]) continue;
      const RuleId r = grammar_.pos_rule(q);
      bool nullable;
      out |= bytes_.SuffixFirst(r, q - grammar_.rule_first_pos(r) + 1, &nullable);
      if (nullable) out |= bytes_.follow(grammar_.rule_lhs(r));
    }
    ext_follow_.emplace_back(b, out);
    return out;
  }

  void AddTokens(uint32_t node) {
    ++visited_;
    trie_.ForEachToken(node, [&](TokenId t) { out_->tokens.push_back(t); });
  }

  // The children of `node`, where a lexeme starts from lexer state `start`
  // (the parser's top set is the one after node's bytes); `outside`: the
  // first bytes a continuation outside the view may take here.
  void Boundary(uint32_t node, regex::StateId start, const ByteSet& outside) {
    trie_.ForEachChild(node, [&](uint32_t c) {
      const uint8_t b = trie_.byte(c);
      if (outside.Contains(b)) {
        out_->frontier.push_back(c);
        return;
      }
      const regex::StateId s = dfa_.Step(start, b);
      if (s == regex::LazyDfa::kDead) return;
      AddTokens(c);
      Inside(c, s);
    });
  }

  // The children of `node`, inside a lexeme at lexer state `s`.
  void Inside(uint32_t node, regex::StateId s) {
    if (trie_.subtree_size(node) == 1) return;
    bool ends = false;
    trie_.ForEachChild(node, [&](uint32_t c) {
      const regex::StateId next = dfa_.Step(s, trie_.byte(c));
      if (next == regex::LazyDfa::kDead) {
        ends = true;
        return;
      }
      AddTokens(c);
      Inside(c, next);
    });
    if (!ends || !dfa_.IsAccepting(s)) return;
    // The lexeme ends before the children whose byte cannot continue it.
    const size_t depth = parser_.Depth();
    if (!stepper_.EndLexeme(parser_, s)) return;
    const ByteSet outside = Outside();
    const regex::StateId start = g_.LexerStart(parser_.LexAllowed());
    trie_.ForEachChild(node, [&](uint32_t c) {
      const uint8_t b = trie_.byte(c);
      if (dfa_.Step(s, b) != regex::LazyDfa::kDead) return;
      if (outside.Contains(b)) {
        out_->frontier.push_back(c);
        return;
      }
      const regex::StateId next = dfa_.Step(start, b);
      if (next == regex::LazyDfa::kDead) return;
      AddTokens(c);
      Inside(c, next);
    });
    parser_.Pop(parser_.Depth() - depth);
  }

  const CompiledGrammarImpl& g_;
  const Grammar& grammar_;
  EarleyParser parser_;
  ByteStepper stepper_;
  const TokenTrie& trie_;
  const regex::LazyDfa& dfa_;
  const ByteFirstFollow& bytes_;
  std::vector<uint8_t> modeled_;  // per position: an item of set 0 at its rule's start
  std::vector<uint32_t> marked_;  // the positions modeled_ marks
  std::vector<std::vector<uint32_t>> waiting_on_;  // per nonterminal: positions before it
  std::vector<std::pair<NonterminalId, ByteSet>> ext_follow_;  // ExtFollow's, this walk
  ItemMasks::Entry* out_ = nullptr;
  uint64_t visited_ = 0;
};

}  // namespace

std::unique_ptr<ItemMasks> ItemMasks::Build(const CompiledGrammarImpl& grammar,
                                            const std::vector<ByteSet>& lexeme_first,
                                            size_t max_bytes,
                                            std::chrono::steady_clock::time_point deadline,
                                            const std::atomic<bool>* cancelled) {
  const Grammar& g = grammar.grammar();
  if (g.has_frames() || g.num_positions() > kMaxPositions) return nullptr;
  std::unique_ptr<ItemMasks> masks(new ItemMasks(max_bytes, grammar.vocab().trie()));
  const ByteFirstFollow bytes(g, lexeme_first);
  InsideWalker walker(grammar, bytes);
  masks->entries_.resize(g.num_positions());
  for (uint32_t pos = 0; pos < g.num_positions(); ++pos) {
    if (g.pos_symbol(pos) == Grammar::kEndOfRule) continue;
    // At the start of its rule an item is never in a kernel (it was
    // predicted), but the augmented start's stands for the first set.
    if (pos == g.rule_first_pos(g.pos_rule(pos)) && pos != g.rule_first_pos(0)) continue;
    if (walker.visited() > kMaxWalkNodes || std::chrono::steady_clock::now() > deadline ||
        (cancelled != nullptr && cancelled->load(std::memory_order_relaxed))) {
      return nullptr;
    }
    auto entry = std::make_shared<Entry>();
    if (!walker.Walk(pos, entry.get())) return nullptr;
    masks->entry_bytes_ +=
        (entry->tokens.capacity() + entry->frontier.capacity()) * sizeof(uint32_t) + sizeof(Entry) +
        32;
    if (masks->entry_bytes_ > max_bytes) return nullptr;
    masks->entries_[pos] = std::move(entry);
  }
  return masks;
}

std::shared_ptr<const ItemMasks::Combined> ItemMasks::Combine(const std::vector<uint32_t>& kernel,
                                                              size_t mask_words) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = combined_.find(kernel); it != combined_.end()) return it->second;
  }
  auto combined = std::make_shared<Combined>();
  combined->words.assign(mask_words, 0);
  std::vector<uint32_t> frontier;
  for (uint32_t pos : kernel) {
    if (pos >= entries_.size() || entries_[pos] == nullptr) return nullptr;
    const Entry& e = *entries_[pos];
    for (uint32_t t : e.tokens) combined->words[t >> 5] |= uint32_t{1} << (t & 31);
    frontier.insert(frontier.end(), e.frontier.begin(), e.frontier.end());
  }
  std::sort(frontier.begin(), frontier.end());
  for (uint32_t f : frontier) {
    const std::vector<uint32_t>& kept = combined->frontier;
    if (!kept.empty() && f < trie_.subtree_end(kept.back())) continue;  // inside the last one
    combined->frontier.push_back(f);
  }
  const size_t cost =
      (combined->words.size() + combined->frontier.size() + kernel.size()) * sizeof(uint32_t) + 128;
  std::lock_guard<std::mutex> lock(mu_);
  if (entry_bytes_ + combined_bytes_.load(std::memory_order_relaxed) + cost > max_bytes_) {
    return combined;  // used, not kept
  }
  auto [it, inserted] = combined_.emplace(kernel, combined);
  if (inserted) combined_bytes_.fetch_add(cost, std::memory_order_relaxed);
  return it->second;
}

size_t ItemMasks::bytes() const {
  return entry_bytes_ + combined_bytes_.load(std::memory_order_relaxed);
}

}  // namespace maskd
