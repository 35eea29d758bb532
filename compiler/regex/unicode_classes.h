// Unicode property classes for the ECMA-262 front end (\p{..}, \P{..}):
// general categories from utf8proc, plus the binary properties Any, ASCII
// and Assigned. Scripts and other properties are refused by name (utf8proc
// has no script data).
#ifndef MASKD_COMPILER_REGEX_UNICODE_CLASSES_H_
#define MASKD_COMPILER_REGEX_UNICODE_CLASSES_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/regex/expr_set.h"

namespace maskd::regex {

// The code points of the property named by the body of \p{...}: `Lu`,
// `Uppercase_Letter`, `L`, `General_Category=Lu`, `gc=L`, `Any`, `ASCII`,
// `Assigned`. Sorted, merged, surrogates excluded. InvalidArgument naming
// the property when it is unknown or unsupported (e.g. Script=Greek).
absl::StatusOr<std::vector<CodepointRange>> UnicodePropertyRanges(std::string_view name);

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_UNICODE_CLASSES_H_
