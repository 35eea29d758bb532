#include "compiler/json_schema/numeric_regex.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace maskd::json_schema {
namespace {

// A regex, or nullopt for the empty language. Every non-empty value is safe
// to concatenate (no top-level '|').
using Re = std::optional<std::string>;

Re Union(const std::vector<std::string>& alternatives) {
  std::vector<std::string> non_empty;
  bool has_epsilon = false;
  for (const std::string& a : alternatives) {
    if (a.empty()) {
      has_epsilon = true;
    } else if (std::find(non_empty.begin(), non_empty.end(), a) == non_empty.end()) {
      non_empty.push_back(a);
    }
  }
  if (non_empty.empty()) return has_epsilon ? Re("") : std::nullopt;
  if (!has_epsilon && non_empty.size() == 1) return non_empty[0];
  return absl::StrCat("(", absl::StrJoin(non_empty, "|"), ")", has_epsilon ? "?" : "");
}

std::string AnyDigits(int n) {
  if (n <= 0) return "";
  if (n == 1) return "[0-9]";
  return absl::StrCat("[0-9]{", n, "}");
}

std::string DigitClass(int from, int to) {
  if (from == to) return std::string(1, static_cast<char>('0' + from));
  return absl::StrCat("[", from, "-", to, "]");
}

// A non-negative bound: integer digits without leading zeros ("0" for < 1),
// fraction digits without trailing zeros.
struct UBound {
  std::string int_digits;
  std::string frac_digits;
  bool exclusive = false;
};

UBound MakeUBound(const Decimal& d, bool exclusive) {
  Decimal a = d.Abs();
  return UBound{a.IntegerDigits(), a.FractionDigits(), exclusive};
}

constexpr const char* kOptionalFraction = "(\\.[0-9]+)?";

// Regex for unsigned fixed-notation numbers whose integer part has exactly
// `length` digits and whose value lies between the bounds. A bound is
// "tight" while the digits produced so far equal its digits (aligned at the
// decimal point; bounds are zero-padded on the right); only a bound whose
// integer part also has `length` digits can be tight at the start.
class FixedLengthRange {
 public:
  FixedLengthRange(int length, const UBound* lower, const UBound* upper, bool allow_fraction,
                   bool first_nonzero)
      : length_(length),
        lower_(lower),
        upper_(upper),
        allow_fraction_(allow_fraction),
        first_nonzero_(first_nonzero) {}

  Re Build() {
    bool tight_lower = lower_ != nullptr && static_cast<int>(lower_->int_digits.size()) == length_;
    bool tight_upper = upper_ != nullptr && static_cast<int>(upper_->int_digits.size()) == length_;
    return Rest(0, tight_lower, tight_upper);
  }

 private:
  int Digit(const UBound& b, int i) const {
    if (i < length_) return b.int_digits[i] - '0';
    size_t j = static_cast<size_t>(i - length_);
    return j < b.frac_digits.size() ? b.frac_digits[j] - '0' : 0;
  }
  bool RestZero(const UBound& b, int i) const {
    if (i < length_) {
      for (int k = i; k < length_; ++k) {
        if (b.int_digits[k] != '0') return false;
      }
      return b.frac_digits.empty();
    }
    return static_cast<size_t>(i - length_) >= b.frac_digits.size();
  }
  // Any continuation from digit position i.
  std::string Free(int i) const {
    if (i < length_) {
      std::string s =
          (i == 0 && first_nonzero_) ? "[1-9]" + AnyDigits(length_ - 1) : AnyDigits(length_ - i);
      if (allow_fraction_) s += kOptionalFraction;
      return s;
    }
    if (i == length_) return allow_fraction_ ? kOptionalFraction : "";
    return "[0-9]*";
  }
  // Continuations from position i >= length_ that are all zeros / not all zeros.
  Re Zeros(int i) const {
    if (i == length_) return allow_fraction_ ? Re("(\\.0+)?") : Re("");
    return Re("0*");
  }
  Re NonZeroTail(int i) const {
    if (i == length_) {
      return allow_fraction_ ? Re("\\.[0-9]*[1-9][0-9]*") : std::nullopt;
    }
    return Re("[0-9]*[1-9][0-9]*");
  }

