#include "compiler/matcher/mask_cache.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

namespace maskd {
namespace {

// A walk's inside tokens while they are collected: ids while they are fewer
// than the bitmask's words, then the bitmask (subtree walks are mostly small,
// so most never pay for a vocabulary-wide bitmask).
class InsideSet {
 public:
  explicit InsideSet(size_t mask_words) : mask_words_(mask_words) {}

  void Add(TokenId t) {
    if (words_.empty()) {
      ids_.push_back(t);
      if (ids_.size() >= mask_words_) MakeDense();
    } else {
      words_[t >> 5] |= uint32_t{1} << (t & 31);
    }
  }
  void AddWalk(const MaskWalk& walk) {
    if (walk.inside_words.empty()) {
      for (TokenId t : walk.inside_ids) Add(t);
      return;
    }
    if (words_.empty()) MakeDense();
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= walk.inside_words[w];
  }
  void MoveInto(MaskWalk& walk) {
    if (words_.empty()) {
      walk.inside_ids = std::move(ids_);
    } else {
      walk.inside_words = std::move(words_);
    }
  }

 private:
  void MakeDense() {
    words_.assign(mask_words_, 0);
    for (TokenId t : ids_) words_[t >> 5] |= uint32_t{1} << (t & 31);
    ids_ = {};
  }

