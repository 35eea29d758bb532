#include "compiler/compile/reasoning_budget.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace maskd {
namespace {

// Whether some proper prefix of `marker` is also a suffix of it.
bool OverlapsItself(std::string_view marker) {
  for (size_t k = 1; k < marker.size(); ++k) {
    if (marker.substr(0, k) == marker.substr(marker.size() - k)) return true;
  }
  return false;
}

// For each position j in the marker, the tokens whose bytes are a non-empty
// prefix of marker[j:]: the only tokens a forced step with j marker bytes
// already out may allow. Shared by a matcher and its clones.
struct MarkerTokens {
  std::vector<std::vector<TokenId>> at;

  MarkerTokens(const Tokenizer& tokenizer, std::string_view marker) : at(marker.size()) {
    for (TokenId t = 0; t < tokenizer.vocab_size(); ++t) {
      if (tokenizer.is_special(t)) continue;
      const std::string_view bytes = tokenizer.token_bytes(t);
      if (bytes.empty() || bytes.size() > marker.size()) continue;
      for (size_t j = 0; j + bytes.size() <= marker.size(); ++j) {
        if (marker.substr(j, bytes.size()) == bytes) at[j].push_back(t);
      }
    }
  }
};

// The marker's tokens of `grammar`'s vocabulary, computed once per grammar
// and marker (a pass over the vocabulary costs milliseconds; a batch opens
// many sequences on one grammar). Entries hold the grammar weakly, so an
// entry outlives neither its grammar nor a reuse of its address.
std::shared_ptr<const MarkerTokens> MarkerTokensFor(
    const std::shared_ptr<const CompiledGrammar>& grammar, const std::string& marker) {
  struct Entry {
    std::weak_ptr<const CompiledGrammar> grammar;
    std::shared_ptr<const MarkerTokens> tokens;
  };
  static std::mutex mu;
  static std::map<std::pair<const CompiledGrammar*, std::string>, Entry> cache;
  constexpr size_t kMaxEntries = 256;
  const auto key = std::make_pair(grammar.get(), marker);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end() && it->second.grammar.lock() == grammar) {
      return it->second.tokens;
    }
  }
  auto tokens = std::make_shared<const MarkerTokens>(grammar->tokenizer(), marker);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxEntries) {
    std::erase_if(cache, [](const auto& entry) { return entry.second.grammar.expired(); });
    if (cache.size() >= kMaxEntries) cache.clear();
  }
  cache[key] = Entry{grammar, tokens};
  return tokens;
}

class BudgetedMatcher final : public Matcher {
 public:
  BudgetedMatcher(std::shared_ptr<const CompiledGrammar> grammar, const ReasoningBudget& budget,
                  const MatcherOptions& options)
      : grammar_(grammar),
        budget_(budget),
        max_rollback_(options.max_rollback),
        marker_tokens_(MarkerTokensFor(grammar, budget.end_marker)),
        inner_(Matcher::Create(std::move(grammar), options)) {}

  BudgetedMatcher(const BudgetedMatcher& other)
      : grammar_(other.grammar_),
        budget_(other.budget_),
        max_rollback_(other.max_rollback_),
        marker_tokens_(other.marker_tokens_),
        inner_(other.inner_->Clone()),
        state_(other.state_),
        history_(other.history_) {}

  bool AcceptToken(TokenId token) override {
    const Tokenizer& tokenizer = grammar_->tokenizer();
    if (token >= tokenizer.vocab_size()) return false;
    if (Forcing()) {
      if (!AllowedWhileForcing(token)) return false;
    }
    const State before = state_;
    if (!inner_->AcceptToken(token)) return false;
    Remember(before);
    if (!state_.done) {
      // EOS never comes before the marker (the grammar needs it), and the
      // grammar allows no other special token: these are output bytes.
      Output(tokenizer.token_bytes(token));
      if (!before.forcing) ++state_.tokens;
    }
    UpdateForcing();
    return true;
  }

  bool AcceptBytes(std::string_view bytes) override {
    if (Forcing() && !RemainingMarker().starts_with(bytes)) return false;
    const State before = state_;
    if (!inner_->AcceptBytes(bytes)) return false;
    Remember(before);
    if (!state_.done) Output(bytes);
    UpdateForcing();
    return true;
  }

  void FillMask(std::span<uint32_t> words) override {
    inner_->FillMask(words);
    if (!Forcing()) return;
    // Keep only the grammar's tokens that continue the marker.
    std::vector<TokenId> keep;
    for (TokenId t : marker_tokens_->at[state_.forced]) {
      if ((words[t / 32] >> (t % 32)) & 1) keep.push_back(t);
    }
    std::fill(words.begin(), words.end(), 0);
    for (TokenId t : keep) words[t / 32] |= uint32_t{1} << (t % 32);
  }

  bool CanStop() const override { return !Forcing() && inner_->CanStop(); }
  bool MustStop() override { return !Forcing() && inner_->MustStop(); }

