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
// Definition: with k = h / m, clamp_h(e) replaces every repetition X{lo,hi}
// whose X needs at least m >= 1 bytes by X{min(lo, k + 1), hi > k ?
// unbounded : hi}. At most k iterations fit in h bytes, so within h bytes
// neither a bound beyond k nor its clamped form is ever reached: for
// expressions without And and Not, e and clamp_h(e) have the same members
// and the same prefixes of members among the strings of at most h bytes (by
// induction on e; prefixes of X{lo,hi} do not depend on lo, and need at most
// k + 1 <= hi iterations when hi is beyond k; a subexpression agrees within
// h bytes on its members and prefixes, the empty prefix included, so on
// being empty too). With And or Not the prefix part fails in general (a prefix
// of both sides is not a prefix of their intersection): such a subexpression
// keeps its exact fingerprint (equal languages agree on everything).
//
// One And is clamped all the same: a length counter. For C = P·Y{0,n} (P a
// partial unit, Y a unit of at least one byte: an encoded code point of a
// maxLength) and X without And/Not with the proven fact L(X) ⊆ L(P·Y*)
// (ExprSet::ProveWithin, kept by derivatives), when n >= h +
// CompletionBound(X), And(X, C) agrees with X on strings of at most h bytes:
// a member w of X is in P·Y* and has at most |w| <= h <= n units after P; a
// live prefix w of X has a completion t with |t| <= CompletionBound(X), and
// wt has at most h + |t| <= n units. So the And takes X's fingerprint: the
// positions of a string bounded by both a pattern and a maxLength share
// their walks while the length is far from the bound.
#ifndef MASKD_COMPILER_REGEX_HORIZON_H_
#define MASKD_COMPILER_REGEX_HORIZON_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "compiler/regex/expr_set.h"

namespace maskd::regex {

// A fingerprint of clamp_horizon(e)'s structure: equal fingerprints mean
// equal members and equal prefixes of members among the strings of at most
// `horizon` bytes. Reads the pool only.
// `memo` (optional) keeps the fingerprints of subexpressions, keyed by
// (expression, horizon), between calls on one pool: the states of a lexer
// share most of their subexpressions.
using HorizonMemo = absl::flat_hash_map<uint64_t, Fingerprint>;
Fingerprint HorizonFingerprint(const ExprSet& pool, ExprId e, uint32_t horizon,
                               HorizonMemo* memo = nullptr);

// clamp_h(e) built as an expression: it agrees with e on the members and
// the prefixes of members among the strings of at most `horizon` bytes (the
// same clamping as HorizonFingerprint), and states built from it are shared
// by the positions of a counted string, so a walk from it creates no new
// lexer states per position. `memo` (optional) keeps results by
// (expression, horizon). Adds nodes to the pool, but no byte sets.
using HorizonClampMemo = absl::flat_hash_map<uint64_t, ExprId>;
ExprId HorizonClamp(ExprSet& pool, ExprId e, uint32_t horizon, HorizonClampMemo* memo = nullptr);

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_HORIZON_H_