  Re Rest(int i, bool tight_lower, bool tight_upper) const {
    if (!tight_lower && !tight_upper) return Free(i);
    if (i >= length_) {
      bool lower_done = !tight_lower || RestZero(*lower_, i);
      bool upper_done = !tight_upper || RestZero(*upper_, i);
      if (lower_done && upper_done) {
        // Every remaining bound digit is zero: the value equals a tight bound
        // iff the rest is all zeros.
        if (tight_lower && tight_upper) {
          if (lower_->exclusive || upper_->exclusive) return std::nullopt;
          return Zeros(i);
        }
        if (tight_lower) return lower_->exclusive ? NonZeroTail(i) : Re(Free(i));
        return upper_->exclusive ? std::nullopt : Zeros(i);
      }
    }
    std::vector<std::string> alternatives;
    if (i >= length_) {
      // Ending here means the remaining digits are zeros.
      bool ok = true;
      if (tight_lower) ok = ok && RestZero(*lower_, i) && !lower_->exclusive;
      if (tight_upper) ok = ok && (!RestZero(*upper_, i) || !upper_->exclusive);
      if (ok) alternatives.push_back("");
      if (i == length_ && !allow_fraction_) return Union(alternatives);
    }
    const std::string prefix = i == length_ ? "\\." : "";
    const int lo = tight_lower ? Digit(*lower_, i) : 0;
    const int hi = tight_upper ? Digit(*upper_, i) : 9;
    const int min_digit = (i == 0 && first_nonzero_) ? 1 : 0;
    auto push = [&](int digit, const Re& rest) {
      if (rest) alternatives.push_back(absl::StrCat(prefix, digit, *rest));
    };
    if (tight_lower && lo >= min_digit && lo <= hi) {
      push(lo, Rest(i + 1, true, tight_upper && lo == hi));
    }
    if (tight_upper && hi >= min_digit && (!tight_lower || hi > lo)) {
      push(hi, Rest(i + 1, false, true));
    }
    int from = std::max(tight_lower ? lo + 1 : lo, min_digit);
    int to = tight_upper ? hi - 1 : hi;
    if (from <= to) alternatives.push_back(prefix + DigitClass(from, to) + Free(i + 1));
    return Union(alternatives);
  }

