#include "compiler/json_schema/parse_schema.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/exact_numbers.h"
#include "compiler/json_schema/metaschemas.h"
#include "compiler/json_schema/normalize.h"
#include "compiler/json_schema/unevaluated.h"
#include "compiler/json_schema/uri.h"
#include "simdjson.h"

namespace maskd::json_schema {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

enum class KeywordClass { kHandled, kAnnotation, kUnsupported };

const absl::flat_hash_map<std::string_view, KeywordClass>& KeywordTable() {
  static const auto* table = new absl::flat_hash_map<std::string_view, KeywordClass>{
      // Handled validation keywords and identifiers.
      {"type", KeywordClass::kHandled},
      {"enum", KeywordClass::kHandled},
      {"const", KeywordClass::kHandled},
      {"minLength", KeywordClass::kHandled},
      {"maxLength", KeywordClass::kHandled},
      {"pattern", KeywordClass::kHandled},
      {"format", KeywordClass::kHandled},
      {"minimum", KeywordClass::kHandled},
      {"maximum", KeywordClass::kHandled},
      {"exclusiveMinimum", KeywordClass::kHandled},
      {"exclusiveMaximum", KeywordClass::kHandled},
      {"multipleOf", KeywordClass::kHandled},
      {"items", KeywordClass::kHandled},
      {"prefixItems", KeywordClass::kHandled},
      {"additionalItems", KeywordClass::kHandled},
      {"minItems", KeywordClass::kHandled},
      {"maxItems", KeywordClass::kHandled},
      {"uniqueItems", KeywordClass::kHandled},
      {"contains", KeywordClass::kHandled},
      {"minContains", KeywordClass::kHandled},
      {"maxContains", KeywordClass::kHandled},
      {"properties", KeywordClass::kHandled},
      {"required", KeywordClass::kHandled},
      {"additionalProperties", KeywordClass::kHandled},
      {"patternProperties", KeywordClass::kHandled},
      {"propertyNames", KeywordClass::kHandled},
      {"minProperties", KeywordClass::kHandled},
      {"maxProperties", KeywordClass::kHandled},
      {"dependentRequired", KeywordClass::kHandled},
      {"dependentSchemas", KeywordClass::kHandled},
      {"dependencies", KeywordClass::kHandled},
      {"allOf", KeywordClass::kHandled},
      {"anyOf", KeywordClass::kHandled},
      {"oneOf", KeywordClass::kHandled},
      {"not", KeywordClass::kHandled},
      {"if", KeywordClass::kHandled},
      {"then", KeywordClass::kHandled},
      {"else", KeywordClass::kHandled},
      {"$ref", KeywordClass::kHandled},
      {"$id", KeywordClass::kHandled},
      {"$anchor", KeywordClass::kHandled},
      {"$dynamicAnchor", KeywordClass::kHandled},
      {"$recursiveAnchor", KeywordClass::kHandled},
      // Resolved statically where the dynamic scope cannot change the target
      // (Parser::NodeForDynamicRef), refused by name where it can.
      {"$dynamicRef", KeywordClass::kHandled},
      {"$recursiveRef", KeywordClass::kHandled},
      // Annotations and containers: no effect on validation.
      {"$schema", KeywordClass::kAnnotation},
      {"$vocabulary", KeywordClass::kAnnotation},
      {"$comment", KeywordClass::kAnnotation},
      {"$defs", KeywordClass::kAnnotation},
      {"definitions", KeywordClass::kAnnotation},
      {"title", KeywordClass::kAnnotation},
      {"description", KeywordClass::kAnnotation},
      {"default", KeywordClass::kAnnotation},
      {"examples", KeywordClass::kAnnotation},
      {"deprecated", KeywordClass::kAnnotation},
      {"readOnly", KeywordClass::kAnnotation},
      {"writeOnly", KeywordClass::kAnnotation},
      {"contentMediaType", KeywordClass::kAnnotation},
      {"contentEncoding", KeywordClass::kAnnotation},
      {"contentSchema", KeywordClass::kAnnotation},
      // Validation keywords we cannot honour: ignoring them would widen.
      {"unevaluatedProperties", KeywordClass::kHandled},
      {"unevaluatedItems", KeywordClass::kHandled},
  };
  return *table;
}

// Combinations of what conditional applicators beside an unevaluated keyword
// evaluate, past which it is refused (each is an anyOf branch).
constexpr size_t kMaxUnevaluatedCombinations = 64;

// The draft that introduced a keyword: in a schema that declares an older
// draft it is an unknown keyword (validators of that draft ignore it, and
// MaskBench's verdicts follow the declared draft).
Draft IntroducedIn(std::string_view k) {
  if (k == "const" || k == "contains" || k == "propertyNames") return Draft::kDraft6;
  if (k == "if" || k == "then" || k == "else") return Draft::kDraft7;
  if (k == "dependentRequired" || k == "dependentSchemas" || k == "minContains" ||
      k == "maxContains" || k == "$anchor" || k == "$recursiveAnchor" || k == "$recursiveRef" ||
      k == "unevaluatedProperties" || k == "unevaluatedItems") {
    return Draft::kDraft2019_09;
  }
  if (k == "prefixItems" || k == "$dynamicRef" || k == "$dynamicAnchor") {
    return Draft::kDraft2020_12;
  }
  return Draft::kDraft4;
}

// The draft that dropped a keyword (kDraft4 = never): in a schema that
// DECLARES that draft or a later one it is an unknown keyword, ignored as
// validators of that draft do (python3-jsonschema's 2019-09 and 2020-12
// validators ignore `dependencies`; 2020-12 replaced `$recursiveRef`).
// Without a `$schema` the keyword keeps its older meaning: such schemas are
// often written for draft 7, and applying it only narrows the language.
// (`additionalItems` stays: array-form `items` is read in every draft, and
// additionalItems only acts beside it.)
Draft RemovedIn(std::string_view k) {
  if (k == "dependencies") return Draft::kDraft2019_09;
  if (k == "$recursiveRef" || k == "$recursiveAnchor") return Draft::kDraft2020_12;
  return Draft::kDraft4;
}

bool KnownInDraft(std::string_view k, Draft draft, bool declared) {
  const Draft removed = RemovedIn(k);
  return IntroducedIn(k) <= draft && (!declared || removed == Draft::kDraft4 || draft < removed);
}

// Keywords whose value is a map from names to schemas / a list of schemas /
// one schema: where $id and $anchor may sit.
bool IsSchemaMapKeyword(std::string_view k) {
  return k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" ||
         k == "dependentSchemas" || k == "dependencies";
}
bool IsSchemaListKeyword(std::string_view k) {
  return k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems" || k == "items";
}
bool IsSchemaKeyword(std::string_view k) {
  return k == "additionalProperties" || k == "additionalItems" || k == "items" || k == "contains" ||
         k == "propertyNames" || k == "not" || k == "if" || k == "then" || k == "else" ||
         k == "unevaluatedItems" || k == "unevaluatedProperties" || k == "contentSchema";
}

// Debian's abseil has its own string_view: convert explicitly.
std::string AsString(std::string_view s) { return std::string(s); }
std::string AsString(absl::string_view s) { return std::string(s); }

std::string At(const std::string& pointer) { return pointer.empty() ? "/" : pointer; }

std::string Child(const std::string& pointer, std::string_view token) {
  return absl::StrCat(pointer, "/", EscapePointerToken(token));
}

Draft DraftOf(std::string_view uri) {
  if (uri.find("draft-03") != uri.npos || uri.find("draft-04") != uri.npos) {
    return Draft::kDraft4;
  }
  if (uri.find("draft-06") != uri.npos) return Draft::kDraft6;
  if (uri.find("draft-07") != uri.npos) return Draft::kDraft7;
  if (uri.find("2019-09") != uri.npos) return Draft::kDraft2019_09;
  return Draft::kDraft2020_12;
}

absl::StatusOr<Decimal> ToDecimal(element e, const ExactNumbers& exact) {
  switch (e.type()) {
    case element_type::STRING:
      if (std::optional<Decimal> d = exact.Lookup(std::string_view(e))) return *d;
      return absl::InvalidArgumentError("not a number");
    case element_type::INT64:
      return Decimal::FromInt64(int64_t(e));
    case element_type::UINT64:
      return Decimal::FromUint64(uint64_t(e));
    case element_type::DOUBLE:
      return Decimal::FromDouble(double(e));
    default:
      return absl::InvalidArgumentError("not a number");
  }
}

absl::StatusOr<JsonValue> ToJsonValue(element e, const ExactNumbers& exact) {
  switch (e.type()) {
    case element_type::NULL_VALUE:
      return JsonValue();
    case element_type::BOOL:
      return JsonValue::Boolean(bool(e));
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: {
      absl::StatusOr<Decimal> d = ToDecimal(e, exact);
      if (!d.ok()) return d.status();
      return JsonValue::Number(*d);
    }
    case element_type::STRING:
      if (std::optional<Decimal> d = exact.Lookup(std::string_view(e))) {
        return JsonValue::Number(*d);
      }
      return JsonValue::String(std::string(std::string_view(e)));
    case element_type::ARRAY: {
      std::vector<JsonValue> items;
      for (element item : simdjson::dom::array(e)) {
        absl::StatusOr<JsonValue> v = ToJsonValue(item, exact);
        if (!v.ok()) return v.status();
        items.push_back(*std::move(v));
      }
      return JsonValue::Array(std::move(items));
    }
    case element_type::OBJECT: {
      std::vector<std::pair<std::string, JsonValue>> members;
      for (auto field : simdjson::dom::object(e)) {
        absl::StatusOr<JsonValue> v = ToJsonValue(field.value, exact);
        if (!v.ok()) return v.status();
        members.emplace_back(std::string(field.key), *std::move(v));
      }
      return JsonValue::Object(std::move(members));
    }
  }
  return absl::InternalError("unknown JSON element type");
}

// Pointers into other documents than the schema are "URI#POINTER"; JSON
// pointers into the schema itself are empty or start with '/'.
bool IsInOtherDocument(std::string_view pointer) { return !pointer.empty() && pointer[0] != '/'; }
// "URI#" for a pointer into another document, "" for one into the schema.
std::string DocumentPrefix(std::string_view pointer) {
  if (!IsInOtherDocument(pointer)) return "";
  return std::string(pointer.substr(0, pointer.find('#') + 1));
}
bool IsDocumentRoot(std::string_view pointer) {
  return IsInOtherDocument(pointer) && pointer.find('#') == pointer.size() - 1;
}

class Parser {
 public:
  explicit Parser(const ParseOptions& options) : options_(options) {}

