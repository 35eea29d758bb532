#include "compiler/json_schema/unevaluated.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/uri.h"

namespace maskd::json_schema {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string Child(const std::string& pointer, std::string_view token) {
  return absl::StrCat(pointer, "/", EscapePointerToken(token));
}

// In-place applicators that apply to some instances only: what they evaluate
// depends on whether they validate.
constexpr const char* kConditionalMaps[] = {"dependentSchemas", "dependencies"};
// Options of one keyword past this many combinations are refused.
constexpr size_t kMaxAnyOfBranches = 4;

}  // namespace

void EvaluatedUnion(const EvaluatedSet& from, EvaluatedSet* into) {
  into->all = into->all || from.all;
  for (const std::string& n : from.names) {
    if (std::find(into->names.begin(), into->names.end(), n) == into->names.end()) {
      into->names.push_back(n);
    }
  }
  for (const std::string& p : from.patterns) {
    if (std::find(into->patterns.begin(), into->patterns.end(), p) == into->patterns.end()) {
      into->patterns.push_back(p);
    }
  }
  into->prefix = std::max(into->prefix, from.prefix);
}

namespace {

class Walker {
 public:
  // `strict`: conditional applicators that evaluate something are refused
  // (a branch's own evaluation), else they become choices.
  Walker(Unevaluated kind, const EvaluationContext& context, const std::string& keyword_pointer,
         bool strict)
      : kind_(kind), context_(context), at_(keyword_pointer), strict_(strict) {}

