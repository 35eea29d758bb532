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
#include "compiler/matcher/number_canon.h"
#include "compiler/matcher/string_canon.h"
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
  // Grammars with distinct numbers only: the lexeme's bytes read as a
  // number (the value a distinct-number lexeme ends with).
  NumberCanon number;
  // Grammars with item values only (Grammar::has_item_values): the hash of
  // the lexeme's canonical JSON token, what the parser folds into the
  // container's value (EarleyParser::TrackValue): a string's or key's bytes
  // from its opening to its closing quote, decoded as `token_string`
  // decodes it (so both json.dumps spellings of a string are one value), a
  // literal's bytes without whitespace, `,` and `:`. `in_token`: 0 outside a
  // string, 1 inside, 3 after the closing quote (nothing more is hashed).
  static constexpr uint64_t kTokenSeed = 0x9e3779b97f4a7c15ull;
  uint64_t token = kTokenSeed;
  uint8_t in_token = 0;
  StringCanon token_string;
  // Grammars with distinct values only: where `value` stands in a \u
  // escape (strings are hashed decoded: matcher/string_canon.h).
  StringCanon string;
  friend bool operator==(const LexPosition&, const LexPosition&) = default;
};

class ByteStepper {
 public:
  explicit ByteStepper(const CompiledGrammarImpl& grammar)
      : grammar_(grammar),
        dfa_(grammar.dfa()),
        scratch_(grammar.grammar().num_lexemes()),
        track_values_(grammar.grammar().has_distinct_values() ||
                      grammar.grammar().has_item_values()),
        track_numbers_(grammar.grammar().has_distinct_numbers()),
        track_items_(grammar.grammar().has_item_values()) {}

  // The position before any byte, for the parser's current allowed set.
  // The lexer starts from the set before the unique-key check
  // (EarleyParser::LexAllowed), one start state per object member position
  // whatever keys were written: Step never enters a state where only taken
  // keys live (LiveFor), so the bytes read are those of the allowed set.
  LexPosition Start(const EarleyParser& parser) const {
    return {grammar_.LexerStart(parser.LexAllowed()),
            false,
            false,
            kValueSeed,
            {},
            LexPosition::kTokenSeed,
            0,
            {},
            {}};
  }

  // Whether lexer state `s`, from a start of the parser's top set, holds a
  // lexeme the parser allows: not only keys the object frame has had.
  bool LiveFor(const EarleyParser& parser, regex::StateId s) const {
    if (!parser.KeysTaken()) return true;
    const LexemeSet& allowed = parser.Allowed();
    for (const regex::TaggedExpr& e : dfa_.Exprs(s)) {
      if (allowed.Contains(e.tag)) return true;
    }
    return false;
  }

  // Feeds byte b. On success updates `pos` (and pushes one parser set if a
  // lexeme ended); on failure changes nothing and returns false.
  bool Step(EarleyParser& parser, LexPosition& pos, uint8_t b) {
    const regex::StateId next = dfa_.Step(pos.lexer, b);
    if (next != regex::LazyDfa::kDead && LiveFor(parser, next)) [[likely]] {
      if (track_values_) [[unlikely]] {
        return Advance(parser, pos, next, b);
      }
      pos.lexer = next;
      pos.in_lexeme = true;
      return true;
    }
    if (!pos.in_lexeme || !EndLexeme(parser, pos)) return false;
    const regex::StateId restart = dfa_.Step(grammar_.LexerStart(parser.LexAllowed()), b);
    if (restart == regex::LazyDfa::kDead || !LiveFor(parser, restart)) {
      parser.Pop(1);
      return false;
    }
    if (track_values_) [[unlikely]] {
      LexPosition fresh{restart, false, false, kValueSeed, {}, LexPosition::kTokenSeed, 0, {}, {}};
      if (!Advance(parser, fresh, restart, b)) {
        parser.Pop(1);
        return false;
      }
      pos = fresh;
      return true;
    }
    pos = {restart, true, false, 0, {}, LexPosition::kTokenSeed, 0, {}, {}};
    return true;
  }

  // The position after the first byte `b` of a new lexeme, which took the
  // lexer's start state to `lexer` (a mask walk resuming where a lexeme
  // ended); false when that byte completes a repeated distinct value or
  // starts only keys the frame has had.
  bool Begin(EarleyParser& parser, regex::StateId lexer, uint8_t b, LexPosition* pos) {
    if (!LiveFor(parser, lexer)) return false;
    *pos = {lexer, true, false, 0, {}, LexPosition::kTokenSeed, 0, {}, {}};
    if (!track_values_) return true;
    LexPosition fresh{lexer, false, false, kValueSeed, {}, LexPosition::kTokenSeed, 0, {}, {}};
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
    if (track_numbers_ && EndsDistinctNumber(pos.lexer)) {
      return EndLexeme(parser, pos.lexer, pos.number.Value());
    }
    if (track_items_) {
      return EndLexeme(parser, pos.lexer, EndsNumber(pos.lexer) ? pos.number.Value() : pos.token);
    }
    return EndLexeme(parser, pos.lexer, pos.value);
  }
  bool EndLexeme(EarleyParser& parser, regex::StateId lexer, uint64_t value = 0) {
    const auto tags = dfa_.AcceptingTags(lexer);
    if (tags.empty()) return false;
    scratch_.Clear();
    for (uint32_t tag : tags) scratch_.Insert(tag);
    return parser.ScanAny(scratch_, value);
  }