  absl::StatusOr<Schema> Run(std::string_view text);

 private:
  // For each anchor name whose $dynamicRef target depends on the path
  // (tracked_), the outermost resource of the dynamic scope declaring it.
  // Nodes are made per (pointer, scope): the same subschema reached along
  // paths that entered different resources first is a different node.
  using DynamicScope = std::map<std::string, std::string>;
  struct Pending {
    NodeId id;
    element value;
    std::string pointer;
    DynamicScope scope;
  };

  absl::Status Index(element e, const std::string& pointer, const std::string& base);
  void IndexChildren(element e, const std::string& pointer, const std::string& base,
                     absl::Status* status);
  // The node for the schema `value` at `pointer`, created (and queued for
  // filling) on first use.
  absl::StatusOr<NodeId> NodeFor(element value, const std::string& pointer);
  absl::StatusOr<NodeId> NodeForRef(std::string_view ref, const std::string& base,
                                    const std::string& at, std::string_view keyword = "$ref");
  absl::StatusOr<std::pair<element, std::string>> ResolveRef(std::string_view ref,
                                                             const std::string& base,
                                                             const std::string& at,
                                                             std::string_view keyword);
  // Another document named by `uri` (no fragment), from the caller's
  // resources or the built-in metaschemas: parsed and indexed under the
  // pointer prefix "URI#". False when no such document is known.
  absl::StatusOr<bool> LoadDocument(const std::string& uri, const std::string& at,
                                    std::string_view keyword);
  // The element at `pointer`: a JSON pointer into the schema, or "URI#POINTER"
  // into a loaded document.
  bool Locate(const std::string& pointer, element* out) const;
  absl::StatusOr<NodeId> NodeForDynamicRef(std::string_view ref, const std::string& base,
                                           const std::string& at);
  // The $dynamicRef's target where it does not depend on the path from the
  // node being filled (the same decisions as NodeForDynamicRef, for
  // unevaluated keywords): nullopt where it does.
  absl::StatusOr<std::optional<std::pair<element, std::string>>> StaticDynamicRefTarget(
      std::string_view ref, const std::string& base, const std::string& at);
  absl::StatusOr<NodeId> NodeForRecursiveRef(std::string_view ref, const std::string& base,
                                             const std::string& at);
  absl::Status RecheckDynamicDecisions() const;
  std::string BaseFor(const std::string& pointer);
  absl::Status Fill(const Pending& p);
  absl::Status Keyword(std::string_view key, element v, const std::string& ptr, SchemaNode* node);

  // unevaluatedProperties / unevaluatedItems as an allOf part over the
  // members (items) that the schema's always-applied parts leave
  // unevaluated (unevaluated.h); refused by name where that set depends on
  // the instance.
  absl::Status AddUnevaluated(Unevaluated kind, element value, simdjson::dom::element schema,
                              const std::string& ptr, SchemaNode* node);

  absl::Status Malformed(const std::string& ptr, std::string_view key, std::string_view what) {
    const std::string at = Child(ptr, key);
    return WithJsonPointer(absl::InvalidArgumentError(absl::StrCat("\"", AsString(key), "\" ",
                                                                   AsString(what), " at ", at)),
                           at);
  }
  absl::StatusOr<uint64_t> Count(element v, const std::string& ptr, std::string_view key);
  absl::StatusOr<std::vector<std::string>> StringList(element v, const std::string& ptr,
                                                      std::string_view key);
  absl::StatusOr<std::vector<NodeId>> SchemaList(element v, const std::string& ptr,
                                                 std::string_view key);
  absl::Status DraftSevenContent(std::string_view key, element v, const std::string& ptr,
                                 SchemaNode* node);
  void Ignore(std::string_view key, const std::string& ptr) {
    schema_.ignored_keywords.push_back({std::string(key), ptr});
  }
  NodeId NewNode(std::string pointer) {
    schema_.nodes.emplace_back();
    schema_.nodes.back().pointer = std::move(pointer);
    return static_cast<NodeId>(schema_.nodes.size() - 1);
  }

