#include "compiler/json_schema/unevaluated.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
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
// A conditional's options (with those of the conditionals nested in its
// branches) past this many are refused.
constexpr size_t kMaxOptions = 64;

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
  for (const SchemaAt& c : from.contains) {
    if (std::none_of(into->contains.begin(), into->contains.end(),
                     [&](const SchemaAt& x) { return x.pointer == c.pointer; })) {
      into->contains.push_back(c);
    }
  }
}

namespace {

class Walker {
 public:
  // A branch's options by its pointer, shared by the walks of one keyword:
  // they depend on the branch alone, and a branch reached along many paths
  // (a $defs chain of anyOf pairs) would otherwise be walked once per path.
  using Memo = absl::flat_hash_map<std::string, std::vector<EvaluationOption>>;

  // `depth`: how deep the walk that starts this one (a branch's) already is.
  Walker(Unevaluated kind, const EvaluationContext& context, const std::string& keyword_pointer,
         int depth, Memo* memo)
      : kind_(kind), context_(context), at_(keyword_pointer), depth_(depth), memo_(memo) {}

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
        EvaluatedSet matched;
        matched.contains.push_back({v, Child(s.pointer, "contains")});
        EvaluatedUnion(matched, &out_);
      }
    }
    if (has("$dynamicRef") && v.type() == element_type::STRING && context_.resolve_dynamic_ref) {
      absl::StatusOr<std::optional<SchemaAt>> target =
          context_.resolve_dynamic_ref(std::string_view(v), s.pointer);
      if (!target.ok()) return target.status();
      if (!*target) return Refuse("$dynamicRef", Child(s.pointer, "$dynamicRef"), "its target");
      if (absl::Status st = Always(**target, false); !st.ok()) return st;
    } else if (has("$dynamicRef")) {
      return Refuse("$dynamicRef", Child(s.pointer, "$dynamicRef"), "its target");
    }
    if (has("$recursiveRef")) {
      return Refuse("$recursiveRef", Child(s.pointer, "$recursiveRef"), "its target");
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
      std::vector<std::vector<EvaluationOption>> per_branch;
      bool any = false;
      for (const SchemaAt& branch : branches) {
        absl::StatusOr<std::vector<EvaluationOption>> options = BranchOptions(branch);
        if (!options.ok()) return options.status();
        any = any || !AllEmpty(*options);
        per_branch.push_back(Guarded({Guard::kValid, branch, ""}, *std::move(options)));
      }
      if (!any) continue;
      std::vector<EvaluationOption> options;
      if (applicator[0] == 'o') {  // oneOf (kept as is): exactly one branch holds.
        for (const std::vector<EvaluationOption>& branch_options : per_branch) {
          options.insert(options.end(), branch_options.begin(), branch_options.end());
        }
      } else {  // anyOf: the branches that hold, a non-empty subset.
        if (branches.size() > kMaxAnyOfBranches) {
          return Refuse(applicator, Child(s.pointer, applicator),
                        absl::StrCat("which of its ", branches.size(),
                                     " branches validate (at most 4 are resolved)"));
        }
        for (uint32_t subset = 1; subset < (1u << branches.size()); ++subset) {
          std::vector<EvaluationOption> combined = {EvaluationOption()};
          for (size_t b = 0; b < branches.size(); ++b) {
            if ((subset >> b) & 1) combined = Product(combined, per_branch[b]);
          }
          options.insert(options.end(), combined.begin(), combined.end());
        }
      }
      if (options.size() > kMaxOptions) return TooManyOptions(applicator, s.pointer);
      choices_.push_back(std::move(options));
    }
    if (has("if")) {
      const SchemaAt condition{v, Child(s.pointer, "if")};
      absl::StatusOr<std::vector<EvaluationOption>> when = BranchOptions(condition);
      if (!when.ok()) return when.status();
      std::vector<EvaluationOption> then_options = {EvaluationOption()};
      std::vector<EvaluationOption> else_options = {EvaluationOption()};
      for (const char* branch : {"then", "else"}) {
        if (!has(branch)) continue;
        absl::StatusOr<std::vector<EvaluationOption>> options =
            BranchOptions({v, Child(s.pointer, branch)});
        if (!options.ok()) return options.status();
        (branch[0] == 't' ? then_options : else_options) = *std::move(options);
      }
      // `if` holds: its options with then's; it fails: else's.
      std::vector<EvaluationOption> options =
          Product(Guarded({Guard::kValid, condition, ""}, *std::move(when)), then_options);
      const bool evaluates = !AllEmpty(options) || !AllEmpty(else_options);
      for (EvaluationOption& o : Guarded({Guard::kInvalid, condition, ""}, else_options)) {
        options.push_back(std::move(o));
      }
      if (options.size() > kMaxOptions) return TooManyOptions("if", s.pointer);
      if (evaluates) choices_.push_back(std::move(options));
    }
    for (const char* applicator : kConditionalMaps) {
      if (!has(applicator) || v.type() != element_type::OBJECT) continue;
      for (auto field : simdjson::dom::object(v)) {
        if (field.value.type() == element_type::ARRAY) continue;  // Key lists evaluate nothing.
        const std::string where = Child(Child(s.pointer, applicator), field.key);
        absl::StatusOr<std::vector<EvaluationOption>> set = BranchOptions({field.value, where});
        if (!set.ok()) return set.status();
        if (AllEmpty(*set)) continue;
        // Present: the dependent schema's options; absent (or present: the
        // smaller set is the stronger closing, so it may stand for both).
        std::vector<EvaluationOption> options =
            Guarded({Guard::kKeyPresent, {}, std::string(field.key)}, *std::move(set));
        options.push_back(EvaluationOption());
        if (options.size() > kMaxOptions) return TooManyOptions(applicator, s.pointer);
        choices_.push_back(std::move(options));
      }
    }
    return absl::OkStatus();
  }

  Evaluation Result() && { return {std::move(out_), std::move(choices_)}; }

 private:
  static bool Empty(const EvaluatedSet& e) {
    return !e.all && e.names.empty() && e.patterns.empty() && e.prefix == 0 && e.contains.empty();
  }

  static bool AllEmpty(const std::vector<EvaluationOption>& options) {
    return std::all_of(options.begin(), options.end(),
                       [](const EvaluationOption& o) { return Empty(o.evaluated); });
  }

  // `guard` added to every option.
  static std::vector<EvaluationOption> Guarded(const Guard& guard,
                                               std::vector<EvaluationOption> options) {
    for (EvaluationOption& o : options) o.guards.insert(o.guards.begin(), guard);
    return options;
  }

  // Every pair of an option of `a` and one of `b`: both guards, both sets.
  static std::vector<EvaluationOption> Product(const std::vector<EvaluationOption>& a,
                                               const std::vector<EvaluationOption>& b) {
    std::vector<EvaluationOption> out;
    for (const EvaluationOption& x : a) {
      for (const EvaluationOption& y : b) {
        EvaluationOption both = x;
        both.guards.insert(both.guards.end(), y.guards.begin(), y.guards.end());
        EvaluatedUnion(y.evaluated, &both.evaluated);
        out.push_back(std::move(both));
      }
    }
    return out;
  }

  // What a conditional branch evaluates where it validates: its
  // always-applied set with each combination of the options of the
  // conditionals inside it (their guards hold inside a valid branch, so the
  // closing stays monotone and exact, as for the outermost ones).
  absl::StatusOr<std::vector<EvaluationOption>> BranchOptions(const SchemaAt& branch) {
    if (auto known = memo_->find(branch.pointer); known != memo_->end()) return known->second;
    Walker inner(kind_, context_, at_, depth_, memo_);
    if (absl::Status st = inner.Always(branch, false); !st.ok()) return st;
    std::vector<EvaluationOption> options = {{{}, std::move(inner.out_)}};
    for (const std::vector<EvaluationOption>& choice : inner.choices_) {
      options = Product(options, choice);
      if (options.size() > kMaxOptions) return TooManyOptions("the conditionals", branch.pointer);
    }
    memo_->emplace(branch.pointer, options);
    return options;
  }

  absl::Status TooManyOptions(const std::string& applicator, const std::string& where) {
    return Refuse(
        applicator, where,
        absl::StrCat("which of its branches validate (more than ", kMaxOptions, " combinations)"));
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
  int depth_ = 0;
  Memo* const memo_;
  EvaluatedSet out_;
  std::vector<std::vector<EvaluationOption>> choices_;
  absl::flat_hash_set<std::string> always_seen_;
};

}  // namespace

absl::StatusOr<Evaluation> EvaluatedBy(const SchemaAt& schema, Unevaluated kind,
                                       const EvaluationContext& context,
                                       const std::string& keyword_pointer) {
  Walker::Memo memo;
  Walker walker(kind, context, keyword_pointer, /*depth=*/0, &memo);
  if (absl::Status s = walker.Always(schema, /*own=*/true); !s.ok()) return s;
  return std::move(walker).Result();
}

}  // namespace maskd::json_schema
