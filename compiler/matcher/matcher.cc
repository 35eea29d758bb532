#include "compiler/matcher/matcher.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/grammar/earley_parser.h"
#include "compiler/matcher/byte_stepper.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/matcher/item_masks.h"
#include "compiler/matcher/parse_state_key.h"
#include "compiler/matcher/vocab_index.h"
#include "compiler/matcher/walk_memo.h"
#include "compiler/regex/mask_work.h"

namespace maskd {
namespace {

// Longest jump-forward computed in one call; the client asks again after it.
constexpr size_t kMaxJumpForwardBytes = 256;

size_t Utf8CompletePrefix(std::string_view s) {
  // Cut an incomplete trailing character: its tokens would not be canonical.
  size_t end = s.size();
  size_t i = end;
  while (i > 0 && end - i < 4) {
    const unsigned char c = static_cast<unsigned char>(s[i - 1]);
    if ((c & 0xC0) != 0x80) {  // a lead byte (or ASCII) at i - 1
      const size_t need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
      return end - (i - 1) >= need ? end : i - 1;
    }
    --i;
  }
  return end;
}

class MatcherImpl final : public Matcher {
 public:
  MatcherImpl(std::shared_ptr<const CompiledGrammarImpl> grammar, const MatcherOptions& options)
      : grammar_(std::move(grammar)),
        options_(options),
        parser_(grammar_->grammar_ptr()),
        stepper_(*grammar_),
        distinct_(DistinctValueLexemes(grammar_->grammar())),
        distinct_numbers_(DistinctNumberLexemes(grammar_->grammar())),
        token_scratch_(grammar_->grammar().num_lexemes()) {
    pos_ = stepper_.Start(parser_);
  }

  MatcherImpl(const MatcherImpl& other)
      : grammar_(other.grammar_),
        options_(other.options_),
        parser_(other.parser_),
        stepper_(*grammar_),
        distinct_(other.distinct_),
        distinct_numbers_(other.distinct_numbers_),
        pos_(other.pos_),
        stopped_(other.stopped_),
        hit_depth_limit_(other.hit_depth_limit_),
        history_(other.history_),
        keyer_(other.keyer_),
        token_scratch_(other.token_scratch_) {}

  bool AcceptToken(TokenId token) override {
    regex::MaskWorkScope work;  // bounds the new lexer states it builds
    hit_depth_limit_ = false;
    const VocabIndex& vocab = grammar_->vocab();
    if (stopped_ || token >= vocab.tokenizer().vocab_size()) return false;
    if (vocab.is_eos(token)) {
      if (!stepper_.CanStop(parser_, pos_)) return false;
      Remember({parser_.Depth(), pos_, stopped_});
      stopped_ = true;
      return true;
    }
    if (AcceptTokenTerminal(token)) return true;
    if (vocab.tokenizer().is_special(token)) return false;
    return AdvanceBytes(vocab.tokenizer().token_bytes(token));
  }

  bool AcceptBytes(std::string_view bytes) override {
    regex::MaskWorkScope work;  // bounds the new lexer states it builds
    hit_depth_limit_ = false;
    if (stopped_) return false;
    return AdvanceBytes(bytes);
  }

  void FillMask(std::span<uint32_t> words) override {
    // One budget for every new lexer state this mask builds (mask_work.h):
    // a pattern whose states are each affordable can still add up to a stall.
    regex::MaskWorkScope work;
    std::fill(words.begin(), words.end(), 0);
    if (stopped_) return;
    // A parse state seen before (state_mask_cache.h) needs no walk. Object
    // frames and distinct values are state beside the items: never cached.
    const StateMaskCache& states = grammar_->state_masks();
    const bool by_state = !grammar_->grammar().has_frames();
    uint32_t key = ParseStateKeyer::kNoKey;
    if (by_state && states.Hot(pos_.lexer, pos_.in_lexeme)) {
      key = keyer_.Key(parser_, states);
      if (key != ParseStateKeyer::kNoKey) {
        if (auto mask = states.Find(key, pos_.lexer, pos_.in_lexeme)) {
          std::copy(mask->begin(), mask->end(), words.begin());
          AddTokenTerminalsAndEos(words);
          return;
        }
      }
    }
    const uint64_t limit_hits = parser_.limit_hits();
    walked_nodes_ = 0;
    used_item_masks_ = false;
    WalkMask(words);
    if (by_state) {
      // A mask from item masks stands for a walk of the whole trie: a copy
      // by parse state is still cheaper than their union and frontier walk.
      states.Note(pos_.lexer, pos_.in_lexeme,
                  used_item_masks_ ? std::numeric_limits<size_t>::max() : walked_nodes_);
      // A walk that hit a parser or lexer limit may lack tokens: not kept.
      if (key != ParseStateKeyer::kNoKey && parser_.limit_hits() == limit_hits &&
          grammar_->status().ok()) {
        const size_t vocab_words = (grammar_->vocab().tokenizer().vocab_size() + 31) / 32;
        states.Put(key, pos_.lexer, pos_.in_lexeme,
                   StateMaskCache::Mask(words.begin(), words.begin() + vocab_words));
      }
    }
    AddTokenTerminalsAndEos(words);
  }