  const ParseOptions& options_;
  // Literals of every document the DOM would not hold exactly.
  ExactNumbers numbers_;
  simdjson::dom::parser parser_;
  element root_;
  // Loaded documents by pointer prefix ("URI#"), each with its own parser
  // (a simdjson parser holds one document).
  struct Document {
    std::unique_ptr<simdjson::dom::parser> parser;
    element root;
  };
  absl::flat_hash_map<std::string, Document> documents_;
  Schema schema_;
  bool draft_declared_ = false;  // The root has a `$schema`.
  std::deque<Pending> pending_;
  absl::flat_hash_map<std::string, NodeId> node_by_pointer_;
  absl::flat_hash_map<std::string, std::string> resource_pointer_;  // URI -> pointer.
  absl::flat_hash_map<std::string, std::string> anchor_pointer_;    // URI#name -> pointer.
  absl::flat_hash_map<std::string, std::string> base_by_pointer_;
  // 2020-12 $dynamicAnchor names -> the resources (URIs) declaring them, and
  // the 2019-09 resources whose root has "$recursiveAnchor": true.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> dynamic_anchor_resources_;
  absl::flat_hash_set<std::string> recursive_anchor_resources_;
  // Names several resources declare as $dynamicAnchor and the root does not.
  absl::flat_hash_set<std::string> tracked_;
  DynamicScope scope_;  // Of the node being filled.
  // Strict mode's unknown keywords (where their value is, the error), in the
  // order met: UnknownKeywordError() decides which stand.
  std::vector<std::pair<std::string, absl::Status>> unknown_keywords_;
  absl::Status UnknownKeywordError() const;
  // Static resolutions that relied on one resource declaring an anchor: the
  // name ("" for $recursiveAnchor) and where, re-checked once every place a
  // $ref reached has been indexed.
  std::vector<std::pair<std::string, std::string>> single_resource_decisions_;
  // The documents (URIs without fragment) that indexed $refs and
  // $dynamicRefs name, in the order met: PreloadDocuments() loads the other
  // documents among them before the dynamic anchors are counted.
  std::vector<std::string> referenced_documents_;
  absl::Status PreloadDocuments();
  // Per-node state of the keyword loop (numeric forms that pair up).
  struct Bounds {
    std::optional<Decimal> minimum, maximum, exclusive_minimum, exclusive_maximum;
    bool minimum_is_exclusive = false, maximum_is_exclusive = false;
    bool items_is_list = false;
    std::optional<element> unevaluated_items;
    std::optional<element> unevaluated_properties;
    std::optional<element> additional_items;
    std::optional<std::vector<JsonValue>> enum_values;
    std::optional<JsonValue> const_value;
    bool has_additional_properties = false;
  } bounds_;
};

absl::Status Parser::Index(element e, const std::string& pointer, const std::string& base) {
  absl::Status status;
  if (e.type() != element_type::OBJECT) {
    IndexChildren(e, pointer, base, &status);
    return status;
  }
  simdjson::dom::object obj(e);
  std::string new_base = base;
  std::string_view id;
  // Draft 4 spells the keyword `id`; there `$id` is an unknown keyword and
  // names nothing (and from draft 6 on `id` is the unknown one).
  const bool has_id =
      obj[schema_.draft == Draft::kDraft4 ? "id" : "$id"].get(id) == simdjson::SUCCESS;
  // Before 2019-09 every keyword beside $ref is ignored, $id included: it
  // neither changes the base URI (the $ref resolves against the enclosing
  // one) nor names a resource.
  const bool id_counts =
      has_id && !(schema_.draft <= Draft::kDraft7 && obj["$ref"].error() == simdjson::SUCCESS);
  std::string base_no_fragment, unused;
  bool starts_resource = pointer.empty() || IsDocumentRoot(pointer);
  if (id_counts) {
    std::string resolved = ResolveUri(base, id);
    std::string fragment;
    SplitFragment(resolved, &base_no_fragment, &fragment);
    if (!id.empty() && id[0] == '#') {
      // Draft 6/7 "#name" ids are anchors in the current resource.
      if (!fragment.empty()) anchor_pointer_.try_emplace(resolved, pointer);
    } else {
      new_base = base_no_fragment;
      resource_pointer_.try_emplace(base_no_fragment, pointer);
      starts_resource = true;
      if (!fragment.empty() && fragment[0] != '/') {
        anchor_pointer_.try_emplace(resolved, pointer);
      }
    }
  }
  SplitFragment(new_base, &base_no_fragment, &unused);
  for (const char* key : {"$ref", "$dynamicRef"}) {
    std::string_view ref;
    if (obj[key].get(ref) == simdjson::SUCCESS) {
      std::string uri, fragment;
      SplitFragment(ResolveUri(new_base, ref), &uri, &fragment);
      referenced_documents_.push_back(std::move(uri));
    }
  }
  for (const char* key : {"$anchor", "$dynamicAnchor"}) {
    std::string_view anchor;
    if (obj[key].get(anchor) == simdjson::SUCCESS) {
      anchor_pointer_.try_emplace(absl::StrCat(base_no_fragment, "#", AsString(anchor)), pointer);
      if (key[1] == 'd' && schema_.draft == Draft::kDraft2020_12) {
        dynamic_anchor_resources_[AsString(anchor)].insert(base_no_fragment);
      }
    }
  }
  // 2019-09 reads "$recursiveAnchor" only at a resource's root (recorded in
  // every draft: without a declared $schema, 2020-12 still reads $recursiveRef).
  bool recursive_anchor = false;
  if (starts_resource && obj["$recursiveAnchor"].get(recursive_anchor) == simdjson::SUCCESS &&
      recursive_anchor) {
    recursive_anchor_resources_.insert(base_no_fragment);
  }
  base_by_pointer_[pointer] = new_base;
  IndexChildren(e, pointer, new_base, &status);
  return status;
}

void Parser::IndexChildren(element e, const std::string& pointer, const std::string& base,
                           absl::Status* status) {
  if (e.type() != element_type::OBJECT) return;
  for (auto field : simdjson::dom::object(e)) {
    if (!status->ok()) return;
    std::string_view key = field.key;
    element v = field.value;
    std::string child = Child(pointer, key);
    if (IsSchemaMapKeyword(key) && v.type() == element_type::OBJECT) {
      for (auto member : simdjson::dom::object(v)) {
        if (member.value.type() == element_type::OBJECT) {
          *status = Index(member.value, Child(child, member.key), base);
        }
      }
    } else if (IsSchemaListKeyword(key) && v.type() == element_type::ARRAY) {
      size_t i = 0;
      for (element item : simdjson::dom::array(v)) {
        *status = Index(item, absl::StrCat(child, "/", i++), base);
      }
    } else if (IsSchemaKeyword(key) && v.type() == element_type::OBJECT) {
      *status = Index(v, child, base);
    }
  }
}

std::string Parser::BaseFor(const std::string& pointer) {
  std::string p = pointer;
  while (true) {
    auto it = base_by_pointer_.find(p);
    if (it != base_by_pointer_.end()) return it->second;
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return std::string(kDefaultBaseUri);
    p.resize(slash);
  }
}

absl::StatusOr<NodeId> Parser::NodeFor(element value, const std::string& pointer) {
  if (value.type() == element_type::BOOL) return bool(value) ? kTrueNode : kFalseNode;
  if (value.type() != element_type::OBJECT) {
    return WithJsonPointer(absl::InvalidArgumentError(absl::StrCat(
                               "a schema must be an object or a boolean at ", At(pointer))),
                           At(pointer));
  }
  if (!base_by_pointer_.contains(pointer)) {
    // Reached through a $ref into a place the index did not visit.
    if (absl::Status s = Index(value, pointer, BaseFor(pointer)); !s.ok()) return s;
  }
  // Evaluating the schema enters its resource: the outermost declaration of
  // a tracked name is the first resource on the path that declares it.
  DynamicScope scope = scope_;
  std::string key = pointer;
  if (!tracked_.empty()) {
    std::string resource, unused;
    SplitFragment(BaseFor(pointer), &resource, &unused);
    for (const std::string& name : tracked_) {
      if (!scope.contains(name) && dynamic_anchor_resources_[name].contains(resource)) {
        scope[name] = resource;
      }
    }
    for (const auto& [name, declaring] : scope) absl::StrAppend(&key, "\n", name, "=", declaring);
  }
  auto it = node_by_pointer_.find(key);
  if (it != node_by_pointer_.end()) return it->second;
  if (static_cast<int>(schema_.nodes.size()) >= options_.max_nodes) {
    return WithJsonPointer(
        absl::ResourceExhaustedError(
            absl::StrCat("schema has more than ", options_.max_nodes, " nodes at ", At(pointer))),
        At(pointer));
  }
  NodeId id = NewNode(pointer);
  node_by_pointer_[key] = id;
  pending_.push_back({id, value, pointer, std::move(scope)});
  return id;
}

absl::StatusOr<NodeId> Parser::NodeForRef(std::string_view ref, const std::string& base,
                                          const std::string& at, std::string_view keyword) {
  absl::StatusOr<std::pair<element, std::string>> target = ResolveRef(ref, base, at, keyword);
  if (!target.ok()) return target.status();
  return NodeFor(target->first, target->second);
}

absl::StatusOr<std::pair<element, std::string>> Parser::ResolveRef(std::string_view ref,
                                                                   const std::string& base,
                                                                   const std::string& at,
                                                                   std::string_view keyword) {
  std::string resolved = ResolveUri(base, ref);
  std::string uri, fragment;
  SplitFragment(resolved, &uri, &fragment);
  fragment = PercentDecode(fragment);
  auto unresolvable = [&](std::string_view why) {
    return WithJsonPointer(absl::InvalidArgumentError(absl::StrCat(
                               "unresolvable ", AsString(keyword), " \"", AsString(ref), "\" (",
                               AsString(why), ") at ", Child(at, keyword))),
                           Child(at, keyword));
  };
  auto resource = resource_pointer_.find(uri);
  if (resource == resource_pointer_.end()) {
    absl::StatusOr<bool> loaded = LoadDocument(uri, at, keyword);
    if (!loaded.ok()) return loaded.status();
    if (*loaded) resource = resource_pointer_.find(uri);
  }
  if (resource == resource_pointer_.end()) {
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat(
                               "remote ", AsString(keyword), " \"", AsString(ref), "\" (", uri,
                               ") is not supported at ", Child(at, keyword))),
                           Child(at, keyword));
  }
  std::string pointer;
  if (fragment.empty() || fragment[0] == '/') {
    pointer = resource->second + fragment;
    element target;
    if (!Locate(pointer, &target)) {
      // Common authoring mistake: a pointer meant from the document root
      // inside a sub-resource with its own $id.
      pointer = DocumentPrefix(resource->second) + fragment;
      if (!Locate(pointer, &target)) return unresolvable("no such location");
    }
    return std::make_pair(target, pointer);
  }
  auto anchor = anchor_pointer_.find(absl::StrCat(uri, "#", fragment));
  if (anchor == anchor_pointer_.end()) return unresolvable("no such anchor");
  element target;
  if (!Locate(anchor->second, &target)) {
    return unresolvable("anchor location vanished");
  }
  return std::make_pair(target, anchor->second);
}

