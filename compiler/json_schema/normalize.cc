#include "compiler/json_schema/normalize.h"

#include "compiler/json_schema/normalizer.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/pattern_match.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {
namespace {

std::string At(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

// ValueMatchesLocally without the enum membership test. A pattern the ECMA
// engine cannot evaluate counts as matching, and its error goes to
// `undecided` (when given): the caller must not rely on the answer.
bool MatchesScalarConstraints(const SchemaNode& n, const JsonValue& value,
                              std::string* undecided = nullptr);

uint64_t CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Whether value / divisor is an integer; nullopt when too large to tell.
std::optional<bool> IsMultipleOf(const Decimal& value, const Decimal& divisor) {
  if (value.is_zero()) return true;
  if (divisor.digits().size() > 18) return std::nullopt;
  uint64_t d = std::stoull(divisor.digits());
  int64_t shift = value.exponent() - divisor.exponent();
  if (shift < 0) return false;  // value.digits has no trailing zeros to absorb 10^-shift.
  if (shift > 100000) return std::nullopt;
  unsigned __int128 r = 0;
  for (char c : value.digits()) r = (r * 10 + static_cast<unsigned>(c - '0')) % d;
  for (int64_t i = 0; i < shift; ++i) r = (r * 10) % d;
  return r == 0;
}

bool InBounds(const SchemaNode& n, const Decimal& v) {
  if (n.minimum) {
    int c = Compare(v, n.minimum->value);
    if (c < 0 || (c == 0 && n.minimum->exclusive)) return false;
  }
  if (n.maximum) {
    int c = Compare(v, n.maximum->value);
    if (c > 0 || (c == 0 && n.maximum->exclusive)) return false;
  }
  return true;
}

TypeSet EffectiveTypes(const SchemaNode& n) {
  if (!n.enum_values) return n.types;
  TypeSet t = 0;
  for (const JsonValue& v : *n.enum_values) t |= TypeOf(v);
  return n.types & t;
}

// True when the node has no constraint besides its all_of list.
bool OnlyAllOf(const SchemaNode& n) {
  return !n.HasOwnConstraints() && n.any_of.empty() && n.one_of.empty() &&
         n.not_schema == kNoNode && n.if_schema == kNoNode && n.unsupported.empty();
}

}  // namespace

absl::Status Normalizer::Run() {
  if (absl::Status st = ResolveAliases(); !st.ok()) return st;
  for (size_t i = 2; i < s_.nodes.size(); ++i) {
    if (absl::Status st = Flatten(static_cast<NodeId>(i), 0); !st.ok()) return st;
  }
  nodes_before_expansion_ = s_.nodes.size();
  if (rewrite_combinators_) {
    if (absl::Status st = ExpandReachable(); !st.ok()) return st;
  }
  PropagateEmptiness();
  // A root that matches nothing (`false`, contradictions) is a valid schema
  // with an empty language: lowering gives it a grammar that allows nothing.
  MarkDisjointOneOfs();
  return absl::OkStatus();
}

// oneOf lists expansion could not rewrite (it rewrites every reachable one):
// marked for lowering, which treats disjoint ones as anyOf.
void Normalizer::MarkDisjointOneOfs() {
  for (SchemaNode& n : s_.nodes) {
    if (n.one_of.size() < 2) {
      n.one_of_disjoint = n.one_of.size() == 1;
      continue;
    }
    bool disjoint = n.one_of.size() <= 256;
    for (size_t i = 0; disjoint && i < n.one_of.size(); ++i) {
      for (size_t j = i + 1; disjoint && j < n.one_of.size(); ++j) {
        disjoint = ProvablyDisjoint(s_, n.one_of[i], n.one_of[j], 0, n.types, &strings_);
      }
    }
    n.one_of_disjoint = disjoint;
  }
}

// A node that is nothing but a $ref (or a one-element allOf) is replaced by
// its target everywhere, so lowering sees one node per definition; an
// unconstrained node ({} or only annotations) becomes kTrueNode.
absl::Status Normalizer::ResolveAliases() {
  const size_t n = s_.nodes.size();
  std::vector<NodeId> target(n);
  for (size_t i = 0; i < n; ++i) {
    const SchemaNode& node = s_.nodes[i];
    target[i] = static_cast<NodeId>(i);
    if (i >= 2 && OnlyAllOf(node) && node.all_of.size() <= 1) {
      // {} is the true schema; {"$ref": x} is x.
      target[i] = node.all_of.empty() ? kTrueNode : node.all_of[0];
    }
  }
  std::vector<NodeId> resolved(n, kNoNode);
  for (size_t i = 0; i < n; ++i) {
    NodeId cur = static_cast<NodeId>(i);
    size_t steps = 0;
    while (target[cur] != cur) {
      cur = target[cur];
      if (++steps > n) {
        return WithJsonPointer(
            absl::InvalidArgumentError(absl::StrCat(
                "circular $ref: the schema only refers to itself at ", At(s_.nodes[i].pointer))),
            At(s_.nodes[i].pointer));
      }
    }
    resolved[i] = cur;
  }
  for (SchemaNode& node : s_.nodes) {
    ForEachChildId(node, [&](NodeId& id) { id = resolved[id]; });
  }
  s_.root = resolved[s_.root];
  return absl::OkStatus();
}

uint8_t& Normalizer::State(NodeId id) {
  if (state_.size() < s_.nodes.size()) state_.resize(s_.nodes.size(), 0);
  return state_[id];
}

absl::StatusOr<NodeId> Normalizer::NewNode(const std::string& pointer) {
  if (static_cast<int>(s_.nodes.size()) >= max_nodes_) {
    return WithJsonPointer(
        absl::ResourceExhaustedError(
            absl::StrCat("merging allOf needs more than ", max_nodes_, " nodes at ", At(pointer))),
        At(pointer));
  }
  // Copied first: `pointer` may live in s_.nodes, which emplace_back can move
  // (the JSON Schema fuzzer found a use-after-free that way).
  std::string copy = pointer;
  s_.nodes.emplace_back();
  s_.nodes.back().pointer = std::move(copy);
  return static_cast<NodeId>(s_.nodes.size() - 1);
}

absl::StatusOr<NodeId> Normalizer::AddNode(SchemaNode node) {
  absl::StatusOr<NodeId> id = NewNode(node.pointer);
  if (!id.ok()) return id.status();
  s_.nodes[*id] = std::move(node);
  return *id;
}

absl::StatusOr<NodeId> Normalizer::ConjAll(const std::vector<NodeId>& parts,
                                           const std::string& pointer) {
  NodeId out = kTrueNode;
  for (NodeId p : parts) {
    absl::StatusOr<NodeId> c = Conj(out, p, pointer);
    if (!c.ok()) return c.status();
    out = *c;
  }
  return out;
}

absl::StatusOr<NodeId> Normalizer::Conj(NodeId a, NodeId b, const std::string& pointer) {
  if (a == kTrueNode || a == b) return b;
  if (b == kTrueNode) return a;
  if (a == kFalseNode || b == kFalseNode) return kFalseNode;
  std::vector<NodeId> parts;
  for (NodeId x : {a, b}) {
    auto it = conj_parts_.find(x);
    if (it != conj_parts_.end()) {
      parts.insert(parts.end(), it->second.begin(), it->second.end());
    } else {
      parts.push_back(x);
    }
  }
  // The parts merge in the order given (a's properties before b's: object
  // grammars follow that order); the cache key is the set.
  std::vector<NodeId> ordered;
  for (NodeId x : parts) {
    if (std::find(ordered.begin(), ordered.end(), x) == ordered.end()) ordered.push_back(x);
  }
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  auto cached = conj_cache_.find(parts);
  if (cached != conj_cache_.end()) return cached->second;
  absl::StatusOr<NodeId> id = NewNode(pointer);
  if (!id.ok()) return id.status();
  s_.nodes[*id].all_of = ordered;
  conj_cache_[parts] = *id;
  conj_parts_[*id] = std::move(ordered);
  return *id;
}

absl::Status Normalizer::Flatten(NodeId id, int depth) {
  if (id < 2 || State(id) == 2) return absl::OkStatus();
  if (State(id) == 1) {
    return WithJsonPointer(
        absl::InvalidArgumentError(absl::StrCat(
            "circular $ref/allOf: the schema must match itself at ", At(s_.nodes[id].pointer))),
        At(s_.nodes[id].pointer));
  }
  if (depth > 1000) {
    return WithJsonPointer(absl::InvalidArgumentError(absl::StrCat("allOf/$ref chain too deep at ",
                                                                   At(s_.nodes[id].pointer))),
                           At(s_.nodes[id].pointer));
  }
  State(id) = 1;
  SchemaNode t = s_.nodes[id];
  std::vector<NodeId> pending = std::move(t.all_of);
  t.all_of.clear();
  std::vector<std::string> reasons;
  // The node's own properties take in its own patterns first; merging keeps
  // that true (Merge), and the last call declares required keys of parts.
  if (absl::Status st = AbsorbPatternProperties(&t); !st.ok()) return st;
  for (NodeId b : pending) {
    if (b == kTrueNode) continue;
    if (absl::Status st = Flatten(b, depth + 1); !st.ok()) return st;
    SchemaNode branch = s_.nodes[b];
    if (absl::Status st = Merge(&t, branch, &reasons); !st.ok()) return st;
  }
  if (absl::Status st = AbsorbPatternProperties(&t); !st.ok()) return st;
  if (absl::Status st = PrepareSomeMembers(&t); !st.ok()) return st;
  if (absl::Status st = PreparePatternConjunctions(&t); !st.ok()) return st;
  if (absl::Status st = PrepareSomeItems(&t); !st.ok()) return st;
  s_.nodes[id] = std::move(t);
  State(id) = 2;
  return Check(id, reasons);
}

absl::Status Normalizer::Reflatten(NodeId id) {
  State(id) = 0;
  return Flatten(id, 0);
}

absl::Status Normalizer::Residual(SchemaNode* t, const SchemaNode& part) {
  absl::StatusOr<NodeId> id = NewNode(part.pointer);
  if (!id.ok()) return id.status();
  s_.nodes[*id] = part;
  State(*id) = 2;
  t->all_of.push_back(*id);
  return absl::OkStatus();
}

absl::Status Normalizer::Merge(SchemaNode* t, const SchemaNode& b,
                               std::vector<std::string>* reasons) {
  const std::string& ptr = t->pointer;
  if (t->types != 0 && b.types != 0 && (t->types & b.types) == 0) {
    reasons->push_back(absl::StrCat("type ", TypeSetToString(t->types), " (here) and type ",
                                    TypeSetToString(b.types), " (", At(b.pointer),
                                    ") have no common value"));
  } else if (b.types == 0) {
    reasons->push_back(
        absl::StrCat("allOf/$ref includes a schema matching nothing (", At(b.pointer), ")"));
  }
  t->types &= b.types;
  if (b.enum_values) {
    if (!t->enum_values) {
      t->enum_values = b.enum_values;
    } else {
      absl::flat_hash_set<std::string> keys;
      for (const JsonValue& v : *b.enum_values) keys.insert(v.CanonicalKey());
      std::vector<JsonValue> kept;
      for (JsonValue& v : *t->enum_values) {
        if (keys.contains(v.CanonicalKey())) kept.push_back(std::move(v));
      }
      if (kept.empty()) {
        reasons->push_back(absl::StrCat("enum/const values here and at ", At(b.pointer),
                                        " have nothing in common"));
      }
      t->enum_values = std::move(kept);
    }
  }
  // Strings.
  t->min_length = std::max(t->min_length, b.min_length);
  if (b.max_length) t->max_length = std::min(t->max_length.value_or(UINT64_MAX), *b.max_length);
  for (const std::string& p : b.patterns) {
    if (std::find(t->patterns.begin(), t->patterns.end(), p) == t->patterns.end()) {
      t->patterns.push_back(p);
    }
  }
  for (const std::string& p : b.not_patterns) {
    if (std::find(t->not_patterns.begin(), t->not_patterns.end(), p) == t->not_patterns.end()) {
      t->not_patterns.push_back(p);
    }
  }
  t->excluded_values.insert(t->excluded_values.end(), b.excluded_values.begin(),
                            b.excluded_values.end());
  SchemaNode rest;  // What cannot be merged, kept as a residual allOf node.
  rest.pointer = b.pointer;
  bool has_rest = false;
  if (b.format) {
    if (!t->format) {
      t->format = b.format;
    } else if (*t->format != *b.format) {
      rest.format = b.format;
      has_rest = true;
    }
  }
  // Numbers.
  if (b.minimum) {
    int c = t->minimum ? Compare(b.minimum->value, t->minimum->value) : 1;
    if (c > 0) t->minimum = b.minimum;
    if (c == 0) t->minimum->exclusive |= b.minimum->exclusive;
  }
  if (b.maximum) {
    int c = t->maximum ? Compare(b.maximum->value, t->maximum->value) : -1;
    if (c < 0) t->maximum = b.maximum;
    if (c == 0) t->maximum->exclusive |= b.maximum->exclusive;
  }
  for (const Decimal& m : b.multiple_of) {
    if (std::find(t->multiple_of.begin(), t->multiple_of.end(), m) == t->multiple_of.end()) {
      t->multiple_of.push_back(m);
    }
  }
  for (const Decimal& m : b.not_multiple_of) {
    if (std::find(t->not_multiple_of.begin(), t->not_multiple_of.end(), m) ==
        t->not_multiple_of.end()) {
      t->not_multiple_of.push_back(m);
    }
  }
  // Arrays.
  const size_t prefix = std::max(t->prefix_items.size(), b.prefix_items.size());
  std::vector<NodeId> prefix_items;
  for (size_t i = 0; i < prefix; ++i) {
    NodeId x = i < t->prefix_items.size() ? t->prefix_items[i] : t->items;
    NodeId y = i < b.prefix_items.size() ? b.prefix_items[i] : b.items;
    absl::StatusOr<NodeId> c = Conj(x, y, ptr);
    if (!c.ok()) return c.status();
    prefix_items.push_back(*c);
  }
  t->prefix_items = std::move(prefix_items);
  absl::StatusOr<NodeId> items = Conj(t->items, b.items, ptr);
  if (!items.ok()) return items.status();
  t->items = *items;
  t->min_items = std::max(t->min_items, b.min_items);
  if (b.max_items) t->max_items = std::min(t->max_items.value_or(UINT64_MAX), *b.max_items);
  t->unique_items |= b.unique_items;
  if (b.contains != kNoNode) {
    if (t->contains == kNoNode) {
      t->contains = b.contains;
      t->min_contains = b.min_contains;
      t->max_contains = b.max_contains;
    } else {
      rest.contains = b.contains;
      rest.min_contains = b.min_contains;
      rest.max_contains = b.max_contains;
      has_rest = true;
    }
  }
  // Objects. Both sides' properties already include the patterns their keys
  // match (AbsorbPatternProperties), so each key of either side gets the
  // conjunction of both sides' schemas for it: a side's property, else its
  // matching patterns, else its additionalProperties. Other keys: a side
  // without patterns adds its additionalProperties to the other side's
  // patterns (when none of its own properties match them). When both sides
  // have patterns and one has a non-trivial additionalProperties, a key
  // would need "matches this pattern and not that one": that part, like an
  // undecidable pattern, stays a residual allOf entry. Unless both sides
  // have the same patterns: a key then matches the same ones on both sides,
  // so it gets both sides' pattern schemas, or, matching none, both
  // additionalProperties (unevaluatedProperties's closing part declares the
  // patterns of the schema beside it: {"patternProperties": {"^f": S}} and
  // {"patternProperties": {"^f": true}, "additionalProperties": false}).
  const bool t_patterns = !t->pattern_properties.empty();
  const bool b_patterns = !b.pattern_properties.empty();
  auto pattern_set = [](const SchemaNode& x) {
    absl::flat_hash_set<std::string> set;
    for (const auto& [pattern, value] : x.pattern_properties) set.insert(pattern);
    return set;
  };
  const bool same_patterns = t_patterns && b_patterns && pattern_set(*t) == pattern_set(b);
  bool objects_merged = false;
  if ((!t_patterns || t->properties_include_patterns) &&
      (!b_patterns || b.properties_include_patterns) &&
      (same_patterns ||
       !(t_patterns && b_patterns &&
         (t->additional_properties != kTrueNode || b.additional_properties != kTrueNode)))) {
    // A side's schema for `key`; nullopt when a pattern cannot be evaluated.
    auto schema_for = [&](const SchemaNode& x,
                          const std::string& key) -> absl::StatusOr<std::optional<NodeId>> {
      const NodeId declared = x.PropertyNode(key);
      if (declared != kNoNode) return std::optional<NodeId>(declared);
      std::vector<NodeId> matching;
      for (const auto& [pattern, value] : x.pattern_properties) {
        absl::StatusOr<bool> m = EcmaPatternMatches(pattern, key);
        if (!m.ok()) return std::optional<NodeId>();
        if (*m) matching.push_back(value);
      }
      if (matching.empty()) return std::optional<NodeId>(x.additional_properties);
      absl::StatusOr<NodeId> all = ConjAll(matching, ptr);
      if (!all.ok()) return all.status();
      return std::optional<NodeId>(*all);
    };
    // A side's additionalProperties goes onto the other side's patterns
    // (below), which then also apply to the keys it declares: exact only
    // when none of them matches those patterns.
    auto declared_match = [](const SchemaNode& x, const SchemaNode& y) {
      if (x.additional_properties == kTrueNode || y.pattern_properties.empty()) return false;
      for (const auto& [key, id] : x.properties) {
        for (const auto& [pattern, value] : y.pattern_properties) {
          absl::StatusOr<bool> m = EcmaPatternMatches(pattern, key);
          if (!m.ok() || *m) return true;
        }
      }
      return false;
    };
    std::vector<std::pair<std::string, NodeId>> properties;
    absl::flat_hash_set<std::string> seen;
    // With the same patterns no additionalProperties goes onto patterns.
    bool decided = same_patterns || (!declared_match(*t, b) && !declared_match(b, *t));
    for (const std::vector<std::pair<std::string, NodeId>>* side :
         {static_cast<const std::vector<std::pair<std::string, NodeId>>*>(&t->properties),
          &b.properties}) {
      for (const auto& [key, id] : *side) {
        if (!decided) break;
        if (!seen.insert(key).second) continue;
        absl::StatusOr<std::optional<NodeId>> x = schema_for(*t, key);
        if (!x.ok()) return x.status();
        absl::StatusOr<std::optional<NodeId>> y = schema_for(b, key);
        if (!y.ok()) return y.status();
        if (!*x || !*y) {
          decided = false;
          break;
        }
        absl::StatusOr<NodeId> c = Conj(**x, **y, ptr);
        if (!c.ok()) return c.status();
        properties.emplace_back(key, *c);
      }
    }
    if (decided) {
      std::vector<std::pair<std::string, NodeId>> patterns;
      auto add_patterns = [&](const SchemaNode& x, NodeId other_additional) -> absl::Status {
        for (const auto& [pattern, value] : x.pattern_properties) {
          absl::StatusOr<NodeId> c = Conj(value, other_additional, ptr);
          if (!c.ok()) return c.status();
          std::pair<std::string, NodeId> pp(pattern, *c);
          if (std::find(patterns.begin(), patterns.end(), pp) == patterns.end()) {
            patterns.push_back(std::move(pp));
          }
        }
        return absl::OkStatus();
      };
      // With patterns on both sides, both additionalProperties are true, or
      // the patterns are the same: each side's pattern schemas as they are.
      if (same_patterns) {
        // One entry per pattern: the conjunction of its schemas on both sides.
        for (const auto& [pattern, unused] : t->pattern_properties) {
          if (std::any_of(patterns.begin(), patterns.end(),
                          [&p = pattern](const auto& pp) { return pp.first == p; })) {
            continue;
          }
          std::vector<NodeId> values;
          for (const SchemaNode* x : {static_cast<const SchemaNode*>(t), &b}) {
            for (const auto& [other, value] : x->pattern_properties) {
              if (other == pattern) values.push_back(value);
            }
          }
          absl::StatusOr<NodeId> c = ConjAll(values, ptr);
          if (!c.ok()) return c.status();
          patterns.emplace_back(pattern, *c);
        }
      } else {
        if (absl::Status st = add_patterns(*t, b.additional_properties); !st.ok()) return st;
        if (absl::Status st = add_patterns(b, t->additional_properties); !st.ok()) return st;
      }
      absl::StatusOr<NodeId> c = Conj(t->additional_properties, b.additional_properties, ptr);
      if (!c.ok()) return c.status();
      t->properties = std::move(properties);
      t->pattern_properties = std::move(patterns);
      t->additional_properties = *c;
      t->properties_include_patterns = true;
      objects_merged = true;
    }
  }
  if (!objects_merged) {
    rest.properties = b.properties;
    rest.pattern_properties = b.pattern_properties;
    rest.additional_properties = b.additional_properties;
    rest.properties_include_patterns = b.properties_include_patterns;
    has_rest = true;
  }
  for (const std::string& r : b.required) {
    if (!t->IsRequired(r)) t->required.push_back(r);
  }
  absl::StatusOr<NodeId> names = Conj(t->property_names, b.property_names, ptr);
  if (!names.ok()) return names.status();
  t->property_names = *names;
  t->min_properties = std::max(t->min_properties, b.min_properties);
  if (b.max_properties) {
    t->max_properties = std::min(t->max_properties.value_or(UINT64_MAX), *b.max_properties);
  }
  t->dependent_required.insert(t->dependent_required.end(), b.dependent_required.begin(),
                               b.dependent_required.end());
  for (const SchemaNode::SomeItem& i : b.some_items) {
    if (std::find(t->some_items.begin(), t->some_items.end(), i) == t->some_items.end()) {
      t->some_items.push_back(i);
    }
  }
  for (const SchemaNode::SomeMember& m : b.some_members) {
    if (std::find(t->some_members.begin(), t->some_members.end(), m) == t->some_members.end()) {
      t->some_members.push_back(m);
    }
  }
  // Combinators: one list of each kind per node.
  t->all_of.insert(t->all_of.end(), b.all_of.begin(), b.all_of.end());
  auto take_list = [&](std::vector<NodeId>* mine, const std::vector<NodeId>& theirs,
                       std::vector<NodeId>* spill) {
    if (theirs.empty()) return;
    if (mine->empty()) {
      *mine = theirs;
    } else if (*mine != theirs) {
      *spill = theirs;
      has_rest = true;
    }
  };
  take_list(&t->any_of, b.any_of, &rest.any_of);
  take_list(&t->one_of, b.one_of, &rest.one_of);
  if (b.not_schema != kNoNode) {
    if (t->not_schema == kNoNode) {
      t->not_schema = b.not_schema;
    } else if (t->not_schema != b.not_schema) {
      rest.not_schema = b.not_schema;
      has_rest = true;
    }
  }
  if (b.if_schema != kNoNode) {
    if (t->if_schema == kNoNode) {
      t->if_schema = b.if_schema;
      t->then_schema = b.then_schema;
      t->else_schema = b.else_schema;
    } else {
      rest.if_schema = b.if_schema;
      rest.then_schema = b.then_schema;
      rest.else_schema = b.else_schema;
      has_rest = true;
    }
  }
  if (has_rest) return Residual(t, rest);
  return absl::OkStatus();
}

// Drops types the node's own constraints exclude, filters the enum, and
// fails if nothing is left.
absl::Status Normalizer::Check(NodeId id, std::vector<std::string> reasons) {
  SchemaNode& n = s_.nodes[id];
  if ((n.types & kStringType) && n.max_length && n.min_length > *n.max_length) {
    n.types &= ~kStringType;
    reasons.push_back(absl::StrCat("minLength ", n.min_length, " > maxLength ", *n.max_length));
  }
  if ((n.types & kNumberTypes) && n.minimum && n.maximum) {
    int c = Compare(n.minimum->value, n.maximum->value);
    if (c > 0 || (c == 0 && (n.minimum->exclusive || n.maximum->exclusive))) {
      n.types &= ~kNumberTypes;
      reasons.push_back(absl::StrCat("minimum ", n.minimum->value.ToString(), " is above maximum ",
                                     n.maximum->value.ToString()));
    }
  }
  if ((n.types & kIntegerType) && n.minimum && n.maximum) {
    Decimal lo = n.minimum->value.Ceil(), hi = n.maximum->value.Floor();
    if (n.minimum->exclusive && lo == n.minimum->value) lo = lo.PlusOne();
    if (n.maximum->exclusive && hi == n.maximum->value) hi = hi.MinusOne();
    if (lo > hi) {
      n.types &= ~kIntegerType;
      reasons.push_back("no integer between minimum and maximum");
    }
  }
  // A negated enum/const can exclude every value of a finite type (null, or
  // both booleans: two if/then rules on `"enabled": true` and `false` make
  // one such branch); the type is then gone, or lowering would have nothing
  // to write for it.
  if (!n.excluded_values.empty() && (n.types & (kNullType | kBooleanType))) {
    auto excluded = [&](const JsonValue& v) {
      const std::string key = v.CanonicalKey();
      return std::any_of(n.excluded_values.begin(), n.excluded_values.end(),
                         [&](const JsonValue& x) { return x.CanonicalKey() == key; });
    };
    if ((n.types & kNullType) && excluded(JsonValue())) {
      n.types &= ~kNullType;
      reasons.push_back("null is excluded");
    }
    if ((n.types & kBooleanType) && excluded(JsonValue::Boolean(true)) &&
        excluded(JsonValue::Boolean(false))) {
      n.types &= ~kBooleanType;
      reasons.push_back("true and false are excluded");
    }
  }
  // A multiple of an integer is an integer.
  for (const Decimal& m : n.multiple_of) {
    if (m.is_integer()) n.types &= ~kFractionType;
  }
  if ((n.types & kArrayType) && n.max_items && n.min_items > *n.max_items) {
    n.types &= ~kArrayType;
    reasons.push_back(absl::StrCat("minItems ", n.min_items, " > maxItems ", *n.max_items));
  }
  if (n.types & kObjectType) {
    std::string why;
    if (n.max_properties && n.min_properties > *n.max_properties) {
      why =
          absl::StrCat("minProperties ", n.min_properties, " > maxProperties ", *n.max_properties);
    } else if (n.max_properties && n.required.size() > *n.max_properties) {
      why = absl::StrCat(n.required.size(), " required properties > maxProperties ",
                         *n.max_properties);
    }
    for (const std::string& r : n.required) {
      if (!why.empty()) break;
      NodeId p = n.PropertyNode(r);
      if (p == kFalseNode ||
          (p == kNoNode && n.pattern_properties.empty() && n.additional_properties == kFalseNode)) {
        why = absl::StrCat("required property \"", r, "\" is not allowed");
      }
    }
    if (!why.empty()) {
      n.types &= ~kObjectType;
      reasons.push_back(why);
    }
  }
  if (n.enum_values) {
    // Lowering writes enum values as literals: this filter is what applies
    // the node's patterns to them, so a pattern it cannot evaluate makes
    // the node unsupported rather than the value kept or dropped on a guess.
    std::vector<JsonValue> kept;
    std::string undecided;
    for (JsonValue& v : *n.enum_values) {
      if (MatchesScalarConstraints(n, v, &undecided)) kept.push_back(std::move(v));
    }
    if (!undecided.empty() && n.unsupported.empty()) {
      n.unsupported = absl::StrCat(undecided, " (deciding enum/const values) at ", At(n.pointer));
    }
    if (kept.empty() && n.types != 0) {
      reasons.push_back("no enum/const value satisfies the other constraints");
    }
    n.enum_values = std::move(kept);
    n.types = EffectiveTypes(n);
  }
  if (n.types == 0 && n.unsatisfiable.empty()) {
    if (reasons.empty()) reasons.push_back("no type is left");
    n.unsatisfiable = absl::StrCat(absl::StrJoin(reasons, "; "), " at ", At(n.pointer));
    n.unsatisfiable_pointer = At(n.pointer);
  }
  return absl::OkStatus();
}

// A node also matches nothing when a part it cannot do without does: an
// allOf member, every anyOf/oneOf branch, a required property, an item
// below minItems. Iterated to a fixed point (types only shrink).
void Normalizer::PropagateEmptiness() {
  auto empty = [&](NodeId id) { return id != kNoNode && s_.nodes[id].types == 0; };
  auto why = [&](NodeId id) -> std::string {
    const std::string& r = s_.nodes[id].unsatisfiable;
    return r.empty() ? absl::StrCat("false schema at ", At(s_.nodes[id].pointer)) : r;
  };
  // The pointer why(id) names.
  auto why_pointer = [&](NodeId id) -> std::string {
    const SchemaNode& m = s_.nodes[id];
    return m.unsatisfiable.empty() ? At(m.pointer) : m.unsatisfiable_pointer;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 2; i < s_.nodes.size(); ++i) {
      SchemaNode& n = s_.nodes[i];
      if (n.types == 0) continue;
      std::string reason, reason_pointer;
      for (NodeId m : n.all_of) {
        if (reason.empty() && empty(m)) reason = why(m), reason_pointer = why_pointer(m);
      }
      for (const std::vector<NodeId>* list : {&n.any_of, &n.one_of}) {
        if (reason.empty() && !list->empty() && std::all_of(list->begin(), list->end(), empty)) {
          reason = why(list->front());
          reason_pointer = why_pointer(list->front());
        }
      }
      if (reason.empty() && n.not_schema == kTrueNode) {
        reason = absl::StrCat("\"not\": {} (or true) at ", At(n.pointer));
        reason_pointer = At(n.pointer);
      }
      if (!reason.empty()) {
        n.types = 0;
      }
      if (n.types & kObjectType) {
        for (const std::string& r : n.required) {
          NodeId p = n.PropertyNode(r);
          bool forbidden = p != kNoNode
                               ? empty(p)
                               : n.pattern_properties.empty() && empty(n.additional_properties);
          if (forbidden) {
            n.types &= ~kObjectType;
            const NodeId cause = p != kNoNode ? p : n.additional_properties;
            reason = absl::StrCat("required property \"", r, "\" cannot have any value (",
                                  why(cause), ")");
            reason_pointer = why_pointer(cause);
            break;
          }
        }
      }
      if (n.types & kArrayType) {
        for (size_t k = 0; k < n.prefix_items.size() && k < n.min_items; ++k) {
          if (empty(n.prefix_items[k])) {
            n.types &= ~kArrayType;
            reason = absl::StrCat("required item ", k, " cannot have any value (",
                                  why(n.prefix_items[k]), ")");
            reason_pointer = why_pointer(n.prefix_items[k]);
            break;
          }
        }
        if ((n.types & kArrayType) && n.min_items > n.prefix_items.size() && empty(n.items)) {
          n.types &= ~kArrayType;
          reason = absl::StrCat("minItems ", n.min_items,
                                " needs items, which cannot have any value (", why(n.items), ")");
          reason_pointer = why_pointer(n.items);
        }
      }
      if (n.types == 0) {
        n.unsatisfiable =
            reason.empty() ? absl::StrCat("no type is left at ", At(n.pointer)) : reason;
        n.unsatisfiable_pointer = reason.empty() ? At(n.pointer) : reason_pointer;
        changed = true;
      }
    }
  }
}