  // The tokens that are not bytes: token terminals and EOS.
  void AddTokenTerminalsAndEos(std::span<uint32_t> words) {
    AddTokenTerminals(words);
    if (stepper_.CanStop(parser_, pos_)) {
      for (TokenId eos : grammar_->vocab().eos_ids()) {
        if (eos / 32 < words.size()) words[eos >> 5] |= uint32_t{1} << (eos & 31);
      }
    }
  }

  // The walk's part of the mask: the tokens read as bytes.
  void WalkMask(std::span<uint32_t> words) {
    const size_t base_depth = parser_.Depth();
    // In or before a distinct value (uniqueItems) the cached walk holds
    // tokens that may complete a repeat, and its boundaries group tokens by
    // where the lexeme ends, not by the bytes the parser compares: those
    // tokens are checked again (ResumeWithValues, DropRepeatedInside).
    const bool values_pending = distinct_ && parser_.Allowed().Intersects(*distinct_) &&
                                !(pos_.in_lexeme && pos_.value_done);
    // In or before a distinct number every byte may settle its value (a
    // digit's token may end in whitespace, an `e` after a zero mantissa):
    // walked byte by byte, without the cache. The walk stays small there:
    // few tokens go on from a number. Inside a lexeme that can no longer be
    // a number (a string item beside number items) the cache serves again.
    const bool numbers_pending = distinct_numbers_ &&
                                 parser_.Allowed().Intersects(*distinct_numbers_) &&
                                 (!pos_.in_lexeme || DistinctNumberLive(pos_.lexer));
    // The lexeme in progress ends before any next byte: most tokens come
    // from the item masks of the next set's kernel, the rest from a walk.
    if (const ItemMasks* items = grammar_->item_masks();
        items != nullptr &&
        (!pos_.in_lexeme || (grammar_->dfa().IsAccepting(pos_.lexer) &&
                             grammar_->dfa().FirstBytes(pos_.lexer).Empty())) &&
        WalkWithItemMasks(*items, words)) {
      return;
    }
    // Inside an array of distinct objects/arrays every key and scalar
    // feeds the item's value (EarleyParser::TrackValue): the cached walk's
    // ends of such lexemes are resumed from their own paths
    // (ResumeWithValues). At a lexeme boundary where a closing bracket
    // would complete a repeat (ByteStepper::Advance), the walk is uncached.
    // Directly in an item array its scalar items settle inside their
    // lexemes: at a boundary (a literal's first byte) and in a number the
    // walk is uncached; in a string the cached tokens holding a quote are
    // checked again (DropRepeatedInside).
    const bool items_pending = parser_.InItemArray();
    const bool at_items = items_pending && parser_.AtItemArray();
    std::shared_ptr<const MaskCacheEntry> entry =
        numbers_pending ||
                (items_pending && !pos_.in_lexeme && (at_items || parser_.CloseRepeatsItem())) ||
                (at_items && NumberLive(pos_.lexer))
            ? nullptr
            : grammar_->mask_cache().Get(grammar_->dfa(), grammar_->vocab(), pos_.lexer,
                                         pos_.in_lexeme);
    // The lexer state holds keys the object frame has had (ByteStepper::
    // Start): the cached walk needs their tokens taken out.
    std::shared_ptr<const KeyNodeTable> key_nodes;
    if (entry != nullptr && parser_.KeysTaken()) {
      key_nodes = grammar_->KeyNodes(pos_.lexer, pos_.in_lexeme);
      // Inside item arrays the restarts after taken keys (key_restarts_)
      // would end a lexeme without its path's value: walked uncached.
      if (!key_nodes->complete || items_pending) entry = nullptr;
    }
    if (entry == nullptr) {
      memo_.Begin(base_depth);
      WalkSubtree(TokenTrie::kRoot, {pos_, base_depth}, words);
    } else {
      // Tokens that stay inside the current lexeme come from the cache; the
      // walk resumes with the parser only where the lexeme ends.
      const MaskWalk& walk = *entry->walk;
      if (!walk.inside_words.empty()) {
        std::copy(walk.inside_words.begin(), walk.inside_words.end(), words.begin());
      }
      for (TokenId t : walk.inside_ids) words[t >> 5] |= uint32_t{1} << (t & 31);
      key_restarts_.clear();
      if (key_nodes != nullptr) RemoveTakenKeys(*key_nodes, words);
      if (values_pending || (at_items && pos_.in_token == 1)) DropRepeatedInside(words);
      for (const MaskCacheEntry::EndGroup& group : entry->groups) {
        if ((values_pending && EndsDistinctValue(group.ended)) ||
            (items_pending && EndsValuedPart(group.ended))) {
          ResumeWithValues(group, words);
          continue;
        }
        // pos_.value: what the stepper would scan (only a distinct value
        // reads it, and then one whose bytes are all written already).
        if (!stepper_.EndLexeme(parser_, group.ended, pos_.value)) continue;
        const regex::StateId start = grammar_->LexerStart(parser_.LexAllowed());
        const size_t depth = parser_.Depth();
        memo_.Begin(depth);
        for (const std::vector<uint32_t>* nodes : group.nodes) {
          for (uint32_t node : *nodes) ResumeAt(node, start, depth, words);
        }
        parser_.Pop(parser_.Depth() - base_depth);
      }
      // Where a taken key's bytes began after an accepting state, the lexeme
      // ends there instead (RemoveTakenKeys).
      for (const KeyNodeTable::KeyNode* k : key_restarts_) {
        if (key_nodes == nullptr) break;
        if (!stepper_.EndLexeme(parser_, k->parent)) continue;
        memo_.Begin(parser_.Depth());
        ResumeAt(k->node, grammar_->LexerStart(parser_.LexAllowed()), parser_.Depth(), words);
        parser_.Pop(parser_.Depth() - base_depth);
      }
    }
  }

