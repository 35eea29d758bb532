#include "compiler/json_schema/multiple_of_machine.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/json_schema/numeric_regex.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {
namespace {

using regex::ByteSet;

// Significant fraction digits a mantissa of an exponent form may have.
constexpr uint32_t kMaxMantissaFraction = kMaxNonIntegerExponent;
// Exponent magnitudes are kept up to this; every threshold lies below it.
constexpr uint32_t kExponentCap = 127;
// kMant's `k` once more zeros were read than could still be significant.
constexpr uint32_t kManyZeros = 63;
// Threshold codes for kExp (`r` holds threshold + kThresholdBias otherwise).
constexpr uint32_t kZeroValue = 0xFFFFFFFEu;  // A zero mantissa: always a multiple.
constexpr uint32_t kNever = 0xFFFFFFFFu;      // No exponent makes it a multiple.
constexpr int kThresholdBias = 128;
// Powers of ten kept modulo A: J(r) <= log2(A) < 17 and shifts up to 21.
constexpr int kPowers = 64;

enum Phase : uint32_t {
  kStart,  // Nothing read.
  kSign,   // '-'.
  kZero,   // Integer part "0".
  kInt1,   // One nonzero integer digit (r): an exponent may follow.
  kIntN,   // Two or more integer digits, r = their value mod A.
  kFrac,   // Fraction of a fixed number with integer part kIntN or kZero:
           // r over the first f <= s fraction digits; `beyond`: a nonzero
           // digit past the s-th; `all_zero`: "0." and zeros (may take 'e').
  kMant,   // Fraction after kInt1: r = significant digits mod A, t of them in
           // the fraction, k zeros read after them (kManyZeros: too many).
  kOver,   // Fraction past kMaxMantissaFraction significant digits: a fixed
           // non-multiple (s <= that many), digits only.
  kExp,    // After [eE]: r = threshold code, sign (0: none yet, 1: '+' or a
           // digit, 2: '-'), val = exponent magnitude so far (capped).
};

struct State {
  uint32_t phase = kStart;
  uint32_t r = 0;
  uint32_t x = 0;  // kFrac: f; kMant: t; kExp: val.
  uint32_t y = 0;  // kMant: k; kExp: sign.
  bool need_digit = false;
  bool beyond = false;
  bool all_zero = false;

  uint64_t Pack() const {
    return uint64_t{phase} | (uint64_t{r} << 4) | (uint64_t{x} << 36) | (uint64_t{y} << 43) |
           (uint64_t{need_digit} << 50) | (uint64_t{beyond} << 51) | (uint64_t{all_zero} << 52);
  }
  static State Unpack(uint64_t v) {
    State s;
    s.phase = static_cast<uint32_t>(v & 0xF);
    s.r = static_cast<uint32_t>((v >> 4) & 0xFFFFFFFFu);
    s.x = static_cast<uint32_t>((v >> 36) & 0x7F);
    s.y = static_cast<uint32_t>((v >> 43) & 0x7F);
    s.need_digit = (v >> 50) & 1;
    s.beyond = (v >> 51) & 1;
    s.all_zero = (v >> 52) & 1;
    return s;
  }
};

class MultipleOfNumbers final : public regex::ByteMachine {
 public:
  MultipleOfNumbers(uint32_t a, uint32_t s, bool multiples) : a_(a), s_(s), multiples_(multiples) {
    a_odd_ = a;  // A without its factors 2 and 5.
    while (a_odd_ % 2 == 0) a_odd_ /= 2;
    while (a_odd_ % 5 == 0) a_odd_ /= 5;
    uint64_t p = 1 % a_, q = 1 % a_odd_;
    for (int j = 0; j < kPowers; ++j) {
      pow_a_[j] = p;
      pow_odd_[j] = q;
      p = p * 10 % a_;
      q = q * 10 % a_odd_;
    }
    // J(r) for every remainder: every Accepting and Step of a mantissa needs it.
    j_of_r_.assign(a_, kNoJ);
    for (uint32_t r = 0; r < a_; ++r) {
      for (int j = 0; j < kPowers; ++j) {
        if (uint64_t{r} * pow_a_[j] % a_ == 0) {
          j_of_r_[r] = static_cast<uint8_t>(j);
          break;
        }
      }
    }
    // tails_[n][ρ]: some y in [1, 10^n) not divisible by 10 has y ≡ ρ
    // (mod A'); from the first n with 10^(n-1) >= A' every ρ does.
    uint64_t power = 10;
    for (uint32_t n = 1; n <= kMaxMantissaFraction && power / 10 < a_odd_; ++n, power *= 10) {
      std::vector<bool> seen(a_odd_, false);
      for (uint64_t y = 1; y < power; ++y) {
        if (y % 10 != 0) seen[y % a_odd_] = true;
      }
      tails_.push_back(std::move(seen));
    }
  }

  uint64_t Start() const override { return State{}.Pack(); }

  std::optional<uint64_t> Step(uint64_t packed, uint8_t b) const override {
    std::optional<State> next = Next(State::Unpack(packed), b);
    if (!next.has_value() || !Live(*next)) return std::nullopt;
    return next->Pack();
  }

