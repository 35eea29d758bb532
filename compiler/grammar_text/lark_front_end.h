// Lark grammars as llguidance writes them, to grammar IR.
//
// Lexeme level: UPPERCASE terminals, and strings / /regexes/ written in
// rules, are lexemes matched greedily by the lexer (as in llguidance);
// lowercase rules are context-free. Supported: `:` definitions with `|`
// (also on continuation lines), `?rule` / `!rule` (same language), `-> alias`
// (ignored: no parse trees here), `? * + [..] ~ n ~ m..n`, "strings"i,
// "a".."z" ranges, /regex/i (case folding of ASCII patterns), terminals built
// from terminals, `%ignore`, `%import common.NAME` / `%import common (A, B)`,
// `%json {schema}` (the JSON Schema front end, embedded), `%llguidance {}`
// with "skip_repetition" (lark_options.h), rule options `lazy` and
// `suffix="..."` (one lazy lexeme, where that lexes as llguidance does:
// lark_lazy.h), token references `<|special|>`, `<[id]>`, `<[a-b,c]>`,
// `<[^...]>`, `<[*]>` in rules (one whole token each, token_reference.h;
// not inside terminals).
// Refused with Unimplemented naming them: priorities, options on terminals,
// the rule options max_tokens, stop, temperature and capture, other regex
// flags, other imports and directives, other `%llguidance` options.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_LARK_FRONT_END_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_LARK_FRONT_END_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/grammar_text/grammar_text.h"

namespace maskd::grammar_text {

absl::StatusOr<GrammarIr> BuildLarkIr(std::string_view text, const GrammarTextOptions& options);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_LARK_FRONT_END_H_