  // The mask's walk part at a lexeme boundary (none in progress, or one
  // that ends before any next byte): the union of the item masks
  // (item_masks.h) of the kernel of the top set (after scanning the lexeme
  // in progress), and a real walk of their frontier subtrees. The first set
  // has no kernel: its entry is the augmented start's. False (nothing
  // changed) when the table lacks them.
  bool WalkWithItemMasks(const ItemMasks& items, std::span<uint32_t> words) {
    const size_t base_depth = parser_.Depth();
    if (pos_.in_lexeme && !stepper_.EndLexeme(parser_, pos_.lexer)) return false;
    const Grammar& g = grammar_->grammar();
    const uint32_t top = static_cast<uint32_t>(parser_.Depth());
    kernel_.clear();
    if (top == 0) kernel_.push_back(g.rule_first_pos(0));
    parser_.ForEachTopItem([&](uint32_t pos, uint32_t origin) {
      if (origin < top && g.pos_symbol(pos) != Grammar::kEndOfRule) kernel_.push_back(pos);
    });
    std::sort(kernel_.begin(), kernel_.end());
    kernel_.erase(std::unique(kernel_.begin(), kernel_.end()), kernel_.end());
    const size_t vocab_words = (grammar_->vocab().tokenizer().vocab_size() + 31) / 32;
    std::shared_ptr<const ItemMasks::Combined> part = items.Combine(kernel_, vocab_words);
    if (part == nullptr) {
      parser_.Pop(parser_.Depth() - base_depth);
      return false;
    }
    std::copy(part->words.begin(), part->words.end(), words.begin());
    if (!part->frontier.empty()) {
      memo_.Begin(top);
      WalkSubtree(TokenTrie::kRoot, {pos_.in_lexeme ? stepper_.Start(parser_) : pos_, top}, words,
                  &part->frontier);
    }
    parser_.Pop(parser_.Depth() - base_depth);
    used_item_masks_ = true;
    return true;
  }

  bool CanStop() const override { return stopped_ || stepper_.CanStop(parser_, pos_); }

  bool MustStop() override {
    regex::MaskWorkScope work;  // bounds the new lexer states it builds
    if (stopped_) return true;
    if (!stepper_.CanStop(parser_, pos_)) return false;
    if (TokenTerminalAllowed(pos_)) return false;
    for (int b = 0; b < 256; ++b) {
      if (ViableByte(pos_, static_cast<uint8_t>(b))) return false;
    }
    return true;
  }

  absl::Status Rollback(uint32_t n) override {
    if (n > history_.size()) {
      return absl::OutOfRangeError(
          absl::StrCat("cannot roll back ", n, " tokens: only ", history_.size(), " are kept"));
    }
    if (n == 0) return absl::OkStatus();
    const Snapshot& s = history_[history_.size() - n];
    parser_.Pop(parser_.Depth() - s.parser_depth);
    keyer_.Forget(s.parser_depth + 1);
    pos_ = s.pos;
    stopped_ = s.stopped;
    history_.resize(history_.size() - n);
    return absl::OkStatus();
  }