  bool Accepting(uint64_t packed) const override {
    const std::optional<bool> v = Verdict(State::Unpack(packed));
    return v.has_value() && *v == multiples_;
  }

  std::vector<ByteSet> ByteClasses() const override {
    std::vector<ByteSet> out;
    ByteSet rest = ByteSet::All();
    auto add = [&](ByteSet set) {
      for (int b = 0; b < 256; ++b) {
        if (set.Contains(static_cast<uint8_t>(b))) rest.Remove(static_cast<uint8_t>(b));
      }
      out.push_back(set);
    };
    for (char c = '0'; c <= '9'; ++c) add(ByteSet::Single(static_cast<uint8_t>(c)));
    for (char c : {'-', '+', '.'}) add(ByteSet::Single(static_cast<uint8_t>(c)));
    ByteSet e = ByteSet::Single('e');
    e.Add('E');
    add(e);
    out.push_back(rest);
    return out;
  }

  void FoldIdentity(regex::Fingerprint& f) const override {
    f.Fold(0x4D756C7469706C65ull);  // "Multiple"
    f.Fold(1);                      // Version of this machine's definition.
    f.Fold(a_);
    f.Fold(s_);
    f.Fold(multiples_);
    f.Fold(kMaxMantissaFraction);
  }

  std::string Name() const override {
    return absl::StrCat(multiples_ ? "" : "not-", "multipleOf(", a_, "e-", s_, ")");
  }

 private:
  static bool Digit(uint8_t b) { return b >= '0' && b <= '9'; }

  // The least j >= 0 with A | r * 10^j, or nullopt.
  std::optional<uint32_t> J(uint32_t r) const {
    if (j_of_r_[r] == kNoJ) return std::nullopt;
    return j_of_r_[r];
  }
  // kExp's threshold code for a mantissa r (mod A) with t significant
  // fraction digits: a multiple iff exponent >= t - s + J(r).
  uint32_t Threshold(uint32_t r, uint32_t t) const {
    const std::optional<uint32_t> j = J(r);
    if (!j.has_value()) return kNever;
    return static_cast<uint32_t>(static_cast<int>(t) - static_cast<int>(s_) + static_cast<int>(*j) +
                                 kThresholdBias);
  }

