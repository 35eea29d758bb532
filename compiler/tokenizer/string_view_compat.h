// Debian's Abseil is built with its own absl::string_view (not an alias of
// std::string_view), so std::string_view arguments to StrCat, StrReplaceAll
// and hash-map lookups go through this conversion.
#ifndef MASKD_COMPILER_TOKENIZER_STRING_VIEW_COMPAT_H_
#define MASKD_COMPILER_TOKENIZER_STRING_VIEW_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace maskd::tokenizer_internal {

inline absl::string_view AbslView(std::string_view text) { return {text.data(), text.size()}; }

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_STRING_VIEW_COMPAT_H_
