// Which lexemes can come right after which: for every lexeme c, the lexemes
// d such that some sentence has c immediately followed by d. An
// over-approximation of what the Earley parser allows after c (the parser's
// Allowed() after any input ending in c is a subset of it), cheap enough for
// grammars of a few thousand symbols. The matcher uses it to prove that a
// token terminal can never compete with text for the same token.
#ifndef MASKD_COMPILER_GRAMMAR_LEXEME_FOLLOW_H_
#define MASKD_COMPILER_GRAMMAR_LEXEME_FOLLOW_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar.h"
#include "compiler/grammar/lexeme_set.h"

namespace maskd {

struct LexemeFollow {
  LexemeSet first;                // lexemes that can start a sentence
  std::vector<LexemeSet> follow;  // per lexeme
};

// ResourceExhausted when the tables would exceed `max_bits` bits
// (nonterminals x lexemes).
absl::StatusOr<LexemeFollow> ComputeLexemeFollow(const Grammar& grammar,
                                                 size_t max_bits = size_t{1} << 27);

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_LEXEME_FOLLOW_H_