  // Forced bytes, and forced special tokens: where the grammar allows
  // nothing but one token terminal naming one token (harmony's <|constrain|>
  // after a recipient), that token is part of the jump-forward (its text in
  // `bytes`), and forcing goes on after it. Each text run between such
  // tokens is tokenized on its own, so no text token spans a special one.
  JumpForward ComputeJumpForward() override {
    regex::MaskWorkScope work;  // bounds the new lexer states it builds
    JumpForward out;
    if (stopped_) return out;
    const size_t base_depth = parser_.Depth();
    LexPosition pos = pos_;
    std::string run;  // forced text since the last forced token
    while (out.bytes.size() + run.size() < kMaxJumpForwardBytes) {
      // With EOS possible here, the continuation is not forced.
      if (stepper_.CanStop(parser_, pos)) break;
      const bool token_here = TokenTerminalAllowed(pos);
      int only = -1;
      for (int b = 0; b < 256; ++b) {
        if (!ViableByte(pos, static_cast<uint8_t>(b))) continue;
        if (only >= 0) {
          only = -2;
          break;
        }
        only = b;
      }
      if (token_here) {
        // A byte could come instead, or several tokens: not forced.
        if (only != -1 || Utf8CompletePrefix(run) != run.size()) break;
        const std::optional<TokenId> token = ForcedTokenTerminal(pos);
        if (!token.has_value() || !ScanTokenTerminal(pos, *token)) break;
        const Tokenizer& tokenizer = grammar_->vocab().tokenizer();
        if (!run.empty()) {
          const std::vector<TokenId> ids = tokenizer.Encode(run);
          out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
          out.bytes += run;
          run.clear();
        }
        out.tokens.push_back(*token);
        out.bytes += tokenizer.token_bytes(*token);
        pos = stepper_.Start(parser_);
        continue;
      }
      if (only < 0) break;
      stepper_.Step(parser_, pos, static_cast<uint8_t>(only));
      run.push_back(static_cast<char>(only));
    }
    parser_.Pop(parser_.Depth() - base_depth);
    run.resize(Utf8CompletePrefix(run));
    if (!run.empty()) {
      const std::vector<TokenId> ids = grammar_->vocab().tokenizer().Encode(run);
      out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
      out.bytes += run;
    }
    return out;
  }

  void Reset() override {
    parser_.Reset();
    keyer_.Forget(0);
    pos_ = stepper_.Start(parser_);
    stopped_ = false;
    history_.clear();
  }

  std::unique_ptr<Matcher> Clone() const override { return std::make_unique<MatcherImpl>(*this); }

  size_t ParserDepth() const override { return parser_.Depth(); }
  bool HitDepthLimit() const override { return hit_depth_limit_; }
  size_t MemoryBytes() const override {
    // The matcher's own block, then what its parts hold on the heap with
    // malloc's block overhead (heap_bytes.h). std::deque keeps its snapshots
    // in 512-byte nodes behind a map of node pointers (8 at least).
    constexpr size_t kDequeNodeBytes = 512;
    const size_t history_nodes = history_.size() * sizeof(Snapshot) / kDequeNodeBytes + 1;
    return MallocBlockBytes(sizeof(*this)) + parser_.HeldBytesApprox() - sizeof(EarleyParser) +
           history_nodes * MallocBlockBytes(kDequeNodeBytes) +
           MallocBlockBytes(std::max<size_t>(8, history_nodes + 2) * sizeof(void*)) +
           VectorHeapBytes(walk_stack_) + memo_.HeldBytesApprox() + stepper_.HeapBytes() +
           (distinct_ ? distinct_->HeapBytes() : 0) +
           (distinct_numbers_ ? distinct_numbers_->HeapBytes() : 0) + token_scratch_.HeapBytes() +
           keyer_.HeldBytesApprox();
  }

 private:
  struct Snapshot {
    size_t parser_depth;
    LexPosition pos;
    bool stopped;
  };

  // Keeps the state before an accepted token, for Rollback.
  void Remember(const Snapshot& before) {
    if (options_.max_rollback == 0) return;
    if (history_.size() == options_.max_rollback) history_.pop_front();
    history_.push_back(before);
  }

  bool AdvanceBytes(std::string_view bytes) {
    hit_depth_limit_ = false;
    const size_t base_depth = parser_.Depth();
    LexPosition pos = pos_;
    for (char c : bytes) {
      if (!stepper_.Step(parser_, pos, static_cast<uint8_t>(c))) {
        parser_.Pop(parser_.Depth() - base_depth);
        return false;
      }
    }
    if (options_.max_parser_depth > 0 && parser_.Depth() > options_.max_parser_depth) {
      parser_.Pop(parser_.Depth() - base_depth);
      hit_depth_limit_ = true;
      return false;
    }
    Remember({base_depth, pos_, stopped_});
    pos_ = pos;
    return true;
  }

