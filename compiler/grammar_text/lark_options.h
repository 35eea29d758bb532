// Lark's `%llguidance {...}` grammar options (llguidance's LLGuidanceOptions;
// several directives merge). Honoured: "skip_repetition" ("many", the
// default: %ignore text may repeat between lexemes; "once": one match of the
// %ignore regex is the whole skipped span, so its bounds hold), and the
// defaults "no_forcing": false and "allow_invalid_utf8": false. Refused with
// Unimplemented naming the option: those two set to true (maskd does not
// switch off its forced-token offers per grammar, and its lexemes are valid
// UTF-8) and every other option.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_LARK_OPTIONS_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_LARK_OPTIONS_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace maskd::grammar_text {

struct LlguidanceOptions {
  bool skip_once = false;  // "skip_repetition": "once"
};

// Merges the options of the JSON object `json`, the directive's body at
// text[at] (errors are TextErrors there: InvalidArgument for malformed JSON
// or a value of the wrong type, Unimplemented for an option not honoured).
absl::Status MergeLlguidanceOptions(std::string_view json, std::string_view text, size_t at,
                                    LlguidanceOptions* options);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_LARK_OPTIONS_H_
