// Horizon fingerprints: what an expression says about short strings.
//
// A mask walk below a trie node looks at most `horizon` bytes ahead (the
// height of the node's subtree): it asks, for each string of at most that
// many bytes, whether it is a member of the lexer state's expressions and
// whether it is a prefix of a member. Inside a counted string (`x{0,255}`)
// the counter rarely matters within a token's few bytes, so the walks of
// successive positions are identical; the horizon fingerprint is what lets
// them be shared.
//
// Definition: clamp_h(e) replaces every repetition X{lo,hi} whose X cannot
// match the empty string by X{min(lo, h + 1), hi > h ? unbounded : hi}.
// Each repetition consumes at least a byte, so within h bytes neither a bound
// beyond h nor its clamped form is ever reached: for expressions without And
// and Not, e and clamp_h(e) have the same members and the same prefixes of
// members among the strings of at most h bytes (by induction on e; prefixes
// of X{lo,hi} do not depend on lo, and need fewer than hi iterations when hi
// is beyond h). With And or Not the prefix part fails (a prefix of both
// sides is not a prefix of their intersection), so those are refused.
#ifndef MASKD_COMPILER_REGEX_HORIZON_H_
#define MASKD_COMPILER_REGEX_HORIZON_H_

#include <cstdint>
#include <optional>

#include "compiler/regex/expr_set.h"

namespace maskd::regex {

// A fingerprint of clamp_horizon(e)'s structure (equal fingerprints: equal
// members and prefixes among strings of at most `horizon` bytes), or nullopt
// when e uses And or Not. Reads the pool only.
std::optional<Fingerprint> HorizonFingerprint(const ExprSet& pool, ExprId e, uint32_t horizon);

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_HORIZON_H_
