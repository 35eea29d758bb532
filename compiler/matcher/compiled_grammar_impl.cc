#include "compiler/matcher/compiled_grammar_impl.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace maskd {

absl::StatusOr<std::shared_ptr<const CompiledGrammarImpl>> CompiledGrammarImpl::FromIr(
    GrammarIr ir, std::shared_ptr<const Tokenizer> tokenizer, const AutomataLimits& limits,
    std::chrono::steady_clock::time_point started) {
  absl::StatusOr<std::shared_ptr<const Grammar>> grammar = ir.builder.Build();
  if (!grammar.ok()) return grammar.status();
  for (LexemeId id = 0; id < (*grammar)->num_lexemes(); ++id) {
    if (ir.pool->Nullable((*grammar)->lexeme(id).regex)) {
      return absl::InternalError(
          absl::StrCat("lexeme ", (*grammar)->lexeme(id).name, " matches the empty string"));
    }
  }
  absl::StatusOr<TokenTerminals> token_terminals = TokenTerminals::Build(**grammar, *tokenizer);
  if (!token_terminals.ok()) return token_terminals.status();
  absl::StatusOr<std::shared_ptr<const VocabIndex>> vocab = VocabIndex::For(std::move(tokenizer));
  if (!vocab.ok()) return vocab.status();

  std::shared_ptr<CompiledGrammarImpl> g(new CompiledGrammarImpl());
  g->grammar_ = *std::move(grammar);
  g->vocab_ = *std::move(vocab);
  g->pool_ = std::move(ir.pool);
  g->token_terminals_ = *std::move(token_terminals);
  g->fixed_bytes_ = sizeof(CompiledGrammarImpl) + g->grammar_->ByteSizeEstimate() +
                    g->token_terminals_.ByteSizeEstimate();
  // Declared after g: cleared before a failed g frees the pool.
  regex::ExprSet::ScopedInterrupt interrupt(g->pool_.get(), limits.cancelled, limits.deadline);
  // Item masks need lexing that the parse cannot change (item_masks.h).
  // The pool is asked now: once the DFA exists only it may change the pool.
  std::vector<regex::ByteSet> lexeme_first;
  if (limits.item_masks && ir.context_free_lexing && !g->grammar_->has_frames()) {
    for (LexemeId id = 0; id < g->grammar_->num_lexemes(); ++id) {
      const LexemeInfo& info = g->grammar_->lexeme(id);
      lexeme_first.push_back(info.is_token() ? regex::ByteSet() : g->pool_->FirstBytes(info.regex));
    }
  }
  regex::LazyDfa::Options dfa_options;
  dfa_options.max_memory_bytes = limits.memory_limit_bytes;
  g->dfa_ = std::make_unique<regex::LazyDfa>(g->pool_.get(), dfa_options);
  g->mask_cache_ = std::make_unique<MaskCache>(limits.mask_cache_bytes);
  g->state_masks_ =
      std::make_unique<StateMaskCache>(limits.mask_cache_bytes, limits.state_mask_hot_nodes);
  g->stats_.lexemes = static_cast<uint32_t>(g->grammar_->num_lexemes());
  g->stats_.rules = static_cast<uint32_t>(g->grammar_->num_rules());
  g->stats_.ignored_keywords = std::move(ir.ignored_keywords);
  g->stats_.warnings = std::move(ir.warnings);
  // The first lexer state is built now so that a lexer that cannot even start
  // (a limit) fails the compile rather than the first mask.
  LexemeSet all(g->grammar_->num_lexemes());
  for (LexemeId id = 0; id < g->grammar_->num_lexemes(); ++id) all.Insert(id);
  g->LexerStart(all);
  if (absl::Status s = g->dfa_->status(); !s.ok()) return s;
  if (!lexeme_first.empty()) {
    g->item_masks_ = ItemMasks::Build(*g, lexeme_first, limits.mask_cache_bytes, limits.deadline,
                                      limits.cancelled);
  }
  g->stats_.size_bytes = g->SizeBytes();
  g->stats_.compile_time_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                  std::chrono::steady_clock::now() - started)
                                  .count();
  return g;
}

size_t CompiledGrammarImpl::SizeBytes() const {
  return fixed_bytes_ + dfa_->MemoryBytes() + mask_cache_->bytes() + state_masks_->bytes() +
         (item_masks_ != nullptr ? item_masks_->bytes() : 0) +
         key_nodes_bytes_.load(std::memory_order_relaxed);
}

std::shared_ptr<const KeyNodeTable> CompiledGrammarImpl::KeyNodes(regex::StateId state,
                                                                  bool in_lexeme) const {
  const uint64_t key = (uint64_t{state} << 1) | (in_lexeme ? 1 : 0);
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (auto it = key_nodes_.find(key); it != key_nodes_.end()) return it->second;
  }
  // Built outside the lock (it steps the DFA, which has its own); two
  // threads may both build one, the first stored wins and both are equal.
  // Past this many nodes the matcher walks the trie instead of filtering.
  constexpr size_t kMaxKeyNodes = size_t{1} << 16;
  auto table = std::make_shared<const KeyNodeTable>(
      BuildKeyNodeTable(*dfa_, *grammar_, vocab_->trie(), state, in_lexeme, kMaxKeyNodes));
  std::lock_guard<std::mutex> lock(start_mu_);
  auto [it, inserted] = key_nodes_.emplace(key, table);
  if (inserted) key_nodes_bytes_.fetch_add(table->ByteSize(), std::memory_order_relaxed);
  return it->second;
}

regex::StateId CompiledGrammarImpl::LexerStart(const LexemeSet& allowed) const {
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (auto it = start_states_.find(allowed); it != start_states_.end()) return it->second;
  }
  std::vector<regex::TaggedExpr> exprs;
  allowed.ForEach([&](LexemeId id) { exprs.push_back({id, grammar_->lexeme(id).regex}); });
  absl::StatusOr<regex::StateId> state = dfa_->Start(exprs);
  // A DFA past its limits answers "dead": masks shrink, never grow. The
  // failure is sticky in dfa().status() for the caller to report.
  regex::StateId s = state.ok() ? *state : regex::LazyDfa::kDead;
  std::lock_guard<std::mutex> lock(start_mu_);
  start_states_.emplace(allowed, s);
  return s;
}

}  // namespace maskd
