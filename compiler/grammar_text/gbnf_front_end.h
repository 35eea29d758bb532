// llama.cpp GBNF (grammars/README.md) and XGrammar's EBNF (the same notation;
// its extensions that cannot be exact here are refused by name) to grammar IR.
//
// Character level: every terminal (a code point of a string literal, a
// character class, `.`) is its own one-code-point lexeme. UTF-8 encodings of
// single code points are prefix-free, so the lexer's longest-match rule never
// cuts a lexeme short and the IR's language is exactly the grammar's. Regular
// rules then become single lexemes where that provably changes nothing
// (lexeme_merge.h), so strings and numbers are lexed, not parsed per byte.
//
// Token terminals (`<[id]>`, `<token>`, `!<...>`, token_reference.h) match
// one whole token (GBNF only: XGrammar's EBNF has none and refuses them);
// XGrammar lookahead assertions `(= ...)` are refused with Unimplemented.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_GBNF_FRONT_END_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_GBNF_FRONT_END_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/grammar_text/grammar_text.h"

namespace maskd::grammar_text {

enum class GbnfFlavor { kLlamaCpp, kXGrammar };

absl::StatusOr<GrammarIr> BuildGbnfIr(std::string_view text, GbnfFlavor flavor,
                                      const GrammarTextOptions& options);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_GBNF_FRONT_END_H_
