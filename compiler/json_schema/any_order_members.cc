#include "compiler/json_schema/any_order_members.h"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace maskd::json_schema {
namespace {

// A member state: which declared keys are written, and how many members
// (capped where counting stops mattering).
struct State {
  std::vector<bool> written;
  uint64_t count = 0;

  std::string Key() const {
    std::string key(written.size() + sizeof(count), '\0');
    for (size_t i = 0; i < written.size(); ++i) key[i] = written[i] ? '1' : '0';
    for (size_t b = 0; b < sizeof(count); ++b) {
      key[written.size() + b] = static_cast<char>((count >> (8 * b)) & 0xff);
    }
    return key;
  }
};

}  // namespace

absl::StatusOr<NonterminalId> AddAnyOrderMembers(GrammarBuilder& builder,
                                                 const AnyOrderMembersSpec& spec) {
  const size_t n = spec.declared.size();
  // Members beyond max(min, max)Properties need no count of their own: past
  // maxProperties nothing may come, past minProperties the count is settled.
  const bool counting = spec.min_properties > 0 || spec.max_properties.has_value();
  const uint64_t cap = counting ? std::max<uint64_t>(1, spec.max_properties ? *spec.max_properties
                                                                            : spec.min_properties)
                                : 1;
  absl::flat_hash_map<std::string, NonterminalId> ids;
  std::deque<State> pending;
  auto nonterminal = [&](const State& s) -> absl::StatusOr<NonterminalId> {
    const std::string key = s.Key();
    if (auto it = ids.find(key); it != ids.end()) return it->second;
    if (ids.size() >= spec.max_states) {
      return absl::ResourceExhaustedError(
          absl::StrCat("any-order properties: ", n, " declared keys need more than ",
                       spec.max_states, " member states (one per set of keys written)"));
    }
    const NonterminalId id = builder.FreshNonterminal(spec.name);
    ids.emplace(key, id);
    pending.push_back(s);
    return id;
  };
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
  State first;
  first.written.assign(n, false);
  absl::StatusOr<NonterminalId> start = nonterminal(first);
  if (!start.ok()) return start.status();
  while (!pending.empty()) {
    const State s = std::move(pending.front());
    pending.pop_front();
    const NonterminalId lhs = ids.at(s.Key());
    // A state with no way forward derives nothing; trimming removes it.
    builder.AddRule(lhs, {spec.nothing});
    bool complete = !counting || s.count >= spec.min_properties;
    for (size_t i = 0; i < n && complete; ++i) {
      if (spec.declared[i].required && !s.written[i]) complete = false;
    }
    if (complete) builder.AddRule(lhs, {spec.close});
    if (spec.max_properties && s.count >= *spec.max_properties) continue;
    const uint64_t next_count = std::min(s.count + 1, cap);
    auto member = [&](Symbol key, Symbol comma_key, Symbol value,
                      const State& next) -> absl::Status {
      absl::StatusOr<NonterminalId> rest = nonterminal(next);
      if (!rest.ok()) return rest.status();
      builder.AddRule(lhs, {s.count > 0 ? comma_key : key, value, Symbol::Nonterminal(*rest)});
      return absl::OkStatus();
    };
    for (size_t i = 0; i < n; ++i) {
      if (s.written[i]) continue;
      State next = s;
      // Only required keys are tracked here; that an optional key comes at
      // most once is the parser's check (LexemeRole::kUniqueKey).
      next.written[i] = spec.declared[i].required;
      next.count = next_count;
      const AnyOrderMembersSpec::Declared& d = spec.declared[i];
      if (absl::Status st = member(d.key, d.comma_key, d.value, next); !st.ok()) return st;
    }
    if (!spec.extras.empty()) {
      State next = s;
      next.count = next_count;
      for (const AnyOrderMembersSpec::Extra& extra : spec.extras) {
        if (absl::Status st = member(extra.key, extra.comma_key, extra.value, next); !st.ok()) {
          return st;
        }
      }
    }
  }
  return *start;
}

}  // namespace maskd::json_schema