  const size_t mask_words_;
  std::vector<TokenId> ids_;     // while sparse (words_ empty)
  std::vector<uint32_t> words_;  // once dense
};

// Walks the trie nodes strictly below `root` (TokenTrie::kRoot: the whole
// trie) with the lexer alone, from `state`, the lexer state at `root`.
// `may_end_at_root`: a lexeme is in progress at `root`, so it may end before
// the first byte below it. Adds the surviving tokens to `inside` and the
// nodes where the lexeme ends to walk.boundaries, whose prefixes are the
// bytes from `root` on.
void WalkBelow(const regex::LazyDfa& dfa, const TokenTrie& trie, uint32_t root,
               regex::StateId state, bool may_end_at_root, InsideSet& inside, MaskWalk& walk) {
  absl::flat_hash_map<regex::StateId, size_t> boundary_index;
  // states[d] = lexer state after the first d bytes below root on the
  // current path, path[0, d) those bytes.
  std::vector<regex::StateId> states(trie.max_depth() + 1);
  std::string path(trie.max_depth() + 1, '\0');
  states[0] = state;
  trie.WalkBelow(root, [&](uint32_t node, size_t depth) {
    const regex::StateId parent = states[depth - 1];
    const uint8_t byte = trie.byte(node);
    const regex::StateId next = dfa.Step(parent, byte);
    if (next == regex::LazyDfa::kDead) {
      // The lexeme can end before this byte only if it has begun and accepts.
      if ((depth > 1 || may_end_at_root) && dfa.IsAccepting(parent)) {
        auto [it, inserted] = boundary_index.emplace(parent, walk.boundaries.size());
        if (inserted) walk.boundaries.push_back({path.substr(0, depth - 1), {}});
        walk.boundaries[it->second].nodes.push_back(node);
      }
      return false;
    }
    states[depth] = next;
    path[depth - 1] = static_cast<char>(byte);
    trie.ForEachToken(node, [&](TokenId t) { inside.Add(t); });
    return true;
  });
}

// The state a walk of `horizon` bytes steps from: `state` clamped to the
// horizon (regex/horizon.h: positions of a counted string then share their
// steps), except where the state holds many lexemes. There a clamped copy is
// a new family of DFA states, each step deriving every lexeme again (an
// object's keys after their bounded whitespace `[ \t\n\r]{0,32}`: 260
// keys of eslintrc derived once per subtree horizon), while such states are
// rarely positions of one counted string. Either way the walk is the same:
// the two states agree on every string of at most `horizon` bytes.
regex::StateId StepFrom(const regex::LazyDfa& dfa, regex::StateId state, uint32_t horizon) {
  constexpr size_t kManyLexemes = 16;
  if (dfa.Exprs(state).size() > kManyLexemes) return state;
  return dfa.HorizonState(state, horizon);
}

}  // namespace

size_t MaskCacheEntry::OwnByteSize() const {
  size_t n = sizeof(*this) + groups.capacity() * sizeof(EndGroup);
  for (const EndGroup& g : groups) n += g.nodes.capacity() * sizeof(g.nodes[0]);
  return n;
}

std::shared_ptr<const MaskCacheEntry> MaskCache::Get(const regex::LazyDfa& dfa,
                                                     const VocabIndex& vocab, regex::StateId state,
                                                     bool in_lexeme) const {
  const uint64_t key = (uint64_t{state} << 1) | (in_lexeme ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    if (full_) return nullptr;
  }
  // Computed outside the lock: two threads may both compute an entry; the
  // first one stored wins and both are identical.
  // Keyed by what the state says about strings as long as the longest
  // token: positions of a counted string far from its bounds share one walk
  // (and need no stepping of every root child to find that out).
  const SharedMaskStore::Key shared_key{
      dfa.StateHorizonFingerprint(state, vocab.height(TokenTrie::kRoot)), in_lexeme,
      SharedMaskStore::kWholeTrie, true};
  std::shared_ptr<const MaskWalk> walk = vocab.mask_store().Find(shared_key);
  if (walk == nullptr) {
    walk = vocab.mask_store().Insert(
        shared_key,
        AssembleBelow(dfa, vocab, TokenTrie::kRoot, state, in_lexeme && dfa.IsAccepting(state)));
  }
  auto entry = std::make_shared<MaskCacheEntry>();
  absl::flat_hash_map<regex::StateId, size_t> group_of;
  for (const MaskWalk::Boundary& b : walk->boundaries) {
    const regex::StateId ended = dfa.Walk(state, b.prefix);
    auto [it, inserted] = group_of.emplace(ended, entry->groups.size());
    if (inserted) entry->groups.push_back({ended, {}});
    entry->groups[it->second].nodes.push_back(&b.nodes);
  }
  entry->walk = std::move(walk);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.emplace(key, entry);
  if (inserted) {
    AddBytesLocked(entry->OwnByteSize());
    AddWalkBytesLocked(*entry->walk);
  }
  return it->second;
}

std::shared_ptr<const MaskWalk> MaskCache::AssembleBelow(const regex::LazyDfa& dfa,
                                                         const VocabIndex& vocab, uint32_t node,
                                                         regex::StateId state,
                                                         bool may_end_here) const {
  const TokenTrie& trie = vocab.trie();
  // The walk is a function of the child walks (null: the child's byte kills
  // the lexeme) and of whether the lexeme may end here: states that differ
  // only where no token reaches (positions of a counted string) get the
  // same child walks, and so the same walk without merging them again.
  Parts parts;
  regex::Fingerprint key{0x4173736D626C6564ull, may_end_here ? 1u : 2u};  // "Assmbled"
  key.Fold(node);
  // Steps from the state clamped to the subtree's horizon: the same walks
  // (regex/horizon.h), and positions of a counted string share its steps
  // instead of each building states of its own (StepFrom: not for states of
  // many lexemes).
  const regex::StateId base = StepFrom(dfa, state, vocab.height(node));
  trie.ForEachChild(node, [&](uint32_t child) {
    const regex::StateId next = dfa.Step(base, trie.byte(child));
    std::shared_ptr<const MaskWalk> below;
    if (next != regex::LazyDfa::kDead) below = SubtreeWalk(dfa, vocab, child, next);
    key.Fold(child);
    key.Fold(below == nullptr ? 0 : below->serial);
    parts.emplace_back(child, std::move(below));
  });
  const SharedMaskStore::Key assembled_key{key, false, SharedMaskStore::kAssembled};
  if (std::shared_ptr<const MaskWalk> known = vocab.mask_store().Find(assembled_key)) {
    return known;
  }
  auto walk = std::make_shared<MaskWalk>();
  const bool patched = PatchInsideFromRecent(node, parts, vocab.mask_words(), *walk);
  InsideSet inside(vocab.mask_words());
  if (!patched) trie.ForEachToken(node, [&](TokenId t) { inside.Add(t); });
  std::vector<uint32_t> ending_here;  // children whose byte ends the lexeme
  for (const auto& [child, below] : parts) {
    if (below == nullptr) {
      if (may_end_here) ending_here.push_back(child);
      continue;
    }
    if (!patched) inside.AddWalk(*below);
    // The child's prefixes start after its byte.
    const std::string byte(1, static_cast<char>(trie.byte(child)));
    for (const MaskWalk::Boundary& b : below->boundaries) {
      walk->boundaries.push_back({byte + b.prefix, b.nodes});
    }
  }
  if (!ending_here.empty()) walk->boundaries.push_back({"", std::move(ending_here)});
  if (!patched) inside.MoveInto(*walk);
  std::shared_ptr<const MaskWalk> stored =
      vocab.mask_store().Insert(assembled_key, std::move(walk));
  RememberAssembled(node, parts, stored);
  return stored;
}

namespace {

// What merging a part's inside tokens costs: one step per id, or per word.
size_t MergeCost(const MaskWalk* part) {
  if (part == nullptr) return 0;
  return part->inside_words.empty() ? part->inside_ids.size() : part->inside_words.size();
}

void SetInside(const MaskWalk& part, std::vector<uint32_t>& words) {
  for (TokenId t : part.inside_ids) words[t >> 5] |= uint32_t{1} << (t & 31);
  for (size_t w = 0; w < part.inside_words.size(); ++w) words[w] |= part.inside_words[w];
}

void ClearInside(const MaskWalk& part, std::vector<uint32_t>& words) {
  for (TokenId t : part.inside_ids) words[t >> 5] &= ~(uint32_t{1} << (t & 31));
  for (size_t w = 0; w < part.inside_words.size(); ++w) words[w] &= ~part.inside_words[w];
}

}  // namespace

bool MaskCache::PatchInsideFromRecent(uint32_t node, const Parts& parts, size_t mask_words,
                                      MaskWalk& walk) const {
  size_t merge_cost = 0;
  for (const auto& part : parts) merge_cost += MergeCost(part.second.get());
  // Cheap merges are not worth a search.
  if (merge_cost < 4 * mask_words) return false;
  std::shared_ptr<const MaskWalk> best;
  const Parts* best_parts = nullptr;
  size_t best_cost = merge_cost;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Assembled& a : recent_) {
    // Dense walks only: the patch is a copy of the bitmask plus the
    // differing parts (the tokens of `node` itself are the same).
    if (a.node != node || a.walk->inside_words.empty() || a.parts.size() != parts.size()) continue;
    size_t cost = mask_words;
    for (size_t i = 0; i < parts.size() && cost < best_cost; ++i) {
      if (a.parts[i].second == parts[i].second) continue;
      cost += MergeCost(a.parts[i].second.get()) + MergeCost(parts[i].second.get());
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = a.walk;
      best_parts = &a.parts;
    }
  }
  if (best == nullptr) return false;
  // The children's subtrees hold disjoint tokens: removing a part's inside
  // tokens removes exactly what that child contributed.
  std::vector<uint32_t> words = best->inside_words;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::shared_ptr<const MaskWalk>& old_part = (*best_parts)[i].second;
    if (old_part == parts[i].second) continue;
    if (old_part != nullptr) ClearInside(*old_part, words);
    if (parts[i].second != nullptr) SetInside(*parts[i].second, words);
  }
  // The same form InsideSet gives: ids while fewer than the bitmask's words.
  size_t count = 0;
  for (uint32_t w : words) count += static_cast<size_t>(std::popcount(w));
  if (count >= mask_words) {
    walk.inside_words = std::move(words);
  } else {
    for (size_t w = 0; w < words.size(); ++w) {
      for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
        walk.inside_ids.push_back(static_cast<TokenId>(w * 32 + std::countr_zero(bits)));
      }
    }
  }
  return true;
}