  absl::Status Rollback(uint32_t n) override {
    if (n > history_.size()) {
      return absl::OutOfRangeError(
          absl::StrCat("cannot roll back ", n, " tokens: only ", history_.size(), " are kept"));
    }
    if (absl::Status s = inner_->Rollback(n); !s.ok()) return s;
    if (n == 0) return absl::OkStatus();
    state_ = history_[history_.size() - n];
    history_.resize(history_.size() - n);
    return absl::OkStatus();
  }

  JumpForward ComputeJumpForward() override {
    if (!Forcing()) return inner_->ComputeJumpForward();
    // The rest of the marker is forced, tokenized on its own so that each
    // token stays inside the marker (what the forced masks allow).
    JumpForward out;
    out.bytes = std::string(RemainingMarker());
    out.tokens = grammar_->tokenizer().Encode(out.bytes);
    return out;
  }

  void Reset() override {
    inner_->Reset();
    state_ = State();
    UpdateForcing();
    history_.clear();
  }

  std::unique_ptr<Matcher> Clone() const override {
    return std::make_unique<BudgetedMatcher>(*this);
  }

  size_t ParserDepth() const override { return inner_->ParserDepth(); }
  bool HitDepthLimit() const override { return inner_->HitDepthLimit(); }
  // The inner matcher's, plus the budget's rollback history and marker tail.
  size_t MemoryBytes() const override {
    return inner_->MemoryBytes() + sizeof(*this) + history_.size() * sizeof(State) +
           state_.tail.capacity();
  }

  // The state at the start (the budget may be 0: forced at once).
  void Start() { UpdateForcing(); }

 private:
  struct State {
    uint32_t tokens = 0;   // accepted before the marker, not counting forced ones
    bool done = false;     // the marker is complete: the spec applies
    bool forcing = false;  // the budget is spent and the marker not complete
    size_t forced = 0;     // forcing: marker bytes out since forcing began
    size_t skipped = 0;    // prefix bytes seen (ReasoningBudget::prefix_bytes)
    // Reasoning: the last marker.size() - 1 output bytes, where a marker
    // occurrence may have begun.
    std::string tail;
  };

  bool Forcing() const { return state_.forcing; }
  std::string_view RemainingMarker() const {
    return std::string_view(budget_.end_marker).substr(state_.forced);
  }

  bool AllowedWhileForcing(TokenId token) const {
    const std::vector<TokenId>& allowed = marker_tokens_->at[state_.forced];
    return std::find(allowed.begin(), allowed.end(), token) != allowed.end();
  }

  // Output bytes while reasoning: watches for the marker's first occurrence.
  void Output(std::string_view bytes) {
    const size_t skip = std::min(bytes.size(), budget_.prefix_bytes - state_.skipped);
    state_.skipped += skip;
    bytes.remove_prefix(skip);
    if (bytes.empty()) return;
    const std::string_view marker = budget_.end_marker;
    if (state_.forcing) {
      state_.forced += bytes.size();
      if (state_.forced == marker.size()) state_.done = true;
      return;
    }
    std::string window = state_.tail;
    window.append(bytes);
    // The grammar allowed these bytes, so a marker in them ends the
    // reasoning (at its first occurrence; what follows is spec output).
    if (window.find(marker) != std::string::npos) {
      state_.done = true;
      state_.tail.clear();
      return;
    }
    const size_t keep = marker.size() - 1;
    state_.tail = window.size() > keep ? window.substr(window.size() - keep) : window;
  }

  // Forcing begins once the budget is spent and the healed prefix is out
  // (the marker can only follow it).
  void UpdateForcing() {
    state_.forcing = !state_.done && state_.tokens >= budget_.max_tokens &&
                     state_.skipped == budget_.prefix_bytes;
  }

  void Remember(const State& before) {
    if (max_rollback_ == 0) return;
    if (history_.size() == max_rollback_) history_.pop_front();
    history_.push_back(before);
  }

  std::shared_ptr<const CompiledGrammar> grammar_;
  ReasoningBudget budget_;
  uint32_t max_rollback_;
  std::shared_ptr<const MarkerTokens> marker_tokens_;
  std::unique_ptr<Matcher> inner_;
  State state_;
  std::deque<State> history_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Matcher>> CreateBudgetedMatcher(
    std::shared_ptr<const CompiledGrammar> grammar, const ReasoningBudget& budget,
    const MatcherOptions& options) {
  if (budget.end_marker.empty()) {
    return absl::InvalidArgumentError(
        "a reasoning token budget needs a grammar compiled with a reasoning_end_marker");
  }
  if (OverlapsItself(budget.end_marker)) {
    return absl::InvalidArgumentError(
        absl::StrCat("reasoning_end_marker \"", budget.end_marker,
                     "\" overlaps itself (a proper prefix equals a suffix): forcing it after a "
                     "partial marker could end the reasoning inside it, so no budget is offered"));
  }
  auto matcher = std::make_unique<BudgetedMatcher>(std::move(grammar), budget, options);
  matcher->Start();
  return matcher;
}

}  // namespace maskd