  int length_;
  const UBound* lower_;
  const UBound* upper_;
  bool allow_fraction_;
  bool first_nonzero_;
};

bool EmptyRange(const UBound* lower, const UBound* upper) {
  if (lower == nullptr || upper == nullptr) return false;
  if (lower->int_digits.size() != upper->int_digits.size()) {
    return lower->int_digits.size() > upper->int_digits.size();
  }
  int c = lower->int_digits.compare(upper->int_digits);
  if (c == 0) c = lower->frac_digits.compare(upper->frac_digits);  // No trailing zeros: ok.
  return c > 0 || (c == 0 && (lower->exclusive || upper->exclusive));
}

// Fixed-notation unsigned numbers (integers when !allow_fraction) in range.
Re UnsignedFixed(const UBound* lower, const UBound* upper, bool allow_fraction) {
  if (EmptyRange(lower, upper)) return std::nullopt;
  const int lower_len = lower ? static_cast<int>(lower->int_digits.size()) : 1;
  const int upper_len = upper ? static_cast<int>(upper->int_digits.size()) : -1;  // -1: inf.
  const std::string fraction = allow_fraction ? kOptionalFraction : "";
  std::vector<std::string> alternatives;
  Re first = FixedLengthRange(lower_len, lower, upper_len == lower_len ? upper : nullptr,
                              allow_fraction, lower_len > 1)
                 .Build();
  if (first) alternatives.push_back(*first);
  // Lengths strictly between: any digits.
  if (upper_len < 0) {
    alternatives.push_back(absl::StrCat("[1-9][0-9]{", lower_len, ",}", fraction));
  } else if (upper_len > lower_len + 1) {
    std::string count = upper_len - 2 == lower_len
                            ? absl::StrCat("{", lower_len, "}")
                            : absl::StrCat("{", lower_len, ",", upper_len - 2, "}");
    alternatives.push_back(absl::StrCat("[1-9][0-9]", count, fraction));
  }
  if (upper_len > lower_len) {
    Re last = FixedLengthRange(upper_len, nullptr, upper, allow_fraction, true).Build();
    if (last) alternatives.push_back(*last);
  }
  return Union(alternatives);
}

UBound UBoundFromInt(int64_t v) { return UBound{std::to_string(v), "", false}; }

// `[eE]` then a signed exponent whose value is in [lo, hi] (nullopt: infinite),
// with optional '+' and leading zeros.
Re ExponentRange(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alternatives;
  int64_t from = lo ? std::max<int64_t>(*lo, 0) : 0;
  if (!hi || *hi >= from) {
    UBound l = UBoundFromInt(from), h = hi ? UBoundFromInt(*hi) : UBound{};
    Re r = UnsignedFixed(&l, hi ? &h : nullptr, false);
    if (r) alternatives.push_back("[eE]\\+?0*" + *r);
  }
  int64_t from_magnitude = hi ? std::max<int64_t>(-*hi, 0) : 0;
  if (!lo || -*lo >= from_magnitude) {
    UBound l = UBoundFromInt(from_magnitude), h = lo ? UBoundFromInt(-*lo) : UBound{};
    Re r = UnsignedFixed(&l, lo ? &h : nullptr, false);
    if (r) alternatives.push_back("[eE]-0*" + *r);
  }
  return Union(alternatives);
}

// A positive bound as normalized mantissa (one integer digit) and exponent.
UBound Mantissa(const UBound& b, int64_t* exponent) {
  std::string all = b.int_digits + b.frac_digits;
  size_t first = all.find_first_not_of('0');
  *exponent = static_cast<int64_t>(b.int_digits.size()) - 1 - static_cast<int64_t>(first);
  std::string rest = all.substr(first + 1);
  while (!rest.empty() && rest.back() == '0') rest.pop_back();
  return UBound{std::string(1, all[first]), rest, b.exclusive};
}

bool IsZero(const UBound& b) {
  return b.frac_digits.empty() && b.int_digits.find_first_not_of('0') == std::string::npos;
}

// Exponent notation with a normalized mantissa (or a zero mantissa) in range.
Re UnsignedScientific(const UBound& lower, const UBound* upper) {
  if (EmptyRange(&lower, upper)) return std::nullopt;
  std::vector<std::string> alternatives;
  if (IsZero(lower) && !lower.exclusive) {
    alternatives.push_back("0(\\.0+)?[eE][+-]?[0-9]+");
  }
  if (upper != nullptr && IsZero(*upper)) return Union(alternatives);
  std::optional<int64_t> lower_exp, upper_exp;
  UBound lower_m, upper_m;
  if (!IsZero(lower)) {
    int64_t e;
    lower_m = Mantissa(lower, &e);
    lower_exp = e;
  }
  if (upper != nullptr) {
    int64_t e;
    upper_m = Mantissa(*upper, &e);
    upper_exp = e;
  }
  auto add = [&](const Re& mantissa, const Re& exponent) {
    if (mantissa && exponent) alternatives.push_back(*mantissa + *exponent);
  };
  if (lower_exp && upper_exp && *lower_exp == *upper_exp) {
    add(FixedLengthRange(1, &lower_m, &upper_m, true, true).Build(),
        ExponentRange(lower_exp, lower_exp));
    return Union(alternatives);
  }
  if (lower_exp) {
    add(FixedLengthRange(1, &lower_m, nullptr, true, true).Build(),
        ExponentRange(lower_exp, lower_exp));
  }
  std::optional<int64_t> mid_lo, mid_hi;
  if (lower_exp) mid_lo = *lower_exp + 1;
  if (upper_exp) mid_hi = *upper_exp - 1;
  if (!mid_lo || !mid_hi || *mid_lo <= *mid_hi) {
    add(Re(std::string("[1-9]") + kOptionalFraction), ExponentRange(mid_lo, mid_hi));
  }
  if (upper_exp) {
    add(FixedLengthRange(1, nullptr, &upper_m, true, true).Build(),
        ExponentRange(upper_exp, upper_exp));
  }
  return Union(alternatives);
}

absl::Status CheckBoundSize(const std::optional<NumericBound>& b) {
  if (!b) return absl::OkStatus();
  Decimal a = b->value.Abs();
  if (a.is_zero()) return absl::OkStatus();
  int64_t span =
      std::max<int64_t>(a.MagnitudeExponent(), 0) + 1 + std::max<int64_t>(-a.exponent(), 0);
  if (span > kMaxBoundDigits) {
    return absl::UnimplementedError(
        absl::StrCat("numeric bound ", b->value.ToString(), " has too many digits"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SignedRange(const std::optional<NumericBound>& lower,
                                        const std::optional<NumericBound>& upper,
                                        bool allow_fraction) {
  if (absl::Status s = CheckBoundSize(lower); !s.ok()) return s;
  if (absl::Status s = CheckBoundSize(upper); !s.ok()) return s;
  auto unsigned_range = [&](const UBound& lo, const UBound* hi) -> Re {
    std::vector<std::string> alternatives;
    Re fixed = UnsignedFixed(&lo, hi, allow_fraction);
    if (fixed) alternatives.push_back(*fixed);
    if (allow_fraction) {
      Re scientific = UnsignedScientific(lo, hi);
      if (scientific) alternatives.push_back(*scientific);
    }
    return Union(alternatives);
  };
  std::vector<std::string> alternatives;
  // Non-negative numbers (no sign).
  if (!upper || !upper->value.negative()) {
    UBound lo{"0", "", false};
    if (lower && !lower->value.negative()) lo = MakeUBound(lower->value, lower->exclusive);
    UBound hi;
    if (upper) hi = MakeUBound(upper->value, upper->exclusive);
    Re r = unsigned_range(lo, upper ? &hi : nullptr);
    if (r) alternatives.push_back(*r);
  }
  // Numbers written with '-': magnitudes from -upper up to -lower.
  if (!lower || lower->value.negative() || lower->value.is_zero()) {
    UBound lo{"0", "", false};
    if (upper && upper->value.negative()) lo = MakeUBound(upper->value, upper->exclusive);
    if (upper && upper->value.is_zero()) lo.exclusive = upper->exclusive;
    UBound hi{"0", "", false};
    if (lower) hi = MakeUBound(lower->value, lower->exclusive);
    Re r = unsigned_range(lo, lower ? &hi : nullptr);
    if (r) alternatives.push_back("-" + *r);
  }
  Re result = Union(alternatives);
  if (!result || result->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no ", allow_fraction ? "number" : "integer", " in range ",
        lower ? (lower->exclusive ? "(" : "[") : "(", lower ? lower->value.ToString() : "-inf",
        ", ", upper ? upper->value.ToString() : "inf",
        upper ? (upper->exclusive ? ")" : "]") : ")"));
  }
  return *result;
}

// Largest power of ten that fits comfortably in uint64_t arithmetic here.
constexpr int kMaxModulusDigits = 18;

}  // namespace

absl::StatusOr<std::string> IntegerRangeRegex(const std::optional<NumericBound>& lower,
                                              const std::optional<NumericBound>& upper) {
  return SignedRange(lower, upper, false);
}

absl::StatusOr<std::string> NumberRangeRegex(const std::optional<NumericBound>& lower,
                                             const std::optional<NumericBound>& upper) {
  return SignedRange(lower, upper, true);
}

absl::StatusOr<std::string> IntegerMultipleOfRegex(const std::optional<NumericBound>& lower,
                                                   const std::optional<NumericBound>& upper,
                                                   const Decimal& multiple_of) {
  if (multiple_of.negative() || multiple_of.is_zero()) {
    return absl::InvalidArgumentError("multipleOf must be positive");
  }
  auto unimplemented = [&]() {
    return absl::UnimplementedError(absl::StrCat("multipleOf ", multiple_of.ToString(),
                                                 " with this range has no practical exact regex"));
  };
  // multiple_of = a * 10^-s; integer x is a multiple iff x is a multiple of
  // a / gcd(a, 10^s).
  if (static_cast<int>(multiple_of.digits().size()) > kMaxModulusDigits) return unimplemented();
  uint64_t a = 0;
  for (char c : multiple_of.digits()) a = a * 10 + static_cast<uint64_t>(c - '0');
  uint64_t modulus = a;
  if (multiple_of.exponent() >= 0) {
    for (int64_t i = 0; i < multiple_of.exponent(); ++i) {
      if (modulus > UINT64_MAX / 10 / 1000) return unimplemented();
      modulus *= 10;
    }
  } else {
    uint64_t g = a;
    for (int64_t i = 0; i < -multiple_of.exponent() && modulus > 1; ++i) {
      g = std::gcd(modulus, uint64_t{10});
      modulus /= g;
      if (g == 1) break;
    }
  }
  if (modulus == 1) return IntegerRangeRegex(lower, upper);

  const int64_t m = static_cast<int64_t>(modulus);
  if (lower && upper) {
    int64_t lo, hi;
    Decimal l = lower->value.Ceil(), h = upper->value.Floor();
    if (lower->exclusive && l == lower->value) l = l.PlusOne();
    if (upper->exclusive && h == upper->value) h = h.MinusOne();
    if (l.ToInt64(&lo) && h.ToInt64(&hi) && lo > INT64_MIN / 4 && hi < INT64_MAX / 4) {
      if (lo > hi) return IntegerRangeRegex(lower, upper);  // Reports the empty range.
      int64_t first = lo >= 0 ? (lo + m - 1) / m * m : -((-lo) / m * m);
      std::vector<std::string> values;
      for (int64_t v = first; v <= hi; v += m) {
        values.push_back(std::to_string(v));
        if (v == 0) values.push_back("-0");  // Zero's other spelling (json.dumps's -0.0).
        if (values.size() > 1000) return unimplemented();
      }
      if (values.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("no multiple of ", multiple_of.ToString(), " in [", lo, ", ", hi, "]"));
      }
      return *Union(values);
    }
  }
  if (lower || upper) return unimplemented();
  // Unbounded: works when modulus divides 10^n, with few n-digit residues.
  int n = 0;
  uint64_t power = 1;
  while (power % modulus != 0) {
    if (++n > 6) return unimplemented();
    power *= 10;
  }
  if (power / modulus > 1000) return unimplemented();
  std::vector<std::string> small, blocks;
  for (uint64_t v = 0; v < power; v += modulus) {
    small.push_back(std::to_string(v));
    std::string block = std::to_string(v);
    block.insert(0, static_cast<size_t>(n) - block.size(), '0');
    blocks.push_back(block);
  }
  std::string long_form = "[1-9][0-9]*" + *Union(blocks);
  small.push_back(long_form);
  return "-?" + *Union(small);
}

std::string NonIntegerNumberRegex() {
  std::string re =
      "-?(?:(?:0|[1-9][0-9]*)\\.[0-9]*[1-9][0-9]*"
      "|[1-9](?:\\.[0-9]+)?[eE]-0*[1-9][0-9]*"
      "|[1-9]\\.[0-9]*[1-9][0-9]*[eE][+-]?0+";  // Exponent zero.
  for (int e = 1; e <= kMaxNonIntegerExponent; ++e) {
    re +=
        "|[1-9]\\.[0-9]{" + std::to_string(e) + "}[0-9]*[1-9][0-9]*[eE]\\+?0*" + std::to_string(e);
  }
  return re + ")";
}

namespace {

// Exponent spellings `[+-]?[0-9]+` (leading zeros allowed) whose value is at
// least `c`.
absl::StatusOr<std::string> ExponentAtLeast(int64_t c) {
  auto magnitudes = [](int64_t lo, std::optional<int64_t> hi) -> absl::StatusOr<std::string> {
    std::optional<NumericBound> upper;
    if (hi) upper = NumericBound{Decimal::FromInt64(*hi), false};
    return IntegerRangeRegex(NumericBound{Decimal::FromInt64(lo), false}, upper);
  };
  if (c > 0) {
    absl::StatusOr<std::string> m = magnitudes(c, std::nullopt);
    if (!m.ok()) return m.status();
    return "\\+?0*(?:" + *m + ")";
  }
  std::string negative = "-0+";
  if (c < 0) {
    absl::StatusOr<std::string> m = magnitudes(1, -c);
    if (!m.ok()) return m.status();
    negative = "-0*(?:0|" + *m + ")";
  }
  return "(?:\\+?[0-9]+|" + negative + ")";
}

// The exponent-notation spellings (normalized mantissa, sign excluded) of
// values with at most `places` decimals: alternatives joined by '|'.
absl::StatusOr<std::string> ExponentSpellingsWithPlaces(int places) {
  std::string re = "0(?:\\.0+)?[eE][+-]?[0-9]+";  // Zero in exponent notation.
  for (int t = 0; t <= kMaxNonIntegerExponent; ++t) {
    // t significant fraction digits (the last nonzero), trailing zeros after.
    const std::string mantissa =
        t == 0 ? "[1-9](?:\\.0+)?" : "[1-9]\\.[0-9]{" + std::to_string(t - 1) + "}[1-9]0*";
    absl::StatusOr<std::string> exponent = ExponentAtLeast(t - places);
    if (!exponent.ok()) return exponent.status();
    re += "|" + mantissa + "[eE]" + *exponent;
  }
  return re;
}

}  // namespace

absl::StatusOr<std::string> DecimalPlacesRegex(int places) {
  if (places < 1 || places > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("multipleOf 1e-", places, " is outside the supported 1e-1000..0.1"));
  }
  const std::string k = std::to_string(places);
  absl::StatusOr<std::string> exponent = ExponentSpellingsWithPlaces(places);
  if (!exponent.ok()) return exponent.status();
  return "-?(?:(?:0|[1-9][0-9]*)(?:\\.[0-9]{1," + k + "}0*)?|" + *exponent + ")";
}

