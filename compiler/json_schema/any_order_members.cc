#include "compiler/json_schema/any_order_members.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace maskd::json_schema {

absl::StatusOr<NonterminalId> AddAnyOrderMembers(GrammarBuilder& builder,
                                                 const AnyOrderMembersSpec& spec) {
  const size_t n = spec.declared.size();
  const uint64_t required = static_cast<uint64_t>(std::count_if(
      spec.declared.begin(), spec.declared.end(), [](const auto& d) { return d.required; }));
  // Members beyond max(min, max)Properties need no count of their own: past
  // maxProperties nothing may come, past minProperties the count is settled.
  const bool counting = spec.min_properties > 0 || spec.max_properties.has_value();
  const uint64_t cap = counting ? std::max<uint64_t>(1, spec.max_properties ? *spec.max_properties
                                                                            : spec.min_properties)
                                : 1;
  // State (r, c, f): r required keys and c members (capped) written, the
  // witnesses in f seen. Since the parser lets no key come twice,
  // r == required means all are present.
  const uint64_t flags = uint64_t{1} << spec.witnesses;
  const uint64_t per_flag = (required + 1) * (cap + 1);
  const uint64_t states = per_flag * flags;
  if (states > spec.max_states) {
    return absl::ResourceExhaustedError(
        absl::StrCat("any-order properties: ", required, " required keys and member counts up to ",
                     cap, " need ", states, " member states (at most ", spec.max_states, ")"));
  }
  // Distinct keys are finite without other keys: fewer than minProperties
  // of them leave no instance (the grammar alone would repeat a key).
  const bool other_keys = std::any_of(spec.extras.begin(), spec.extras.end(),
                                      [](const auto& e) { return e.key.is_lexeme(); });
  const size_t usable =
      static_cast<size_t>(std::count_if(spec.declared.begin(), spec.declared.end(),
                                        [&](const auto& d) { return d.value != spec.nothing; }));
  if (!other_keys && spec.min_properties > usable) {
    const NonterminalId none = builder.FreshNonterminal(spec.name);
    builder.AddRule(none, {spec.nothing});
    return none;
  }
  constexpr NonterminalId kUnset = ~NonterminalId{0};
  std::vector<NonterminalId> ids(states, kUnset);
  auto state = [&](uint64_t r, uint64_t c, uint64_t f) {
    NonterminalId& id = ids[f * per_flag + r * (cap + 1) + c];
    if (id == kUnset) id = builder.FreshNonterminal(spec.name);
    return id;
  };
  for (uint64_t f = 0; f < flags; ++f) {
    for (uint64_t r = 0; r <= required; ++r) {
      for (uint64_t c = 0; c <= cap; ++c) {
        // Only reachable states: c counts members, r of them required keys.
        if (r > c && !(c == cap && r <= required)) continue;
        const NonterminalId lhs = state(r, c, f);
        // A state with no way forward derives nothing; trimming removes it.
        builder.AddRule(lhs, {spec.nothing});
        if (r == required && (!counting || c >= spec.min_properties) && f == flags - 1) {
          builder.AddRule(lhs, {spec.close});
        }
        if (spec.max_properties && c >= *spec.max_properties) continue;
        const uint64_t next_c = std::min(c + 1, cap);
        for (size_t i = 0; i < n; ++i) {
          const AnyOrderMembersSpec::Declared& d = spec.declared[i];
          // An optional key keeps r; that it comes at most once is the
          // parser's check (LexemeRole::kUniqueKey), as for required keys.
          if (d.required && r == required) continue;
          const NonterminalId next = state(d.required ? r + 1 : r, next_c, f);
          builder.AddRule(lhs, {c > 0 ? d.comma_key : d.key, d.value, Symbol::Nonterminal(next)});
        }
        for (const AnyOrderMembersSpec::Extra& e : spec.extras) {
          builder.AddRule(lhs, {c > 0 ? e.comma_key : e.key, e.value,
                                Symbol::Nonterminal(state(r, next_c, f | e.witnesses))});
        }
      }
    }
  }
  return state(0, 0, 0);
}

}  // namespace maskd::json_schema
