// llguidance's lazy lexemes (`name[lazy]: ...`, `name[suffix="S"]: ...`)
// in a lexer whose rule is longest match.
//
// A lazy lexeme ends at the first position where its regex matches. Its
// language is then the regex's shortest matches, R minus R·Σ⁺, a prefix-free
// language: longest match can never read past such a match, so on its own
// it lexes exactly as llguidance does. llguidance also ends a lazy lexeme
// when another lexeme allowed beside it could still go on (the lazy match
// wins); longest match would read on instead. So a grammar is taken only
// where no other lexeme has a string that starts with a match of the lazy
// one (then every other lexeme is dead at that match, and both lexers end
// there); elsewhere it is refused, never read differently.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_LARK_LAZY_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_LARK_LAZY_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/regex/expr_set.h"

namespace maskd::grammar_text {

// The shortest matches of `re`: re AND NOT(re . any byte . any bytes).
regex::ExprId LazyLanguage(regex::ExprSet& pool, regex::ExprId re);

struct LazyLexeme {
  regex::ExprId regex;  // a LazyLanguage, non-empty strings only (as the lexeme is)
  std::string name;     // the rule, for errors
  size_t at;            // its offset in `text`
};

// OK when no lexeme of `ir` other than each lazy one has a string starting
// with a match of it; Unimplemented naming the rule and the other lexeme
// otherwise (line:column in `text`). ResourceExhausted when the check runs
// out of its emptiness budget.
absl::Status CheckLazyLexemes(GrammarIr& ir, const std::vector<LazyLexeme>& lazy,
                              std::string_view text);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_LARK_LAZY_H_