  // The token pass (token_terminals.h): takes `token` as a token terminal
  // the grammar allows here, ending the lexeme in progress first. The
  // compile proved that a token this accepts cannot also be read as text.
  bool AcceptTokenTerminal(TokenId token) {
    const TokenTerminals& terminals = grammar_->token_terminals();
    if (terminals.empty()) return false;
    const size_t base_depth = parser_.Depth();
    if (pos_.in_lexeme && !stepper_.EndLexeme(parser_, pos_.lexer)) return false;
    if (!terminals.Matching(parser_.Allowed(), token, &token_scratch_) ||
        !parser_.ScanAny(token_scratch_)) {
      parser_.Pop(parser_.Depth() - base_depth);
      return false;
    }
    Remember({base_depth, pos_, stopped_});
    pos_ = stepper_.Start(parser_);
    return true;
  }

  // Marks the tokens of the token terminals allowed at pos_.
  void AddTokenTerminals(std::span<uint32_t> words) {
    const TokenTerminals& terminals = grammar_->token_terminals();
    if (terminals.empty()) return;
    const size_t depth = parser_.Depth();
    if (pos_.in_lexeme && !stepper_.EndLexeme(parser_, pos_.lexer)) return;
    terminals.AddAllowed(parser_.Allowed(), words);
    parser_.Pop(parser_.Depth() - depth);
  }

  // The one token the allowed token terminals at `pos` name, if they name
  // exactly one (the parser stands at `pos`; left there).
  std::optional<TokenId> ForcedTokenTerminal(const LexPosition& pos) {
    const TokenTerminals& terminals = grammar_->token_terminals();
    const size_t depth = parser_.Depth();
    if (pos.in_lexeme && !stepper_.EndLexeme(parser_, pos.lexer)) return std::nullopt;
    const size_t vocab = grammar_->vocab().tokenizer().vocab_size();
    std::vector<uint32_t> words((vocab + 31) / 32);
    terminals.AddAllowed(parser_.Allowed(), words);
    parser_.Pop(parser_.Depth() - depth);
    std::optional<TokenId> only;
    for (size_t w = 0; w < words.size(); ++w) {
      if (words[w] == 0) continue;
      if (only.has_value() || (words[w] & (words[w] - 1)) != 0) return std::nullopt;
      only = static_cast<TokenId>(w * 32 + static_cast<size_t>(__builtin_ctz(words[w])));
    }
    return only;
  }

  // Scans `token` as a token terminal at `pos` into parser_ (left pushed).
  bool ScanTokenTerminal(const LexPosition& pos, TokenId token) {
    if (pos.in_lexeme && !stepper_.EndLexeme(parser_, pos.lexer)) return false;
    return grammar_->token_terminals().Matching(parser_.Allowed(), token, &token_scratch_) &&
           parser_.ScanAny(token_scratch_);
  }

  // Whether some token terminal may come at `pos` (the parser stands there).
  bool TokenTerminalAllowed(const LexPosition& pos) {
    const TokenTerminals& terminals = grammar_->token_terminals();
    if (terminals.empty()) return false;
    const size_t depth = parser_.Depth();
    if (pos.in_lexeme && !stepper_.EndLexeme(parser_, pos.lexer)) return false;
    const bool any = terminals.AnyAllowed(parser_.Allowed());
    parser_.Pop(parser_.Depth() - depth);
    return any;
  }

  struct Frame {
    LexPosition pos;
    size_t parser_depth;
  };

  // Continues a cached walk at boundary node `node`, whose byte starts a
  // new lexeme from lexer state `start` with the parser at `depth`.
  void ResumeAt(uint32_t node, regex::StateId start, size_t depth, std::span<uint32_t> words) {
    const TokenTrie& trie = grammar_->vocab().trie();
    const regex::StateId s = grammar_->dfa().Step(start, trie.byte(node));
    if (s == regex::LazyDfa::kDead) return;
    LexPosition pos;
    if (!stepper_.Begin(parser_, s, trie.byte(node), &pos)) return;
    SetTokens(trie, node, words);
    WalkSubtree(node, {pos, depth}, words);
  }

  // Takes out of a cached walk's inside tokens (in `words`) those the lexer
  // reads only as keys the object frame has had: the subtrees of the key
  // nodes none of whose keys the parser allows. Where the lexeme could end
  // at such a node's parent, notes the node in key_restarts_: the true lexer
  // ends the lexeme there and starts a new one with the node's byte. The
  // walk's boundary nodes below a removed node need nothing: the lexemes
  // that end there are taken keys, which the parser refuses.
  void RemoveTakenKeys(const KeyNodeTable& table, std::span<uint32_t> words) {
    key_restarts_.clear();
    const TokenTrie& trie = grammar_->vocab().trie();
    const LexemeSet& allowed = parser_.Allowed();
    const regex::LazyDfa& dfa = grammar_->dfa();
    uint32_t removed_end = 0;  // nodes below this were removed with an ancestor
    for (const KeyNodeTable::KeyNode& k : table.nodes) {
      if (k.node < removed_end) continue;
      bool live = false;
      for (LexemeId key : table.KeysAt(k)) live = live || allowed.Contains(key);
      if (live) continue;
      for (uint32_t n = k.node; n < k.end; ++n) {
        trie.ForEachToken(n, [&](TokenId t) { words[t >> 5] &= ~(uint32_t{1} << (t & 31)); });
      }
      removed_end = k.end;
      if (!k.parent_in_lexeme) continue;
      for (uint32_t tag : dfa.AcceptingTags(k.parent)) {
        if (allowed.Contains(tag)) {
          key_restarts_.push_back(&k);
          break;
        }
      }
    }
  }
  // Whether a distinct number is live in lexer state `s`.
  bool DistinctNumberLive(regex::StateId s) const {
    for (const regex::TaggedExpr& e : grammar_->dfa().Exprs(s)) {
      if (grammar_->grammar().is_distinct_number(e.tag)) return true;
    }
    return false;
  }