  std::optional<State> Next(State st, uint8_t b) const {
    const bool digit = Digit(b);
    const uint32_t d = digit ? b - '0' : 0;
    State n = st;
    n.need_digit = false;
    switch (st.phase) {
      case kStart:
        if (b == '-') return State{kSign};
        [[fallthrough]];
      case kSign:
        if (b == '0') return State{kZero};
        if (digit) return State{kInt1, d % a_};
        return std::nullopt;
      case kZero:
        if (b == '.') {
          n = State{kFrac, 0};
          n.need_digit = n.all_zero = true;
          return n;
        }
        if (b == 'e' || b == 'E') return ExpStart(kZeroValue);
        return std::nullopt;
      case kInt1:
      case kIntN:
        if (digit) return State{kIntN, static_cast<uint32_t>((uint64_t{st.r} * 10 + d) % a_)};
        if (b == '.') {
          n = State{st.phase == kInt1 ? kMant : kFrac, st.r};
          n.need_digit = true;
          return n;
        }
        if (st.phase == kInt1 && (b == 'e' || b == 'E')) return ExpStart(Threshold(st.r, 0));
        return std::nullopt;
      case kFrac:
        if (digit) {
          if (st.x < s_) {
            n.r = static_cast<uint32_t>((uint64_t{st.r} * 10 + d) % a_);
            ++n.x;
          } else if (d != 0) {
            n.beyond = true;
          }
          n.all_zero = st.all_zero && d == 0;
          return n;
        }
        if ((b == 'e' || b == 'E') && st.all_zero && !st.need_digit) return ExpStart(kZeroValue);
        return std::nullopt;
      case kMant:
        if (digit) {
          const bool room = st.y != kManyZeros && st.x + st.y + 1 <= kMaxMantissaFraction;
          if (d == 0) {
            n.y = room ? st.y + 1 : kManyZeros;
            return n;
          }
          if (!room) return State{kOver};
          n.r = static_cast<uint32_t>((uint64_t{st.r} * pow_a_[st.y + 1] + d) % a_);
          n.x = st.x + st.y + 1;
          n.y = 0;
          return n;
        }
        if ((b == 'e' || b == 'E') && !st.need_digit) return ExpStart(Threshold(st.r, st.x));
        return std::nullopt;
      case kOver:
        if (digit) return State{kOver};
        return std::nullopt;
      case kExp:
        if (st.y == 0 && st.need_digit && (b == '+' || b == '-')) {
          n.y = b == '+' ? 1 : 2;
          n.need_digit = true;
          return n;
        }
        if (digit) {
          if (n.y == 0) n.y = 1;
          n.x = std::min<uint32_t>(st.x * 10 + d, kExponentCap);
          return n;
        }
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  static State ExpStart(uint32_t threshold) {
    State n{kExp, threshold};
    n.need_digit = true;
    return n;
  }

  // Whether the number read so far (if complete) is a multiple; nullopt
  // when it is no complete number.
  std::optional<bool> Verdict(const State& st) const {
    if (st.need_digit) return std::nullopt;
    switch (st.phase) {
      case kZero:
        return true;
      case kInt1:
      case kIntN:
        return uint64_t{st.r} * pow_a_[s_] % a_ == 0;
      case kFrac:
        return !st.beyond && uint64_t{st.r} * pow_a_[s_ - st.x] % a_ == 0;
      case kMant: {
        const uint32_t c = Threshold(st.r, st.x);
        return c != kNever && static_cast<int>(c) - kThresholdBias <= 0;
      }
      case kOver:
        return false;
      case kExp: {
        if (st.r == kZeroValue) return true;
        if (st.r == kNever) return false;
        const int e = st.y == 2 ? -static_cast<int>(st.x) : static_cast<int>(st.x);
        return e >= static_cast<int>(st.r) - kThresholdBias;
      }
      default:
        return std::nullopt;
    }
  }

  // Whether some continuation of `st` is accepted (see the header: every
  // state Step returns must be live).
  bool Live(const State& st) const { return multiples_ ? LiveMultiple(st) : LiveNonMultiple(st); }

  bool LiveMultiple(const State& st) const {
    switch (st.phase) {
      case kFrac: {
        if (st.beyond) return false;
        // The remaining n = s - f digits (zeros after) can make any
        // r * 10^n + y with 0 <= y < 10^n.
        const uint32_t n = s_ - st.x;
        const uint64_t need = (a_ - uint64_t{st.r} * pow_a_[n] % a_) % a_;
        uint64_t power = 1;
        for (uint32_t i = 0; i < n && power <= a_; ++i) power *= 10;
        return need < power;
      }
      case kMant: {
        // Some exponent makes it a multiple iff A' | M; digits still to come
        // (n more, the last nonzero, after the k zeros) make M * 10^(k+n) + y.
        if (st.r % a_odd_ == 0) return true;
        if (st.y == kManyZeros) return false;
        for (uint32_t n = 1; st.x + st.y + n <= kMaxMantissaFraction; ++n) {
          const uint64_t need =
              (a_odd_ - uint64_t{st.r} % a_odd_ * pow_odd_[st.y + n] % a_odd_) % a_odd_;
          if (n > tails_.size() || tails_[n - 1][need]) return true;
        }
        return false;
      }
      case kOver:
        return false;
      case kExp:
        if (st.r == kZeroValue) return true;
        if (st.r == kNever) return false;
        // A positive exponent can grow; a negative one only shrinks.
        if (st.y != 2) return true;
        return -static_cast<int>(st.x) >= static_cast<int>(st.r) - kThresholdBias;
      default:  // Integer digits reach any remainder; then end.
        return true;
    }
  }

  bool LiveNonMultiple(const State& st) const {
    switch (st.phase) {
      case kExp:
        if (st.r == kZeroValue) return false;
        if (st.r == kNever) return true;
        // A negative exponent can shrink below any threshold; a positive
        // one is at least what was read (leading zeros keep it).
        if (st.y != 1) return true;
        return static_cast<int>(st.x) < static_cast<int>(st.r) - kThresholdBias;
      default:
        // A nonzero fraction digit past the s-th (or an exponent of -999)
        // makes any other prefix a non-multiple.
        return true;
    }
  }

  uint32_t a_;
  uint32_t s_;
  bool multiples_;
  uint32_t a_odd_;
  uint64_t pow_a_[kPowers];
  uint64_t pow_odd_[kPowers];
  std::vector<std::vector<bool>> tails_;
  static constexpr uint8_t kNoJ = 0xFF;
  std::vector<uint8_t> j_of_r_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const regex::ByteMachine>> MultipleOfMachine(const Decimal& d,
                                                                            bool multiples) {
  if (d.negative() || d.is_zero()) return absl::InvalidArgumentError("multipleOf must be positive");
  const auto too_large = [&](const std::string& why) {
    return absl::UnimplementedError(absl::StrCat("multipleOf ", d.ToString(), ": ", why));
  };
  if (d.exponent() < -kMaxMultipleOfDecimals) {
    return too_large(absl::StrCat("more than ", kMaxMultipleOfDecimals, " decimals"));
  }
  const uint32_t s = d.exponent() < 0 ? static_cast<uint32_t>(-d.exponent()) : 0;
  uint64_t a = 0;
  const std::string digits = d.digits() + std::string(d.exponent() > 0 ? d.exponent() : 0, '0');
  for (char c : digits) {
    a = a * 10 + static_cast<uint64_t>(c - '0');
    if (a > kMaxMultipleOfModulus) {
      return too_large(absl::StrCat("its digits ", d.digits(),
                                    (d.exponent() > 0 ? " and trailing zeros" : ""),
                                    " exceed the supported modulus ", kMaxMultipleOfModulus));
    }
  }
  return std::make_shared<const MultipleOfNumbers>(static_cast<uint32_t>(a), s, multiples);
}

}  // namespace maskd::json_schema
