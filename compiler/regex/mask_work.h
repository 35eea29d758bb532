// MaskWorkScope: one budget for the derivative work that every lazy DFA
// does on this thread while a scope lives -- in practice, while one mask is
// computed.
//
// Why: LazyDfa::Options::max_transition_work bounds one new state, but a
// mask walk over a vocabulary may build thousands of new states, each just
// under that bound. `a?` x 3,000 then `a` x 3,000 is such a pattern once
// each state's own work is cheap: its first mask held a step thread for
// over 30 s. Within a scope, a DFA that would need more than its
// Options::max_mask_work in all fails (status() names max_mask_work), so
// the mask comes back at once with an error instead of stalling.
//
// The count is per thread, so concurrent masks of the same DFA on other
// threads do not share it. Scopes nest: an inner scope joins the outer one.
#ifndef MASKD_COMPILER_REGEX_MASK_WORK_H_
#define MASKD_COMPILER_REGEX_MASK_WORK_H_

#include <cstdint>
#include <optional>

namespace maskd::regex {

class MaskWorkScope {
 public:
  MaskWorkScope();
  ~MaskWorkScope();
  MaskWorkScope(const MaskWorkScope&) = delete;
  MaskWorkScope& operator=(const MaskWorkScope&) = delete;

  // Derivative work used on this thread since the outermost scope began;
  // nullopt outside every scope.
  static std::optional<uint64_t> Used();
  // Adds work done on this thread (no-op outside every scope).
  static void Charge(uint64_t units);
};

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_MASK_WORK_H_