  // Whether a number (JsonPart::kNumber) is live in lexer state `s`.
  bool NumberLive(regex::StateId s) const {
    for (const regex::TaggedExpr& e : grammar_->dfa().Exprs(s)) {
      if (grammar_->grammar().json_part(e.tag) == JsonPart::kNumber) return true;
    }
    return false;
  }

  // Whether a lexeme ending in lexer state `ended` may be a key or scalar
  // (JsonPart), whose bytes the parser folds into an item's value.
  bool EndsValuedPart(regex::StateId ended) const {
    for (uint32_t tag : grammar_->dfa().AcceptingTags(ended)) {
      const JsonPart p = grammar_->grammar().json_part(tag);
      if (p == JsonPart::kKey || p == JsonPart::kScalar || p == JsonPart::kNumber) return true;
    }
    return false;
  }

  // Whether a lexeme ending in lexer state `ended` may be a distinct value.
  bool EndsDistinctValue(regex::StateId ended) const {
    for (uint32_t tag : grammar_->dfa().AcceptingTags(ended)) {
      if (grammar_->grammar().is_distinct_value(tag)) return true;
    }
    return false;
  }

  // Clears the cached inside tokens that would complete a string the array
  // holds already. A distinct value is a quoted string (json_schema
  // lower.cc, UniqueStringArray) that first accepts on its closing quote,
  // so only tokens holding a quote can; each is stepped from pos_ (its
  // bytes stay inside the lexeme: the parser does not move).
  void DropRepeatedInside(std::span<uint32_t> words) {
    const VocabIndex& vocab = grammar_->vocab();
    const size_t depth = parser_.Depth();
    for (TokenId t : vocab.quote_tokens()) {
      const uint32_t bit = uint32_t{1} << (t & 31);
      if ((words[t >> 5] & bit) == 0) continue;
      LexPosition pos = pos_;
      for (char c : vocab.tokenizer().token_bytes(t)) {
        if (!stepper_.Step(parser_, pos, static_cast<uint8_t>(c))) {
          words[t >> 5] &= ~bit;
          break;
        }
      }
      assert(parser_.Depth() == depth);
      if (parser_.Depth() > depth) parser_.Pop(parser_.Depth() - depth);
    }
  }

  // A cached group whose lexeme may be a distinct value: the parser must
  // compare the bytes each node's path wrote, so every boundary is resumed
  // from its own path (siblings share it: one scan per parent node).
  void ResumeWithValues(const MaskCacheEntry::EndGroup& group, std::span<uint32_t> words) {
    const VocabIndex& vocab = grammar_->vocab();
    const size_t base_depth = parser_.Depth();
    for (const std::vector<uint32_t>* nodes : group.nodes) {
      uint32_t scanned_parent = TokenTrie::kNoNode;
      bool scanned_ok = false;
      regex::StateId start = regex::LazyDfa::kDead;
      for (uint32_t node : *nodes) {
        const uint32_t parent = vocab.parent(node);
        if (parent != scanned_parent) {
          if (parser_.Depth() > base_depth) parser_.Pop(parser_.Depth() - base_depth);
          scanned_parent = parent;
          scanned_ok = false;
          LexPosition pos = pos_;
          bool alive = true;
          for (char c : vocab.PathTo(parent)) {
            if (!stepper_.Step(parser_, pos, static_cast<uint8_t>(c))) {
              alive = false;
              break;
            }
          }
          assert(parser_.Depth() == base_depth);
          if (!alive || parser_.Depth() != base_depth) continue;
          if (!stepper_.EndLexeme(parser_, pos)) continue;
          scanned_ok = true;
          start = grammar_->LexerStart(parser_.LexAllowed());
          memo_.Begin(parser_.Depth());
        }
        if (scanned_ok) ResumeAt(node, start, base_depth + 1, words);
      }
    }
    if (parser_.Depth() > base_depth) parser_.Pop(parser_.Depth() - base_depth);
  }

