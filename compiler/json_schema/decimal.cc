#include "compiler/json_schema/decimal.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace maskd::json_schema {
namespace {

constexpr int64_t kMaxExponent = 100000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Decimal Decimal::Make(bool negative, std::string digits, int64_t exponent) {
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Decimal();
  digits.erase(0, first);
  size_t last = digits.find_last_not_of('0');
  exponent += static_cast<int64_t>(digits.size() - 1 - last);
  digits.erase(last + 1);
  Decimal d;
  d.negative_ = negative;
  d.digits_ = std::move(digits);
  d.exponent_ = exponent;
  return d;
}

absl::StatusOr<Decimal> Decimal::FromString(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  auto bad = [&]() {
    return absl::InvalidArgumentError(absl::StrCat("malformed number \"", std::string(text), "\""));
  };
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  if (i >= text.size() || !IsDigit(text[i])) return bad();
  std::string digits;
  if (text[i] == '0') {
    ++i;
  } else {
    while (i < text.size() && IsDigit(text[i])) digits.push_back(text[i++]);
  }
  int64_t exponent = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || !IsDigit(text[i])) return bad();
    while (i < text.size() && IsDigit(text[i])) {
      digits.push_back(text[i++]);
      --exponent;
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    if (i >= text.size() || !IsDigit(text[i])) return bad();
    int64_t e = 0;
    while (i < text.size() && IsDigit(text[i])) {
      e = e * 10 + (text[i++] - '0');
      if (e > kMaxExponent) {
        return absl::InvalidArgumentError(
            absl::StrCat("number exponent too large in \"", std::string(text), "\""));
      }
    }
    exponent += exp_negative ? -e : e;
  }
  if (i != text.size()) return bad();
  return Make(negative, std::move(digits), exponent);
}

Decimal Decimal::FromUint64(uint64_t value) { return Make(false, std::to_string(value), 0); }

Decimal Decimal::FromInt64(int64_t value) {
  if (value >= 0) return FromUint64(static_cast<uint64_t>(value));
  // Negate in unsigned arithmetic so INT64_MIN does not overflow.
  uint64_t magnitude = ~static_cast<uint64_t>(value) + 1;
  return Make(true, std::to_string(magnitude), 0);
}

absl::StatusOr<Decimal> Decimal::FromDouble(double value) {
  if (!std::isfinite(value)) return absl::InvalidArgumentError("non-finite number");
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return absl::InternalError("to_chars failed");
  std::string_view text(buffer, end - buffer);
  // to_chars writes e.g. "1e+30" and "1.5e-07", which FromString accepts,
  // except that it may omit the integer digit in no case; it never writes "inf".
  return FromString(text);
}

Decimal Decimal::Abs() const {
  Decimal d = *this;
  d.negative_ = false;
  return d;
}

Decimal Decimal::Negated() const {
  Decimal d = *this;
  if (!d.is_zero()) d.negative_ = !d.negative_;
  return d;
}

std::string Decimal::IntegerDigits() const {
  if (is_zero()) return "0";
  if (exponent_ >= 0) return digits_ + std::string(static_cast<size_t>(exponent_), '0');
  int64_t int_len = static_cast<int64_t>(digits_.size()) + exponent_;
  if (int_len <= 0) return "0";
  return digits_.substr(0, static_cast<size_t>(int_len));
}

std::string Decimal::FractionDigits() const {
  if (is_zero() || exponent_ >= 0) return "";
  int64_t int_len = static_cast<int64_t>(digits_.size()) + exponent_;
  if (int_len >= 0) return digits_.substr(static_cast<size_t>(int_len));
  return std::string(static_cast<size_t>(-int_len), '0') + digits_;
}

std::string Decimal::IncrementMagnitude(const std::string& integer_digits) {
  std::string s = integer_digits;
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && s[i] == '9') s[i--] = '0';
  if (i < 0) return "1" + s;
  ++s[i];
  return s;
}

std::string Decimal::DecrementMagnitude(const std::string& integer_digits) {
  // Precondition: integer_digits > 0.
  std::string s = integer_digits;
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && s[i] == '0') s[i--] = '9';
  if (i >= 0) --s[i];
  return s;
}

Decimal Decimal::Floor() const {
  if (is_integer()) return *this;
  Decimal truncated = Make(negative_, IntegerDigits(), 0);
  if (!negative_) return truncated;
  return Make(true, IncrementMagnitude(IntegerDigits()), 0);
}

Decimal Decimal::Ceil() const { return Negated().Floor().Negated(); }

Decimal Decimal::PlusOne() const {
  // Precondition: is_integer().
  if (!negative_) return Make(false, IncrementMagnitude(IntegerDigits()), 0);
  return Make(true, DecrementMagnitude(IntegerDigits()), 0);
}

Decimal Decimal::MinusOne() const { return Negated().PlusOne().Negated(); }

int CompareMagnitude(const Decimal& a, const Decimal& b) {
  if (a.is_zero() || b.is_zero()) return (a.is_zero() ? 0 : 1) - (b.is_zero() ? 0 : 1);
  int64_t ma = a.MagnitudeExponent(), mb = b.MagnitudeExponent();
  if (ma != mb) return ma < mb ? -1 : 1;
  // Same magnitude: compare digit strings left-aligned.
  int c = a.digits().compare(b.digits());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int Compare(const Decimal& a, const Decimal& b) {
  if (a.negative_ != b.negative_) return a.negative_ ? -1 : 1;
  int c = CompareMagnitude(a, b);
  return a.negative_ ? -c : c;
}

std::string Decimal::ToString() const {
  if (is_zero()) return "0";
  std::string out = negative_ ? "-" : "";
  int64_t magnitude = MagnitudeExponent();
  if (magnitude >= -6 && magnitude <= 20) {
    out += IntegerDigits();
    std::string fraction = FractionDigits();
    if (!fraction.empty()) absl::StrAppend(&out, ".", fraction);
    return out;
  }
  out.push_back(digits_[0]);
  if (digits_.size() > 1) absl::StrAppend(&out, ".", digits_.substr(1));
  absl::StrAppend(&out, "e", magnitude);
  return out;
}

bool Decimal::ToInt64(int64_t* out) const {
  if (!is_integer()) return false;
  if (is_zero()) {
    *out = 0;
    return true;
  }
  if (MagnitudeExponent() > 18) return false;  // |x| >= 1e19 > INT64_MAX.
  std::string s = IntegerDigits();
  uint64_t magnitude = 0;
  for (char c : s) magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  if (!negative_) {
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(magnitude);
    return true;
  }
  if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return false;
  *out = static_cast<int64_t>(~magnitude + 1);
  return true;
}

double Decimal::ToDouble() const { return std::strtod(ToString().c_str(), nullptr); }

}  // namespace maskd::json_schema
