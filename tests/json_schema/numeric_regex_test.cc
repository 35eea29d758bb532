// Brute-force checks of the numeric range regexes against an exact oracle
// (Decimal comparison), matching with RE2.
#include "compiler/json_schema/numeric_regex.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace maskd::json_schema {
namespace {

using Bound = std::optional<NumericBound>;

Decimal DecimalOf(const std::string& s) { return *Decimal::FromString(s); }

bool InRange(const Decimal& v, const Bound& lo, const Bound& hi) {
  if (lo) {
    int c = Compare(v, lo->value);
    if (c < 0 || (c == 0 && lo->exclusive)) return false;
  }
  if (hi) {
    int c = Compare(v, hi->value);
    if (c > 0 || (c == 0 && hi->exclusive)) return false;
  }
  return true;
}

std::string Describe(const Bound& lo, const Bound& hi) {
  return absl::StrCat(lo ? (lo->exclusive ? "(" : "[") : "(", lo ? lo->value.ToString() : "-inf",
                      ", ", hi ? hi->value.ToString() : "inf",
                      hi ? (hi->exclusive ? ")" : "]") : ")");
}

// Python's repr of a float in exponent form: mantissa digits, 'e', sign, at
// least two exponent digits ("1e-05", "1.5e+20").
std::string PythonScientific(const Decimal& v) {
  const std::string& d = v.digits();
  std::string out = v.negative() ? "-" : "";
  out += d.substr(0, 1);
  if (d.size() > 1) absl::StrAppend(&out, ".", d.substr(1));
  int64_t e = v.MagnitudeExponent();
  absl::StrAppend(&out, "e", e < 0 ? "-" : "+", absl::StrFormat("%02d", e < 0 ? -e : e));
  return out;
}

std::vector<Bound> Bounds(const std::vector<std::string>& values) {
  std::vector<Bound> out = {std::nullopt};
  for (const std::string& v : values) {
    out.push_back(NumericBound{DecimalOf(v), false});
    out.push_back(NumericBound{DecimalOf(v), true});
  }
  return out;
}

TEST(IntegerRangeRegexTest, MatchesExactlyTheIntegersInRange) {
  std::vector<std::string> candidates = {"-0"};
  for (int i = -1200; i <= 1200; ++i) candidates.push_back(std::to_string(i));
  const std::vector<Bound> bounds =
      Bounds({"-1000", "-101", "-99", "-10", "-9.5", "-1", "0", "0.5", "1", "7", "9", "10", "19",
              "99", "100", "101", "109", "990", "1000"});
  int checked_ranges = 0;
  for (const Bound& lo : bounds) {
    for (const Bound& hi : bounds) {
      bool any = false;
      for (const std::string& c : candidates) any = any || InRange(DecimalOf(c), lo, hi);
      absl::StatusOr<std::string> re = IntegerRangeRegex(lo, hi);
      if (!any) {
        EXPECT_FALSE(re.ok()) << Describe(lo, hi) << " gave " << *re;
        continue;
      }
      ASSERT_TRUE(re.ok()) << Describe(lo, hi) << ": " << re.status();
      RE2 compiled(*re);
      ASSERT_TRUE(compiled.ok()) << *re;
      for (const std::string& c : candidates) {
        ASSERT_EQ(RE2::FullMatch(c, compiled), InRange(DecimalOf(c), lo, hi))
            << c << " in " << Describe(lo, hi) << " regex " << *re;
      }
      for (const char* bad : {"01", "-01", "1.0", "1e2", "+1", "", "-", "00"}) {
        ASSERT_FALSE(RE2::FullMatch(bad, compiled)) << bad << " regex " << *re;
      }
      ++checked_ranges;
    }
  }
  EXPECT_GT(checked_ranges, 700);
}

TEST(IntegerRangeRegexTest, HugeBoundsBeyondInt64) {
  const std::vector<std::string> edges = {"9223372036854775807", "-9223372036854775808",
                                          "18446744073709551615", "100000000000000000000"};
  for (const std::string& e : edges) {
    Decimal edge = DecimalOf(e);
    for (bool exclusive : {false, true}) {
      for (int side = 0; side < 2; ++side) {
        Bound lo, hi;
        (side == 0 ? lo : hi) = NumericBound{edge, exclusive};
        absl::StatusOr<std::string> re = IntegerRangeRegex(lo, hi);
        ASSERT_TRUE(re.ok()) << re.status();
        RE2 compiled(*re);
        ASSERT_TRUE(compiled.ok());
        // Candidates: edge +- k for small k, and values far on both sides.
        std::vector<Decimal> values = {DecimalOf("0"), DecimalOf("1"), DecimalOf("-1"),
                                       DecimalOf("1e25"), DecimalOf("-1e25")};
        Decimal up = edge, down = edge;
        for (int k = 0; k < 30; ++k) {
          values.push_back(up);
          values.push_back(down);
          up = up.PlusOne();
          down = down.MinusOne();
        }
        for (const Decimal& v : values) {
          std::string text = (v.negative() ? "-" : "") + v.IntegerDigits();
          ASSERT_EQ(RE2::FullMatch(text, compiled), InRange(v, lo, hi))
              << text << " in " << Describe(lo, hi);
        }
      }
    }
  }
}

TEST(NumberRangeRegexTest, MatchesFixedNotationWithUpToThreeFractionDigits) {
  std::vector<std::string> candidates = {"-0", "-0.0", "0.000", "1.500", "-2.50", "0.0010"};
  for (int i = -3000; i <= 3000; ++i) {
    // i / 1000 written in shortest fixed notation.
    Decimal v = *Decimal::FromString(absl::StrCat(i < 0 ? "-" : "", std::abs(i) / 1000, ".",
                                                  absl::StrFormat("%03d", std::abs(i) % 1000)));
    std::string text = (v.negative() ? "-" : "") + v.IntegerDigits();
    if (!v.FractionDigits().empty()) absl::StrAppend(&text, ".", v.FractionDigits());
    candidates.push_back(text);
  }
  for (int i = -480; i <= 480; ++i) {
    candidates.push_back(absl::StrFormat("%.2f", i * 0.25));
  }
  const std::vector<Bound> bounds = Bounds(
      {"-100", "-2.5", "-1", "-0.125", "0", "0.001", "0.5", "0.999", "1", "2.75", "10", "99.99"});
  for (const Bound& lo : bounds) {
    for (const Bound& hi : bounds) {
      if (lo && hi &&
          (Compare(lo->value, hi->value) > 0 ||
           (lo->value == hi->value && (lo->exclusive || hi->exclusive)))) {
        EXPECT_FALSE(NumberRangeRegex(lo, hi).ok()) << Describe(lo, hi);
        continue;
      }
      absl::StatusOr<std::string> re = NumberRangeRegex(lo, hi);
      ASSERT_TRUE(re.ok()) << Describe(lo, hi) << ": " << re.status();
      RE2 compiled(*re);
      ASSERT_TRUE(compiled.ok()) << *re;
      for (const std::string& c : candidates) {
        ASSERT_EQ(RE2::FullMatch(c, compiled), InRange(DecimalOf(c), lo, hi))
            << c << " in " << Describe(lo, hi) << " regex " << *re;
      }
      for (const char* bad : {"01", "1.", ".5", "+1", "", "-", "1.5.2", "0x1"}) {
        ASSERT_FALSE(RE2::FullMatch(bad, compiled)) << bad << " regex " << *re;
      }
    }
  }
}

TEST(NumberRangeRegexTest, AcceptsPythonExponentFormsInRange) {
  std::vector<std::string> values = {"1e-5",   "9.9e-6",  "1.5e-7", "1e16",      "1e20",
                                     "1.5e20", "9.99e19", "1e21",   "1.0001e20", "2.5e-300",
                                     "1e300",  "7e-1",    "3e0",    "1.25e2",    "5e-324"};
  std::vector<Decimal> decimals;
  for (const std::string& v : values) {
    decimals.push_back(DecimalOf(v));
    decimals.push_back(DecimalOf(v).Negated());
  }
  const std::vector<Bound> bounds =
      Bounds({"-1e20", "-1", "0", "1e-5", "0.7", "3", "125", "1e16", "1e20", "1.5e20"});
  for (const Bound& lo : bounds) {
    for (const Bound& hi : bounds) {
      absl::StatusOr<std::string> re = NumberRangeRegex(lo, hi);
      if (!re.ok()) continue;  // Empty ranges: covered above.
      RE2 compiled(*re);
      ASSERT_TRUE(compiled.ok()) << *re;
      for (const Decimal& v : decimals) {
        const bool expected = InRange(v, lo, hi);
        std::string python = PythonScientific(v);
        ASSERT_EQ(RE2::FullMatch(python, compiled), expected)
            << python << " in " << Describe(lo, hi) << " regex " << *re;
        // Other normalized spellings: 'E', no '+', extra leading zeros.
        std::string plain = python;
        for (char& ch : plain) {
          if (ch == 'e') ch = 'E';
        }
        ASSERT_EQ(RE2::FullMatch(plain, compiled), expected) << plain << " " << *re;
        // Non-normalized mantissas are never accepted (documented restriction).
        ASSERT_FALSE(RE2::FullMatch(absl::StrCat(v.negative() ? "-" : "", "10e5"), compiled));
      }
      for (const char* zero : {"0e0", "0.0E+5", "-0e-3"}) {
        ASSERT_EQ(RE2::FullMatch(zero, compiled), InRange(Decimal(), lo, hi)) << zero << *re;
      }
    }
  }
}

TEST(NumberRangeRegexTest, UnboundedAcceptsAllJsonNumbers) {
  absl::StatusOr<std::string> re = NumberRangeRegex(std::nullopt, std::nullopt);
  ASSERT_TRUE(re.ok());
  RE2 compiled(*re);
  for (const char* good : {"0", "-0", "12.5", "-1e+20", "3.25E-7", "100", "0.000"}) {
    EXPECT_TRUE(RE2::FullMatch(good, compiled)) << good;
  }
}

TEST(NumberRangeRegexTest, RefusesAbsurdBounds) {
  EXPECT_EQ(
      NumberRangeRegex(NumericBound{DecimalOf("1e-5000"), false}, std::nullopt).status().code(),
      absl::StatusCode::kUnimplemented);
}

TEST(IntegerMultipleOfRegexTest, ExactWhereSupported) {
  std::vector<std::string> candidates;
  for (int i = -1100; i <= 1100; ++i) candidates.push_back(std::to_string(i));
  struct Case {
    Bound lo, hi;
    std::string multiple;
  };
  std::vector<Case> cases = {
      {std::nullopt, std::nullopt, "5"},
      {std::nullopt, std::nullopt, "4"},
      {std::nullopt, std::nullopt, "25"},
      {std::nullopt, std::nullopt, "8"},
      {std::nullopt, std::nullopt, "0.5"},
      {std::nullopt, std::nullopt, "2.5"},
      {NumericBound{DecimalOf("-30"), false}, NumericBound{DecimalOf("1000"), true}, "7"},
      {NumericBound{DecimalOf("0"), true}, NumericBound{DecimalOf("100"), false}, "11"},
      {NumericBound{DecimalOf("-1000"), false}, NumericBound{DecimalOf("1000"), false}, "3"},
      // No multiple in range: a regex that matches nothing, not an error.
      {NumericBound{DecimalOf("1"), false}, NumericBound{DecimalOf("1.5"), false}, "2"},
  };
  for (const Case& c : cases) {
    Decimal m = DecimalOf(c.multiple);
    absl::StatusOr<std::string> re = IntegerMultipleOfRegex(c.lo, c.hi, m);
    ASSERT_TRUE(re.ok()) << c.multiple << ": " << re.status();
    RE2 compiled(*re);
    ASSERT_TRUE(compiled.ok()) << *re;
    for (const std::string& s : candidates) {
      int64_t v = std::stoll(s);
      // v is a multiple of m = digits * 10^e iff v * 10^-e % digits == 0.
      int64_t scaled = v, divisor = std::stoll(m.digits());
      for (int64_t e = m.exponent(); e < 0; ++e) scaled *= 10;
      for (int64_t e = 0; e < m.exponent(); ++e) divisor *= 10;
      bool expected = scaled % divisor == 0 && InRange(DecimalOf(s), c.lo, c.hi);
      ASSERT_EQ(RE2::FullMatch(s, compiled), expected) << s << " multipleOf " << c.multiple;
    }
  }
  EXPECT_EQ(IntegerMultipleOfRegex(std::nullopt, std::nullopt, DecimalOf("7")).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(
      IntegerMultipleOfRegex(NumericBound{DecimalOf("0"), false}, std::nullopt, DecimalOf("3"))
          .status()
          .code(),
      absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace maskd::json_schema

namespace maskd::json_schema {
namespace {

// Every mantissa/exponent spelling of small values, against the value's
// integrality (Decimal::is_integer) as the oracle.
TEST(NonIntegerNumberRegexTest, MatchesExactlyTheNonIntegerSpellings) {
  RE2 re(NonIntegerNumberRegex());
  ASSERT_TRUE(re.ok()) << re.error();
  const std::vector<std::string> fixed = {"0",    "7",    "12",   "0.5", "0.50", "3.0",
                                          "3.00", "3.25", "10.1", "100", "0.05", "12.5"};
  int checked = 0;
  for (const std::string& f : fixed) {
    for (const char* sign : {"", "-"}) {
      const std::string s = std::string(sign) + f;
      EXPECT_EQ(RE2::FullMatch(s, re), !DecimalOf(s).is_integer()) << s;
      ++checked;
    }
  }
  const std::vector<std::string> mantissas = {
      "1", "2.5", "1.25", "9.999", "1.0", "1.50", "1.000000000000000000001"};
  for (const std::string& m : mantissas) {
    for (int e = -4; e <= 22; ++e) {
      for (const char* e_sign : {"", "+"}) {
        if (e < 0 && *e_sign) continue;
        for (const std::string& digits :
             {std::to_string(e < 0 ? -e : e), absl::StrFormat("%02d", e < 0 ? -e : e)}) {
          const std::string s = absl::StrCat(m, "e", e < 0 ? "-" : e_sign, digits);
          const bool non_integer = !DecimalOf(s).is_integer();
          // Positive exponents above the bound are outside the language.
          EXPECT_EQ(RE2::FullMatch(s, re), non_integer && e <= kMaxNonIntegerExponent) << s;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_FALSE(RE2::FullMatch("0e-5", re));   // Zero is an integer.
  EXPECT_FALSE(RE2::FullMatch("12e-1", re));  // Not a normalized mantissa.
}

}  // namespace
}  // namespace maskd::json_schema

namespace maskd::json_schema {
namespace {

// Fixed and exponent spellings of small values against "value * 10^places is
// an integer" (Decimal arithmetic) as the oracle.
TEST(DecimalPlacesRegexTest, MatchesExactlyTheMultiplesOfAPowerOfTenFraction) {
  for (int places : {1, 2, 4}) {
    absl::StatusOr<std::string> pattern = DecimalPlacesRegex(places);
    ASSERT_TRUE(pattern.ok()) << pattern.status();
    RE2 re(*pattern);
    ASSERT_TRUE(re.ok()) << re.error();
    auto multiple = [&](const std::string& s) {
      const Decimal v = DecimalOf(s);
      return v.is_zero() || v.exponent() >= -places;
    };
    int checked = 0;
    for (const char* f :
         {"0", "7", "120", "0.5", "0.25", "0.250", "1.125", "3.00001", "0.0001", "12.5", "0.00"}) {
      for (const char* sign : {"", "-"}) {
        const std::string s = std::string(sign) + f;
        EXPECT_EQ(RE2::FullMatch(s, re), multiple(s)) << places << " " << s;
        ++checked;
      }
    }
    for (const char* m : {"1", "2.5", "1.25", "9.999", "1.50", "1.0001", "0", "0.0"}) {
      for (int e = -6; e <= 6; ++e) {
        for (const std::string& digits :
             {std::to_string(e < 0 ? -e : e), absl::StrFormat("%02d", e < 0 ? -e : e)}) {
          const std::string s = absl::StrCat(m, "e", e < 0 ? "-" : "+", digits);
          EXPECT_EQ(RE2::FullMatch(s, re), multiple(s)) << places << " " << s;
          ++checked;
        }
      }
    }
    EXPECT_GT(checked, 200);
  }
  EXPECT_FALSE(DecimalPlacesRegex(0).ok());
}

}  // namespace
}  // namespace maskd::json_schema

namespace maskd::json_schema {
namespace {

// x is a multiple of d iff x * 10^k / (d * 10^k) is an integer for k large
// enough to make both integers: computed on the Decimal digits in 128 bits,
// independently of the regex's last-digits argument.
// x's scaled value is reduced modulo d's as it is built, so values like
// 1e18 scaled by 10^k never overflow (d's scaled value is small).
bool IsMultiple(const Decimal& x, const Decimal& d) {
  if (x.is_zero()) return true;
  const int64_t k = std::max<int64_t>({0, -x.exponent(), -d.exponent()});
  unsigned __int128 divisor = 0;
  for (char c : d.digits()) divisor = divisor * 10 + static_cast<unsigned>(c - '0');
  for (int64_t e = 0; e < d.exponent() + k; ++e) divisor *= 10;
  unsigned __int128 rest = 0;
  for (char c : x.digits()) rest = (rest * 10 + static_cast<unsigned>(c - '0')) % divisor;
  for (int64_t e = 0; e < x.exponent() + k; ++e) rest = rest * 10 % divisor;
  return rest == 0;
}

// Fixed spellings of every multiple of 0.05 in [-60, 60] (trailing zeros
// too) and exponent spellings around 1e16-1e18, against IsMultiple.
TEST(MultipleOfRegexTest, MatchesExactlyTheMultiples) {
  std::vector<std::string> candidates;
  for (int i = -1200; i <= 1200; ++i) {
    const std::string v =
        absl::StrCat(i / 20, ".", absl::Dec(std::abs(i % 20) * 5, absl::kZeroPad2));
    const std::string sign = i < 0 && i / 20 == 0 ? "-" : "";
    candidates.push_back(sign + v);
    candidates.push_back(sign + v + "0");
    if (i % 20 == 0) candidates.push_back(absl::StrCat(i / 20));
  }
  for (const char* e : {"1e+16", "2e+16", "2.5e+16", "1.5e+16", "1.25e+17", "1.2e+16", "5e+17",
                        "1.0000000000000002e+16", "1.0000000000000005e+16", "4.2e+16", "-2.5e+16",
                        "7.5E16", "2.000000000000001e+17", "0e0", "1e+300"}) {
    candidates.push_back(e);
  }
  int multiples = 0;
  for (const char* d : {"2.5", "0.25", "0.5", "20", "5", "0.2", "12.5", "0.04", "1"}) {
    absl::StatusOr<std::string> re = MultipleOfRegex(DecimalOf(d));
    ASSERT_TRUE(re.ok()) << d << ": " << re.status();
    RE2 compiled(*re);
    ASSERT_TRUE(compiled.ok()) << *re;
    for (const std::string& s : candidates) {
      const bool expected = IsMultiple(DecimalOf(s), DecimalOf(d));
      multiples += expected;
      ASSERT_EQ(RE2::FullMatch(s, compiled), expected) << s << " multipleOf " << d << "\n" << *re;
    }
  }
  EXPECT_GT(multiples, 1000);
  for (const char* d : {"3", "1.5", "13.5", "0.00025", "7e-20"}) {
    EXPECT_EQ(MultipleOfRegex(DecimalOf(d)).status().code(), absl::StatusCode::kUnimplemented) << d;
  }
}

}  // namespace
}  // namespace maskd::json_schema