void MaskCache::RememberAssembled(uint32_t node, const Parts& parts,
                                  std::shared_ptr<const MaskWalk> walk) const {
  if (walk->inside_words.empty()) return;  // only dense walks are patched from
  std::lock_guard<std::mutex> lock(mu_);
  Assembled a{node, parts, std::move(walk)};
  if (recent_.size() < kRecentAssembled) {
    recent_.push_back(std::move(a));
  } else {
    recent_[recent_next_] = std::move(a);
    recent_next_ = (recent_next_ + 1) % kRecentAssembled;
  }
}

std::shared_ptr<const MaskWalk> MaskCache::SubtreeWalk(const regex::LazyDfa& dfa,
                                                       const VocabIndex& vocab, uint32_t child,
                                                       regex::StateId state) const {
  const uint64_t key = (uint64_t{child} << 32) | state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = subtrees_.find(key); it != subtrees_.end()) return it->second;
  }
  const TokenTrie& trie = vocab.trie();
  // The walk looks at most the subtree's height ahead: key it by what the
  // state says about that many bytes (positions of a counted string share
  // their walks). The boundaries' end states are found again from `state`
  // (MaskCache::Get), and states equal over the horizon agree on their
  // accepting tags.
  const SharedMaskStore::Key shared_key{dfa.StateHorizonFingerprint(state, vocab.height(child)),
                                        true, child, true};
  std::shared_ptr<const MaskWalk> walk = vocab.mask_store().Find(shared_key);
  if (walk == nullptr && vocab.walk_in_parts(child) && dfa.StateHasCounter(state)) {
    // In parts only where counters make nearby states differ in their
    // counts alone (a counter a few words deep is exact for the whole
    // subtree's horizon but not for most of its children's); elsewhere
    // the parts would rarely be met again and cost a merge. A lexeme is in
    // progress at `child` (its byte was taken): it may end before any of
    // the bytes below.
    walk = vocab.mask_store().Insert(
        shared_key, AssembleBelow(dfa, vocab, child, state, dfa.IsAccepting(state)));
  }
  if (walk == nullptr) {
    auto computed = std::make_shared<MaskWalk>();
    InsideSet inside(vocab.mask_words());
    trie.ForEachToken(child, [&](TokenId t) { inside.Add(t); });
    WalkBelow(dfa, trie, child, StepFrom(dfa, state, vocab.height(child)),
              /*may_end_at_root=*/true, inside, *computed);
    inside.MoveInto(*computed);
    walk = vocab.mask_store().Insert(shared_key, std::move(computed));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = subtrees_.emplace(key, walk);
  if (inserted) AddWalkBytesLocked(*walk);
  return it->second;
}

void MaskCache::AddWalkBytesLocked(const MaskWalk& walk) const {
  if (counted_walks_.insert(walk.serial).second) AddBytesLocked(walk.ByteSize());
}

void MaskCache::AddBytesLocked(size_t bytes) const {
  bytes_ += bytes;
  if (bytes_ > max_bytes_) full_ = true;
}

size_t MaskCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

std::shared_ptr<const MaskWalk> MaskCache::ComputeWalk(const regex::LazyDfa& dfa,
                                                       const TokenTrie& trie, size_t mask_words,
                                                       regex::StateId state, bool in_lexeme) {
  auto walk = std::make_shared<MaskWalk>();
  InsideSet inside(mask_words);
  WalkBelow(dfa, trie, TokenTrie::kRoot, state, in_lexeme, inside, *walk);
  inside.MoveInto(*walk);
  return walk;
}

}  // namespace maskd