  // The heap its scratch takes (Matcher::MemoryBytes).
  size_t HeapBytes() const { return scratch_.HeapBytes(); }

 private:
  static constexpr uint64_t kValueSeed = 0x9e3779b97f4a7c15ull;

  // Step to `next` (live) by byte b with distinct values tracked: hashes b
  // into the value until a distinct-value lexeme first accepts, and refuses
  // that byte when the value repeats one of the frame's and every lexeme
  // accepting there is a distinct value (otherwise the parser drops the
  // distinct ones when the lexeme ends: ScanAny).
  bool Advance(const EarleyParser& parser, LexPosition& pos, regex::StateId next, uint8_t b) {
    LexPosition out{next,      true,         pos.value_done,   pos.value, {},
                    pos.token, pos.in_token, pos.token_string, pos.string};
    if (track_numbers_ && !AdvanceNumber(parser, pos.number, out, next, b)) return false;
    if (track_items_) {
      if (!track_numbers_) {
        out.number = pos.number;
        out.number.Feed(b);
      }
      HashToken(out, b);
      // The first byte of a closing bracket settles the container's value:
      // refused when that completes an item the array holds already (the
      // parser would refuse the lexeme when it ends; before that, every
      // continuation of this byte is doomed).
      if (!pos.in_lexeme && OnlyClosesLive(next) && parser.CloseRepeatsItem()) return false;
      if (parser.AtItemArray() && !AdvanceItemScalar(parser, pos, out, next, b)) return false;
    }
    if (!out.value_done) {
      // The decoded bytes, so that the spellings of one string are one value.
      uint8_t decoded[StringCanon::kMaxOut];
      const int n = out.string.Feed(b, decoded);
      for (int i = 0; i < n; ++i) {
        // 128-bit multiply-fold (wyhash's mix): collisions are negligible at
        // the sizes of one array.
        const unsigned __int128 m =
            static_cast<unsigned __int128>(out.value ^ (decoded[i] + 0xa0761d6478bd642full)) *
            0xe7037ed1a0b428dbull;
        out.value = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
      }
      bool distinct = false, other = false;
      for (uint32_t tag : dfa_.AcceptingTags(next)) {
        // A distinct number's value is complete only when its lexeme
        // ends (AdvanceNumber, EndLexeme).
        if (grammar_.grammar().is_distinct_number(tag)) continue;
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

  // Folds byte b into the canonical token hash (LexPosition::token). Inside
  // a string the decoded bytes are hashed (StringCanon): `"é"` and
  // `"\u00e9"` are one value.
  static void HashToken(LexPosition& out, uint8_t b) {
    switch (out.in_token) {
      case 0:
        if (b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == ',' || b == ':') return;
        if (b == '"') {
          out.in_token = 1;
          out.token_string = StringCanon();
        }
        MixToken(out, b);
        return;
      case 1: {
        if (b == '"' && !out.token_string.InEscape()) {
          out.in_token = 3;
          MixToken(out, b);
          return;
        }
        uint8_t decoded[StringCanon::kMaxOut];
        const int n = out.token_string.Feed(b, decoded);
        for (int i = 0; i < n; ++i) MixToken(out, decoded[i]);
        return;
      }
      default:
        return;
    }
  }
  static void MixToken(LexPosition& out, uint8_t b) {
    const unsigned __int128 m =
        static_cast<unsigned __int128>(out.token ^ (b + 0xa0761d6478bd642full)) *
        0xe7037ed1a0b428dbull;
    out.token = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
  }

  // A scalar item of an array of distinct items (`before` -> `out` by byte
  // b): false when b settles a value the array holds. A string settles at
  // its closing quote; a literal (true, false, null) at its first byte; a
  // number where whitespace follows it or e/E follows a zero mantissa (as
  // AdvanceNumber), or when its lexeme ends (the parser's refusal).
  bool AdvanceItemScalar(const EarleyParser& parser, const LexPosition& before,
                         const LexPosition& out, regex::StateId next, uint8_t b) const {
    if (before.in_token == 1 && out.in_token == 3) {
      return !OnlyPartLive(next, JsonPart::kScalar) || !parser.ItemArrayHas(out.token);
    }
    if (!before.in_lexeme && b != '"' && OnlyPartLive(next, JsonPart::kScalar)) {
      // Every live lexeme is a literal whose bytes are its value: refused
      // when each of them is a repeat.
      for (const regex::TaggedExpr& e : dfa_.Exprs(next)) {
        const LexemeInfo& l = grammar_.grammar().lexeme(e.tag);
        if (!l.flags.literal) return true;
        LexPosition literal;
        for (char c : l.name) HashToken(literal, static_cast<uint8_t>(c));
        if (!parser.ItemArrayHas(literal.token)) return true;
      }
      return false;
    }
    const NumberCanon::Phase p = out.number.phase();
    const bool settled = (p == NumberCanon::kDone && before.number.phase() != NumberCanon::kDone) ||
                         (p == NumberCanon::kExpSign &&
                          before.number.phase() != NumberCanon::kExpSign && out.number.zero());
    return !settled || !OnlyPartLive(next, JsonPart::kNumber) ||
           !parser.ItemArrayHas(out.number.Value());
  }

  // Whether every lexeme live in lexer state `s` has JsonPart `part`.
  bool OnlyPartLive(regex::StateId s, JsonPart part) const {
    bool any = false;
    for (const regex::TaggedExpr& e : dfa_.Exprs(s)) {
      if (grammar_.grammar().json_part(e.tag) != part) return false;
      any = true;
    }
    return any;
  }

  // Whether a number (JsonPart::kNumber) accepts in lexer state `s`.
  bool EndsNumber(regex::StateId s) const {
    for (uint32_t tag : dfa_.AcceptingTags(s)) {
      if (grammar_.grammar().json_part(tag) == JsonPart::kNumber) return true;
    }
    return false;
  }

  // Whether every lexeme live in lexer state `s` closes a container.
  bool OnlyClosesLive(regex::StateId s) const {
    bool any = false;
    for (const regex::TaggedExpr& e : dfa_.Exprs(s)) {
      const JsonPart p = grammar_.grammar().json_part(e.tag);
      if (p != JsonPart::kCloseObject && p != JsonPart::kCloseArray) return false;
      any = true;
    }
    return any;
  }

  // Whether a distinct number accepts in lexer state `s`.
  bool EndsDistinctNumber(regex::StateId s) const {
    for (uint32_t tag : dfa_.AcceptingTags(s)) {
      if (grammar_.grammar().is_distinct_number(tag)) return true;
    }
    return false;
  }

  // Whether every lexeme live in lexer state `s` is a distinct number (an
  // integer, with `integers`): then a number whose value is settled decides
  // the item.
  bool OnlyDistinctNumbersLive(regex::StateId s, bool integers) const {
    bool any = false;
    for (const regex::TaggedExpr& e : dfa_.Exprs(s)) {
      if (!(integers ? grammar_.grammar().is_distinct_integer(e.tag)
                     : grammar_.grammar().is_distinct_number(e.tag))) {
        return false;
      }
      any = true;
    }
    return any;
  }

  // Reads byte b into the lexeme's number (`before` as it was); false when
  // that settles the value of a distinct number the array holds already:
  // whitespace after it (the lexeme takes trailing whitespace, so the next
  // byte would only end it), or e/E after a zero mantissa (every exponent
  // leaves zero); for a distinct integer also a leading 0 (only `.0+` may
  // follow) and a `.` after two digits (likewise). The byte that ends the
  // lexeme is the parser's to refuse (EarleyParser::ScanAny with the
  // number's value, EndLexeme).
  bool AdvanceNumber(const EarleyParser& parser, const NumberCanon& before, LexPosition& out,
                     regex::StateId next, uint8_t b) const {
    out.number = before;
    out.number.Feed(b);
    const NumberCanon::Phase p = out.number.phase();
    const bool settled = (p == NumberCanon::kDone && before.phase() != NumberCanon::kDone) ||
                         (p == NumberCanon::kExpSign && before.phase() != NumberCanon::kExpSign &&
                          out.number.zero());
    const bool settled_integer = (b == '0' && before.phase() == NumberCanon::kStart) ||
                                 (b == '.' && before.TwoIntegerDigits() && p == NumberCanon::kFrac);
    if (!settled && !settled_integer) return true;
    if (!parser.FrameHasValue(out.number.Value())) return true;
    return !OnlyDistinctNumbersLive(next, /*integers=*/!settled);
  }

  const CompiledGrammarImpl& grammar_;
  const regex::LazyDfa& dfa_;
  LexemeSet scratch_;
  const bool track_values_;
  const bool track_numbers_;
  const bool track_items_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_BYTE_STEPPER_H_