  // Adds what `s`, applied to every instance, evaluates; `own` leaves out
  // the unevaluated keyword being resolved.
  absl::Status Always(const SchemaAt& s, bool own) {
    Depth depth(this);
    if (depth_ > kMaxDepth) return TooDeep(s.pointer);
    if (s.value.type() != element_type::OBJECT) return absl::OkStatus();  // true / false.
    if (!always_seen_.insert(s.pointer).second) return absl::OkStatus();
    simdjson::dom::object obj(s.value);
    element v;
    auto has = [&](const char* k) {
      return context_.known(k) && obj[k].get(v) == simdjson::SUCCESS;
    };
    if (kind_ == Unevaluated::kProperties) {
      if (has("properties") && v.type() == element_type::OBJECT) {
        for (auto field : simdjson::dom::object(v)) Add(&out_.names, std::string(field.key));
      }
      if (has("patternProperties") && v.type() == element_type::OBJECT) {
        for (auto field : simdjson::dom::object(v)) Add(&out_.patterns, std::string(field.key));
      }
      if (has("additionalProperties") || (!own && has("unevaluatedProperties"))) out_.all = true;
    } else {
      if (has("prefixItems") && v.type() == element_type::ARRAY) {
        out_.prefix = std::max<uint64_t>(out_.prefix, simdjson::dom::array(v).size());
      }
      if (has("items")) {
        if (v.type() == element_type::ARRAY) {  // Before 2020-12: a tuple.
          out_.prefix = std::max<uint64_t>(out_.prefix, simdjson::dom::array(v).size());
          if (has("additionalItems")) out_.all = true;
        } else {
          out_.all = true;
        }
      }
      if (!own && has("unevaluatedItems")) out_.all = true;
      if (has("contains")) {
        return Refuse("contains", Child(s.pointer, "contains"), "the items it matches");
      }
    }
    for (const char* dynamic : {"$dynamicRef", "$recursiveRef"}) {
      if (has(dynamic)) return Refuse(dynamic, Child(s.pointer, dynamic), "its target");
    }
    if (has("allOf") && v.type() == element_type::ARRAY) {
      size_t i = 0;
      for (element branch : simdjson::dom::array(v)) {
        if (absl::Status st =
                Always({branch, absl::StrCat(Child(s.pointer, "allOf"), "/", i++)}, false);
            !st.ok()) {
          return st;
        }
      }
    }
    if (has("$ref") && v.type() == element_type::STRING) {
      absl::StatusOr<SchemaAt> target = context_.resolve_ref(std::string_view(v), s.pointer);
      if (!target.ok()) return target.status();
      if (absl::Status st = Always(*target, false); !st.ok()) return st;
    }
    for (const char* applicator : {"anyOf", "oneOf"}) {
      if (!has(applicator) || v.type() != element_type::ARRAY) continue;
      std::vector<SchemaAt> branches;
      size_t i = 0;
      for (element branch : simdjson::dom::array(v)) {
        branches.push_back({branch, absl::StrCat(Child(s.pointer, applicator), "/", i++)});
      }
      std::vector<EvaluatedSet> sets;
      bool any = false;
      for (const SchemaAt& branch : branches) {
        absl::StatusOr<EvaluatedSet> set = BranchSet(branch, applicator);
        if (!set.ok()) return set.status();
        any = any || !Empty(*set);
        sets.push_back(*std::move(set));
      }
      if (!any) continue;
      std::vector<EvaluationOption> options;
      if (applicator[0] == 'o') {  // oneOf (kept as is): exactly one branch holds.
        for (size_t b = 0; b < branches.size(); ++b) {
          options.push_back({{{Guard::kValid, branches[b], ""}}, sets[b]});
        }
      } else {  // anyOf: the branches that hold, a non-empty subset.
        if (branches.size() > kMaxAnyOfBranches) {
          return Refuse(applicator, Child(s.pointer, applicator),
                        absl::StrCat("which of its ", branches.size(),
                                     " branches validate (at most 4 are resolved)"));
        }
        for (uint32_t subset = 1; subset < (1u << branches.size()); ++subset) {
          EvaluationOption option;
          for (size_t b = 0; b < branches.size(); ++b) {
            if (!((subset >> b) & 1)) continue;
            option.guards.push_back({Guard::kValid, branches[b], ""});
            EvaluatedUnion(sets[b], &option.evaluated);
          }
          options.push_back(std::move(option));
        }
      }
      choices_.push_back(std::move(options));
    }
    if (has("if")) {
      const SchemaAt condition{v, Child(s.pointer, "if")};
      absl::StatusOr<EvaluatedSet> when = BranchSet(condition, "if");
      if (!when.ok()) return when.status();
      EvaluatedSet then_set, else_set;
      for (const char* branch : {"then", "else"}) {
        if (!has(branch)) continue;
        absl::StatusOr<EvaluatedSet> set = BranchSet({v, Child(s.pointer, branch)}, branch);
        if (!set.ok()) return set.status();
        (branch[0] == 't' ? then_set : else_set) = *std::move(set);
      }
      EvaluatedUnion(then_set, &*when);
      if (!Empty(*when) || !Empty(else_set)) {
        choices_.push_back({{{{Guard::kValid, condition, ""}}, *std::move(when)},
                            {{{Guard::kInvalid, condition, ""}}, std::move(else_set)}});
      }
    }
    for (const char* applicator : kConditionalMaps) {
      if (!has(applicator) || v.type() != element_type::OBJECT) continue;
      for (auto field : simdjson::dom::object(v)) {
        if (field.value.type() == element_type::ARRAY) continue;  // Key lists evaluate nothing.
        const std::string where = Child(Child(s.pointer, applicator), field.key);
        absl::StatusOr<EvaluatedSet> set = BranchSet({field.value, where}, applicator);
        if (!set.ok()) return set.status();
        if (Empty(*set)) continue;
        // Present: the dependent schema's set; absent (or present: the
        // smaller set is the stronger closing, so it may stand for both).
        choices_.push_back({{{{Guard::kKeyPresent, {}, std::string(field.key)}}, *std::move(set)},
                            {{}, EvaluatedSet()}});
      }
    }
    return absl::OkStatus();
  }

  Evaluation Result() && { return {std::move(out_), std::move(choices_)}; }

 private:
  static bool Empty(const EvaluatedSet& e) {
    return !e.all && e.names.empty() && e.patterns.empty() && e.prefix == 0;
  }

  // What a conditional branch evaluates; it must not hold choices itself.
  absl::StatusOr<EvaluatedSet> BranchSet(const SchemaAt& branch, const char* applicator) {
    if (strict_) {
      absl::StatusOr<bool> evaluates = Evaluates(branch);
      if (!evaluates.ok()) return evaluates.status();
      if (*evaluates) return Refuse(applicator, branch.pointer, "whether it validates");
      return EvaluatedSet();
    }
    Walker inner(kind_, context_, at_, /*strict=*/true);
    if (absl::Status st = inner.Always(branch, false); !st.ok()) return st;
    return std::move(inner.out_);
  }

