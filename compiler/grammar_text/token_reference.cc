#include "compiler/grammar_text/token_reference.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/text_error.h"

namespace maskd::grammar_text {
namespace {

constexpr size_t kMaxIdsInReference = 1'000'000;

absl::Status Bad(std::string_view text, size_t at, std::string_view what) {
  return TextError(absl::StatusCode::kInvalidArgument, text, at, what);
}

// Digits at text[*pos] as a token id.
bool ReadId(std::string_view s, size_t* pos, uint32_t* id) {
  const size_t start = *pos;
  uint64_t v = 0;
  while (*pos < s.size() && s[*pos] >= '0' && s[*pos] <= '9') {
    v = v * 10 + static_cast<uint64_t>(s[*pos] - '0');
    if (v > 0xFFFFFFFFu) return false;
    ++*pos;
  }
  *id = static_cast<uint32_t>(v);
  return *pos > start;
}

bool IsEos(const Tokenizer& tokenizer, uint32_t id) {
  const std::vector<TokenId>& eos = tokenizer.eos_ids();
  return std::find(eos.begin(), eos.end(), id) != eos.end();
}

}  // namespace

absl::StatusOr<TokenReference> ReadTokenReference(std::string_view text, size_t at,
                                                  TokenSyntax syntax, const Tokenizer* tokenizer,
                                                  size_t* end) {
  TokenReference ref;
  size_t pos = at;
  if (text[pos] == '!') {
    if (syntax != TokenSyntax::kGbnf) return Bad(text, at, "unexpected '!'");
    ref.negated = true;
    ++pos;
  }
  const size_t open = pos;
  const size_t close = text.find('>', open);
  const size_t newline = text.find('\n', open);
  if (close == std::string_view::npos || (newline != std::string_view::npos && newline < close)) {
    return Bad(text, at, "unterminated token reference: expected '>'");
  }
  ref.spelling = std::string(text.substr(at, close + 1 - at));
  *end = close + 1;
  const std::string_view inside = text.substr(open + 1, close - open - 1);
  if (inside.starts_with("[")) {
    if (!inside.ends_with("]")) {
      return Bad(text, at, absl::StrCat("malformed token id reference '", ref.spelling, "'"));
    }
    std::string_view list = inside.substr(1, inside.size() - 2);
    // llguidance: `<[^ids]>` is every token but those, `<[*]>` every token
    // (both, like GBNF's `!<...>`, leave EOS to the grammar's end).
    const bool wildcard = syntax == TokenSyntax::kLark && list == "*";
    if (wildcard) {
      ref.negated = true;  // all but the empty set
    } else if (syntax == TokenSyntax::kLark && list.starts_with("^")) {
      ref.negated = true;
      list.remove_prefix(1);
    }
    size_t p = 0;
    while (!wildcard) {
      uint32_t lo = 0, hi = 0;
      if (!ReadId(list, &p, &lo)) {
        return Bad(
            text, at,
            absl::StrCat("malformed token id reference '", ref.spelling, "': expected a token id"));
      }
      hi = lo;
      if (syntax == TokenSyntax::kLark && p < list.size() && list[p] == '-') {
        ++p;
        if (!ReadId(list, &p, &hi) || hi < lo) {
          return Bad(text, at, absl::StrCat("malformed token id range in '", ref.spelling, "'"));
        }
      }
      if (ref.ids.size() + (hi - lo) >= kMaxIdsInReference) {
        return Bad(text, at, absl::StrCat("'", ref.spelling, "' names too many tokens"));
      }
      for (uint64_t id = lo; id <= hi; ++id) ref.ids.push_back(static_cast<uint32_t>(id));
      if (p == list.size()) break;
      if (syntax != TokenSyntax::kLark || list[p] != ',') {
        return Bad(text, at, absl::StrCat("malformed token id reference '", ref.spelling, "'"));
      }
      ++p;
    }
    if (tokenizer != nullptr) {
      for (uint32_t id : ref.ids) {
        if (id >= tokenizer->vocab_size()) {
          return Bad(text, at,
                     absl::StrCat("'", ref.spelling, "': token id ", id,
                                  " is outside the vocabulary of tokenizer ", tokenizer->name(),
                                  " (", tokenizer->vocab_size(), " tokens)"));
        }
      }
    }
  } else {
    if (inside.empty()) return Bad(text, at, "empty token reference '<>'");
    if (tokenizer == nullptr) {
      return Bad(text, at,
                 absl::StrCat("'", ref.spelling,
                              "' names a token by its text, which needs the compile's tokenizer"));
    }
    const std::string token_text(text.substr(open, close + 1 - open));
    const std::vector<TokenId> ids = tokenizer->Encode(token_text);
    if (ids.size() != 1) {
      return Bad(text, at,
                 absl::StrCat("unknown token '", token_text, "': tokenizer ", tokenizer->name(),
                              " has no single token with this text (it encodes as ", ids.size(),
                              " tokens)"));
    }
    ref.ids = ids;
  }
  if (tokenizer != nullptr && !ref.negated) {
    for (uint32_t id : ref.ids) {
      if (IsEos(*tokenizer, id)) {
        return Bad(text, at,
                   absl::StrCat("'", ref.spelling, "' names the end-of-sequence token ", id,
                                "; the grammar's end governs EOS: end the grammar there instead"));
      }
    }
  }
  return ref;
}

LexemeId AddTokenLexeme(GrammarIr& ir, const TokenReference& ref, std::string_view text,
                        size_t at) {
  const TextPosition where = PositionOf(text, at);
  return ir.builder.AddTokenLexeme(
      absl::StrCat(ref.spelling, " (line ", where.line, ":", where.column, ")"), ref.ids,
      ref.negated, regex::ExprSet::kNothing);
}

}  // namespace maskd::grammar_text