bool Parser::Locate(const std::string& pointer, element* out) const {
  if (!IsInOtherDocument(pointer)) return root_.at_pointer(pointer).get(*out) == simdjson::SUCCESS;
  const size_t hash = pointer.find('#');
  auto document = documents_.find(pointer.substr(0, hash + 1));
  if (document == documents_.end()) return false;
  return document->second.root.at_pointer(std::string_view(pointer).substr(hash + 1)).get(*out) ==
         simdjson::SUCCESS;
}

absl::StatusOr<bool> Parser::LoadDocument(const std::string& uri, const std::string& at,
                                          std::string_view keyword) {
  std::optional<std::string_view> text;
  for (const SchemaResource& r : options_.resources) {
    std::string resource_uri, unused;
    SplitFragment(ResolveUri(kDefaultBaseUri, r.uri), &resource_uri, &unused);
    if (resource_uri == uri) {
      text = r.text;
      break;
    }
  }
  if (!text) text = BuiltinMetaschema(uri);
  if (!text) return false;
  const std::string here = Child(at, keyword);
  const std::string prefix = uri + "#";
  auto refuse = [&](absl::Status status) { return WithJsonPointer(std::move(status), here); };
  if (int64_t too_deep = JsonDepthViolation(*text, options_.max_depth); too_deep >= 0) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("document ", uri, " nests deeper than ", options_.max_depth,
                     " (max_recursion_depth) at byte ", too_deep, "; referred to at ", here)));
  }
  Document document;
  document.parser = std::make_unique<simdjson::dom::parser>();
  simdjson::padded_string padded(numbers_.Protect(*text));
  if (auto error = document.parser->parse(padded).get(document.root); error) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("document ", uri, " is not valid JSON: ", simdjson::error_message(error),
                     "; referred to at ", here)));
  }
  // One draft per compile: a document declaring another one would need its
  // own rules for its part of the language.
  std::string_view declared;
  if (document.root.type() == element_type::OBJECT &&
      document.root["$schema"].get(declared) == simdjson::SUCCESS &&
      DraftOf(declared) != schema_.draft) {
    return refuse(absl::UnimplementedError(absl::StrCat(
        "remote ", AsString(keyword), " to ", uri, ", which declares \"$schema\": \"",
        AsString(declared), "\" (another draft than the referring schema's) at ", here)));
  }
  const element root = document.root;
  documents_.emplace(prefix, std::move(document));
  resource_pointer_[uri] = prefix;
  if (absl::Status s = Index(root, prefix, uri); !s.ok()) return s;
  return true;
}

absl::Status Parser::AddUnevaluated(Unevaluated kind, element value, element schema,
                                    const std::string& ptr, SchemaNode* node) {
  const char* keyword =
      kind == Unevaluated::kProperties ? "unevaluatedProperties" : "unevaluatedItems";
  const std::string at = Child(ptr, keyword);
  EvaluationContext context;
  context.draft = schema_.draft;
  context.known = [this](std::string_view k) {
    return KeywordTable().contains(k) && KnownInDraft(k, schema_.draft, draft_declared_);
  };
  context.resolve_ref = [this](std::string_view ref,
                               const std::string& pointer) -> absl::StatusOr<SchemaAt> {
    absl::StatusOr<std::pair<element, std::string>> target =
        ResolveRef(ref, BaseFor(pointer), pointer, "$ref");
    if (!target.ok()) return target.status();
    return SchemaAt{target->first, target->second};
  };
  context.resolve_dynamic_ref =
      [this](std::string_view ref,
             const std::string& pointer) -> absl::StatusOr<std::optional<SchemaAt>> {
    absl::StatusOr<std::optional<std::pair<element, std::string>>> target =
        StaticDynamicRefTarget(ref, BaseFor(pointer), pointer);
    if (!target.ok()) return target.status();
    if (!*target) return std::optional<SchemaAt>();
    return std::optional<SchemaAt>(SchemaAt{(*target)->first, (*target)->second});
  };
  absl::StatusOr<Evaluation> evaluation = EvaluatedBy({schema, ptr}, kind, context, at);
  if (!evaluation.ok()) return evaluation.status();
  const EvaluatedSet& always = evaluation->always;
  if (always.all) return absl::OkStatus();  // Nothing is left unevaluated.
  absl::StatusOr<NodeId> rest = NodeFor(value, at);
  if (!rest.ok()) return rest.status();
  if (*rest == kTrueNode) return absl::OkStatus();
  // A node where the members (items) outside `evaluated` match `rest`.
  auto closing = [&](const EvaluatedSet& evaluated) -> absl::StatusOr<NodeId> {
    if (evaluated.all) return kTrueNode;
    // Items matching a contains schema are evaluated: the others match `rest`.
    NodeId item_rest = *rest;
    if (!evaluated.contains.empty()) {
      std::vector<NodeId> either;
      for (const SchemaAt& c : evaluated.contains) {
        absl::StatusOr<NodeId> matched = NodeFor(c.value, c.pointer);
        if (!matched.ok()) return matched.status();
        either.push_back(*matched);
      }
      either.push_back(*rest);
      item_rest = NewNode(at);
      schema_.nodes[item_rest].any_of = std::move(either);
    }
    const NodeId part = NewNode(at);
    SchemaNode& close = schema_.nodes[part];
    if (kind == Unevaluated::kProperties) {
      for (const std::string& name : evaluated.names)
        close.properties.emplace_back(name, kTrueNode);
      for (const std::string& pattern : evaluated.patterns) {
        close.pattern_properties.emplace_back(pattern, kTrueNode);
      }
      close.additional_properties = *rest;
    } else {
      close.prefix_items.assign(evaluated.prefix, kTrueNode);
      close.items = item_rest;
    }
    return part;
  };
  if (!evaluation->choices.empty()) {
    // anyOf over every combination of options: its guards and the closing
    // of everything it evaluates (unevaluated.h says why that is exact).
    size_t combinations = 1;
    for (const auto& options : evaluation->choices) {
      combinations *= options.size();
      if (combinations > kMaxUnevaluatedCombinations) {
        return WithJsonPointer(
            absl::UnimplementedError(absl::StrCat(
                "\"", keyword, "\" beside conditional applicators with more than ",
                kMaxUnevaluatedCombinations, " combinations of what they evaluate at ", at)),
            at);
      }
    }
    std::vector<NodeId> terms;
    for (size_t c = 0; c < combinations; ++c) {
      EvaluatedSet evaluated = always;
      std::vector<NodeId> parts;
      size_t index = c;
      for (const auto& options : evaluation->choices) {
        const EvaluationOption& option = options[index % options.size()];
        index /= options.size();
        EvaluatedUnion(option.evaluated, &evaluated);
        for (const Guard& guard : option.guards) {
          if (guard.kind == Guard::kKeyPresent) {
            const NodeId present = NewNode(at);
            schema_.nodes[present].required = {guard.key};
            parts.push_back(present);
            continue;
          }
          absl::StatusOr<NodeId> g = NodeFor(guard.schema.value, guard.schema.pointer);
          if (!g.ok()) return g.status();
          if (guard.kind == Guard::kInvalid) {
            const NodeId negated = NewNode(at);
            schema_.nodes[negated].not_schema = *g;
            g = negated;
          }
          parts.push_back(*g);
        }
      }
      absl::StatusOr<NodeId> closed = closing(evaluated);
      if (!closed.ok()) return closed.status();
      parts.push_back(*closed);
      const NodeId term = NewNode(at);
      schema_.nodes[term].all_of = std::move(parts);
      terms.push_back(term);
    }
    const NodeId any = NewNode(at);
    schema_.nodes[any].any_of = std::move(terms);
    node->all_of.push_back(any);
    return absl::OkStatus();
  }
  // Evaluated by the node's own keywords alone: `rest` is exactly its
  // additionalProperties (its items after prefixItems), which it lacks.
  if (kind == Unevaluated::kProperties) {
    auto own = [&](const std::string& key, const auto& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& p) { return p.first == key; });
    };
    if (std::all_of(always.names.begin(), always.names.end(),
                    [&](const std::string& n) { return own(n, node->properties); }) &&
        std::all_of(always.patterns.begin(), always.patterns.end(),
                    [&](const std::string& p) { return own(p, node->pattern_properties); })) {
      node->additional_properties = *rest;
      bounds_.has_additional_properties = true;
      return absl::OkStatus();
    }
  } else if (always.prefix == node->prefix_items.size() && node->items == kTrueNode &&
             always.contains.empty()) {
    node->items = *rest;
    return absl::OkStatus();
  }
  // An allOf part that declares the evaluated names and patterns (prefix) as
  // `true` and closes the rest.
  absl::StatusOr<NodeId> closed = closing(always);
  if (!closed.ok()) return closed.status();
  node->all_of.push_back(*closed);
  return absl::OkStatus();
}

