// Number literals simdjson's DOM cannot hold exactly, kept exact.
//
// The DOM holds a number as an int64, a uint64 or a double: an integer below
// -2^63 or from 2^64 on is not parsed at all ("not valid JSON"), and a
// fraction with more significant digits than a double holds (0.1000000000000000000001)
// or out of its range (1e400) becomes another value. A schema's numbers are
// bounds, multipleOf divisors and const/enum values, which must be exact. So,
// before parsing, each such literal (outside strings) is replaced by a string
// of a sentinel no schema can spell (a per-process random nonce) and its
// index, and the keyword readers ask Lookup() for the exact value.
#ifndef MASKD_COMPILER_JSON_SCHEMA_EXACT_NUMBERS_H_
#define MASKD_COMPILER_JSON_SCHEMA_EXACT_NUMBERS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/json_schema/decimal.h"

namespace maskd::json_schema {

class ExactNumbers {
 public:
  // `text` with the literals the DOM would not hold exactly replaced (their
  // values kept here, so one ExactNumbers serves several documents).
  // Malformed literals stay as written, for the JSON parser to report.
  std::string Protect(std::string_view text);
  // The exact value of the literal a decoded string stands for, or nullopt
  // when it is an ordinary string.
  std::optional<Decimal> Lookup(std::string_view decoded) const;

 private:
  std::vector<Decimal> values_;
};

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_EXACT_NUMBERS_H_
