// Copies one front end's grammar IR into another's (Lark's `%json {schema}`
// embeds the JSON Schema front end's grammar): regexes are rebuilt in the
// target pool, nonterminals get fresh names under a prefix.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_IR_IMPORT_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_IR_IMPORT_H_

#include <string_view>

#include "compiler/grammar/grammar_ir.h"
#include "compiler/regex/expr_set.h"

namespace maskd::grammar_text {

// Rebuilds expression `e` of `from` in `to`.
regex::ExprId CopyExpr(const regex::ExprSet& from, regex::ExprId e, regex::ExprSet& to);

// Adds `from`'s rules and lexemes to `to`; returns the nonterminal that
// stands for `from`'s start symbol.
NonterminalId ImportIr(const GrammarIr& from, std::string_view prefix, GrammarIr& to);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_IR_IMPORT_H_