// 2020-12 $dynamicRef. Resolved as a $ref first; when that lands on a
// "$dynamicAnchor" of the fragment's name (the "bookend"), the target is that
// anchor in the outermost schema resource of the dynamic scope declaring it.
// Evaluation always starts at the root, so the root's resource is the
// outermost resource of every dynamic scope: if it declares the anchor, that
// is the target on every path. If one resource alone declares it, it is the
// target on every path too (it is the bookend itself). Otherwise the target
// depends on the path that reached the $dynamicRef: the name is tracked, so
// nodes are made per dynamic scope (NodeFor) and this one's scope names the
// target. (Refused by name only where a $ref into a place the first index
// pass missed declares the anchor too late to be tracked.)
absl::StatusOr<NodeId> Parser::NodeForDynamicRef(std::string_view ref, const std::string& base,
                                                 const std::string& at) {
  std::string uri, fragment;
  SplitFragment(ResolveUri(base, ref), &uri, &fragment);
  fragment = PercentDecode(fragment);
  auto declaring = dynamic_anchor_resources_.find(fragment);
  if (fragment.empty() || fragment[0] == '/' || declaring == dynamic_anchor_resources_.end() ||
      !declaring->second.contains(uri)) {
    return NodeForRef(ref, base, at, "$dynamicRef");  // No bookend: a plain reference.
  }
  std::string root_resource, unused;
  SplitFragment(BaseFor(""), &root_resource, &unused);
  if (declaring->second.contains(root_resource)) {
    return NodeForRef(absl::StrCat("#", fragment), root_resource, at, "$dynamicRef");
  }
  if (declaring->second.size() == 1) {
    single_resource_decisions_.emplace_back(fragment, Child(at, "$dynamicRef"));
    return NodeForRef(ref, base, at, "$dynamicRef");
  }
  if (tracked_.contains(fragment)) {
    // This node is made per dynamic scope: its scope names the target (the
    // bookend when no resource on the path declares the name).
    auto outermost = scope_.find(fragment);
    if (outermost == scope_.end()) return NodeForRef(ref, base, at, "$dynamicRef");
    return NodeForRef(absl::StrCat("#", fragment), outermost->second, at, "$dynamicRef");
  }
  const std::string here = Child(at, "$dynamicRef");
  return WithJsonPointer(
      absl::UnimplementedError(
          absl::StrCat("$dynamicRef \"", AsString(ref), "\" depends on the dynamic scope (",
                       declaring->second.size(), " schema resources declare $dynamicAnchor \"",
                       fragment, "\" and the root resource does not) at ", here)),
      here);
}

absl::StatusOr<std::optional<std::pair<element, std::string>>> Parser::StaticDynamicRefTarget(
    std::string_view ref, const std::string& base, const std::string& at) {
  using Target = std::optional<std::pair<element, std::string>>;
  auto resolved = [&](std::string_view r, const std::string& b) -> absl::StatusOr<Target> {
    absl::StatusOr<std::pair<element, std::string>> t = ResolveRef(r, b, at, "$dynamicRef");
    if (!t.ok()) return t.status();
    return Target(*std::move(t));
  };
  std::string uri, fragment;
  SplitFragment(ResolveUri(base, ref), &uri, &fragment);
  fragment = PercentDecode(fragment);
  auto declaring = dynamic_anchor_resources_.find(fragment);
  if (fragment.empty() || fragment[0] == '/' || declaring == dynamic_anchor_resources_.end() ||
      !declaring->second.contains(uri)) {
    return resolved(ref, base);  // No bookend: a plain reference.
  }
  std::string root_resource, unused;
  SplitFragment(BaseFor(""), &root_resource, &unused);
  if (declaring->second.contains(root_resource)) {
    return resolved(absl::StrCat("#", fragment), root_resource);
  }
  if (declaring->second.size() == 1) {
    single_resource_decisions_.emplace_back(fragment, Child(at, "$dynamicRef"));
    return resolved(ref, base);
  }
  // The outermost declaring resource on this node's path is fixed once met:
  // resources entered further in cannot change it.
  if (auto outermost = scope_.find(fragment);
      tracked_.contains(fragment) && outermost != scope_.end()) {
    return resolved(absl::StrCat("#", fragment), outermost->second);
  }
  return Target();
}

// 2019-09 $recursiveRef ("#" only). The target is the current resource's root
// unless that root has "$recursiveAnchor": true; then validators walk the
// dynamic scope outwards through resources that have it too. Only one
// resource having it makes that walk end where it starts: static. Otherwise
// refused by name.
absl::StatusOr<NodeId> Parser::NodeForRecursiveRef(std::string_view ref, const std::string& base,
                                                   const std::string& at) {
  const std::string here = Child(at, "$recursiveRef");
  if (ref != "#") {
    return WithJsonPointer(
        absl::InvalidArgumentError(absl::StrCat("\"$recursiveRef\" must be \"#\" at ", here)),
        here);
  }
  std::string resource, unused;
  SplitFragment(base, &resource, &unused);
  if (recursive_anchor_resources_.contains(resource) && recursive_anchor_resources_.size() > 1) {
    return WithJsonPointer(
        absl::UnimplementedError(absl::StrCat(
            "$recursiveRef depends on the dynamic scope (", recursive_anchor_resources_.size(),
            " schema resources have \"$recursiveAnchor\": true) at ", here)),
        here);
  }
  if (recursive_anchor_resources_.contains(resource)) {
    single_resource_decisions_.emplace_back("", here);
  }
  return NodeForRef(ref, base, at, "$recursiveRef");
}

// Which $dynamicAnchor names depend on the dynamic scope (tracked_) is
// decided from every resource that declares them, so the documents the
// schema refers to, and those they refer to, are loaded (and indexed) before
// that count: a metaschema reached by {"$ref": ".../2020-12/schema"}
// declares "meta" in 8 resources. A document that cannot be loaded is left
// to the $ref that reaches it, which reports why (or is never reached).
absl::Status Parser::PreloadDocuments() {
  for (size_t i = 0; i < referenced_documents_.size(); ++i) {
    const std::string uri = referenced_documents_[i];  // Loading appends.
    if (resource_pointer_.contains(uri)) continue;
    absl::StatusOr<bool> loaded = LoadDocument(uri, "", "$ref");
    if (!loaded.ok() && resource_pointer_.contains(uri)) return loaded.status();
  }
  return absl::OkStatus();
}

