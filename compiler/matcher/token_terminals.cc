#include "compiler/matcher/token_terminals.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/grammar/lexeme_follow.h"

namespace maskd {
namespace {

bool IsEos(const Tokenizer& tokenizer, TokenId id) {
  const std::vector<TokenId>& eos = tokenizer.eos_ids();
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

// Whether the terminal may match a token that is not special (one the text
// path could also take).
bool MayMatchOrdinary(const TokenTerminal& t, const Tokenizer& tokenizer) {
  if (t.negated) return true;
  for (uint32_t id : t.ids) {
    if (!tokenizer.is_special(id)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<TokenTerminals> TokenTerminals::Build(const Grammar& grammar,
                                                     const Tokenizer& tokenizer) {
  TokenTerminals out;
  out.lexemes_ = LexemeSet(grammar.num_lexemes());
  const size_t vocab = tokenizer.vocab_size();
  LexemeSet risky(grammar.num_lexemes());
  for (LexemeId id = 0; id < grammar.num_lexemes(); ++id) {
    const LexemeInfo& info = grammar.lexeme(id);
    if (!info.is_token()) continue;
    out.lexemes_.Insert(id);
    Terminal t{id, info.token.get(), {}, {}};
    for (uint32_t tok : info.token->ids) {
      if (tok >= vocab) {
        return absl::InvalidArgumentError(absl::StrCat("token terminal ", info.name, ": token id ",
                                                       tok, " is outside the vocabulary (", vocab,
                                                       " tokens)"));
      }
      if (!info.token->negated && IsEos(tokenizer, tok)) {
        return absl::InvalidArgumentError(
            absl::StrCat("token terminal ", info.name, " names the end-of-sequence token ", tok,
                         "; the grammar's end governs EOS (end the grammar there instead)"));
      }
    }
    if (info.token->negated) {
      t.words.assign((vocab + 31) / 32, ~uint32_t{0});
      if (vocab % 32 != 0) t.words.back() = (uint32_t{1} << (vocab % 32)) - 1;
      auto clear = [&](TokenId tok) { t.words[tok >> 5] &= ~(uint32_t{1} << (tok & 31)); };
      for (uint32_t tok : info.token->ids) clear(tok);
      for (TokenId tok : tokenizer.eos_ids()) {
        if (tok < vocab) clear(tok);
      }
    } else {
      t.ids = info.token->ids;
    }
    if (MayMatchOrdinary(*info.token, tokenizer)) risky.Insert(id);
    out.terminals_.push_back(std::move(t));
  }
  if (risky.Empty()) return out;

  // A terminal that may match an ordinary token must never be allowed where
  // a text lexeme could take the same token: only at the start or right
  // after a token terminal, and only where every lexeme allowed there is a
  // token terminal too (Earley's allowed set after lexemes ...c is within
  // FOLLOW(c); mid-lexeme, the lexeme in progress is text).
  absl::StatusOr<LexemeFollow> follow = ComputeLexemeFollow(grammar);
  if (!follow.ok()) {
    return absl::UnimplementedError(absl::StrCat("token terminals that may match ordinary tokens: ",
                                                 follow.status().message()));
  }
  auto only_tokens = [&](const LexemeSet& set) {
    LexemeSet text = set;
    text.UnionWith(out.lexemes_);
    return text == out.lexemes_;
  };
  auto refuse = [&](LexemeId l, const std::string& where) {
    return absl::UnimplementedError(
        absl::StrCat("token terminal ", grammar.lexeme(l).name,
                     " may match ordinary (non-special) tokens and is allowed ", where,
                     ", where text may also continue: a token could then be read both ways"));
  };
  if (follow->first.Intersects(risky) && !only_tokens(follow->first)) {
    LexemeSet hit = follow->first;
    hit.IntersectWith(risky);
    return refuse(hit.ToVector()[0], "at the start");
  }
  for (LexemeId c = 0; c < grammar.num_lexemes(); ++c) {
    const LexemeSet& f = follow->follow[c];
    if (!f.Intersects(risky)) continue;
    if (!grammar.lexeme(c).is_token() || !only_tokens(f)) {
      LexemeSet hit = f;
      hit.IntersectWith(risky);
      return refuse(hit.ToVector()[0], absl::StrCat("after ", grammar.lexeme(c).name));
    }
  }
  return out;
}

void TokenTerminals::AddAllowed(const LexemeSet& allowed, std::span<uint32_t> words) const {
  for (const Terminal& t : terminals_) {
    if (!allowed.Contains(t.lexeme)) continue;
    if (t.token->negated) {
      const size_t n = std::min(words.size(), t.words.size());
      for (size_t i = 0; i < n; ++i) words[i] |= t.words[i];
    } else {
      for (TokenId id : t.ids) words[id >> 5] |= uint32_t{1} << (id & 31);
    }
  }
}

bool TokenTerminals::AnyAllowed(const LexemeSet& allowed) const {
  for (const Terminal& t : terminals_) {
    if (!allowed.Contains(t.lexeme)) continue;
    if (!t.ids.empty()) return true;
    for (uint32_t w : t.words) {
      if (w != 0) return true;
    }
  }
  return false;
}

bool TokenTerminals::Matching(const LexemeSet& allowed, TokenId token, LexemeSet* matching) const {
  matching->Clear();
  bool any = false;
  for (const Terminal& t : terminals_) {
    if (!allowed.Contains(t.lexeme)) continue;
    const bool hit = t.token->negated ? token / 32 < t.words.size() &&
                                            ((t.words[token >> 5] >> (token & 31)) & 1)
                                      : std::binary_search(t.ids.begin(), t.ids.end(), token);
    if (hit) {
      matching->Insert(t.lexeme);
      any = true;
    }
  }
  return any;
}

size_t TokenTerminals::ByteSizeEstimate() const {
  size_t bytes = sizeof(*this);
  for (const Terminal& t : terminals_) {
    bytes += sizeof(Terminal) + t.ids.capacity() * sizeof(TokenId) +
             t.words.capacity() * sizeof(uint32_t);
  }
  return bytes;
}

}  // namespace maskd