std::string LargeIntegerExponentRegex() {
  std::string re;
  for (int t = 0; t <= kMaxNonIntegerExponent; ++t) {
    const std::string mantissa =
        t == 0 ? "[1-9](?:\\.0+)?" : "[1-9]\\.[0-9]{" + std::to_string(t - 1) + "}[1-9]0*";
    // ExponentAtLeast of a positive count cannot fail.
    re += (t == 0 ? "" : "|") + mantissa + "[eE]" +
          *ExponentAtLeast(std::max(t, kLargeIntegerExponent));
  }
  return "(?:" + re + ")";
}

namespace {

// The smallest n with modulus | 10^n (n <= max_n), or -1.
int PowerOfTenMultiple(uint64_t modulus, int max_n) {
  uint64_t power = 1;
  for (int n = 0; n <= max_n; ++n) {
    if (power % modulus == 0) return n;
    if (power > UINT64_MAX / 10) return -1;
    power *= 10;
  }
  return -1;
}

// The n-digit (zero-padded) multiples of `modulus` below 10^n.
std::vector<std::string> Blocks(uint64_t modulus, int n) {
  if (n == 0) return {""};
  uint64_t power = 1;
  for (int i = 0; i < n; ++i) power *= 10;
  std::vector<std::string> out;
  for (uint64_t v = 0; v < power; v += modulus) {
    std::string block = std::to_string(v);
    block.insert(0, static_cast<size_t>(n) - block.size(), '0');
    out.push_back(block);
  }
  return out;
}

// Exponent spellings (no sign) of integers >= 10^kLargeIntegerExponent that
// are multiples of `modulus`, where modulus | 10^n: a normalized mantissa
// with t fraction digits and exponent e >= max(t, 16) spells an integer
// ending in exactly e - t zeros; at least n zeros make it a multiple, fewer
// leave the mantissa's last digits to decide (its last significant digits
// followed by those zeros must end a multiple's n-digit block).
absl::StatusOr<std::string> LargeIntegerMultipleRegex(uint64_t modulus, int n) {
  std::vector<std::string> alternatives;
  const std::vector<std::string> blocks = Blocks(modulus, n);
  for (int t = 0; t <= kMaxNonIntegerExponent; ++t) {
    const std::string any_mantissa =
        t == 0 ? "[1-9](?:\\.0+)?" : "[1-9]\\.[0-9]{" + std::to_string(t - 1) + "}[1-9]0*";
    absl::StatusOr<std::string> many_zeros =
        ExponentAtLeast(std::max(kLargeIntegerExponent, t + n));
    if (!many_zeros.ok()) return many_zeros.status();
    alternatives.push_back(any_mantissa + "[eE]" + *many_zeros);
    for (const std::string& b : blocks) {
      const size_t last = b.find_last_not_of('0');
      if (last == std::string::npos) continue;  // All zeros: the case above.
      const int zeros = n - 1 - static_cast<int>(last);
      const int e = t + zeros;
      if (e < kLargeIntegerExponent) continue;
      const std::string digits = b.substr(0, last + 1);  // Ends nonzero.
      const int len = static_cast<int>(digits.size());
      std::string mantissa;
      if (t == 0) {
        if (len != 1) continue;
        mantissa = digits + "(?:\\.0+)?";
      } else if (len <= t) {
        mantissa = "[1-9]\\.[0-9]{" + std::to_string(t - len) + "}" + digits + "0*";
      } else if (len == t + 1 && digits[0] != '0') {
        mantissa = digits.substr(0, 1) + "\\." + digits.substr(1) + "0*";
      } else {
        continue;  // More block digits than significant ones: never >= 1e16.
      }
      alternatives.push_back(mantissa + "[eE]\\+?0*" + std::to_string(e));
    }
  }
  return *Union(alternatives);
}

}  // namespace

