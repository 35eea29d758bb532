// The compiled form of a grammar: the trimmed grammar with its Earley tables,
// one lazy lexer DFA over all lexemes (tag = lexeme id), and the tokenizer's
// vocabulary index. Immutable from the outside; the lazily built parts (DFA
// states, lexer start states) fill in under their own locks, so any number of
// matchers on any threads share one instance.
#ifndef MASKD_COMPILER_MATCHER_COMPILED_GRAMMAR_IMPL_H_
#define MASKD_COMPILER_MATCHER_COMPILED_GRAMMAR_IMPL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "compiler/grammar/grammar.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/grammar/lexeme_set.h"
#include "compiler/matcher/item_masks.h"
#include "compiler/matcher/key_nodes.h"
#include "compiler/matcher/mask_cache.h"
#include "compiler/matcher/matcher.h"
#include "compiler/matcher/state_mask_cache.h"
#include "compiler/matcher/token_terminals.h"
#include "compiler/matcher/vocab_index.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

// The budgets of the automata stage (the compile layer fills them from its
// CompileOptions).
struct AutomataLimits {
  // The lexer DFA's memory; past it the DFA stops growing (status() says so).
  uint64_t memory_limit_bytes = uint64_t{1} << 30;
  // Precomputed per-lexer-state masks (see mask_cache.h); past it masks are
  // computed by walking the whole token trie (0: always).
  uint64_t mask_cache_bytes = uint64_t{64} << 20;
  // Masks cached by parse state where walks visit at least this many trie nodes
  // (state_mask_cache.h; it has the same byte budget as the mask cache).
  uint64_t state_mask_hot_nodes = 64;
  // Item masks for character-level grammars (item_masks.h), within
  // mask_cache_bytes of their own.
  bool item_masks = true;
  // While FromIr builds the automata, its emptiness checks stop with
  // Cancelled once `*cancelled` is true and with DeadlineExceeded past
  // `deadline` (CompileOptions::cancelled and time limit).
  const std::atomic<bool>* cancelled = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

class CompiledGrammarImpl final : public CompiledGrammar {
 public:
  // Builds the grammar, checks that no lexeme matches the empty string (the
  // lexer needs every lexeme to consume a byte) and sets up the lexer.
  // `started` is when the whole compile began (for CompileStats).
  static absl::StatusOr<std::shared_ptr<const CompiledGrammarImpl>> FromIr(
      GrammarIr ir, std::shared_ptr<const Tokenizer> tokenizer, const AutomataLimits& limits,
      std::chrono::steady_clock::time_point started);

  const CompileStats& stats() const override { return stats_; }
  const Tokenizer& tokenizer() const override { return vocab_->tokenizer(); }
  size_t SizeBytes() const override;
  size_t LexerStates() const override { return dfa_->num_states(); }
  absl::Status status() const override { return dfa_->status(); }

  const Grammar& grammar() const { return *grammar_; }
  const std::shared_ptr<const Grammar>& grammar_ptr() const { return grammar_; }
  const VocabIndex& vocab() const { return *vocab_; }
  const regex::LazyDfa& dfa() const { return *dfa_; }
  // The grammar's token terminals in this tokenizer (empty for most grammars).
  const TokenTerminals& token_terminals() const { return token_terminals_; }

  // The lexer state that starts a lexeme from `allowed` (memoized).
  regex::StateId LexerStart(const LexemeSet& allowed) const;
  const MaskCache& mask_cache() const { return *mask_cache_; }
  // The trie nodes where the walk from lexer position (state, in_lexeme)
  // lives by unique keys alone (key_nodes.h; memoized; grammars with unique
  // keys only).
  std::shared_ptr<const KeyNodeTable> KeyNodes(regex::StateId state, bool in_lexeme) const;
  const StateMaskCache& state_masks() const { return *state_masks_; }
  // Null where item masks do not apply (item_masks.h).
  const ItemMasks* item_masks() const { return item_masks_.get(); }

 private:
  CompiledGrammarImpl() = default;

  CompileStats stats_;
  // sizeof(*this) and the grammar's estimate, which never change: measured
  // once so SizeBytes() stays cheap (the service measures on every step).
  size_t fixed_bytes_ = 0;
  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const VocabIndex> vocab_;
  std::unique_ptr<regex::ExprSet> pool_;
  std::unique_ptr<regex::LazyDfa> dfa_;
  std::unique_ptr<MaskCache> mask_cache_;
  std::unique_ptr<StateMaskCache> state_masks_;
  std::unique_ptr<ItemMasks> item_masks_;
  TokenTerminals token_terminals_;

  // std::mutex, not absl::Mutex: ThreadSanitizer cannot see inside Debian's
  // uninstrumented Abseil.
  mutable std::mutex start_mu_;
  mutable absl::flat_hash_map<LexemeSet, regex::StateId> start_states_;  // guarded by start_mu_
  // KeyNodes' tables by (state, in_lexeme), guarded by start_mu_, and their bytes.
  mutable absl::flat_hash_map<uint64_t, std::shared_ptr<const KeyNodeTable>> key_nodes_;
  mutable std::atomic<size_t> key_nodes_bytes_{0};
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_COMPILED_GRAMMAR_IMPL_H_
