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

#include <cassert>
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
  // Grammars with distinct values (LexemeRole::kDistinctValue) only: a hash
  // of the lexeme's bytes up to the first state accepting a distinct-value
  // lexeme (`value_done` from then on), what the parser compares.
  bool value_done = false;
  uint64_t value = 0;
  friend bool operator==(const LexPosition&, const LexPosition&) = default;
};

class ByteStepper {
 public:
  explicit ByteStepper(const CompiledGrammarImpl& grammar)
      : grammar_(grammar),
        dfa_(grammar.dfa()),
        scratch_(grammar.grammar().num_lexemes()),
        track_values_(grammar.grammar().has_distinct_values()) {}

  // The position before any byte, for the parser's current allowed set.
  LexPosition Start(const EarleyParser& parser) const {
    return {grammar_.LexerStart(parser.Allowed()), false, false, kValueSeed};
  }

  // Feeds byte b. On success updates `pos` (and pushes one parser set if a
  // lexeme ended); on failure changes nothing and returns false.
  bool Step(EarleyParser& parser, LexPosition& pos, uint8_t b) {
    const regex::StateId next = dfa_.Step(pos.lexer, b);
    if (next != regex::LazyDfa::kDead) [[likely]] {
      if (track_values_) [[unlikely]] {
        return Advance(parser, pos, next, b);
      }
      pos.lexer = next;
      pos.in_lexeme = true;
      return true;
    }
    if (!pos.in_lexeme || !EndLexeme(parser, pos)) return false;
    const regex::StateId restart = dfa_.Step(grammar_.LexerStart(parser.Allowed()), b);
    if (restart == regex::LazyDfa::kDead) {
      parser.Pop(1);
      return false;
    }
    if (track_values_) [[unlikely]] {
      LexPosition fresh{restart, false, false, kValueSeed};
      if (!Advance(parser, fresh, restart, b)) {
        parser.Pop(1);
        return false;
      }
      pos = fresh;
      return true;
    }
    pos = {restart, true};
    return true;
  }

  // The position after the first byte `b` of a new lexeme, which took the
  // lexer's start state to `lexer` (a mask walk resuming where a lexeme
  // ended); false when that byte completes a repeated distinct value.
  bool Begin(EarleyParser& parser, regex::StateId lexer, uint8_t b, LexPosition* pos) {
    *pos = {lexer, true};
    if (!track_values_) return true;
    LexPosition fresh{lexer, false, false, kValueSeed};
    if (!Advance(parser, fresh, lexer, b)) return false;
    *pos = fresh;
    return true;
  }

  // Whether the output may end here: the parser accepts after the current
  // lexeme (if any) ends. Leaves the parser as it was.
  bool CanStop(EarleyParser& parser, const LexPosition& pos) {
    if (!pos.in_lexeme) return parser.IsAccepting();
    if (!EndLexeme(parser, pos)) return false;
    const bool accepting = parser.IsAccepting();
    parser.Pop(1);
    return accepting;
  }

  // Scans the lexemes accepting at `pos` as one parser set; false when none
  // accepts (or the parser hit a limit).
  bool EndLexeme(EarleyParser& parser, const LexPosition& pos) {
    return EndLexeme(parser, pos.lexer, pos.value);
  }
  bool EndLexeme(EarleyParser& parser, regex::StateId lexer, uint64_t value = 0) {
    const auto tags = dfa_.AcceptingTags(lexer);
    if (tags.empty()) return false;
    scratch_.Clear();
    for (uint32_t tag : tags) scratch_.Insert(tag);
    return parser.ScanAny(scratch_, value);
  }

 private:
  static constexpr uint64_t kValueSeed = 0x9e3779b97f4a7c15ull;

  // Step to `next` (live) by byte b with distinct values tracked: hashes b
  // into the value until a distinct-value lexeme first accepts, and refuses
  // that byte when the value repeats one of the frame's and every lexeme
  // accepting there is a distinct value (otherwise the parser drops the
  // distinct ones when the lexeme ends: ScanAny).
  bool Advance(const EarleyParser& parser, LexPosition& pos, regex::StateId next, uint8_t b) {
    LexPosition out{next, true, pos.value_done, pos.value};
    if (!out.value_done) {
      // 128-bit multiply-fold (wyhash's mix): collisions are negligible at
      // the sizes of one array.
      const unsigned __int128 m =
          static_cast<unsigned __int128>(out.value ^ (b + 0xa0761d6478bd642full)) *
          0xe7037ed1a0b428dbull;
      out.value = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
      bool distinct = false, other = false;
      for (uint32_t tag : dfa_.AcceptingTags(next)) {
        (grammar_.grammar().is_distinct_value(tag) ? distinct : other) = true;
      }
      if (distinct) {
        // Distinct values are quoted strings: the matcher re-checks only
        // cached tokens holding a quote (MatcherImpl::DropRepeatedInside).
        assert(b == '"');
        out.value_done = true;
        if (!other && parser.FrameHasValue(out.value)) return false;
      }
    }
    pos = out;
    return true;
  }

  const CompiledGrammarImpl& grammar_;
  const regex::LazyDfa& dfa_;
  LexemeSet scratch_;
  const bool track_values_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_BYTE_STEPPER_H_