// A $ref into a place the first index pass did not visit indexes it late: a
// static resolution above that counted one declaring resource must still see
// one.
absl::Status Parser::RecheckDynamicDecisions() const {
  for (const auto& [name, where] : single_resource_decisions_) {
    const size_t n = name.empty() ? recursive_anchor_resources_.size()
                                  : dynamic_anchor_resources_.at(name).size();
    if (n > 1) {
      return WithJsonPointer(
          absl::UnimplementedError(absl::StrCat(
              name.empty() ? "$recursiveRef" : "$dynamicRef",
              " depends on the dynamic scope (a resource reached only by a $ref declares ",
              name.empty() ? "$recursiveAnchor" : absl::StrCat("$dynamicAnchor \"", name, "\""),
              " too) at ", where)),
          where);
    }
  }
  return absl::OkStatus();
}

// The first unknown keyword (strict mode) that no parsed schema lies in:
// one whose value a $ref reaches into, such as {"tilda~field": {...},
// "properties": {"t": {"$ref": "#/tilda~0field"}}}, only holds schemas,
// which is what validators, ignoring the keyword, make of it too.
absl::Status Parser::UnknownKeywordError() const {
  for (const auto& [where, error] : unknown_keywords_) {
    const bool reached = std::any_of(
        node_by_pointer_.begin(), node_by_pointer_.end(), [&where = where](const auto& node) {
          const std::string& key = node.first;  // pointer[\nscope]
          return absl::StartsWith(key, where) &&
                 (key.size() == where.size() || key[where.size()] == '/' ||
                  key[where.size()] == '\n');
        });
    if (!reached) return error;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Parser::Count(element v, const std::string& ptr, std::string_view key) {
  switch (v.type()) {
    case element_type::INT64:
      if (int64_t(v) >= 0) return static_cast<uint64_t>(int64_t(v));
      break;
    case element_type::UINT64:
      return uint64_t(v);
    case element_type::DOUBLE: {
      double d = double(v);
      if (d >= 0 && d == std::floor(d)) {
        return d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(d);  // Huge: unbounded.
      }
      break;
    }
    case element_type::STRING:
      // Only integers from 2^64 on, or past a double's range, are held here.
      if (std::optional<Decimal> d = numbers_.Lookup(std::string_view(v));
          d && d->is_integer() && !d->negative()) {
        return UINT64_MAX;  // Huge: unbounded.
      }
      break;
    default:
      break;
  }
  return Malformed(ptr, key, "must be a non-negative integer");
}

absl::StatusOr<std::vector<std::string>> Parser::StringList(element v, const std::string& ptr,
                                                            std::string_view key) {
  if (v.type() != element_type::ARRAY) return Malformed(ptr, key, "must be an array of strings");
  std::vector<std::string> out;
  absl::flat_hash_set<std::string> seen;
  for (element item : simdjson::dom::array(v)) {
    if (item.type() != element_type::STRING) {
      return Malformed(ptr, key, "must be an array of strings");
    }
    std::string s = AsString(std::string_view(item));
    if (seen.insert(s).second) out.push_back(std::move(s));
  }
  return out;
}

absl::StatusOr<std::vector<NodeId>> Parser::SchemaList(element v, const std::string& ptr,
                                                       std::string_view key) {
  if (v.type() != element_type::ARRAY || simdjson::dom::array(v).size() == 0) {
    return Malformed(ptr, key, "must be a non-empty array of schemas");
  }
  std::vector<NodeId> out;
  size_t i = 0;
  for (element item : simdjson::dom::array(v)) {
    absl::StatusOr<NodeId> id = NodeFor(item, absl::StrCat(ptr, "/", AsString(key), "/", i++));
    if (!id.ok()) return id.status();
    out.push_back(*id);
  }
  return out;
}

absl::Status Parser::Fill(const Pending& p) {
  SchemaNode node;
  node.pointer = p.pointer;
  bounds_ = Bounds();
  simdjson::dom::object obj(p.value);
  const std::string base = BaseFor(p.pointer);
  element ref;
  if (obj["$ref"].get(ref) == simdjson::SUCCESS) {
    if (ref.type() != element_type::STRING) return Malformed(p.pointer, "$ref", "must be a string");
    absl::StatusOr<NodeId> target = NodeForRef(std::string_view(ref), base, p.pointer);
    if (!target.ok()) return target.status();
    node.all_of.push_back(*target);
    if (schema_.draft <= Draft::kDraft7) {
      // Before 2019-09, keywords beside $ref are ignored.
      schema_.nodes[p.id] = std::move(node);
      return absl::OkStatus();
    }
  }
  for (std::string_view key : {"$dynamicRef", "$recursiveRef"}) {
    if (obj[key].get(ref) != simdjson::SUCCESS ||
        !KnownInDraft(key, schema_.draft, draft_declared_)) {
      continue;  // Unknown in the draft: Keyword() says so.
    }
    if (ref.type() != element_type::STRING) return Malformed(p.pointer, key, "must be a string");
    absl::StatusOr<NodeId> target =
        key == "$dynamicRef" ? NodeForDynamicRef(std::string_view(ref), base, p.pointer)
                             : NodeForRecursiveRef(std::string_view(ref), base, p.pointer);
    if (!target.ok()) return target.status();
    node.all_of.push_back(*target);
  }
  for (auto field : obj) {
    if (absl::Status s = Keyword(field.key, field.value, p.pointer, &node); !s.ok()) return s;
  }
  // Keywords whose meaning depends on a sibling.
  if (bounds_.minimum) node.minimum = NumericBound{*bounds_.minimum, bounds_.minimum_is_exclusive};
  if (bounds_.exclusive_minimum &&
      (!node.minimum || *bounds_.exclusive_minimum >= node.minimum->value)) {
    node.minimum = NumericBound{*bounds_.exclusive_minimum, true};
  }
  if (bounds_.maximum) node.maximum = NumericBound{*bounds_.maximum, bounds_.maximum_is_exclusive};
  if (bounds_.exclusive_maximum &&
      (!node.maximum || *bounds_.exclusive_maximum <= node.maximum->value)) {
    node.maximum = NumericBound{*bounds_.exclusive_maximum, true};
  }
  if (bounds_.additional_items && bounds_.items_is_list) {
    absl::StatusOr<NodeId> id =
        NodeFor(*bounds_.additional_items, Child(p.pointer, "additionalItems"));
    if (!id.ok()) return id.status();
    node.items = *id;
  }
  if (bounds_.unevaluated_items) {
    if (absl::Status st = AddUnevaluated(Unevaluated::kItems, *bounds_.unevaluated_items, p.value,
                                         p.pointer, &node);
        !st.ok()) {
      return st;
    }
  }
  if (bounds_.unevaluated_properties) {
    if (absl::Status st = AddUnevaluated(Unevaluated::kProperties, *bounds_.unevaluated_properties,
                                         p.value, p.pointer, &node);
        !st.ok()) {
      return st;
    }
  }
  if (bounds_.enum_values || bounds_.const_value) {
    std::vector<JsonValue> values;
    if (bounds_.enum_values) values = *bounds_.enum_values;
    if (bounds_.const_value) {
      std::string key = bounds_.const_value->CanonicalKey();
      bool in_enum = !bounds_.enum_values;
      for (const JsonValue& v : values) in_enum = in_enum || v.CanonicalKey() == key;
      if (!in_enum) {
        // A valid schema that matches nothing.
        node.types = 0;
        node.unsatisfiable = absl::StrCat("\"const\" is not one of \"enum\" at ", At(p.pointer));
        node.unsatisfiable_pointer = At(p.pointer);
      }
      values = {*bounds_.const_value};
    }
    node.enum_values = std::move(values);
  }
  // Closing applies to schemas that describe an object's members, not to
  // fragments such as {"required": ["a"]} inside anyOf or if.
  const bool describes_object =
      !node.properties.empty() || !node.pattern_properties.empty() || node.types == kObjectType;
  if (options_.closed_objects && !bounds_.has_additional_properties && describes_object) {
    node.additional_properties = kFalseNode;
  }
  schema_.nodes[p.id] = std::move(node);
  return absl::OkStatus();
}

// Draft 7 lets a validator assert contentEncoding and contentMediaType (the
// suite's optional/content.json expects it; from 2019-09 on they are
// annotations). base64 is exact: the RFC 4648 alphabet in whole padded
// quanta, as the `byte` format. Another encoding, or any media type (checking
// that a string holds e.g. a JSON document is not a regular language), would
// admit strings a validator rejects: refused by name in strict mode, ignored
// and listed otherwise.
absl::Status Parser::DraftSevenContent(std::string_view key, element v, const std::string& ptr,
                                       SchemaNode* node) {
  if (v.type() != element_type::STRING) return Malformed(ptr, key, "must be a string");
  const std::string value = AsString(std::string_view(v));
  if (key == "contentEncoding" && absl::AsciiStrToLower(value) == "base64") {
    node->patterns.push_back("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$");
    return absl::OkStatus();
  }
  if (!options_.strict_keywords) {
    Ignore(key, ptr);
    return absl::OkStatus();
  }
  return WithJsonPointer(
      absl::UnimplementedError(absl::StrCat("unsupported ", AsString(key), " \"", value,
                                            "\" (asserted under draft 7) at ", At(ptr))),
      At(ptr));
}

absl::Status Parser::Keyword(std::string_view key, element v, const std::string& ptr,
                             SchemaNode* node) {
  auto table_entry = KeywordTable().find(key);
  if (table_entry == KeywordTable().end() || !KnownInDraft(key, schema_.draft, draft_declared_)) {
    if (key == "id" && schema_.draft == Draft::kDraft4) return absl::OkStatus();
    if (options_.strict_keywords) {
      // Decided once every $ref is resolved: an unknown keyword a $ref
      // reaches into is a container of schemas, not a typo.
      unknown_keywords_.push_back(
          {Child(ptr, key),
           WithJsonPointer(absl::InvalidArgumentError(absl::StrCat(
                               "unknown keyword \"", AsString(key), "\" at ", At(ptr))),
                           At(ptr))});
      return absl::OkStatus();
    }
    Ignore(key, ptr);
    return absl::OkStatus();
  }
  if ((key == "contentEncoding" || key == "contentMediaType") && schema_.draft == Draft::kDraft7) {
    return DraftSevenContent(key, v, ptr, node);
  }
  if (table_entry->second == KeywordClass::kAnnotation) return absl::OkStatus();
  if (table_entry->second == KeywordClass::kUnsupported) {
    if (options_.ignore_unsupported) {
      Ignore(key, ptr);
      return absl::OkStatus();
    }
    return WithJsonPointer(absl::UnimplementedError(absl::StrCat("unsupported keyword \"",
                                                                 AsString(key), "\" at ", At(ptr))),
                           At(ptr));
  }
  const std::string here = Child(ptr, key);
  auto schema_at = [&](element value, const std::string& pointer) {
    return NodeFor(value, pointer);
  };
  auto count = [&](std::optional<uint64_t>* out) -> absl::Status {
    absl::StatusOr<uint64_t> c = Count(v, ptr, key);
    if (!c.ok()) return c.status();
    *out = *c;
    return absl::OkStatus();
  };
  auto number = [&](std::optional<Decimal>* out) -> absl::Status {
    absl::StatusOr<Decimal> d = ToDecimal(v, numbers_);
    if (!d.ok()) return Malformed(ptr, key, "must be a number");
    *out = *d;
    return absl::OkStatus();
  };
  std::optional<uint64_t> c;

  if (key == "$ref" || key == "$id" || key == "$anchor" || key == "$dynamicAnchor" ||
      key == "$recursiveAnchor" || key == "$dynamicRef" || key == "$recursiveRef") {
    return absl::OkStatus();  // Resolved by Fill / Index.
  }
  if (key == "type") {
    auto one = [&](std::string_view name) -> std::optional<TypeSet> {
      if (name == "null") return kNullType;
      if (name == "boolean") return kBooleanType;
      if (name == "integer") return kIntegerType;
      if (name == "number") return kNumberTypes;
      if (name == "string") return kStringType;
      if (name == "array") return kArrayType;
      if (name == "object") return kObjectType;
      if (name == "any") return kAllTypes;  // Draft 3.
      return std::nullopt;
    };
    TypeSet types = 0;
    if (v.type() == element_type::STRING) {
      std::optional<TypeSet> t = one(std::string_view(v));
      if (!t)
        return Malformed(
            ptr, key, absl::StrCat("names unknown type \"", AsString(std::string_view(v)), "\""));
      types = *t;
    } else if (v.type() == element_type::ARRAY && simdjson::dom::array(v).size() > 0) {
      for (element item : simdjson::dom::array(v)) {
        std::optional<TypeSet> t;
        if (item.type() == element_type::STRING) t = one(std::string_view(item));
        if (!t) return Malformed(ptr, key, "must name known types");
        types |= *t;
      }
    } else {
      return Malformed(ptr, key, "must be a type name or a non-empty array of them");
    }
    node->types &= types;
    return absl::OkStatus();
  }
  if (key == "enum") {
    if (v.type() != element_type::ARRAY) return Malformed(ptr, key, "must be an array");
    std::vector<JsonValue> values;
    absl::flat_hash_set<std::string> seen;
    for (element item : simdjson::dom::array(v)) {
      absl::StatusOr<JsonValue> value = ToJsonValue(item, numbers_);
      if (!value.ok()) return Malformed(ptr, key, AsString(value.status().message()));
      if (seen.insert(value->CanonicalKey()).second) values.push_back(*std::move(value));
    }
    bounds_.enum_values = std::move(values);
    return absl::OkStatus();
  }
  if (key == "const") {
    absl::StatusOr<JsonValue> value = ToJsonValue(v, numbers_);
    if (!value.ok()) return Malformed(ptr, key, AsString(value.status().message()));
    bounds_.const_value = *std::move(value);
    return absl::OkStatus();
  }
  if (key == "minLength" || key == "minItems" || key == "minProperties" || key == "minContains") {
    if (absl::Status s = count(&c); !s.ok()) return s;
    (key == "minLength"     ? node->min_length
     : key == "minItems"    ? node->min_items
     : key == "minContains" ? node->min_contains
                            : node->min_properties) = *c;
    return absl::OkStatus();
  }
  if (key == "maxLength" || key == "maxItems" || key == "maxProperties" || key == "maxContains") {
    if (absl::Status s = count(&c); !s.ok()) return s;
    (key == "maxLength"     ? node->max_length
     : key == "maxItems"    ? node->max_items
     : key == "maxContains" ? node->max_contains
                            : node->max_properties) = *c;
    return absl::OkStatus();
  }
  if (key == "pattern") {
    if (v.type() != element_type::STRING) return Malformed(ptr, key, "must be a string");
    node->patterns.emplace_back(std::string_view(v));
    return absl::OkStatus();
  }
  if (key == "format") {
    if (v.type() != element_type::STRING) return Malformed(ptr, key, "must be a string");
    node->format = std::string(std::string_view(v));
    return absl::OkStatus();
  }
  if (key == "minimum") return number(&bounds_.minimum);
  if (key == "maximum") return number(&bounds_.maximum);
  if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
    bool is_min = key == "exclusiveMinimum";
    if (v.type() == element_type::BOOL) {  // Draft 4: modifies minimum/maximum.
      (is_min ? bounds_.minimum_is_exclusive : bounds_.maximum_is_exclusive) = bool(v);
      return absl::OkStatus();
    }
    return number(is_min ? &bounds_.exclusive_minimum : &bounds_.exclusive_maximum);
  }
  if (key == "multipleOf") {
    std::optional<Decimal> d;
    if (absl::Status s = number(&d); !s.ok()) return s;
    if (d->negative() || d->is_zero()) return Malformed(ptr, key, "must be positive");
    node->multiple_of.push_back(*d);
    return absl::OkStatus();
  }
  if (key == "uniqueItems") {
    if (v.type() != element_type::BOOL) return Malformed(ptr, key, "must be a boolean");
    node->unique_items = bool(v);
    return absl::OkStatus();
  }
  if (key == "items") {
    if (v.type() == element_type::ARRAY) {  // Before 2020-12: prefixItems.
      // 2020-12 made `items` one schema (the list is prefixItems): a schema
      // declaring 2020-12 with a list is invalid, not a tuple. Without a
      // `$schema` the list keeps its draft-7 meaning (how such schemas are
      // written).
      if (draft_declared_ && schema_.draft == Draft::kDraft2020_12) {
        return Malformed(ptr, key,
                         "must be a schema under draft 2020-12 (a list of schemas is "
                         "\"prefixItems\" there)");
      }
      absl::StatusOr<std::vector<NodeId>> list = SchemaList(v, ptr, key);
      if (!list.ok() && simdjson::dom::array(v).size() == 0) list = std::vector<NodeId>();
      if (!list.ok()) return list.status();
      node->prefix_items = *std::move(list);
      bounds_.items_is_list = true;
      return absl::OkStatus();
    }
    absl::StatusOr<NodeId> id = schema_at(v, here);
    if (!id.ok()) return id.status();
    node->items = *id;
    return absl::OkStatus();
  }
  if (key == "unevaluatedItems") {
    bounds_.unevaluated_items = v;
    return absl::OkStatus();
  }
  if (key == "unevaluatedProperties") {
    bounds_.unevaluated_properties = v;
    return absl::OkStatus();
  }
  if (key == "prefixItems") {
    absl::StatusOr<std::vector<NodeId>> list = SchemaList(v, ptr, key);
    if (!list.ok()) return list.status();
    node->prefix_items = *std::move(list);
    return absl::OkStatus();
  }
  if (key == "additionalItems") {
    bounds_.additional_items = v;
    return absl::OkStatus();
  }
  if (key == "contains" || key == "additionalProperties" || key == "propertyNames" ||
      key == "not" || key == "if" || key == "then" || key == "else") {
    absl::StatusOr<NodeId> id = schema_at(v, here);
    if (!id.ok()) return id.status();
    if (key == "contains") node->contains = *id;
    if (key == "additionalProperties") {
      node->additional_properties = *id;
      bounds_.has_additional_properties = true;
    }
    if (key == "propertyNames") node->property_names = *id;
    if (key == "not") node->not_schema = *id;
    if (key == "if") node->if_schema = *id;
    if (key == "then") node->then_schema = *id;
    if (key == "else") node->else_schema = *id;
    return absl::OkStatus();
  }
  if (key == "properties" || key == "patternProperties") {
    if (v.type() != element_type::OBJECT) return Malformed(ptr, key, "must be an object");
    auto& list = key == "properties" ? node->properties : node->pattern_properties;
    for (auto member : simdjson::dom::object(v)) {
      absl::StatusOr<NodeId> id = schema_at(member.value, Child(here, member.key));
      if (!id.ok()) return id.status();
      list.emplace_back(std::string(member.key), *id);
    }
    return absl::OkStatus();
  }
  if (key == "required") {
    if (v.type() == element_type::BOOL && !options_.strict_keywords) {
      Ignore(key, ptr);  // Draft 3 form (a boolean inside the property).
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<std::string>> list = StringList(v, ptr, key);
    if (!list.ok()) return list.status();
    for (std::string& k : *list) {
      if (!node->IsRequired(k)) node->required.push_back(std::move(k));
    }
    return absl::OkStatus();
  }
  if (key == "dependentRequired" || key == "dependentSchemas" || key == "dependencies") {
    if (v.type() != element_type::OBJECT) return Malformed(ptr, key, "must be an object");
    for (auto member : simdjson::dom::object(v)) {
      std::string name(member.key);
      const std::string member_ptr = Child(here, member.key);
      if (member.value.type() == element_type::ARRAY && key != "dependentSchemas") {
        absl::StatusOr<std::vector<std::string>> list = StringList(member.value, here, member.key);
        if (!list.ok()) return list.status();
        node->dependent_required.emplace_back(name, *std::move(list));
        continue;
      }
      if (key == "dependentRequired") {
        return Malformed(here, member.key, "must be an array of strings");
      }
      // A dependent schema: if the instance is an object with this key, it
      // must match the schema. Expressed as an if/then node in all_of.
      absl::StatusOr<NodeId> then_id = schema_at(member.value, member_ptr);
      if (!then_id.ok()) return then_id.status();
      NodeId if_id = NewNode(member_ptr);
      schema_.nodes[if_id].types = kObjectType;
      schema_.nodes[if_id].required = {name};
      NodeId rule = NewNode(member_ptr);
      schema_.nodes[rule].if_schema = if_id;
      schema_.nodes[rule].then_schema = *then_id;
      node->all_of.push_back(rule);
    }
    return absl::OkStatus();
  }
  if (key == "allOf" || key == "anyOf" || key == "oneOf") {
    absl::StatusOr<std::vector<NodeId>> list = SchemaList(v, ptr, key);
    if (!list.ok()) return list.status();
    auto& target = key == "allOf" ? node->all_of : key == "anyOf" ? node->any_of : node->one_of;
    target.insert(target.end(), list->begin(), list->end());
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("keyword \"", AsString(key), "\" has no handler"));
}

absl::StatusOr<Schema> Parser::Run(std::string_view text) {
  int64_t too_deep = JsonDepthViolation(text, options_.max_depth);
  if (too_deep >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema nesting deeper than ", options_.max_depth,
                     " (max_recursion_depth) at byte ", too_deep, " (under /)"));
  }
  simdjson::padded_string padded(numbers_.Protect(text));
  if (auto error = parser_.parse(padded).get(root_); error) {
    return WithJsonPointer(
        absl::InvalidArgumentError(
            absl::StrCat("schema is not valid JSON: ", simdjson::error_message(error), " at /")),
        "/");
  }
  // Every node but merge products comes from a '{' in the text: reserving
  // avoids moving the (large) nodes while the table grows.
  schema_.nodes.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '{')) + 2);
  // Nodes 0 and 1: true and false.
  NewNode("");
  NodeId false_id = NewNode("");
  schema_.nodes[false_id].types = 0;

  std::string_view dialect = options_.default_dialect;
  std::string_view declared;
  if (root_.type() == element_type::OBJECT && root_["$schema"].get(declared) == simdjson::SUCCESS) {
    dialect = declared;
  }
  if (!dialect.empty()) {
    schema_.draft = DraftOf(dialect);
    draft_declared_ = true;
  }
  resource_pointer_[std::string(kDefaultBaseUri)] = "";
  if (absl::Status s = Index(root_, "", std::string(kDefaultBaseUri)); !s.ok()) return s;
  if (absl::Status s = PreloadDocuments(); !s.ok()) return s;
  std::string root_resource, unused;
  SplitFragment(BaseFor(""), &root_resource, &unused);
  for (const auto& [name, declaring] : dynamic_anchor_resources_) {
    if (declaring.size() > 1 && !declaring.contains(root_resource)) tracked_.insert(name);
  }
  absl::StatusOr<NodeId> root = NodeFor(root_, "");
  if (!root.ok()) return root.status();
  schema_.root = *root;
  while (!pending_.empty()) {
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    scope_ = p.scope;
    if (absl::Status s = Fill(p); !s.ok()) return s;
  }
  if (absl::Status s = RecheckDynamicDecisions(); !s.ok()) return s;
  if (absl::Status s = UnknownKeywordError(); !s.ok()) return s;
  if (absl::Status s = NormalizeSchema(&schema_, options_.max_nodes, options_.rewrite_combinators);
      !s.ok())
    return s;
  return std::move(schema_);
}

}  // namespace

absl::StatusOr<JsonValue> ParseJsonValue(std::string_view text) {
  simdjson::dom::parser parser;
  ExactNumbers numbers;
  simdjson::padded_string padded(numbers.Protect(text));
  element root;
  if (auto error = parser.parse(padded).get(root); error) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", simdjson::error_message(error)));
  }
  return ToJsonValue(root, numbers);
}

absl::StatusOr<Schema> ParseSchema(std::string_view text, const ParseOptions& options) {
  Parser parser(options);
  return parser.Run(text);
}

}  // namespace maskd::json_schema