absl::StatusOr<std::string> MultipleOfRegex(const Decimal& multiple_of) {
  if (multiple_of.negative() || multiple_of.is_zero()) {
    return absl::InvalidArgumentError("multipleOf must be positive");
  }
  auto unimplemented = [&](const char* why) {
    return absl::UnimplementedError(absl::StrCat("multipleOf ", multiple_of.ToString(),
                                                 " has no practical exact regex (", why, ")"));
  };
  // d = a * 10^exponent; x is a multiple iff N = x * 10^s is an integer that
  // A divides, with s = max(0, -exponent) and A = a * 10^max(0, exponent).
  if (static_cast<int>(multiple_of.digits().size()) > kMaxModulusDigits ||
      multiple_of.exponent() > 6 || multiple_of.exponent() < -kMaxModulusDigits) {
    return unimplemented("too many digits");
  }
  uint64_t a = 0;
  for (char c : multiple_of.digits()) a = a * 10 + static_cast<uint64_t>(c - '0');
  const int s = multiple_of.exponent() < 0 ? static_cast<int>(-multiple_of.exponent()) : 0;
  for (int64_t i = 0; i < multiple_of.exponent(); ++i) a *= 10;
  if (a == 1 && s > 0) return DecimalPlacesRegex(s);  // 10^-s, exponents included.
  if (s > 4 && a != 1) {
    // Multiples below 1e-4 are written in exponent notation (5e-05).
    return unimplemented("a non-power-of-ten divisor below 1e-4");
  }
  // Divisibility by A is decided by N's last n digits when A | 10^n.
  int n = PowerOfTenMultiple(a, 9);
  if (n < 0) return unimplemented("it divides no power of ten: 3, 7, 1.5 are not supported");
  n = std::max(n, s);
  uint64_t power = 1;
  for (int i = 0; i < n; ++i) power *= 10;
  if (power / a > 1000) return unimplemented("more than 1000 residues");
  // Fixed notation: the integer part ends with the block's first n - s
  // digits (zero-padded on the left), the fraction padded to s digits is
  // the block's last s digits, any further fraction digits are zeros.
  std::vector<std::string> fixed;
  for (const std::string& b : Blocks(a, n)) {
    const std::string tail = b.substr(0, static_cast<size_t>(n - s));
    const std::string fraction = b.substr(static_cast<size_t>(n - s));
    std::string integer = "(?:0|[1-9][0-9]*)";
    if (!tail.empty()) {
      const size_t first = tail.find_first_not_of('0');
      const std::string stripped = first == std::string::npos ? "0" : tail.substr(first);
      integer = "(?:" + stripped + "|[1-9][0-9]*" + tail + ")";
    }
    const size_t last = fraction.find_last_not_of('0');
    const std::string frac =
        last == std::string::npos ? "(?:\\.0+)?" : "\\." + fraction.substr(0, last + 1) + "0*";
    fixed.push_back(integer + frac);
  }
  // Exponent notation for magnitudes >= 1e16, which are integers there: a
  // multiple of d iff a multiple of A / gcd(A, 10^s).
  uint64_t modulus = a;
  for (int i = 0; i < s; ++i) {
    if (modulus % 2 == 0) modulus /= 2;
    if (modulus % 5 == 0) modulus /= 5;
  }
  absl::StatusOr<std::string> large =
      LargeIntegerMultipleRegex(modulus, std::max(PowerOfTenMultiple(modulus, 9), 0));
  if (!large.ok()) return large.status();
  return "-?(?:" + *Union(fixed) + "|0(?:\\.0+)?[eE][+-]?[0-9]+|" + *large + ")";
}

}  // namespace maskd::json_schema
