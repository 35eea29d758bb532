// Front end for a list of literal choices: the output is exactly one of them.
#ifndef MASKD_COMPILER_COMPILE_CHOICES_GRAMMAR_H_
#define MASKD_COMPILER_COMPILE_CHOICES_GRAMMAR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar_ir.h"

namespace maskd {

// InvalidArgument for an empty list. The empty string may be a choice.
absl::StatusOr<GrammarIr> BuildChoicesGrammar(const std::vector<std::string>& choices);

// A grammar whose language is exactly the byte strings of `regex` (an
// expression in ir.pool), empty string included if it matches it.
// InvalidArgument "NAME matches nothing" when the language is empty.
absl::Status BuildSingleRegexGrammar(GrammarIr& ir, regex::ExprId regex, std::string_view name);

}  // namespace maskd

#endif  // MASKD_COMPILER_COMPILE_CHOICES_GRAMMAR_H_