  // Whether `s` (applied to some instances) can evaluate members / items of
  // this instance: it or an in-place subschema (`not` aside) has a keyword
  // that evaluates them.
  absl::StatusOr<bool> Evaluates(const SchemaAt& s) {
    Depth depth(this);
    if (depth_ > kMaxDepth) return TooDeep(s.pointer);
    if (s.value.type() != element_type::OBJECT) return false;
    if (!evaluates_seen_.insert(s.pointer).second) return false;  // Decided where first met.
    simdjson::dom::object obj(s.value);
    element v;
    auto has = [&](const char* k) {
      return context_.known(k) && obj[k].get(v) == simdjson::SUCCESS;
    };
    const bool properties = kind_ == Unevaluated::kProperties;
    for (const char* k :
         properties ? std::vector<const char*>{"properties", "patternProperties",
                                               "additionalProperties", "unevaluatedProperties"}
                    : std::vector<const char*>{"prefixItems", "items", "additionalItems",
                                               "contains", "unevaluatedItems"}) {
      if (has(k)) return true;
    }
    if (has("$dynamicRef") || has("$recursiveRef")) return true;  // Not followed here.
    std::vector<SchemaAt> parts;
    for (const char* applicator : {"allOf", "anyOf", "oneOf", "if", "then", "else"}) {
      if (!has(applicator)) continue;
      const std::string where = Child(s.pointer, applicator);
      if (v.type() == element_type::ARRAY) {
        size_t i = 0;
        for (element branch : simdjson::dom::array(v)) {
          parts.push_back({branch, absl::StrCat(where, "/", i++)});
        }
      } else {
        parts.push_back({v, where});
      }
    }
    for (const char* applicator : kConditionalMaps) {
      if (!has(applicator) || v.type() != element_type::OBJECT) continue;
      for (auto field : simdjson::dom::object(v)) {
        parts.push_back({field.value, Child(Child(s.pointer, applicator), field.key)});
      }
    }
    if (has("$ref") && v.type() == element_type::STRING) {
      absl::StatusOr<SchemaAt> target = context_.resolve_ref(std::string_view(v), s.pointer);
      if (!target.ok()) return target.status();
      parts.push_back(*target);
    }
    for (const SchemaAt& part : parts) {
      absl::StatusOr<bool> evaluates = Evaluates(part);
      if (!evaluates.ok() || *evaluates) return evaluates;
    }
    return false;
  }

  absl::Status Refuse(const std::string& applicator, const std::string& where,
                      const std::string& depends_on) {
    const char* keyword =
        kind_ == Unevaluated::kProperties ? "unevaluatedProperties" : "unevaluatedItems";
    const char* what = kind_ == Unevaluated::kProperties ? "properties" : "items";
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat(
                               "\"", keyword, "\" beside \"", applicator, "\" (the ", what,
                               " evaluated by ", where, " depend on ", depends_on, ") at ", at_)),
                           at_);
  }

  // In-place subschemas (allOf, $ref chains) nest at most this deep here:
  // the walk recurses, and a long $ref chain must not exhaust the stack.
  static constexpr int kMaxDepth = 256;
  struct Depth {
    explicit Depth(Walker* w) : walker(w) { ++walker->depth_; }
    ~Depth() { --walker->depth_; }
    Walker* walker;
  };
  absl::Status TooDeep(const std::string& where) const {
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat(
                               "in-place subschemas nest deeper than ", kMaxDepth,
                               " below an unevaluated keyword (at ", where, ") at ", at_)),
                           at_);
  }

  static void Add(std::vector<std::string>* to, std::string s) {
    if (std::find(to->begin(), to->end(), s) == to->end()) to->push_back(std::move(s));
  }

  const Unevaluated kind_;
  const EvaluationContext& context_;
  const std::string at_;
  const bool strict_;
  int depth_ = 0;
  EvaluatedSet out_;
  std::vector<std::vector<EvaluationOption>> choices_;
  absl::flat_hash_set<std::string> always_seen_, evaluates_seen_;
};

}  // namespace

absl::StatusOr<Evaluation> EvaluatedBy(const SchemaAt& schema, Unevaluated kind,
                                       const EvaluationContext& context,
                                       const std::string& keyword_pointer) {
  Walker walker(kind, context, keyword_pointer, /*strict=*/false);
  if (absl::Status s = walker.Always(schema, /*own=*/true); !s.ok()) return s;
  return std::move(walker).Result();
}

}  // namespace maskd::json_schema
