#include "compiler/json_schema/value_match.h"

#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/json_schema/json_string.h"
#include "compiler/json_schema/normalize.h"
#include "compiler/json_schema/pattern_match.h"

namespace maskd::json_schema {
namespace {

// A schema cycle that never consumes the value (`{"anyOf":[{"$ref":"#"}]}`)
// would recurse forever; a value's own nesting is far below this.
constexpr int kMaxDepth = 200;

absl::StatusOr<bool> Search(const std::string& pattern, const std::string& s) {
  absl::StatusOr<bool> m = EcmaPatternMatches(pattern, s);
  if (!m.ok()) {
    return absl::UnimplementedError(
        absl::StrCat("pattern \"", pattern, "\" on a concrete value: ", m.status().message()));
  }
  return *m;
}

uint64_t CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

absl::StatusOr<bool> ValueMatcher::Matches(NodeId id, const JsonValue& v) {
  return Matches(id, v, 0);
}

absl::StatusOr<bool> ValueMatcher::Matches(NodeId id, const JsonValue& v, int depth) {
  if (id == kTrueNode) return true;
  if (id == kFalseNode) return false;
  if (depth > kMaxDepth) {
    return absl::UnimplementedError(
        "a schema cycle that does not consume the value (deciding an enum/const value)");
  }
  return MatchesNode(id, schema_.node(id), v, depth);
}

const absl::flat_hash_set<std::string>& ValueMatcher::EnumKeys(NodeId id, const SchemaNode& n) {
  auto [it, inserted] = enum_keys_.try_emplace(id);
  if (inserted) {
    for (const JsonValue& e : *n.enum_values) it->second.insert(e.CanonicalKey());
  }
  return it->second;
}

absl::StatusOr<bool> ValueMatcher::MatchesNode(NodeId id, const SchemaNode& n, const JsonValue& v,
                                               int depth) {
  if (n.enum_values && !EnumKeys(id, n).contains(v.CanonicalKey())) return false;
  if (!ValueMatchesLocallyBesidesEnum(n, v)) return false;
  // ValueMatchesLocally counts a pattern it cannot evaluate as matching.
  if (v.kind() == JsonValue::Kind::kString && (n.types & kStringType)) {
    for (const std::string& p : n.patterns) {
      absl::StatusOr<bool> m = Search(p, v.string());
      if (!m.ok() || !*m) return m;
    }
    for (const std::string& p : n.not_patterns) {
      absl::StatusOr<bool> m = Search(p, v.string());
      if (!m.ok()) return m.status();
      if (*m) return false;
    }
    if (n.format) {
      absl::StatusOr<bool> m = StringMatchesFormat(*n.format, v.string(), ignore_unknown_formats_);
      if (!m.ok() || !*m) return m;
    }
  }
#define MASKD_CHECK(child, x)                                   \
  do {                                                          \
    absl::StatusOr<bool> m_ = Matches((child), (x), depth + 1); \
    if (!m_.ok() || !*m_) return m_;                            \
  } while (0)
  if (v.kind() == JsonValue::Kind::kArray) {
    const auto& items = v.items();
    for (size_t i = 0; i < items.size(); ++i) {
      MASKD_CHECK(i < n.prefix_items.size() ? n.prefix_items[i] : n.items, items[i]);
    }
    if (n.unique_items) {
      std::set<std::string> seen;
      for (const JsonValue& x : items) {
        if (!seen.insert(x.CanonicalKey()).second) return false;
      }
    }
    for (const SchemaNode::SomeItem& some : n.some_items) {
      bool found = false;
      for (size_t i = some.from; i < items.size() && !found; ++i) {
        absl::StatusOr<bool> m = Matches(some.value, items[i], depth + 1);
        if (!m.ok()) return m;
        found = *m;
      }
      if (!found) return false;
    }
    if (n.contains != kNoNode) {
      uint64_t count = 0;
      for (const JsonValue& x : items) {
        absl::StatusOr<bool> m = Matches(n.contains, x, depth + 1);
        if (!m.ok()) return m;
        count += *m;
      }
      if (count < n.min_contains || (n.max_contains && count > *n.max_contains)) return false;
    }
  }
  if (v.kind() == JsonValue::Kind::kObject) {
    for (const auto& [key, value] : v.members()) {
      bool matched = false;
      if (NodeId p = n.PropertyNode(key); p != kNoNode) {
        matched = true;
        MASKD_CHECK(p, value);
      }
      for (const auto& [pattern, s] : n.pattern_properties) {
        absl::StatusOr<bool> m = Search(pattern, key);
        if (!m.ok()) return m;
        if (*m) {
          matched = true;
          MASKD_CHECK(s, value);
        }
      }
      if (!matched) MASKD_CHECK(n.additional_properties, value);
      MASKD_CHECK(n.property_names, JsonValue::String(key));
    }
    for (const SchemaNode::SomeMember& some : n.some_members) {
      bool found = false;
      for (const auto& [key, value] : v.members()) {
        absl::StatusOr<bool> k = Matches(some.key, JsonValue::String(key), depth + 1);
        if (!k.ok()) return k;
        if (!*k) continue;
        absl::StatusOr<bool> m = Matches(some.value, value, depth + 1);
        if (!m.ok()) return m;
        if (*m) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    auto has = [&](const std::string& key) {
      for (const auto& m : v.members()) {
        if (m.first == key) return true;
      }
      return false;
    };
    for (const auto& [key, deps] : n.dependent_required) {
      if (!has(key)) continue;
      for (const std::string& d : deps) {
        if (!has(d)) return false;
      }
    }
  }
  for (NodeId a : n.all_of) MASKD_CHECK(a, v);
#undef MASKD_CHECK
  if (!n.any_of.empty()) {
    bool any = false;
    for (size_t i = 0; i < n.any_of.size() && !any; ++i) {
      absl::StatusOr<bool> m = Matches(n.any_of[i], v, depth + 1);
      if (!m.ok()) return m;
      any = *m;
    }
    if (!any) return false;
  }
  if (!n.one_of.empty()) {
    int count = 0;
    for (NodeId a : n.one_of) {
      absl::StatusOr<bool> m = Matches(a, v, depth + 1);
      if (!m.ok()) return m;
      count += *m;
    }
    if (count != 1) return false;
  }
  if (n.not_schema != kNoNode) {
    absl::StatusOr<bool> m = Matches(n.not_schema, v, depth + 1);
    if (!m.ok()) return m;
    if (*m) return false;
  }
  if (n.if_schema != kNoNode) {
    absl::StatusOr<bool> cond = Matches(n.if_schema, v, depth + 1);
    if (!cond.ok()) return cond;
    return Matches(*cond ? n.then_schema : n.else_schema, v, depth + 1);
  }
  return true;
}

absl::StatusOr<bool> StringMatchesFormat(const std::string& format, const std::string& value,
                                         bool ignore_unknown_formats) {
  absl::StatusOr<FormatLanguage> language = FormatPattern(format);
  if (!language.ok()) {
    if (ignore_unknown_formats) return true;
    return absl::UnimplementedError(language.status().message());
  }
  // The same languages the string lexemes use (lower.cc's StringLanguage).
  if (language->max_length && CodePoints(value) > *language->max_length) return false;
  absl::StatusOr<bool> m = Search("^(?:" + language->pattern + ")$", value);
  if (!m.ok() || !*m) return m;
  for (const std::string& also : language->also) {
    m = Search("^(?:" + also + ")$", value);
    if (!m.ok() || !*m) return m;
  }
  return true;
}

absl::StatusOr<bool> ValueMatchesNode(const Schema& schema, NodeId node, const JsonValue& value,
                                      bool ignore_unknown_formats) {
  return ValueMatcher(schema, ignore_unknown_formats).Matches(node, value);
}

}  // namespace maskd::json_schema
