// The canonical value of a JSON number read byte by byte: what uniqueItems
// compares numbers by (1 == 1.0 == 10e-1 == 1e0, -0 == 0 == 0e5). The byte
// stepper feeds it every byte of a lexeme (matcher/byte_stepper.h) and the
// parser compares the value of a distinct-number lexeme (grammar.h,
// LexemeFlags::distinct_number) when the lexeme ends.
//
// A number is sign, significant digits D (no leading or trailing zeros) and
// a decimal exponent E, value 0.D x 10^E; zero has no digits and no sign.
// The value is a 64-bit hash of (sign, D, E), as the strings of a distinct
// array are (a collision would refuse a value that is not a repeat; it
// never admits a repeat). Explicit exponents saturate at 10^17: numbers with
// such exponents and the same digits compare equal (a refusal, never an
// admission; no writer spells them).
#ifndef MASKD_COMPILER_MATCHER_NUMBER_CANON_H_
#define MASKD_COMPILER_MATCHER_NUMBER_CANON_H_

#include <cstdint>

namespace maskd {

class NumberCanon {
 public:
  enum Phase : uint8_t {
    kStart,    // nothing, or the minus sign
    kInt,      // integer digits
    kFrac,     // after the point
    kExpSign,  // after e/E
    kExp,      // exponent digits
    kDone,     // whitespace after the number: it has ended
    kNot,      // not a number's bytes
  };

  Phase phase() const { return static_cast<Phase>(phase_); }
  // No significant digit yet: the value so far is zero.
  bool zero() const { return !sig_; }
  // In the integer digits, two or more of them read.
  bool TwoIntegerDigits() const { return phase_ == kInt && sig_ && point_ >= 2; }

  void Feed(uint8_t b) {
    const bool digit = b >= '0' && b <= '9';
    const bool space = b == ' ' || b == '\t' || b == '\n' || b == '\r';
    switch (phase_) {
      case kStart:
        if (b == '-' && !neg_) {
          neg_ = true;
        } else if (digit) {
          phase_ = kInt;
          IntDigit(b);
        } else {
          phase_ = kNot;
        }
        break;
      case kInt:
      case kFrac:
        if (digit) {
          phase_ == kInt ? IntDigit(b) : FracDigit(b);
        } else if (b == '.' && phase_ == kInt) {
          phase_ = kFrac;
        } else if (b == 'e' || b == 'E') {
          phase_ = kExpSign;
        } else {
          phase_ = space ? kDone : kNot;
        }
        break;
      case kExpSign:
        if (b == '+' || b == '-' || digit) {
          phase_ = kExp;
          if (b == '-') exp_neg_ = true;
          if (digit) ExpDigit(b);
        } else {
          phase_ = kNot;
        }
        break;
      case kExp:
        if (digit) {
          ExpDigit(b);
        } else {
          phase_ = space ? kDone : kNot;
        }
        break;
      case kDone:
        if (!space) phase_ = kNot;
        break;
      default:
        break;
    }
  }

  // The canonical value's hash (meaningful once a digit was read).
  uint64_t Value() const {
    if (!sig_) return kZeroValue;
    const int64_t e = point_ + (exp_neg_ ? -exp_ : exp_);
    return Mix(Mix(digits_, neg_ ? 1 : 2), static_cast<uint64_t>(e));
  }

  friend bool operator==(const NumberCanon&, const NumberCanon&) = default;

 private:
  static constexpr uint64_t kZeroValue = 0x5bd1e9955bd1e995ull;
  static constexpr int64_t kExpCap = 100000000000000000;  // 10^17

  static uint64_t Mix(uint64_t h, uint64_t x) {
    const unsigned __int128 m =
        static_cast<unsigned __int128>(h ^ (x + 0xa0761d6478bd642full)) * 0xe7037ed1a0b428dbull;
    return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
  }
  void Significant(uint8_t d) {
    if (d == '0') {
      ++zeros_;  // trailing until a nonzero digit follows
      return;
    }
    for (; zeros_ > 0; --zeros_) digits_ = Mix(digits_, '0');
    digits_ = Mix(digits_, d);
  }
  void IntDigit(uint8_t d) {
    if (sig_) {
      ++point_;
      Significant(d);
    } else if (d != '0') {
      sig_ = true;
      point_ = 1;
      Significant(d);
    }
  }
  void FracDigit(uint8_t d) {
    if (sig_) {
      Significant(d);
    } else if (d == '0') {
      --point_;
    } else {
      sig_ = true;
      Significant(d);
    }
  }
  void ExpDigit(uint8_t d) { exp_ = exp_ >= kExpCap / 10 ? kExpCap : exp_ * 10 + (d - '0'); }

  uint8_t phase_ = kStart;
  bool neg_ = false;
  bool sig_ = false;
  bool exp_neg_ = false;
  uint32_t zeros_ = 0;  // zeros after the last nonzero digit, not hashed yet
  int32_t point_ = 0;   // E before the explicit exponent
  int64_t exp_ = 0;     // the explicit exponent's magnitude
  uint64_t digits_ = 0x9e3779b97f4a7c15ull;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_NUMBER_CANON_H_
