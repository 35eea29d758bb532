#include "compiler/compile/token_reasoning.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace maskd {
namespace {

bool IsSpecialTerminal(const Tokenizer& t, TokenId id) {
  if (!t.is_special(id) || t.token_bytes(id).empty()) return false;
  return std::find(t.eos_ids().begin(), t.eos_ids().end(), id) == t.eos_ids().end();
}

// One item of the reasoning stream: a special token, or a text segment.
struct Item {
  bool special = false;
  TokenId id = 0;
  std::string text;
  friend bool operator==(const Item&, const Item&) = default;
};

std::vector<Item> MarkerItems(const std::string& marker, const Tokenizer& tokenizer) {
  std::vector<Item> items;
  for (TokenId id : tokenizer.Encode(marker)) {
    if (IsSpecialTerminal(tokenizer, id)) {
      items.push_back({true, id, ""});
    } else if (!items.empty() && !items.back().special) {
      items.back().text += tokenizer.token_bytes(id);
    } else {
      items.push_back({false, 0, std::string(tokenizer.token_bytes(id))});
    }
  }
  return items;
}

}  // namespace

bool MarkerHasSpecialTokens(const std::string& marker, const Tokenizer& tokenizer) {
  for (TokenId id : tokenizer.Encode(marker)) {
    if (IsSpecialTerminal(tokenizer, id)) return true;
  }
  return false;
}

absl::Status PrependTokenReasoning(GrammarIr& ir, const std::string& marker,
                                   const Tokenizer& tokenizer) {
  const std::vector<Item> items = MarkerItems(marker, tokenizer);
  if (items.empty() || !items.front().special || !items.back().special) {
    return absl::UnimplementedError(absl::StrCat(
        "reasoning_end_marker \"", marker,
        "\" mixes special tokens and text but does not begin and end with a special token"));
  }
  // The alphabet: the marker's own items, plus "another special token" and
  // "other text" (symbols that equal no item of the marker).
  std::vector<Item> alphabet;
  for (const Item& item : items) {
    if (std::find(alphabet.begin(), alphabet.end(), item) == alphabet.end()) {
      alphabet.push_back(item);
    }
  }
  const size_t other_special = alphabet.size(), other_text = alphabet.size() + 1;
  const size_t n = items.size();
  // next[k][a]: the longest prefix of the marker that is a suffix of the
  // first k items followed by symbol a (n: the marker is complete).
  auto next = [&](size_t k, size_t a) -> size_t {
    if (a >= other_special) return 0;  // equals no item: no prefix survives
    std::vector<Item> w(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(k));
    w.push_back(alphabet[a]);
    for (size_t j = std::min(k + 1, n); j > 0; --j) {
      if (std::equal(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(j),
                     w.end() - static_cast<std::ptrdiff_t>(j))) {
        return j;
      }
    }
    return 0;
  };

  regex::ExprSet& pool = *ir.pool;
  GrammarBuilder& b = ir.builder;
  LexemeFlags literal;
  literal.literal = true;
  std::vector<Symbol> symbols;
  std::vector<regex::ExprId> pieces;
  std::vector<TokenId> marker_specials;
  for (const Item& a : alphabet) {
    if (a.special) {
      marker_specials.push_back(a.id);
      symbols.push_back(Symbol::Lexeme(b.AddTokenLexeme(std::string(tokenizer.token_bytes(a.id)),
                                                        {a.id}, false, regex::ExprSet::kNothing)));
    } else {
      pieces.push_back(pool.Literal(a.text));
      symbols.push_back(
          Symbol::Lexeme(b.AddLexeme(absl::StrCat("\"", a.text, "\""), pieces.back(), literal)));
    }
  }
  std::vector<uint32_t> others;
  for (TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
    if (IsSpecialTerminal(tokenizer, id) &&
        std::find(marker_specials.begin(), marker_specials.end(), id) == marker_specials.end()) {
      others.push_back(id);
    }
  }
  const bool has_others = !others.empty();
  if (has_others) {
    symbols.push_back(Symbol::Lexeme(b.AddTokenLexeme("another special token", std::move(others),
                                                      false, regex::ExprSet::kNothing)));
  } else {
    symbols.push_back(Symbol::Lexeme(0));  // placeholder, never used
  }
  const regex::ExprId any_text =
      pool.And(pool.NonEmpty(regex::ExprSet::kAnyByteString), pool.Not(pool.Or(pieces)));
  symbols.push_back(Symbol::Lexeme(b.AddLexeme("reasoning text", any_text)));

  std::vector<NonterminalId> state(n);
  for (size_t k = 0; k < n; ++k) state[k] = b.FreshNonterminal(absl::StrCat("reasoning_", k));
  const NonterminalId spec_start = b.start();
  for (size_t k = 0; k < n; ++k) {
    for (size_t a = 0; a <= other_text; ++a) {
      if (a == other_special && !has_others) continue;
      const size_t j = next(k, a);
      b.AddRule(state[k], {symbols[a], Symbol::Nonterminal(j == n ? spec_start : state[j])});
    }
  }
  b.SetStart(state[0]);
  return absl::OkStatus();
}

}  // namespace maskd
