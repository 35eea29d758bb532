// Exact regular expressions (ECMA-262 syntax, also valid RE2) for JSON numbers
// whose value lies in a range: what `minimum`/`maximum`/`exclusiveMinimum`/
// `exclusiveMaximum` (and, where a regex can express it, `multipleOf`) lower to.
//
// What is accepted, exactly:
//  * IntegerRangeRegex: every string `-?(0|[1-9][0-9]*)` whose value is in
//    range ("-0" is zero, accepted when zero is). Bounds may be fractional
//    (minimum 2.5 admits 3, 4, ...).
//  * NumberRangeRegex: (a) every fixed-notation JSON number
//    `-?(0|[1-9][0-9]*)(\.[0-9]+)?` whose value is in range (any number of
//    fraction digits, trailing zeros included, "-0.0" is zero), and (b) every
//    number in exponent notation whose mantissa is normalized, i.e.
//    `-?[1-9](\.[0-9]+)?[eE][+-]?[0-9]+` (exponent digits may have leading
//    zeros), plus the zero mantissa `-?0(\.0+)?[eE][+-]?[0-9]+`, whose value is
//    in range. A non-normalized mantissa with an exponent ("12e3", "0.5e1") is
//    never accepted. This covers everything Python's json.dumps (repr of a
//    float: "1e+16", "1.5e-07", "123.25") or JavaScript's JSON.stringify
//    writes. Restricting the mantissa is what makes the language regular:
//    with "12e3" allowed, "digits before the point vs. exponent" would need
//    counting.
// An unbounded side is std::nullopt. An empty range is InvalidArgument.
#ifndef MASKD_COMPILER_JSON_SCHEMA_NUMERIC_REGEX_H_
#define MASKD_COMPILER_JSON_SCHEMA_NUMERIC_REGEX_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/json_schema/decimal.h"

namespace maskd::json_schema {

struct NumericBound {
  Decimal value;
  bool exclusive = false;
};

// Bounds with more than this many significant digit positions (integer plus
// fraction digits of the bound, e.g. 1e-5000) are refused: the regex grows
// linearly with them.
inline constexpr int kMaxBoundDigits = 1000;

absl::StatusOr<std::string> IntegerRangeRegex(const std::optional<NumericBound>& lower,
                                              const std::optional<NumericBound>& upper);

absl::StatusOr<std::string> NumberRangeRegex(const std::optional<NumericBound>& lower,
                                             const std::optional<NumericBound>& upper);

// Integers in range that are multiples of `multiple_of` (a positive number;
// a non-integer divisor d admits the integers that are multiples of d).
// Exact in these cases, Unimplemented (naming multipleOf) otherwise:
//  * multiple_of is 1 (or divides 1, e.g. 0.5): the plain range;
//  * the range holds at most 1000 multiples: they are listed (none: a
//    class that matches nothing);
//  * the range is unbounded on both sides and multiple_of divides 10^n with
//    at most 1000 residues to list (2, 4, 5, 8, 10, 20, 25, 50, 100, ...):
//    divisibility is then decided by the last n digits.
// (Other moduli, e.g. 3 or 7, are regular too but their regex is huge; a
// right-linear grammar over residues is the way to lower them.)
absl::StatusOr<std::string> IntegerMultipleOfRegex(const std::optional<NumericBound>& lower,
                                                   const std::optional<NumericBound>& upper,
                                                   const Decimal& multiple_of);

// The NumberRangeRegex spellings of NON-integer values (what the complement
// of "integer" needs; intersect with a range regex for bounds): a nonzero
// fraction digit in fixed notation, any negative exponent, or a positive
// exponent e <= kMaxNonIntegerExponent with a nonzero mantissa digit past the
// e-th fraction digit. Larger exponents are left out: "more fraction digits
// than the exponent" is not regular without a bound, and no double's
// shortest representation (what json.dumps writes) needs one.
inline constexpr int kMaxNonIntegerExponent = 20;
std::string NonIntegerNumberRegex();

// The exponent-notation spellings, without sign, of integers of magnitude at
// least 10^kLargeIntegerExponent (`1e+16`, `1.5e+16`): what Python's
// json.dumps writes for such floats (it writes smaller ones as `123.0`), and
// what "type": "integer" must accept for them. A normalized mantissa with t
// <= kMaxNonIntegerExponent significant fraction digits and an exponent of at
// least max(t, kLargeIntegerExponent). Intersect with a range regex for bounds.
inline constexpr int kLargeIntegerExponent = 16;
std::string LargeIntegerExponentRegex();

// The NumberRangeRegex spellings of values with at most `places` decimals
// (multipleOf 10^-places; intersect with a range regex for bounds): fixed
// notation with at most `places` fraction digits before trailing zeros, and
// exponent notation whose mantissa has t <= kMaxNonIntegerExponent
// significant fraction digits and whose exponent is at least t - places
// (longer mantissas are left out for the same reason as above).
// InvalidArgument for places outside 1..1000.
absl::StatusOr<std::string> DecimalPlacesRegex(int places);

// The NumberRangeRegex spellings of the multiples of any positive decimal d
// (2.5, 0.25, 20, 0.01; intersect with a range regex for bounds): fixed
// notation whose value times 10^s (s = d's decimals) is an integer multiple
// of A = d * 10^s, and exponent notation for integers of magnitude >= 1e16
// (as LargeIntegerExponentRegex) that are multiples of d, plus zero. Exact
// where A divides a power of ten 10^n with at most 1000 n-digit residues;
// Unimplemented naming multipleOf otherwise (3, 7, 1.5, 13.5), and for
// divisors below 1e-4 that are not powers of ten (their small multiples are
// written in exponent notation). Exponent spellings of values below 1e16
// are left out, as json.dumps writes them in fixed notation (and values
// below 1e-4 are multiples only of divisors that small).
absl::StatusOr<std::string> MultipleOfRegex(const Decimal& multiple_of);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_NUMERIC_REGEX_H_
