// Reasoning token budget ("think, then constrain", with a cap): a Matcher
// over a grammar compiled with CompileOptions::reasoning_end_marker that
// counts the tokens accepted before the marker and, once `max_tokens` are
// in with the marker not yet complete, forces the whole marker: its masks
// then allow only the (non-special) tokens whose bytes continue the marker,
// and after the marker the grammar's spec applies as usual.
//
// Exactness under the budget: the output so far p is reasoning (no marker
// in it), so p + marker + s is in the language for every s of the spec's
// language, and the first marker occurrence in it is the appended one
// because the marker does not overlap itself (no proper prefix equal to a
// suffix; the factory refuses such markers). A forced token is allowed iff
// its bytes are a non-empty prefix of what remains of the marker and the
// grammar allows it; tokens that would cover the marker's end and go on
// into the spec are not allowed (the budget is a token-level rule: the
// marker ends on a token boundary, as the marker's own token does).
#ifndef MASKD_COMPILER_COMPILE_REASONING_BUDGET_H_
#define MASKD_COMPILER_COMPILE_REASONING_BUDGET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/matcher/matcher.h"

namespace maskd {

struct ReasoningBudget {
  // The grammar's CompileOptions::reasoning_end_marker.
  std::string end_marker;
  // Tokens allowed before the marker is forced (0: forced at once).
  uint32_t max_tokens = 0;
  // Output bytes before the reasoning starts (the grammar's
  // CompileOptions::required_prefix, from token healing): a marker inside
  // them does not end the reasoning, and the marker is forced only once they
  // are out (the tokens carrying them count toward max_tokens, and the one
  // that ends them may carry reasoning bytes too, even with max_tokens 0).
  size_t prefix_bytes = 0;
};

// A matcher over `grammar` (compiled with budget.end_marker as its
// reasoning_end_marker) that enforces the budget. InvalidArgument when the
// marker is empty or overlaps itself.
absl::StatusOr<std::unique_ptr<Matcher>> CreateBudgetedMatcher(
    std::shared_ptr<const CompiledGrammar> grammar, const ReasoningBudget& budget,
    const MatcherOptions& options = {});

}  // namespace maskd

#endif  // MASKD_COMPILER_COMPILE_REASONING_BUDGET_H_
