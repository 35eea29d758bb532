// An exact decimal number: the value a JSON Schema keyword such as `minimum`
// or `multipleOf` denotes. Bounds must be exact (a double 0.1 is not 0.1), so
// numbers are kept as decimal digit strings, never as binary floating point.
#ifndef MASKD_COMPILER_JSON_SCHEMA_DECIMAL_H_
#define MASKD_COMPILER_JSON_SCHEMA_DECIMAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace maskd::json_schema {

// value = (negative ? -1 : 1) * digits * 10^exponent, with `digits` free of
// leading and trailing zeros ("" means zero, which is never negative). Every
// value therefore has exactly one representation and == is value equality.
class Decimal {
 public:
  Decimal() = default;  // Zero.

  // Parses JSON number syntax (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
  // Exponents beyond +-100000 are refused (they would make regexes absurd).
  static absl::StatusOr<Decimal> FromString(std::string_view text);
  static Decimal FromInt64(int64_t value);
  static Decimal FromUint64(uint64_t value);
  // The shortest decimal that round-trips to `value` (what the schema author
  // wrote for every literal a double can hold). Non-finite -> error.
  static absl::StatusOr<Decimal> FromDouble(double value);

  bool is_zero() const { return digits_.empty(); }
  bool negative() const { return negative_; }
  bool is_integer() const { return is_zero() || exponent_ >= 0; }
  const std::string& digits() const { return digits_; }
  int64_t exponent() const { return exponent_; }

  Decimal Abs() const;
  Decimal Negated() const;
  // Largest integer <= *this / smallest integer >= *this.
  Decimal Floor() const;
  Decimal Ceil() const;
  // *this + 1 and *this - 1 for integers (used for exclusive integer bounds).
  Decimal PlusOne() const;
  Decimal MinusOne() const;

  // Decimal digits of the integer part ("0" for |x| < 1) and of the fraction
  // (no trailing zeros, "" for integers), of the absolute value.
  std::string IntegerDigits() const;
  std::string FractionDigits() const;
  // Position of the most significant digit: |x| = d.ddd * 10^MagnitudeExponent.
  // Undefined for zero.
  int64_t MagnitudeExponent() const { return exponent_ + static_cast<int64_t>(digits_.size()) - 1; }

  // JSON text in fixed notation when short, scientific otherwise (canonical:
  // equal values give equal text).
  std::string ToString() const;
  // Exact conversion when the value is an integer that fits.
  bool ToInt64(int64_t* out) const;
  double ToDouble() const;

  friend int Compare(const Decimal& a, const Decimal& b);
  friend bool operator==(const Decimal& a, const Decimal& b) { return Compare(a, b) == 0; }
  friend bool operator<(const Decimal& a, const Decimal& b) { return Compare(a, b) < 0; }
  friend bool operator<=(const Decimal& a, const Decimal& b) { return Compare(a, b) <= 0; }
  friend bool operator>(const Decimal& a, const Decimal& b) { return Compare(a, b) > 0; }
  friend bool operator>=(const Decimal& a, const Decimal& b) { return Compare(a, b) >= 0; }

 private:
  static Decimal Make(bool negative, std::string digits, int64_t exponent);
  // Adds one unit to the integer |x| (magnitude), used by the +-1 helpers.
  static std::string IncrementMagnitude(const std::string& integer_digits);
  static std::string DecrementMagnitude(const std::string& integer_digits);

  bool negative_ = false;
  std::string digits_;
  int64_t exponent_ = 0;
};

// Compares |a| and |b|.
int CompareMagnitude(const Decimal& a, const Decimal& b);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_DECIMAL_H_