  static void SetTokens(const TokenTrie& trie, uint32_t node, std::span<uint32_t> words) {
    trie.ForEachToken(node, [&](TokenId t) { words[t >> 5] |= uint32_t{1} << (t & 31); });
  }

  // Marks the allowed tokens strictly below trie node `root`, whose own byte
  // left the lexer and parser as `root_frame` says (the parser's top set is
  // the one memo_ began at); restores the parser to root_frame's depth.
  //
  // A step the memo knows does not run the parser: the child's frame is
  // "virtual" (its set is known by id only). The stack's frames are real up
  // to `real` and virtual above; a step the memo lacks first replays the
  // virtual frames' bytes into the parser (Materialize).
  //
  // With `frontier` (ascending trie nodes, none inside another's subtree),
  // only their subtrees and the paths to them are walked.
  void WalkSubtree(uint32_t root, const Frame& root_frame, std::span<uint32_t> words,
                   const std::vector<uint32_t>* frontier = nullptr) {
    const TokenTrie& trie = grammar_->vocab().trie();
    const regex::LazyDfa& dfa = grammar_->dfa();
    // Object frames (unique keys) and distinct values (the bytes of a value,
    // hashed into LexPosition) are parser state beside the items: no memo,
    // and every byte goes through the stepper.
    const bool memoize = !grammar_->grammar().has_unique_keys() &&
                         !grammar_->grammar().has_distinct_values() &&
                         !grammar_->grammar().has_item_values();
    const uint32_t root_end =
        root == TokenTrie::kRoot ? static_cast<uint32_t>(trie.num_nodes()) : trie.subtree_end(root);
    walk_stack_.clear();
    walk_stack_.push_back({root_end, root, root_frame, WalkMemo::kBaseSet, frontier == nullptr});
    size_t real = 1;
    for (uint32_t i = root + 1; !walk_stack_.empty(); ++walked_nodes_) {
      if (i >= walk_stack_.back().end) {
        walk_stack_.pop_back();
        real = std::min(real, walk_stack_.size());
        continue;
      }
      const WalkEntry parent = walk_stack_.back();
      bool covered = parent.covered;
      if (!covered) {
        // Outside every frontier subtree: only the paths to them.
        auto f = std::lower_bound(frontier->begin(), frontier->end(), i);
        if (f == frontier->end() || *f >= trie.subtree_end(i)) {
          i = trie.subtree_end(i);
          continue;
        }
        covered = *f == i;
      }
      const bool parent_real = real == walk_stack_.size();
      const uint8_t b = trie.byte(i);
      // Inside a lexeme the parser does not move: the lexer alone decides.
      const regex::StateId inside =
          memoize ? dfa.Step(parent.frame.pos.lexer, b) : regex::LazyDfa::kDead;
      if (inside != regex::LazyDfa::kDead) {
        LexPosition pos = parent.frame.pos;  // as ByteStepper::Step leaves it
        pos.lexer = inside;
        pos.in_lexeme = true;
        walk_stack_.push_back(
            {trie.subtree_end(i), i, {pos, parent.frame.parser_depth}, parent.set, covered});
        if (parent_real) real = walk_stack_.size();
        SetTokens(trie, i, words);
        ++i;
        continue;
      }
      if (memoize && !parent.frame.pos.in_lexeme) {
        i = trie.subtree_end(i);
        continue;
      }
      if (memoize) {
        if (const WalkMemo::Step* known = memo_.Find(parent.set, parent.frame.pos.lexer, b)) {
          if (known->lexer == regex::LazyDfa::kDead) {
            i = trie.subtree_end(i);
            continue;
          }
          walk_stack_.push_back(
              {trie.subtree_end(i),
               i,
               {{known->lexer, true, false, 0, {}, LexPosition::kTokenSeed, 0, {}, {}}, 0},
               known->set,
               covered});
          SetTokens(trie, i, words);
          ++i;
          continue;
        }
      }
      Materialize(real);
      real = walk_stack_.size();
      const size_t depth = walk_stack_.back().frame.parser_depth;
      if (parser_.Depth() > depth) parser_.Pop(parser_.Depth() - depth);
      LexPosition pos = parent.frame.pos;
      const bool viable = stepper_.Step(parser_, pos, b);
      uint32_t set = WalkMemo::kBaseSet;
      if (memoize) {
        // The lexeme ended, so a viable step pushed exactly one set.
        if (viable) set = memo_.Intern(parser_);
        memo_.Put(parent.set, parent.frame.pos.lexer, b,
                  {viable ? pos.lexer : regex::LazyDfa::kDead, set});
      }
      if (!viable) {
        i = trie.subtree_end(i);
        continue;
      }
      walk_stack_.push_back({trie.subtree_end(i), i, {pos, parser_.Depth()}, set, covered});
      real = walk_stack_.size();
      SetTokens(trie, i, words);
      ++i;
    }
    if (parser_.Depth() > root_frame.parser_depth) {
      parser_.Pop(parser_.Depth() - root_frame.parser_depth);
    }
  }

