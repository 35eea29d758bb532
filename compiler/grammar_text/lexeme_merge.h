// Makes character-level grammars (GBNF, EBNF) fast without changing their
// language: a rule whose language is regular (no recursion except the x*
// lists the front end writes) becomes ONE lexeme where longest-match lexing
// provably reads it exactly as the grammar does.
//
// The proof, per merged lexeme A and every lexeme B of the resulting grammar
// (A itself included): no string of B, followed by a byte that may follow B
// in a sentence, is a proper prefix of a string of A. The lexer only ever
// continues past the end of a lexeme when some live lexeme can still grow,
// so with this the lexer never reads on where the grammar wanted B to end.
// (Codepoint lexemes need no check against each other: UTF-8 is prefix-free.)
// Follow bytes are a sound over-approximation (FIRST/FOLLOW over bytes), so
// a rule may stay character-level needlessly, never the other way round.
// A rule that fails is tried again through its regular parts.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_LEXEME_MERGE_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_LEXEME_MERGE_H_

#include "absl/status/status.h"
#include "compiler/grammar/grammar_ir.h"

namespace maskd::grammar_text {

// Rewrites ir.builder in place (its start symbol set). Returns how many rules
// became lexemes.
size_t MergeRegularRules(GrammarIr& ir);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_LEXEME_MERGE_H_
