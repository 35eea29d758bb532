#include "compiler/grammar_text/lark_lazy.h"

#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/text_error.h"

namespace maskd::grammar_text {

regex::ExprId LazyLanguage(regex::ExprSet& pool, regex::ExprId re) {
  const regex::ExprId longer =
      pool.Concat(re, pool.Concat(regex::ExprSet::kAnyByte, regex::ExprSet::kAnyByteString));
  return pool.And(re, pool.Not(longer));
}

absl::Status CheckLazyLexemes(GrammarIr& ir, const std::vector<LazyLexeme>& lazy,
                              std::string_view text) {
  regex::ExprSet& pool = *ir.pool;
  for (const LazyLexeme& x : lazy) {
    const regex::ExprId starts_with_match = pool.Concat(x.regex, regex::ExprSet::kAnyByteString);
    for (LexemeId y = 0; y < ir.builder.num_lexemes(); ++y) {
      const LexemeInfo& other = ir.builder.lexeme(y);
      if (other.is_token() || other.regex == x.regex) continue;
      absl::StatusOr<bool> empty = pool.IsEmpty(pool.And(other.regex, starts_with_match));
      if (!empty.ok()) {
        return TextError(
            absl::StatusCode::kResourceExhausted, text, x.at,
            absl::StrCat("lazy rule '", x.name, "': checking it against lexeme ", other.name,
                         " ran out of budget: ", empty.status().message()));
      }
      if (!*empty) {
        return TextError(
            absl::StatusCode::kUnimplemented, text, x.at,
            absl::StrCat("lazy rule '", x.name, "': lexeme ", other.name,
                         " may match text that starts with a match of it; llguidance ends the "
                         "lazy lexeme there, maskd's longest-match lexer would read on, so "
                         "this grammar is refused rather than read differently"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace maskd::grammar_text
