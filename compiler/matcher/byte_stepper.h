// Advances a (parser, lexer) pair by one byte: the lexing rule every mask and
// every accepted token follows.
//
// Lexemes are greedy (longest match): a lexeme ends only when the next byte
// cannot continue any live lexeme. Then every lexeme accepting at that point
// is scanned into the Earley parser as one set (ScanAny), a new lexeme starts
// from the lexemes the parser allows next, and the byte is fed to it. Front
// ends build grammars where this is the intended reading (JSON's tokens are
// delimited, so longest match never cuts a valid document short).
#ifndef MASKD_COMPILER_MATCHER_BYTE_STEPPER_H_
#define MASKD_COMPILER_MATCHER_BYTE_STEPPER_H_

#include <cstdint>

#include "compiler/grammar/earley_parser.h"
#include "compiler/grammar/lexeme_set.h"
#include "compiler/matcher/compiled_grammar_impl.h"
#include "compiler/regex/lazy_dfa.h"

namespace maskd {

// Where the lexer stands inside the current lexeme.
struct LexPosition {
  regex::StateId lexer = regex::LazyDfa::kDead;
  // At least one byte of the current lexeme has been read. When false, `lexer`
  // is the start state for the parser's allowed lexemes (never accepting:
  // lexemes are non-empty).
  bool in_lexeme = false;
  friend bool operator==(const LexPosition&, const LexPosition&) = default;
};

class ByteStepper {
 public:
  explicit ByteStepper(const CompiledGrammarImpl& grammar)
      : grammar_(grammar), dfa_(grammar.dfa()), scratch_(grammar.grammar().num_lexemes()) {}

  // The position before any byte, for the parser's current allowed set.
  LexPosition Start(const EarleyParser& parser) const {
    return {grammar_.LexerStart(parser.Allowed()), false};
  }

  // Feeds byte b. On success updates `pos` (and pushes one parser set if a
  // lexeme ended); on failure changes nothing and returns false.
  bool Step(EarleyParser& parser, LexPosition& pos, uint8_t b) {
    const regex::StateId next = dfa_.Step(pos.lexer, b);
    if (next != regex::LazyDfa::kDead) [[likely]] {
      pos = {next, true};
      return true;
    }
    if (!pos.in_lexeme || !EndLexeme(parser, pos.lexer)) return false;
    const regex::StateId restart = dfa_.Step(grammar_.LexerStart(parser.Allowed()), b);
    if (restart == regex::LazyDfa::kDead) {
      parser.Pop(1);
      return false;
    }
    pos = {restart, true};
    return true;
  }

  // Whether the output may end here: the parser accepts after the current
  // lexeme (if any) ends. Leaves the parser as it was.
  bool CanStop(EarleyParser& parser, const LexPosition& pos) {
    if (!pos.in_lexeme) return parser.IsAccepting();
    if (!EndLexeme(parser, pos.lexer)) return false;
    const bool accepting = parser.IsAccepting();
    parser.Pop(1);
    return accepting;
  }

  // Scans the lexemes accepting in `lexer` as one parser set; false when none
  // accepts (or the parser hit a limit).
  bool EndLexeme(EarleyParser& parser, regex::StateId lexer) {
    const auto tags = dfa_.AcceptingTags(lexer);
    if (tags.empty()) return false;
    scratch_.Clear();
    for (uint32_t tag : tags) scratch_.Insert(tag);
    return parser.ScanAny(scratch_);
  }

 private:
  const CompiledGrammarImpl& grammar_;
  const regex::LazyDfa& dfa_;
  LexemeSet scratch_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_BYTE_STEPPER_H_
