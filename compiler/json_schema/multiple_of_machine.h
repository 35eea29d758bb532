// The JSON number spellings whose value is (or is not) a multiple of a
// decimal divisor, as a regex::ByteMachine: exact for every divisor
// d = A * 10^-s (A a positive integer, s decimals), where MultipleOfRegex
// only handles the A that divide a power of ten.
//
// What is accepted, exactly: the spellings NumberRangeRegex accepts
// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?` and the normalized exponent forms
// `-?[1-9](\.[0-9]+)?[eE][+-]?[0-9]+`, `-?0(\.0+)?[eE][+-]?[0-9]+`), except
// exponent forms whose mantissa has more than kMaxNonIntegerExponent (20)
// significant fraction digits (no double's shortest spelling has more than
// 16), whose value is a multiple of d (`multiples`) or is not. Every
// exponent spelling counts (`3e+16`, `3e3` and `3.0e0` are multiples of 3).
//
// How: value * 10^s must be an integer that A divides. Fixed notation keeps
// the digits read so far modulo A (fraction digits past the s-th must be
// zeros). An exponent form M * 10^(e - t) (M the mantissa's significant
// digits, t its significant fraction digits, M not divisible by 10) is a
// multiple iff e >= t - s + J(M mod A), J(r) being the least j >= 0 with A |
// r * 10^j (none when A's factors other than 2 and 5 do not divide r): the
// machine keeps (M mod A, t, zeros not yet known to be significant) in the
// mantissa, then that threshold while it reads the exponent.
#ifndef MASKD_COMPILER_JSON_SCHEMA_MULTIPLE_OF_MACHINE_H_
#define MASKD_COMPILER_JSON_SCHEMA_MULTIPLE_OF_MACHINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "compiler/json_schema/decimal.h"
#include "compiler/regex/byte_machine.h"

namespace maskd::json_schema {

// Divisors are refused (Unimplemented naming multipleOf) when A exceeds this
// or when s exceeds kMaxMultipleOfDecimals. Why 2500 (2.125 is A = 2125): a
// walk over digit tokens makes a lexer state per remainder reached, and each
// needs an emptiness check of And(range, machine); measured first masks: A =
// 997 12 ms, 9973 45 ms, 99991 ran out of the check's budget (the sequence
// failed).
inline constexpr uint64_t kMaxMultipleOfModulus = 2500;
inline constexpr int kMaxMultipleOfDecimals = 20;

// `multiples`: the spellings of multiples of d; otherwise those of the
// numbers that are not multiples of d. InvalidArgument for d <= 0.
absl::StatusOr<std::shared_ptr<const regex::ByteMachine>> MultipleOfMachine(const Decimal& d,
                                                                            bool multiples);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_MULTIPLE_OF_MACHINE_H_