  // Runs the parser through the bytes of walk_stack_'s virtual frames (from
  // index `real` on), making them real. The memo said each step is viable.
  void Materialize(size_t real) {
    const TokenTrie& trie = grammar_->vocab().trie();
    for (size_t k = real; k < walk_stack_.size(); ++k) {
      const Frame& parent = walk_stack_[k - 1].frame;
      if (parser_.Depth() > parent.parser_depth) parser_.Pop(parser_.Depth() - parent.parser_depth);
      LexPosition pos = parent.pos;
      const bool viable = stepper_.Step(parser_, pos, trie.byte(walk_stack_[k].node));
      assert(viable && pos == walk_stack_[k].frame.pos);
      (void)viable;
      if (parser_.Depth() > parent.parser_depth) {
        [[maybe_unused]] const uint32_t set = memo_.Intern(parser_);
        assert(set == walk_stack_[k].set);
      }
      walk_stack_[k].frame.parser_depth = parser_.Depth();
    }
  }

  // Whether byte b can follow `pos` (the parser stands at pos); changes nothing.
  bool ViableByte(const LexPosition& pos, uint8_t b) {
    const size_t depth = parser_.Depth();
    LexPosition probe = pos;
    if (!stepper_.Step(parser_, probe, b)) return false;
    parser_.Pop(parser_.Depth() - depth);
    return true;
  }

  // The kDistinctValue lexemes, or nullopt when the grammar has none.
  static std::optional<LexemeSet> DistinctValueLexemes(const Grammar& g) {
    if (!g.has_distinct_values()) return std::nullopt;
    LexemeSet out(g.num_lexemes());
    for (LexemeId id = 0; id < g.num_lexemes(); ++id) {
      if (g.is_distinct_value(id)) out.Insert(id);
    }
    return out;
  }

  // The distinct-number lexemes, or nullopt when the grammar has none.
  static std::optional<LexemeSet> DistinctNumberLexemes(const Grammar& g) {
    if (!g.has_distinct_numbers()) return std::nullopt;
    LexemeSet out(g.num_lexemes());
    for (LexemeId id = 0; id < g.num_lexemes(); ++id) {
      if (g.is_distinct_number(id)) out.Insert(id);
    }
    return out;
  }

  std::shared_ptr<const CompiledGrammarImpl> grammar_;
  MatcherOptions options_;
  // Mutable: CanStop() scans a lexeme end into the parser and pops it again,
  // leaving the observable state as it was.
  mutable EarleyParser parser_;
  mutable ByteStepper stepper_;
  std::optional<LexemeSet> distinct_;
  std::optional<LexemeSet> distinct_numbers_;
  LexPosition pos_;
  bool stopped_ = false;
  bool hit_depth_limit_ = false;
  std::deque<Snapshot> history_;
  // The mask walk's stack (kept to avoid reallocating).
  struct WalkEntry {
    uint32_t end;   // one past the subtree of the node this frame belongs to
    uint32_t node;  // that node
    Frame frame;    // parser_depth: meaningful only while the frame is real
    uint32_t set;   // memo_'s id of the parser's top set here
    bool covered;   // inside a frontier subtree (or the walk has none)
  };
  std::vector<WalkEntry> walk_stack_;
  WalkMemo memo_;
  ParseStateKeyer keyer_;
  size_t walked_nodes_ = 0;                                 // loop steps of the last mask's walks
  bool used_item_masks_ = false;                            // the last mask's walk used them
  std::vector<const KeyNodeTable::KeyNode*> key_restarts_;  // RemoveTakenKeys' output
  std::vector<uint32_t> kernel_;                            // WalkWithItemMasks' scratch
  LexemeSet token_scratch_;                                 // the token terminals a token matches
};

}  // namespace

absl::Status PrepareTokenizer(std::shared_ptr<const Tokenizer> tokenizer) {
  return VocabIndex::For(std::move(tokenizer)).status();
}

absl::StatusOr<std::shared_ptr<const void>> PrepareTokenizerIndex(
    std::shared_ptr<const Tokenizer> tokenizer) {
  absl::StatusOr<std::shared_ptr<const VocabIndex>> index = VocabIndex::For(std::move(tokenizer));
  if (!index.ok()) return index.status();
  return std::shared_ptr<const void>(*std::move(index));
}

void ReleaseTokenizerIndex(const std::string& id) { VocabIndex::Release(id); }

std::unique_ptr<Matcher> Matcher::Create(std::shared_ptr<const CompiledGrammar> grammar,
                                         const MatcherOptions& options) {
  auto impl = std::static_pointer_cast<const CompiledGrammarImpl>(std::move(grammar));
  return std::make_unique<MatcherImpl>(std::move(impl), options);
}

}  // namespace maskd