bool ValueMatchesLocally(const SchemaNode& n, const JsonValue& value) {
  if (n.enum_values) {
    std::string key = value.CanonicalKey();
    bool found = false;
    for (const JsonValue& v : *n.enum_values) found = found || v.CanonicalKey() == key;
    if (!found) return false;
  }
  return MatchesScalarConstraints(n, value);
}

bool ValueMatchesLocallyBesidesEnum(const SchemaNode& n, const JsonValue& value) {
  return MatchesScalarConstraints(n, value);
}

namespace {

bool MatchesScalarConstraints(const SchemaNode& n, const JsonValue& value, std::string* undecided) {
  // Same semantics as the string lexemes (ECMA-262, pattern_match.h).
  auto matches = [&](const std::string& pattern) {
    absl::StatusOr<bool> m = EcmaPatternMatches(pattern, value.string());
    if (m.ok()) return *m;
    if (undecided != nullptr && undecided->empty()) {
      *undecided = absl::StrCat("pattern \"", pattern, "\": ", m.status().message());
    }
    return true;
  };
  if ((TypeOf(value) & n.types) == 0) return false;
  if (!n.excluded_values.empty()) {
    const std::string key = value.CanonicalKey();
    for (const JsonValue& x : n.excluded_values) {
      if (x.CanonicalKey() == key) return false;
    }
  }
  switch (value.kind()) {
    case JsonValue::Kind::kString: {
      uint64_t len = CodePoints(value.string());
      if (len < n.min_length || (n.max_length && len > *n.max_length)) return false;
      for (const std::string& p : n.patterns) {
        if (!matches(p)) return false;
      }
      for (const std::string& p : n.not_patterns) {
        // An undecidable pattern is assumed to match here too, so `not` of
        // it excludes the value: `{"not": {"pattern": P}}` must give the
        // same verdict as its rewritten form (json_schema_maskbench_test).
        // Lowering refuses such patterns, so no compiled language depends
        // on the assumption.
        absl::StatusOr<bool> m = EcmaPatternMatches(p, value.string());
        if (!m.ok() && undecided != nullptr && undecided->empty()) {
          *undecided = absl::StrCat("\"not\" pattern \"", p, "\": ", m.status().message());
        }
        if (!m.ok() || *m) return false;
      }
      return true;
    }
    case JsonValue::Kind::kNumber:
      if (!InBounds(n, value.number())) return false;
      for (const Decimal& m : n.multiple_of) {
        if (IsMultipleOf(value.number(), m) == std::optional<bool>(false)) return false;
      }
      for (const Decimal& m : n.not_multiple_of) {
        // Undecidable (a huge divisor) counts as a multiple: the value is
        // dropped, never admitted wrongly.
        if (IsMultipleOf(value.number(), m) != std::optional<bool>(false)) return false;
      }
      return true;
    case JsonValue::Kind::kArray: {
      uint64_t count = value.items().size();
      return count >= n.min_items && (!n.max_items || count <= *n.max_items);
    }
    case JsonValue::Kind::kObject: {
      uint64_t count = value.members().size();
      if (count < n.min_properties || (n.max_properties && count > *n.max_properties)) {
        return false;
      }
      for (const std::string& r : n.required) {
        bool present = false;
        for (const auto& m : value.members()) present = present || m.first == r;
        if (!present) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

}  // namespace

bool ProvablyDisjoint(const Schema& schema, NodeId a, NodeId b, int depth, TypeSet within,
                      StringDisjointness* strings) {
  if (a == kFalseNode || b == kFalseNode) return true;
  if (a == b || a == kTrueNode || b == kTrueNode) return false;
  const SchemaNode& na = schema.node(a);
  const SchemaNode& nb = schema.node(b);
  // A node lies within the union of its anyOf (or oneOf) branches.
  if (depth < 3) {
    for (const auto* branches : {&na.any_of, &na.one_of}) {
      if (!branches->empty() && branches->size() <= 64 &&
          std::all_of(branches->begin(), branches->end(), [&](NodeId x) {
            return ProvablyDisjoint(schema, x, b, depth + 1, within, strings);
          })) {
        return true;
      }
    }
    for (const auto* branches : {&nb.any_of, &nb.one_of}) {
      if (!branches->empty() && branches->size() <= 64 &&
          std::all_of(branches->begin(), branches->end(), [&](NodeId x) {
            return ProvablyDisjoint(schema, a, x, depth + 1, within, strings);
          })) {
        return true;
      }
    }
  }
  const TypeSet common = EffectiveTypes(na) & EffectiveTypes(nb) & within;
  if (common == 0) return true;
  if (na.enum_values || nb.enum_values) {
    const SchemaNode& with_enum = na.enum_values ? na : nb;
    const SchemaNode& other = na.enum_values ? nb : na;
    bool any = false;
    for (const JsonValue& v : *with_enum.enum_values) {
      any = any || ((TypeOf(v) & within) != 0 && ValueMatchesLocally(other, v));
    }
    if (!any) return true;
  }
  if ((common & ~kNumberTypes) == 0) {
    auto below = [](const SchemaNode& x, const SchemaNode& y) {  // max(x) < min(y)
      if (!x.maximum || !y.minimum) return false;
      int c = Compare(x.maximum->value, y.minimum->value);
      return c < 0 || (c == 0 && (x.maximum->exclusive || y.minimum->exclusive));
    };
    if (below(na, nb) || below(nb, na)) return true;
  }
  if ((common & ~kStringType) == 0) {
    if (strings != nullptr) {
      if (strings->ProvablyDisjoint(na, nb)) return true;
    } else if (StringDisjointness().ProvablyDisjoint(na, nb)) {
      return true;
    }
  }
  if ((common & ~kObjectType) == 0 && depth < 4) {
    // A property one requires and the other cannot have.
    auto forbids = [](const SchemaNode& n, const std::string& key) {
      const NodeId declared = n.PropertyNode(key);
      if (declared != kNoNode) return declared == kFalseNode;
      return n.additional_properties == kFalseNode && n.pattern_properties.empty();
    };
    for (const auto& [x, y] : {std::pair(&na, &nb), std::pair(&nb, &na)}) {
      for (const std::string& key : x->required) {
        if (forbids(*y, key)) return true;
      }
    }
    // A property both require, whose schemas are disjoint (a discriminator).
    for (const std::string& key : na.required) {
      if (!nb.IsRequired(key)) continue;
      NodeId pa = na.PropertyNode(key), pb = nb.PropertyNode(key);
      if (pa == kNoNode || pb == kNoNode) continue;
      if (ProvablyDisjoint(schema, pa, pb, depth + 1, kAllTypes, strings)) return true;
    }
  }
  return false;
}

absl::Status NormalizeSchema(Schema* schema, int max_nodes, bool rewrite_combinators) {
  return Normalizer(schema, max_nodes, rewrite_combinators).Run();
}

}  // namespace maskd::json_schema
