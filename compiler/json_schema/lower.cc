#include "compiler/json_schema/lower.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/any_order_members.h"
#include "compiler/json_schema/finite_domain.h"
#include "compiler/json_schema/json_string.h"
#include "compiler/json_schema/multiple_of_machine.h"
#include "compiler/json_schema/numeric_regex.h"
#include "compiler/json_schema/value_match.h"
#include "compiler/regex/ecma_regex.h"

namespace maskd::json_schema {
namespace {

using regex::ExprId;
using regex::ExprKind;
using regex::ExprSet;

std::string At(const SchemaNode& node) {
  return node.pointer.empty() ? " at the root" : absl::StrCat(" at ", node.pointer);
}

// `status` naming `node` (no pointer for the root, which the message calls
// "the root").
absl::Status AtNode(absl::Status status, const SchemaNode& node) {
  return node.pointer.empty() ? status : WithJsonPointer(std::move(status), node.pointer);
}

absl::Status Unsupported(std::string_view what, const SchemaNode& node) {
  return AtNode(absl::UnimplementedError(std::string(what) + At(node)), node);
}

bool Excluded(const SchemaNode& n, const JsonValue& v) {
  const std::string key = v.CanonicalKey();
  for (const JsonValue& x : n.excluded_values) {
    if (x.CanonicalKey() == key) return true;
  }
  return false;
}

// Const/enum objects with more members are refused (ConstObject).
constexpr size_t kMaxAnyOrderConstMembers = 12;

class Lowering {
 public:
  Lowering(const Schema& schema, const LowerOptions& options, GrammarIr& ir)
      : schema_(schema),
        options_(options),
        ir_(ir),
        pool_(*ir_.pool),
        builder_(ir_.builder),
        first_nonterminal_(builder_.num_nonterminals()) {
    for (const SchemaNode& n : schema_.nodes) {
      array_frames_ = array_frames_ || n.unique_items;
      item_values_ = item_values_ || (n.unique_items && (!n.max_items || *n.max_items > 1) &&
                                      n.prefix_items.empty() && OpenContainers(n.items) &&
                                      n.some_items.empty() && n.contains == kNoNode);
    }
    const ExprId ws_byte = pool_.Or(
        std::vector<ExprId>{pool_.Byte(' '), pool_.Byte('\t'), pool_.Byte('\n'), pool_.Byte('\r')});
    switch (options_.whitespace) {
      case Whitespace::kCompact:
        ws_ = ExprSet::kEpsilon;
        break;
      case Whitespace::kFlexible:
        ws_ = pool_.Star(ws_byte);
        break;
      case Whitespace::kBounded:
        ws_ = pool_.Repeat(ws_byte, 0, options_.max_whitespace_run);
        break;
    }
    leading_ws_ = pool_.NonEmpty(ws_);
    nothing_ = builder_.FreshNonterminal("nothing");
    // nothing ::= nothing: never productive, so trimming removes every rule
    // that needs it. Lowering uses it for schemas no instance matches.
    builder_.AddRule(nothing_, {Symbol::Nonterminal(nothing_)});
  }

  // Defines the schema's value (leading whitespace allowed) as a fresh
  // nonterminal of ir_ and returns it.
  absl::StatusOr<NonterminalId> Run() {
    const NonterminalId start = builder_.FreshNonterminal("start");
    if (schema_.root == kFalseNode || schema_.node(schema_.root).types == 0) {
      return EmptyLanguage(start);
    }
    const Symbol value = Symbol::Nonterminal(Value(schema_.root));
    builder_.AddRule(start, {value});
    if (leading_ws_ != ExprSet::kNothing) {
      // Whitespace before the value: every other gap is the trailing part of
      // the token before it.
      builder_.AddRule(start, {Symbol::Lexeme(builder_.AddLexeme("ws", leading_ws_)), value});
    }
    while (!pending_.empty()) {
      auto [id, nt] = pending_.front();
      pending_.pop_front();
      if (absl::Status s = DefineValue(id, nt); !s.ok()) return s;
      if (absl::Status s = CheckDeadline(schema_.node(id)); !s.ok()) return s;
      if (builder_.num_nonterminals() > options_.max_nonterminals) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the schema needs more than ", options_.max_nonterminals, " grammar symbols"));
      }
    }
    if (absl::Status s = CheckEveryNonterminalDefined(); !s.ok()) return s;
    // Constraints normalization could not see through (a required property
    // that is `false`, minItems with `items: false`) can leave no instance.
    if (!builder_.DerivesSomething(value.id())) return EmptyLanguage(start);
    return start;
  }

 private:
  // A nonterminal used without a rule is a lowering bug, never a property
  // of the schema: Internal (so callers and maskbench count it as an engine
  // error, not a refusal), naming the first such nonterminal.
  absl::Status CheckEveryNonterminalDefined() const {
    std::vector<uint8_t> defined(builder_.num_nonterminals(), 0);
    for (const maskd::Rule& rule : builder_.rules()) defined[rule.lhs] = 1;
    for (const maskd::Rule& rule : builder_.rules()) {
      for (Symbol s : rule.rhs) {
        // Nonterminals made before this lowering belong to the IR it is
        // embedded in (a structural tag), which defines them itself.
        if (s.is_nonterminal() && s.id() >= first_nonterminal_ && !defined[s.id()]) {
          return absl::InternalError(absl::StrCat(
              "JSON Schema lowering left nonterminal ", builder_.nonterminal_name(s.id()),
              " undefined (used by ", builder_.nonterminal_name(rule.lhs),
              "): an engine bug, not a property of the schema"));
        }
      }
    }
    return absl::OkStatus();
  }

  // No instance is valid: the start's one lexeme matches no bytes, so every
  // mask is empty and EOS is never allowed (a grammar with no sentence at all
  // would not build).
  NonterminalId EmptyLanguage(NonterminalId start) {
    builder_.AddRule(start, {Symbol::Lexeme(builder_.AddLexeme("nothing", ExprSet::kNothing))});
    return start;
  }

  // The nonterminal for "a JSON value matching node `id`", defined later from
  // the work list so recursive schemas and deep nesting need no C++ recursion.
  NonterminalId Value(NodeId id) {
    if (auto it = value_nts_.find(id); it != value_nts_.end()) return it->second;
    const NonterminalId nt =
        id == kFalseNode
            ? nothing_
            : builder_.FreshNonterminal(absl::StrCat("value", schema_.node(id).pointer));
    value_nts_[id] = nt;
    if (id != kFalseNode) pending_.push_back({id, nt});
    return nt;
  }

  // A lexeme for token `token` followed by the allowed whitespace; `nothing_`
  // when no byte string matches it.
  absl::StatusOr<Symbol> Token(ExprId token, std::string_view name, bool literal = false,
                               LexemeRole role = LexemeRole::kNone, bool distinct_number = false,
                               bool distinct_integer = false, JsonPart json = JsonPart::kNone) {
    const ExprId regex = pool_.Concat(token, ws_);
    absl::StatusOr<bool> empty = pool_.IsEmpty(regex, /*budget=*/20000, options_.deadline);
    if (!empty.ok()) {
      // Name the token (its name carries the schema pointer): the pool's own
      // message cannot say which schema part was too complex.
      return absl::Status(empty.status().code(), absl::StrCat(empty.status().message(), " (lexeme ",
                                                              std::string(name), ")"));
    }
    if (*empty) return Symbol::Nonterminal(nothing_);
    LexemeFlags flags;
    flags.literal = literal;
    flags.role = role;
    flags.distinct_number = distinct_number;
    flags.distinct_integer = distinct_integer;
    // What the lexeme is to the parser's item values (UniqueValueArray);
    // other grammars keep their lexemes as they were.
    if (item_values_) flags.json = json;
    return Symbol::Lexeme(builder_.AddLexeme(name, regex, flags));
  }
  Symbol Literal(std::string_view text) {
    // Any-order objects: braces delimit the parser's key frames.
    LexemeRole role = LexemeRole::kNone;
    if (options_.any_order_properties && text == "{") role = LexemeRole::kOpenObject;
    if (options_.any_order_properties && text == "}") role = LexemeRole::kCloseObject;
    // uniqueItems over finite scalar domains: every array is a frame too, so
    // that an item value is unique per array (UniqueScalarArray).
    if (array_frames_ && text == "[") role = LexemeRole::kOpenObject;
    if (array_frames_ && text == "]") role = LexemeRole::kCloseObject;
    // uniqueItems over objects/arrays: every container is a frame, whose
    // value the parser hashes (UniqueValueArray).
    JsonPart json = JsonPart::kScalar;  // true, false, null, a quoted const string
    if (text == ",") json = JsonPart::kNone;
    if (text == "{") json = JsonPart::kOpenObject;
    if (text == "}") json = JsonPart::kCloseObject;
    if (text == "[") json = JsonPart::kOpenArray;
    if (text == "]") json = JsonPart::kCloseArray;
    if (item_values_ && text == "{") role = LexemeRole::kOpenObject;
    if (item_values_ && text == "}") role = LexemeRole::kCloseObject;
    // Literals are never empty: Token cannot fail on them.
    return *Token(pool_.Literal(text), text, /*literal=*/true, role, false, false, json);
  }
  // The `[` of an array of distinct objects/arrays (UniqueValueArray).
  Symbol ItemArrayOpen() {
    return *Token(pool_.Literal("["), "[ (distinct items)", /*literal=*/true,
                  LexemeRole::kOpenObject, false, false, JsonPart::kOpenItemArray);
  }
  absl::StatusOr<Symbol> Pattern(const std::string& pattern, std::string_view name,
                                 JsonPart json = JsonPart::kNone) {
    absl::StatusOr<ExprId> re = ParseRegex(pattern, regex::MatchMode::kFullMatch);
    if (!re.ok()) return re.status();
    return Token(*re, name, false, LexemeRole::kNone, false, false, json);
  }
  void Rule(NonterminalId lhs, std::vector<Symbol> rhs) { builder_.AddRule(lhs, std::move(rhs)); }

  // ParseEcmaRegex into pool_, once per (pattern, mode): schemas repeat
  // their patterns, formats and number regexes across many properties, and
  // a parse rebuilds the pattern's Unicode classes each time.
  absl::StatusOr<ExprId> ParseRegex(const std::string& pattern, regex::MatchMode mode) {
    const std::pair<std::string, regex::MatchMode> key{pattern, mode};
    if (auto it = parsed_.find(key); it != parsed_.end()) return it->second;
    absl::StatusOr<ExprId> re =
        regex::ParseEcmaRegex(pattern, &pool_, mode, options_.max_regex_nesting);
    parsed_.emplace(key, re);
    return re;
  }

  absl::Status DefineValue(NodeId id, NonterminalId nt) {
    const SchemaNode& node = schema_.node(id);
    if (node.types == 0) {
      Rule(nt, {Symbol::Nonterminal(nothing_)});
      return absl::OkStatus();
    }
    if (!node.unsupported.empty()) {
      absl::Status error = absl::UnimplementedError(node.unsupported);
      if (node.unsupported_pointer.empty()) return error;
      return WithJsonPointer(std::move(error), node.unsupported_pointer);
    }
    if (!node.all_of.empty()) return Unsupported("allOf whose parts cannot be merged", node);
    if (node.not_schema != kNoNode) return Unsupported("\"not\"", node);
    if (node.if_schema != kNoNode) return Unsupported("if/then/else", node);
    if (node.contains != kNoNode && node.contains_match == kNoNode && (node.types & kArrayType)) {
      return Unsupported("\"contains\"", node);
    }
    if (!node.dependent_required.empty()) return Unsupported("\"dependentRequired\"", node);
    if (!node.one_of.empty() && !node.one_of_disjoint) {
      return Unsupported("oneOf whose branches may overlap", node);
    }
    if (!node.any_of.empty() || !node.one_of.empty()) {
      if (!node.any_of.empty() && !node.one_of.empty()) {
        return Unsupported("anyOf beside oneOf", node);
      }
      if (node.HasOwnConstraints())
        return Unsupported("anyOf/oneOf beside other constraints", node);
      for (NodeId branch : node.any_of.empty() ? node.one_of : node.any_of) {
        Rule(nt, {Symbol::Nonterminal(Value(branch))});
      }
      return absl::OkStatus();
    }
    if (node.enum_values) {
      // The values are literals: each must satisfy the rest of the node
      // (items, properties, format, ...), which normalization's filter
      // (local constraints only) does not check.
      bool any = false;
      for (const JsonValue& v : *node.enum_values) {
        absl::StatusOr<bool> matches = Values().Matches(id, v);
        if (!matches.ok()) {
          return AtNode(absl::Status(matches.status().code(),
                                     absl::StrCat(matches.status().message(), At(node))),
                        node);
        }
        if (!*matches) continue;
        absl::StatusOr<std::vector<Symbol>> rhs = Const(v, node);
        if (!rhs.ok()) return rhs.status();
        Rule(nt, *std::move(rhs));
        any = true;
      }
      if (!any) Rule(nt, {Symbol::Nonterminal(nothing_)});
      return absl::OkStatus();
    }
    if ((node.types & kNullType) && !Excluded(node, JsonValue())) Rule(nt, {Literal("null")});
    if (node.types & kBooleanType) {
      if (!Excluded(node, JsonValue::Boolean(true))) Rule(nt, {Literal("true")});
      if (!Excluded(node, JsonValue::Boolean(false))) Rule(nt, {Literal("false")});
    }
    if (node.types & kNumberTypes) {
      absl::StatusOr<Symbol> number = Number(node);
      if (!number.ok()) return number.status();
      Rule(nt, {*number});
    }
    if (node.types & kStringType) {
      absl::StatusOr<ExprId> decoded = StringLanguage(node);
      if (!decoded.ok()) return decoded.status();
      absl::StatusOr<Symbol> string = Token(QuotedString(*decoded), "string" + node.pointer, false,
                                            LexemeRole::kNone, false, false, JsonPart::kScalar);
      if (!string.ok()) return string.status();
      Rule(nt, {*string});
    }
    if (node.types & kArrayType) {
      if (absl::Status s = Array(node, nt); !s.ok()) return s;
    }
    if (node.types & kObjectType) {
      if (absl::Status s = Object(node, nt); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // A const/enum value, token by token. Numbers admit every spelling of the
  // value (JSON Schema compares numbers by value: 1, 1.0 and 1e0 are equal).
  absl::StatusOr<std::vector<Symbol>> Const(const JsonValue& v, const SchemaNode& node) {
    switch (v.kind()) {
      case JsonValue::Kind::kNull:
        return std::vector<Symbol>{Literal("null")};
      case JsonValue::Kind::kBoolean:
        return std::vector<Symbol>{Literal(v.boolean() ? "true" : "false")};
      case JsonValue::Kind::kString:
        return std::vector<Symbol>{Literal(JsonQuoteLiteral(v.string()))};
      case JsonValue::Kind::kNumber: {
        NumericBound bound{v.number(), false};
        absl::StatusOr<std::string> re = NumberRangeRegex(bound, bound);
        if (!re.ok()) return re.status();
        absl::StatusOr<Symbol> s = Pattern(*re, v.number().ToString(), JsonPart::kNumber);
        if (!s.ok()) return s.status();
        return std::vector<Symbol>{*s};
      }
      case JsonValue::Kind::kArray: {
        std::vector<Symbol> out = {Literal("[")};
        for (size_t i = 0; i < v.items().size(); ++i) {
          if (i > 0) out.push_back(Literal(","));
          absl::StatusOr<std::vector<Symbol>> item = Const(v.items()[i], node);
          if (!item.ok()) return item.status();
          out.insert(out.end(), item->begin(), item->end());
        }
        out.push_back(Literal("]"));
        return out;
      }
      case JsonValue::Kind::kObject:
        // Under any-order properties the parser keeps keys unique, which
        // scales past ConstObject's 2^n states.
        if (options_.any_order_properties && v.members().size() > 1) return AnyOrderConst(v, node);
        return ConstObject(v, node);
    }
    return Unsupported("an enum value of unknown kind", node);
  }

  // A const/enum object: its members in ANY order (JSON Schema equality
  // ignores member order, and a writer may emit them in any), each exactly
  // once. One state per set of members written so far.
  absl::StatusOr<std::vector<Symbol>> ConstObject(const JsonValue& v, const SchemaNode& node) {
    const auto& members = v.members();
    const size_t n = members.size();
    if (n > kMaxAnyOrderConstMembers) {
      return Unsupported(absl::StrCat("a const/enum object with ", n,
                                      " members (any member order needs 2^n grammar states; "
                                      "at most ",
                                      kMaxAnyOrderConstMembers, ")"),
                         node);
    }
    if (n == 0) return std::vector<Symbol>{Literal("{"), Literal("}")};
    // "key": value, as one nonterminal per member.
    std::vector<Symbol> member_nts;
    for (const auto& [key, value] : members) {
      absl::StatusOr<std::vector<Symbol>> body = Const(value, node);
      if (!body.ok()) return body.status();
      const NonterminalId nt = builder_.FreshNonterminal("const_member");
      std::vector<Symbol> rhs = {Key(key)};
      rhs.insert(rhs.end(), body->begin(), body->end());
      Rule(nt, std::move(rhs));
      member_nts.push_back(Symbol::Nonterminal(nt));
    }
    const uint32_t full = (uint32_t{1} << n) - 1;
    // rest[s]: what follows once the members in bit set s are written.
    std::vector<NonterminalId> rest(size_t{full} + 1);
    for (uint32_t set = 1; set <= full; ++set) rest[set] = builder_.FreshNonterminal("const_rest");
    for (uint32_t set = 1; set <= full; ++set) {
      if (set == full) Rule(rest[set], {Literal("}")});
      for (size_t k = 0; k < n; ++k) {
        if (set & (uint32_t{1} << k)) continue;
        Rule(rest[set],
             {Literal(","), member_nts[k], Symbol::Nonterminal(rest[set | (uint32_t{1} << k)])});
      }
    }
    const NonterminalId first = builder_.FreshNonterminal("const_object");
    for (size_t k = 0; k < n; ++k) {
      Rule(first, {member_nts[k], Symbol::Nonterminal(rest[uint32_t{1} << k])});
    }
    return std::vector<Symbol>{Literal("{"), Symbol::Nonterminal(first)};
  }

  // A const/enum object whose members may come in any order: JSON Schema
  // compares objects as unordered maps.
  absl::StatusOr<std::vector<Symbol>> AnyOrderConst(const JsonValue& v, const SchemaNode& node) {
    AnyOrderMembersSpec members;
    for (const auto& [key, value] : v.members()) {
      absl::StatusOr<std::vector<Symbol>> member = Const(value, node);
      if (!member.ok()) return member.status();
      NonterminalId value_nt = builder_.FreshNonterminal("const" + node.pointer);
      Rule(value_nt, *std::move(member));
      members.declared.push_back(
          {Key(key), CommaKey(key), Symbol::Nonterminal(value_nt), /*required=*/true});
    }
    members.close = Literal("}");
    members.nothing = Symbol::Nonterminal(nothing_);
    members.max_states = options_.max_any_order_states;
    members.name = "const" + node.pointer;
    absl::StatusOr<NonterminalId> rest = AddAnyOrderMembers(builder_, members);
    if (!rest.ok()) {
      return absl::Status(rest.status().code(), absl::StrCat(rest.status().message(),
                                                             " (an enum/const object)", At(node)));
    }
    return std::vector<Symbol>{Literal("{"), Symbol::Nonterminal(*rest)};
  }

  // The node's numbers as one lexeme; `distinct`: a distinct-number lexeme
  // (LexemeFlags::distinct_number, UniqueOpenScalarArray).
  absl::StatusOr<Symbol> Number(const SchemaNode& node, bool distinct = false) {
    const bool integers_only = !(node.types & kFractionType);
    const bool fractions_only = !(node.types & kIntegerType);
    auto at_node = [&](const absl::Status& status) {
      return AtNode(absl::Status(status.code(), absl::StrCat(status.message(), At(node))), node);
    };
    absl::StatusOr<std::string> re;
    // Each multipleOf as MultipleOfRegex (or MultipleOfMachine), intersected
    // with the range below (unless IntegerMultipleOfRegex listed the
    // multiples already).
    std::vector<ExprId> multiples;
    bool multiples_listed = false;
    if (node.multiple_of.size() == 1 && integers_only) {
      // Listing the multiples of a bounded range (or the last digits of an
      // unbounded one) is cheaper to compile than an intersection.
      re = IntegerMultipleOfRegex(node.minimum, node.maximum, node.multiple_of[0]);
      multiples_listed = re.ok() || re.status().code() != absl::StatusCode::kUnimplemented;
    }
    if (!multiples_listed) {
      re = integers_only ? IntegerRangeRegex(node.minimum, node.maximum)
                         : NumberRangeRegex(node.minimum, node.maximum);
      for (const Decimal& d : node.multiple_of) {
        absl::StatusOr<ExprId> m = Multiples(d, /*multiples=*/true);
        if (!m.ok()) return at_node(m.status());
        multiples.push_back(*m);
      }
    }
    if (!re.ok()) return at_node(re.status());
    // From draft 6 on, JSON Schema compares by value: 6.0 is an integer and
    // a multiple of 3. A writer spells an integer-valued float as `6.0` (and,
    // past 1e16, `1e+16`), so the integer digits may be followed by `.0+`.
    // Draft 4 validators take only integer literals (python3-jsonschema's
    // Draft4Validator rejects 1.0).
    const bool float_spellings = integers_only && schema_.draft != Draft::kDraft4;
    if (float_spellings) *re = absl::StrCat("(?:", *re, ")(?:\\.0+)?");
    absl::StatusOr<ExprId> numbers = ParseRegex(*re, regex::MatchMode::kFullMatch);
    if (!numbers.ok()) return numbers.status();
    if (float_spellings) {
      absl::StatusOr<ExprId> large = LargeIntegers(node);
      if (!large.ok()) return large.status();
      const Decimal& d = multiples_listed ? node.multiple_of[0] : Decimal();
      // multipleOf 1 (or 0.1, ...) admits every integer: no intersection.
      if (multiples_listed && !(d.digits() == "1" && d.exponent() <= 0)) {
        // The listed multiples are fixed notation: `2e+16` needs the
        // exponent spellings of the multiples.
        absl::StatusOr<ExprId> m = Multiples(d, /*multiples=*/true);
        if (m.ok()) {
          *large = pool_.And(*large, *m);
        } else if (*large != ExprSet::kNothing) {
          return at_node(m.status());
        }
      }
      *numbers = pool_.Or(*numbers, *large);
    }
    for (const Decimal& d : node.not_multiple_of) {
      absl::StatusOr<ExprId> m = Multiples(d, /*multiples=*/false);
      if (!m.ok()) return at_node(m.status());
      multiples.push_back(*m);
    }
    for (ExprId m : multiples) *numbers = pool_.And(*numbers, m);
    if (fractions_only) {
      absl::StatusOr<ExprId> non_integers =
          ParseRegex(NonIntegerNumberRegex(), regex::MatchMode::kFullMatch);
      if (!non_integers.ok()) return non_integers.status();
      *numbers = pool_.And(*numbers, *non_integers);
    }
    // Values excluded by a negated enum/const, in every spelling.
    std::vector<ExprId> excluded;
    for (const JsonValue& v : node.excluded_values) {
      if (v.kind() != JsonValue::Kind::kNumber) continue;
      NumericBound bound{v.number(), false};
      absl::StatusOr<std::string> value_re = NumberRangeRegex(bound, bound);
      if (!value_re.ok()) return value_re.status();
      absl::StatusOr<ExprId> value = ParseRegex(*value_re, regex::MatchMode::kFullMatch);
      if (!value.ok()) return value.status();
      excluded.push_back(*value);
    }
    if (!excluded.empty()) *numbers = pool_.And(*numbers, pool_.Not(pool_.Or(excluded)));
    if (distinct) {
      return Token(*numbers, "distinct number" + node.pointer, /*literal=*/false,
                   LexemeRole::kDistinctValue, /*distinct_number=*/true,
                   /*distinct_integer=*/integers_only, JsonPart::kNumber);
    }
    return Token(*numbers, (integers_only ? "integer" : "number") + node.pointer, false,
                 LexemeRole::kNone, false, false, JsonPart::kNumber);
  }

  // The number spellings of the multiples of d (`multiples`) or of the
  // other numbers: MultipleOfRegex where d = A * 10^-s has A dividing a
  // power of ten, else (and for every complement: that regex leaves out
  // exponent spellings below 1e16, which a complement must not take in)
  // the remainder machine.
  absl::StatusOr<ExprId> Multiples(const Decimal& d, bool multiples) {
    if (multiples) {
      absl::StatusOr<std::string> re = MultipleOfRegex(d);
      if (re.ok()) return ParseRegex(*re, regex::MatchMode::kFullMatch);
      if (re.status().code() != absl::StatusCode::kUnimplemented) return re.status();
    }
    absl::StatusOr<std::shared_ptr<const regex::ByteMachine>> machine =
        MultipleOfMachine(d, multiples);
    if (!machine.ok()) {
      if (multiples) return machine.status();
      return absl::Status(machine.status().code(),
                          absl::StrCat("\"not\" of ", machine.status().message()));
    }
    return pool_.MachineStart(*std::move(machine));
  }

  // Exponent spellings of the node's integers of magnitude >= 1e16 (what a
  // writer emits for such floats: `1e+16`). Each sign's part is taken whole
  // when the range covers it, dropped when the range misses it, and
  // intersected with the range only when a bound lies past 1e16: an And in
  // every integer lexeme made ordinary bounded integers 30x slower to compile.
  absl::StatusOr<ExprId> LargeIntegers(const SchemaNode& node) {
    enum Cover { kNone, kAll, kSome };
    static const Decimal kLarge = *Decimal::FromString("1e16");
    static const Decimal kMinusLarge = *Decimal::FromString("-1e16");
    auto below = [](const std::optional<NumericBound>& b, const Decimal& v) {  // b < v
      if (!b) return false;
      const int c = Compare(b->value, v);
      return c < 0 || (c == 0 && b->exclusive);
    };
    auto above = [](const std::optional<NumericBound>& b, const Decimal& v) {  // b > v
      if (!b) return false;
      const int c = Compare(b->value, v);
      return c > 0 || (c == 0 && b->exclusive);
    };
    // Positive part [1e16, inf), negative part (-inf, -1e16].
    const Cover positive = below(node.maximum, kLarge)                   ? kNone
                           : node.maximum || above(node.minimum, kLarge) ? kSome
                                                                         : kAll;
    const Cover negative = above(node.minimum, kMinusLarge)                   ? kNone
                           : node.minimum || below(node.maximum, kMinusLarge) ? kSome
                                                                              : kAll;
    if (positive == kNone && negative == kNone) return ExprSet::kNothing;
    if (!large_integer_magnitude_) {  // Parsed once per schema: it is large.
      absl::StatusOr<ExprId> parsed =
          regex::ParseEcmaRegex(LargeIntegerExponentRegex(), &pool_, regex::MatchMode::kFullMatch);
      if (!parsed.ok()) return parsed.status();
      large_integer_magnitude_ = *parsed;
    }
    const ExprId* magnitude = &*large_integer_magnitude_;
    std::optional<ExprId> in_range;
    auto part = [&](Cover cover, ExprId spelled) -> absl::StatusOr<ExprId> {
      if (cover == kNone) return ExprSet::kNothing;
      if (cover == kAll) return spelled;
      if (!in_range) {
        absl::StatusOr<std::string> range = NumberRangeRegex(node.minimum, node.maximum);
        if (!range.ok()) {
          return AtNode(
              absl::Status(range.status().code(), absl::StrCat(range.status().message(), At(node))),
              node);
        }
        absl::StatusOr<ExprId> r = ParseRegex(*range, regex::MatchMode::kFullMatch);
        if (!r.ok()) return r.status();
        in_range = *r;
      }
      return pool_.And(spelled, *in_range);
    };
    absl::StatusOr<ExprId> pos = part(positive, *magnitude);
    if (!pos.ok()) return pos.status();
    absl::StatusOr<ExprId> neg = part(negative, pool_.Concat(pool_.Byte('-'), *magnitude));
    if (!neg.ok()) return neg.status();
    return pool_.Or(*pos, *neg);
  }

  // The decoded strings a node's string constraints admit.
  absl::StatusOr<ExprId> StringLanguage(const SchemaNode& node) {
    ExprId e = pool_.AnyUtf8String();
    if (node.min_length > options_.max_string_min_length) {
      return AtNode(absl::ResourceExhaustedError(absl::StrCat(
                        "minLength ", node.min_length, " is too long to generate", At(node))),
                    node);
    }
    auto cap = [](uint64_t n) {
      return n >= ExprSet::kUnbounded ? ExprSet::kUnbounded : static_cast<uint32_t>(n);
    };
    if (node.min_length > 0 || node.max_length) {
      // The counted code points alone, not And(any string, counted): they
      // are the same language, but a lexer state without And needs no
      // emptiness checks, and its counter stays visible to the matcher.
      e = pool_.Repeat(pool_.AnyCodepoint(), cap(node.min_length),
                       node.max_length ? cap(*node.max_length) : ExprSet::kUnbounded);
    }
    for (const std::string& pattern : node.patterns) {
      absl::StatusOr<ExprId> re = ParseRegex(pattern, regex::MatchMode::kSearch);
      if (!re.ok()) {
        return AtNode(absl::Status(re.status().code(),
                                   absl::StrCat("pattern", At(node), ": ", re.status().message())),
                      node);
      }
      e = pool_.And(e, *re);
    }
    if (!node.not_patterns.empty() && e != pool_.AnyUtf8String()) {
      // Redundant for the language, but it lets ExprSet::And see at once
      // that a string which already contains an excluded pattern is dead
      // (the pattern's derivative then holds `.*`, which meets `.*` here):
      // without it, "exactly one of" (oneOf of unanchored patterns) beside
      // a maxLength decides such states by searching their derivatives.
      e = pool_.And(e, pool_.AnyUtf8String());
    }
    for (const std::string& pattern : node.not_patterns) {
      absl::StatusOr<ExprId> re = ParseRegex(pattern, regex::MatchMode::kSearch);
      if (!re.ok()) {
        return AtNode(absl::Status(re.status().code(), absl::StrCat("\"not\" pattern", At(node),
                                                                    ": ", re.status().message())),
                      node);
      }
      e = pool_.And(e, pool_.Not(*re));
    }
    std::vector<ExprId> excluded;
    for (const JsonValue& v : node.excluded_values) {
      if (v.kind() == JsonValue::Kind::kString) excluded.push_back(pool_.Literal(v.string()));
    }
    if (!excluded.empty()) e = pool_.And(e, pool_.Not(pool_.Or(excluded)));
    if (node.format) {
      absl::StatusOr<FormatLanguage> format = FormatPattern(*node.format);
      if (format.ok()) {
        absl::StatusOr<ExprId> re = ParseRegex(format->pattern, regex::MatchMode::kFullMatch);
        if (!re.ok()) return re.status();
        e = pool_.And(e, *re);
        for (const std::string& also : format->also) {
          absl::StatusOr<ExprId> more = ParseRegex(also, regex::MatchMode::kFullMatch);
          if (!more.ok()) return more.status();
          e = pool_.And(e, *more);
        }
        if (format->max_length) {
          e = pool_.And(e, pool_.Repeat(pool_.AnyCodepoint(), 0, *format->max_length));
        }
      } else if (options_.ignore_unknown_formats) {
        // The caller asked for plain strings (UnknownFormats::kIgnore).
        ir_.ignored_keywords.push_back(absl::StrCat("format \"", *node.format, "\" at ",
                                                    node.pointer.empty() ? "/" : node.pointer));
      } else {
        // Ignoring an asserted format would admit strings the schema excludes
        // (MaskBench's tests do assert formats). Non-standard formats are
        // annotations for validators, but are refused too for now: the
        // MaskBench schemas using them have valid instances whose keys are
        // out of schema order, which would turn refusals into validation
        // errors until any-order objects exist.
        return AtNode(absl::UnimplementedError(absl::StrCat(format.status().message(), At(node))),
                      node);
      }
    }
    return e;
  }

  ExprId QuotedString(ExprId decoded) {
    const ExprId quote = pool_.Byte('"');
    const ExprId encoded = quoter_.Quote(decoded);
    ProveLengthCounter(decoded);
    return pool_.Concat(std::vector<ExprId>{quote, encoded, quote});
  }

  // For a string bounded by a maxLength and one other constraint, And(A,
  // any code point{lo,hi}): proves that A's encodings are whole encoded code
  // points, the fact that lets the matcher share mask walks between the
  // positions of such a string (regex/horizon.h). Nothing happens when it
  // cannot be proven; masks stay exact either way.
  void ProveLengthCounter(ExprId decoded) {
    if (pool_.kind(decoded) != ExprKind::kAnd || pool_.Args(decoded).size() != 2) return;
    const ExprId any = pool_.AnyCodepoint();
    for (int i = 0; i < 2; ++i) {
      const ExprId counter = pool_.Args(decoded)[i];
      const ExprId body = pool_.Args(decoded)[1 - i];
      if (pool_.kind(counter) == ExprKind::kRepeat && pool_.Args(counter)[0] == any) {
        pool_.ProveWithin(quoter_.Quote(body), pool_.Star(quoter_.Quote(any)));
        return;
      }
    }
  }

  // `"key"` + whitespace + `:` for a declared key.
  Symbol Key(const std::string& key) {
    // A literal key is never empty, so KeyToken cannot fail.
    // Any-order objects: a declared key at most once per object (the parser checks).
    return *KeyToken(pool_.Literal(JsonQuoteLiteral(key)), JsonQuoteLiteral(key) + ":",
                     options_.any_order_properties ? LexemeRole::kUniqueKey : LexemeRole::kNone);
  }

  // "," + whitespace + Key(key) as one lexeme, for any-order objects; named
  // as Key(key) is, which makes the two one key to the parser.
  Symbol CommaKey(const std::string& key) {
    return *KeyToken(pool_.Concat(std::vector<ExprId>{pool_.Byte(','), ws_,
                                                      pool_.Literal(JsonQuoteLiteral(key))}),
                     JsonQuoteLiteral(key) + ":", LexemeRole::kUniqueKey);
  }

  absl::Status Array(const SchemaNode& node, NonterminalId nt) {
    const bool unique = node.unique_items && (!node.max_items || *node.max_items > 1);
    if (!node.some_items.empty()) {
      if (node.contains != kNoNode) {
        return Unsupported("\"contains\" beside the complement of items (\"not\" of items)", node);
      }
      if (unique)
        return Unsupported("uniqueItems beside the complement of items (\"not\" of items)", node);
      return ArrayWithSomeItems(node, nt);
    }
    if (node.contains != kNoNode) return ContainsArray(node, nt);
    if (unique) return UniqueScalarArray(node, nt);
    return ArrayOf(
        node, nt,
        [&](uint64_t i) {
          return Value(i < node.prefix_items.size() ? node.prefix_items[i] : node.items);
        },
        node.max_items);
  }

  // contains/minContains/maxContains: each item is either a match (items
  // AND contains) or a miss (items AND NOT contains, normalization's
  // contains_match/contains_miss: disjoint, so the count is exact); states
  // count items written and matches (up to maxContains, or saturating at
  // minContains without one).
  absl::Status ContainsArray(const SchemaNode& node, NonterminalId nt) {
    if (!node.prefix_items.empty()) {
      return Unsupported("\"contains\" beside prefixItems (or array-form items)", node);
    }
    if (node.unique_items && (!node.max_items || *node.max_items > 1)) {
      return Unsupported("\"contains\" beside uniqueItems", node);
    }
    const uint64_t min_items = node.min_items;
    const uint64_t min_c = node.min_contains;
    if (node.max_contains && *node.max_contains < min_c) {
      Rule(nt, {Symbol::Nonterminal(nothing_)});
      return absl::OkStatus();
    }
    const uint64_t top = node.max_contains ? *node.max_contains : min_c;
    const uint64_t last = node.max_items ? *node.max_items : std::max<uint64_t>(min_items, 1);
    if (last == 0) {
      if (min_c == 0)
        Rule(nt, {Literal("["), Literal("]")});
      else
        Rule(nt, {Symbol::Nonterminal(nothing_)});
      return absl::OkStatus();
    }
    if ((last + 1) * (top + 1) > options_.max_nonterminals) {
      return AtNode(absl::ResourceExhaustedError(absl::StrCat("array bounds with contains need ",
                                                              (last + 1) * (top + 1),
                                                              " grammar states", At(node))),
                    node);
    }
    const Symbol match = Symbol::Nonterminal(Value(node.contains_match));
    const Symbol miss = Symbol::Nonterminal(Value(node.contains_miss));
    // state[i][c]: i items written (1..last, looping at last without
    // maxItems), c matches among them (0..top).
    std::vector<std::vector<NonterminalId>> state(last + 1, std::vector<NonterminalId>(top + 1));
    for (uint64_t i = 1; i <= last; ++i) {
      for (uint64_t c = 0; c <= top; ++c) state[i][c] = builder_.FreshNonterminal("contains_items");
    }
    // The state after one more item, matching or not; nullopt past maxContains.
    auto next = [&](uint64_t i, uint64_t c, bool matched) -> std::optional<NonterminalId> {
      uint64_t c2 = c + (matched ? 1 : 0);
      if (c2 > top) {
        if (node.max_contains) return std::nullopt;
        c2 = top;  // Saturated: minContains is met.
      }
      return state[std::min(i + 1, last)][c2];
    };
    for (uint64_t i = 1; i <= last; ++i) {
      for (uint64_t c = 0; c <= top; ++c) {
        bool any = false;
        if (i >= min_items && c >= min_c) {
          Rule(state[i][c], {Literal("]")});
          any = true;
        }
        for (bool matched : {true, false}) {
          if (node.max_items && i >= *node.max_items) break;
          if (std::optional<NonterminalId> to = next(i, c, matched)) {
            Rule(state[i][c], {Literal(","), matched ? match : miss, Symbol::Nonterminal(*to)});
            any = true;
          }
        }
        // A dead end (too few matches left to reach minContains).
        if (!any) Rule(state[i][c], {Symbol::Nonterminal(nothing_)});
      }
    }
    if (min_items == 0 && min_c == 0) Rule(nt, {Literal("["), Literal("]")});
    for (bool matched : {true, false}) {
      const uint64_t c = matched ? 1 : 0;
      if (c > top && node.max_contains) continue;
      Rule(nt,
           {Literal("["), matched ? match : miss, Symbol::Nonterminal(state[1][std::min(c, top)])});
    }
    return absl::OkStatus();
  }

  // uniqueItems where the items are a finite set of n scalars: each value is
  // one lexeme with LexemeRole::kUniqueKey, which the parser admits at most
  // once per array frame (`[` and `]` open and close frames, see Literal),
  // and the array holds at most n items, so every frame can always be
  // completed without a repeat (the parser's contract). Strings, numbers and
  // objects from infinite domains would need a runtime check in the matcher:
  // refused by name.
  absl::Status UniqueScalarArray(const SchemaNode& node, NonterminalId nt) {
    if (!node.prefix_items.empty()) {
      return Unsupported("uniqueItems beside prefixItems (or array-form items)", node);
    }
    std::optional<std::vector<JsonValue>> domain = FiniteScalarDomain(schema_, node.items);
    if (!domain && OpenScalars(node.items)) return UniqueOpenScalarArray(node, nt);
    if (!domain && OpenContainers(node.items)) return UniqueValueArray(node, nt);
    if (!domain) {
      return Unsupported(
          "uniqueItems over items that are neither a finite set of scalars (enum/const of "
          "strings, numbers, booleans, null), nor strings without maxLength, pattern or format "
          "and numbers without minimum, maximum or multipleOf, nor objects that admit any "
          "other member (no additionalProperties, patternProperties, propertyNames or "
          "maxProperties) and arrays without maxItems of any items or such strings and numbers "
          "(closed objects, combinators, untyped items, mixed types with booleans or null)",
          node);
    }
    // The domain comes from the item node's enum or types; its values must
    // satisfy the rest of that node too (a format beside the enum).
    std::vector<JsonValue> values;
    for (JsonValue& v : *domain) {
      absl::StatusOr<bool> matches = Values().Matches(node.items, v);
      if (!matches.ok()) {
        return AtNode(absl::Status(matches.status().code(),
                                   absl::StrCat(matches.status().message(), At(node))),
                      node);
      }
      if (*matches) values.push_back(std::move(v));
    }
    *domain = std::move(values);
    uint64_t max = domain->size();
    if (node.max_items) max = std::min<uint64_t>(max, *node.max_items);
    if (node.min_items > max) {
      Rule(nt, {Symbol::Nonterminal(nothing_)});
      return absl::OkStatus();
    }
    const NonterminalId item = builder_.FreshNonterminal("unique_item" + node.pointer);
    for (const JsonValue& v : *domain) {
      absl::StatusOr<Symbol> lexeme = UniqueScalar(v);
      if (!lexeme.ok()) return lexeme.status();
      Rule(item, {*lexeme});
    }
    return ArrayOf(
        node, nt, [&](uint64_t) { return item; }, max);
  }

  // A node of strings and/or numbers every prefix of whose values extends
  // to infinitely many values, but where the value is settled: strings
  // without maxLength, pattern, format or enum (settled by the closing
  // quote), numbers and integers without minimum, maximum or multipleOf
  // (settled when the number ends, by e/E after a zero mantissa, and for
  // integers by a leading 0 or a `.` after two digits: ByteStepper::
  // AdvanceNumber). A repeated item can then always be avoided by writing
  // on, so refusing only the bytes that settle a repeat keeps every mask
  // exact.
  bool OpenScalars(NodeId id) const {
    if (id == kTrueNode || id == kFalseNode) return false;
    const SchemaNode& n = schema_.node(id);
    if (n.types == 0 || (n.types & ~(kStringType | kNumberTypes)) != 0) return false;
    if ((n.types & kNumberTypes) == kFractionType) return false;
    if ((n.types & kNumberTypes) != 0 && (n.minimum || n.maximum || !n.multiple_of.empty())) {
      return false;
    }
    if ((n.types & kStringType) != 0 &&
        (n.max_length || !n.patterns.empty() || !n.not_patterns.empty() || n.format)) {
      return false;
    }
    return !n.enum_values && n.unsupported.empty() && n.all_of.empty() && n.any_of.empty() &&
           n.one_of.empty() && n.not_schema == kNoNode && n.if_schema == kNoNode;
  }

  // uniqueItems over open strings and numbers (OpenScalars): the item is
  // one lexeme with LexemeRole::kDistinctValue, and the matcher refuses the
  // closing quote of a string the array already holds (strings have one
  // spelling each, json_string.h, so equal bytes are equal values), and the
  // bytes that settle a number the array holds (numbers compare by their
  // canonical value, matcher/number_canon.h).
  absl::Status UniqueOpenScalarArray(const SchemaNode& node, NonterminalId nt) {
    const SchemaNode& items = schema_.node(node.items);
    const NonterminalId item = builder_.FreshNonterminal("distinct_item" + node.pointer);
    if (items.types & kStringType) {
      absl::StatusOr<ExprId> decoded = StringLanguage(items);
      if (!decoded.ok()) return decoded.status();
      absl::StatusOr<Symbol> string =
          Token(QuotedString(*decoded), "distinct string" + items.pointer,
                /*literal=*/false, LexemeRole::kDistinctValue, false, false, JsonPart::kScalar);
      if (!string.ok()) return string.status();
      Rule(item, {*string});
    }
    if (items.types & kNumberTypes) {
      absl::StatusOr<Symbol> number = Number(items, /*distinct=*/true);
      if (!number.ok()) return number.status();
      Rule(item, {*number});
    }
    return ArrayOf(
        node, nt, [&](uint64_t) { return item; }, node.max_items);
  }

  // Items every proper prefix of which extends to infinitely many values,
  // beside OpenScalars: any value (`{}`, `true`), objects that admit any
  // other member with any value (a fresh key makes the item new, whatever
  // was written), arrays without maxItems whose items are anything or open
  // scalars (one more item makes it new), open strings and numbers (not
  // integers alone: their value settles at a leading 0 or `12.`), and
  // booleans and null (settled by their first byte). Their value is settled
  // only by a closing bracket, a string's closing quote, where a number
  // settles (ByteStepper::AdvanceItemScalar) or a literal's first byte, so
  // refusing those bytes when they complete a repeat keeps every mask exact
  // (the same argument as OpenScalars).
  bool OpenContainers(NodeId id) const {
    if (id == kTrueNode) return true;
    if (id == kFalseNode || id == kNoNode) return false;
    const SchemaNode& n = schema_.node(id);
    if (n.types == 0 || OpenScalars(id)) return false;
    // anyOf/oneOf alone (DefineValue lowers them as the union of their
    // branches): open when every branch is.
    const std::vector<NodeId>& branches = n.any_of.empty() ? n.one_of : n.any_of;
    if (!branches.empty() && (n.any_of.empty() || n.one_of.empty()) &&
        (n.one_of.empty() || n.one_of_disjoint) && !n.HasOwnConstraints() && n.all_of.empty() &&
        n.not_schema == kNoNode && n.if_schema == kNoNode && n.unsupported.empty()) {
      for (NodeId b : branches) {
        const bool integers = b != kTrueNode && b != kFalseNode &&
                              (schema_.node(b).types & kNumberTypes) == kIntegerType;
        if (!OpenContainers(b) && !(OpenScalars(b) && !integers)) return false;
      }
      return true;
    }
    if (n.enum_values || !n.unsupported.empty() || !n.unsatisfiable.empty() ||
        !n.excluded_values.empty() || !n.all_of.empty() || !n.any_of.empty() || !n.one_of.empty() ||
        n.not_schema != kNoNode || n.if_schema != kNoNode) {
      return false;
    }
    if ((n.types & kObjectType) &&
        (n.additional_properties != kTrueNode || !n.pattern_properties.empty() ||
         !n.pattern_conjunctions.empty() || n.property_names != kTrueNode || n.max_properties ||
         !n.some_members.empty() || !n.some_member_values.empty())) {
      return false;
    }
    if ((n.types & kArrayType) &&
        (n.max_items || !n.prefix_items.empty() || n.unique_items || n.contains != kNoNode ||
         !n.some_items.empty() || !n.some_item_values.empty() ||
         (n.items != kTrueNode && !OpenScalars(n.items)))) {
      return false;
    }
    if ((n.types & kStringType) &&
        (n.max_length || !n.patterns.empty() || !n.not_patterns.empty() || n.format)) {
      return false;
    }
    // Integers alone settle early, fractions alone are not OpenScalars either.
    if ((n.types & kNumberTypes) == kIntegerType || (n.types & kNumberTypes) == kFractionType) {
      return false;
    }
    if ((n.types & kNumberTypes) != 0 &&
        (n.minimum || n.maximum || !n.multiple_of.empty() || !n.not_multiple_of.empty())) {
      return false;
    }
    return true;
  }

  // uniqueItems over OpenContainers: `[` is the item array's own lexeme
  // (JsonPart::kOpenItemArray), every container is a parser frame whose
  // value the parser hashes as it is written (EarleyParser::TrackValue:
  // objects order-free over (key, value) members, numbers by value, strings
  // by their one spelling), and the closing bracket that completes an item
  // the array holds already is refused (ByteStepper::Advance). A 64-bit
  // hash collision refuses an item that is not a repeat; a repeat is never
  // admitted. Objects with a key written twice hash both members (JSON
  // parsers keep the last one): such output is outside what a writer emits.
  absl::Status UniqueValueArray(const SchemaNode& node, NonterminalId nt) {
    const NonterminalId item = Value(node.items);
    return ArrayOf(
        node, nt, [&](uint64_t) { return item; }, node.max_items, ItemArrayOpen());
  }

  // Scalar `v` in every spelling of its value, as a unique-key lexeme named
  // by its canonical value (the parser's key group).
  absl::StatusOr<Symbol> UniqueScalar(const JsonValue& v) {
    ExprId token = ExprSet::kNothing;
    switch (v.kind()) {
      case JsonValue::Kind::kNull:
        token = pool_.Literal("null");
        break;
      case JsonValue::Kind::kBoolean:
        token = pool_.Literal(v.boolean() ? "true" : "false");
        break;
      case JsonValue::Kind::kString:
        token = pool_.Literal(JsonQuoteLiteral(v.string()));
        break;
      case JsonValue::Kind::kNumber: {
        NumericBound bound{v.number(), false};
        absl::StatusOr<std::string> re = NumberRangeRegex(bound, bound);
        if (!re.ok()) return re.status();
        absl::StatusOr<ExprId> parsed = ParseRegex(*re, regex::MatchMode::kFullMatch);
        if (!parsed.ok()) return parsed.status();
        token = *parsed;
        break;
      }
      default:
        return absl::InternalError("UniqueScalar on a non-scalar value");
    }
    return Token(token, "item " + v.CanonicalKey(), v.kind() != JsonValue::Kind::kNumber,
                 LexemeRole::kUniqueKey, false, false,
                 v.kind() == JsonValue::Kind::kNumber ? JsonPart::kNumber : JsonPart::kScalar);
  }

  // `[` items `]` with item i from item_nt(i), min_items of them at least,
  // max of them at most (nullopt: no bound).
  template <typename ItemNt>
  absl::Status ArrayOf(const SchemaNode& node, NonterminalId nt, ItemNt&& item_nt,
                       std::optional<uint64_t> max_items, std::optional<Symbol> open = {}) {
    const Symbol bracket = open ? *open : Literal("[");
    const uint64_t p = node.prefix_items.size();
    const uint64_t m = node.min_items;
    const uint64_t k = std::max<uint64_t>(p, m);
    auto item = [&](uint64_t i) { return Symbol::Nonterminal(item_nt(i)); };
    // after[i] = the rest of the array once i items are written: "]" when i
    // is enough, or "," and item i. Without maxItems the last state loops.
    const uint64_t last = max_items ? *max_items : std::max<uint64_t>(k, 1);
    if (last > options_.max_nonterminals) {
      return AtNode(absl::ResourceExhaustedError(
                        absl::StrCat("array bounds need ", last, " grammar states", At(node))),
                    node);
    }
    std::vector<NonterminalId> after(last + 1);
    for (uint64_t i = 1; i <= last; ++i) after[i] = builder_.FreshNonterminal("items");
    for (uint64_t i = 1; i <= last; ++i) {
      if (i >= m) Rule(after[i], {Literal("]")});
      if (!max_items || i < *max_items) {
        const NonterminalId next = i == last ? after[i] : after[i + 1];
        Rule(after[i], {Literal(","), item(i), Symbol::Nonterminal(next)});
      }
    }
    if (m == 0) Rule(nt, {bracket, Literal("]")});
    if (!max_items || *max_items >= 1) {
      Rule(nt, {bracket, item(0), Symbol::Nonterminal(after[1])});
    }
    return absl::OkStatus();
  }

  // An array that must hold, for each some_items entry, an item at its
  // index or later matching its value: Array's states, each also carrying
  // the set f of entries satisfied so far ("]" needs all). An item may
  // satisfy several entries at once (the normalizer's conjunctions).
  absl::Status ArrayWithSomeItems(const SchemaNode& node, NonterminalId nt) {
    const size_t w = node.some_items.size();
    if (w > kMaxSomeMembers) {
      return Unsupported(absl::StrCat("an array that must have ", w,
                                      " kinds of violating items at once (complements of items; "
                                      "at most ",
                                      kMaxSomeMembers, ")"),
                         node);
    }
    const uint64_t p = node.prefix_items.size();
    const uint64_t m = node.min_items;
    const uint64_t k = std::max<uint64_t>(p, m);
    const uint64_t last = node.max_items ? *node.max_items : std::max<uint64_t>(k, 1);
    const uint32_t flags = uint32_t{1} << w;
    const uint32_t all = flags - 1;
    if ((last + 1) * flags > options_.max_nonterminals) {
      return AtNode(absl::ResourceExhaustedError(absl::StrCat(
                        "array bounds need ", (last + 1) * flags, " grammar states", At(node))),
                    node);
    }
    // The ways item i may be written: (symbol, entries it satisfies).
    auto variants = [&](uint64_t i) -> absl::StatusOr<std::vector<std::pair<Symbol, uint32_t>>> {
      const NodeId schema = i < p ? node.prefix_items[i] : node.items;
      std::vector<std::pair<Symbol, uint32_t>> out = {{Symbol::Nonterminal(Value(schema)), 0}};
      uint32_t covered = 0;  // Entries whose index range includes i.
      for (size_t j = 0; j < w; ++j) {
        if (node.some_items[j].from <= i) covered |= uint32_t{1} << j;
      }
      for (uint32_t entries = 1; entries < flags; ++entries) {
        if ((entries & covered) != entries) continue;
        auto it =
            std::find_if(node.some_item_values.begin(), node.some_item_values.end(),
                         [&](const auto& v) { return v.item == schema && v.entries == entries; });
        if (it == node.some_item_values.end()) {
          return absl::InternalError(absl::StrCat("some_items without the conjunction for item ", i,
                                                  At(node),
                                                  ": an engine bug, not a property of the schema"));
        }
        if (it->value != kFalseNode)
          out.push_back({Symbol::Nonterminal(Value(it->value)), entries});
      }
      return out;
    };
    // after[i * flags + f]: the rest once i items are written, entries f met.
    std::vector<NonterminalId> after((last + 1) * flags);
    for (uint64_t i = 1; i <= last; ++i) {
      for (uint32_t f = 0; f < flags; ++f)
        after[i * flags + f] = builder_.FreshNonterminal("items");
    }
    for (uint64_t i = 1; i <= last; ++i) {
      if (absl::Status s = CheckDeadline(node); !s.ok()) return s;
      absl::StatusOr<std::vector<std::pair<Symbol, uint32_t>>> item = variants(i);
      if (!item.ok()) return item.status();
      for (uint32_t f = 0; f < flags; ++f) {
        const NonterminalId here = after[i * flags + f];
        // Kept so a state with no way forward still has a rule.
        Rule(here, {Symbol::Nonterminal(nothing_)});
        if (i >= m && f == all) Rule(here, {Literal("]")});
        if (node.max_items && i >= *node.max_items) continue;
        const uint64_t next = i == last ? i : i + 1;
        for (const auto& [symbol, entries] : *item) {
          Rule(here,
               {Literal(","), symbol, Symbol::Nonterminal(after[next * flags + (f | entries)])});
        }
      }
    }
    Rule(nt, {Symbol::Nonterminal(nothing_)});
    if (m == 0 && all == 0) Rule(nt, {Literal("["), Literal("]")});
    if (!node.max_items || *node.max_items >= 1) {
      absl::StatusOr<std::vector<std::pair<Symbol, uint32_t>>> first = variants(0);
      if (!first.ok()) return first.status();
      for (const auto& [symbol, entries] : *first) {
        Rule(nt, {Literal("["), symbol, Symbol::Nonterminal(after[1 * flags + entries])});
      }
    }
    return absl::OkStatus();
  }

  // Keys (decoded) that propertyNames admits; AnyUtf8String when unconstrained.
  absl::StatusOr<ExprId> PropertyNames(const SchemaNode& node) {
    return KeyLanguage(node.property_names, 0);
  }

  // The decoded strings a key schema (propertyNames, a some_members key)
  // admits: its own string constraints, within the union of its anyOf
  // branches (normalization rewrites not/oneOf/if/then/else into anyOf of
  // merged nodes where that is exact; what is left is refused by name).
  absl::StatusOr<ExprId> KeyLanguage(NodeId id, int depth) {
    if (id == kTrueNode) return pool_.AnyUtf8String();
    if (id == kFalseNode) return ExprSet::kNothing;
    const SchemaNode& names = schema_.node(id);
    if (!(names.types & kStringType)) return ExprSet::kNothing;
    if (!names.unsupported.empty()) {
      absl::Status error = absl::UnimplementedError(names.unsupported);
      if (names.unsupported_pointer.empty()) return error;
      return WithJsonPointer(std::move(error), names.unsupported_pointer);
    }
    if (depth > 32) return Unsupported("propertyNames nested too deeply", names);
    if (!names.all_of.empty()) return Unsupported("allOf whose parts cannot be merged", names);
    if (names.not_schema != kNoNode) return Unsupported("\"not\" in propertyNames", names);
    if (names.if_schema != kNoNode) return Unsupported("if/then/else in propertyNames", names);
    if (!names.one_of.empty() && !names.one_of_disjoint) {
      return Unsupported("oneOf whose branches may overlap in propertyNames", names);
    }
    ExprId own;
    if (names.enum_values) {
      // Each key must meet the rest of the key schema too (a format beside
      // the enum), as enum values do in DefineValue.
      std::vector<ExprId> keys;
      for (const JsonValue& v : *names.enum_values) {
        if (v.kind() != JsonValue::Kind::kString) continue;
        absl::StatusOr<bool> matches = Values().Matches(id, v);
        if (!matches.ok()) {
          return AtNode(absl::Status(matches.status().code(),
                                     absl::StrCat(matches.status().message(), At(names))),
                        names);
        }
        if (*matches) keys.push_back(pool_.Literal(v.string()));
      }
      own = pool_.Or(keys);
    } else {
      absl::StatusOr<ExprId> strings = StringLanguage(names);
      if (!strings.ok()) return strings.status();
      own = *strings;
    }
    const std::vector<NodeId>& branches = names.any_of.empty() ? names.one_of : names.any_of;
    if (branches.empty()) return own;
    std::vector<ExprId> alternatives;
    for (NodeId branch : branches) {
      absl::StatusOr<ExprId> keys = KeyLanguage(branch, depth + 1);
      if (!keys.ok()) return keys.status();
      alternatives.push_back(*keys);
    }
    return pool_.And(own, pool_.Or(alternatives));
  }

  // DeadlineExceeded naming `node` once the time limit has passed. Checked
  // per value and per object member: a single object can hold 40k properties.
  absl::Status CheckDeadline(const SchemaNode& node) const {
    if (options_.cancelled != nullptr && options_.cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError(absl::StrCat("compile cancelled while lowering the schema",
                                               At(node), ": no caller waits for it any more"));
    }
    if (std::chrono::steady_clock::now() < options_.deadline) return absl::OkStatus();
    return AtNode(absl::DeadlineExceededError(absl::StrCat(
                      "compile exceeded its time limit while lowering the schema", At(node))),
                  node);
  }

  absl::Status Object(const SchemaNode& node, NonterminalId nt) {
    absl::StatusOr<ExprId> names = PropertyNames(node);
    if (!names.ok()) return names.status();
    // Declared keys: properties in schema order, then required keys that are
    // not properties (their value follows patternProperties or
    // additionalProperties).
    struct Declared {
      std::string key;
      NodeId value;
      bool required;
    };
    std::vector<Declared> declared;
    std::vector<ExprId> declared_literals;
    for (const auto& [key, value] : node.properties) {
      declared.push_back({key, value, node.IsRequired(key)});
    }
    std::vector<ExprId> patterns;
    for (const auto& [pattern, value] : node.pattern_properties) {
      absl::StatusOr<ExprId> re = ParseRegex(pattern, regex::MatchMode::kSearch);
      if (!re.ok()) {
        return AtNode(absl::Status(re.status().code(), absl::StrCat("patternProperties", At(node),
                                                                    ": ", re.status().message())),
                      node);
      }
      patterns.push_back(*re);
    }
    for (const std::string& key : node.required) {
      if (node.PropertyNode(key) != kNoNode) continue;
      NodeId value = node.additional_properties;
      for (size_t i = 0; i < patterns.size(); ++i) {
        if (pool_.Matches(patterns[i], key)) value = node.pattern_properties[i].second;
      }
      declared.push_back({key, value, true});
    }
    for (Declared& d : declared) {
      if (absl::Status s = CheckDeadline(node); !s.ok()) return s;
      declared_literals.push_back(pool_.Literal(d.key));
      // Normalization folds the matching patterns' schemas into the
      // property's (properties_include_patterns); without that, a key in both
      // would need two schemas.
      for (size_t i = 0; i < patterns.size() && !node.properties_include_patterns; ++i) {
        if (pool_.Matches(patterns[i], d.key) && node.pattern_properties[i].second != kTrueNode &&
            node.pattern_properties[i].second != d.value) {
          return Unsupported("a property that also matches patternProperties", node);
        }
      }
      if (!pool_.Matches(*names, d.key)) d.value = kFalseNode;
    }
    // Other keys: one class per pattern, then additionalProperties; the
    // classes must not overlap (a key in two would need both schemas).
    struct Extra {
      Symbol key;
      NodeId value;
      Symbol comma_key = Symbol::Lexeme(0);  // Any-order objects only.
      uint32_t witnesses = 0;                // The some_members entries such a member satisfies.
    };
    std::vector<Extra> extras;
    // some_members: one flag per entry, set by a member of another key in
    // the entry's key language whose value matches the class's schema and
    // the entry's (normalization splits off declared keys).
    const size_t w = node.some_members.size();
    if (w > kMaxSomeMembers) {
      return Unsupported(absl::StrCat("an object that must have ", w,
                                      " kinds of violating members at once (complements of "
                                      "additionalProperties/patternProperties/propertyNames; at "
                                      "most ",
                                      kMaxSomeMembers, ")"),
                         node);
    }
    std::vector<ExprId> witness_keys;
    for (const SchemaNode::SomeMember& m : node.some_members) {
      absl::StatusOr<ExprId> keys = KeyLanguage(m.key, 0);
      if (!keys.ok()) return keys.status();
      witness_keys.push_back(*keys);
    }
    // A class of other keys and its value schema, plus its variants for
    // members that satisfy a set of the entries (bits) at once.
    auto add_class = [&](ExprId keys, NodeId value) -> absl::Status {
      for (uint32_t entries = 0; entries < (uint32_t{1} << w); ++entries) {
        NodeId member_value = value;
        ExprId member_keys = keys;
        if (entries != 0) {
          auto it = std::find_if(
              node.some_member_values.begin(), node.some_member_values.end(),
              [&](const auto& v) { return v.class_value == value && v.entries == entries; });
          if (it == node.some_member_values.end()) {
            return absl::InternalError(
                absl::StrCat("some_members without the conjunction for a key class", At(node),
                             ": an engine bug, not a property of the schema"));
          }
          member_value = it->value;
          if (member_value == kFalseNode) continue;
          std::vector<ExprId> parts = {keys};
          for (size_t j = 0; j < w; ++j) {
            if (entries & (uint32_t{1} << j)) parts.push_back(witness_keys[j]);
          }
          member_keys = pool_.And(parts);
        }
        absl::StatusOr<Symbol> key = KeyClass(member_keys, node);
        if (!key.ok()) return key.status();
        if (key->is_nonterminal()) continue;  // No such key.
        Extra extra{*key, member_value};
        extra.witnesses = entries;
        if (options_.any_order_properties) {
          absl::StatusOr<Symbol> comma_key = KeyClass(member_keys, node, /*after_comma=*/true);
          if (!comma_key.ok()) return comma_key.status();
          extra.comma_key = *comma_key;
        }
        extras.push_back(extra);
      }
      return absl::OkStatus();
    };

    const ExprId not_declared = pool_.Not(pool_.Or(declared_literals));
    const ExprId base = pool_.And(std::vector<ExprId>{pool_.AnyUtf8String(), not_declared, *names});
    // Patterns with the same schema form one class (they may overlap: a key
    // in both needs that one schema); so do additionalProperties and the
    // patterns sharing its schema. When all of them share it, the class is
    // every other key, without the complements of the patterns.
    const NodeId additional = node.additional_properties;
    std::vector<NodeId> class_values;
    std::vector<std::vector<size_t>> class_patterns;
    for (size_t i = 0; i < patterns.size(); ++i) {
      const NodeId value = node.pattern_properties[i].second;
      auto it = std::find(class_values.begin(), class_values.end(), value);
      if (it == class_values.end()) {
        class_values.push_back(value);
        class_patterns.push_back({i});
      } else {
        class_patterns[it - class_values.begin()].push_back(i);
      }
    }
    bool overlapping = false;
    for (size_t i = 0; i < patterns.size() && !overlapping; ++i) {
      for (size_t j = 0; j < i && !overlapping; ++j) {
        if (node.pattern_properties[i].second == node.pattern_properties[j].second) continue;
        absl::StatusOr<bool> empty =
            pool_.IsEmpty(pool_.And(std::vector<ExprId>{base, patterns[i], patterns[j]}),
                          /*budget=*/20000, options_.deadline);
        if (!empty.ok()) return empty.status();
        overlapping = !*empty;
      }
    }
    std::vector<ExprId> not_patterns = {base};
    for (ExprId p : patterns) not_patterns.push_back(pool_.Not(p));
    const ExprId other_keys = pool_.And(not_patterns);
    if (overlapping) {
      // Keys matching patterns of several schemas need all of them: one
      // class per region, the keys matching exactly a set S of the schemas'
      // patterns, whose value is the conjunction normalization prepared.
      if (w > 0 || class_values.size() > kMaxPatternSchemas) {
        return Unsupported(
            absl::StrCat("overlapping patternProperties with more than ", kMaxPatternSchemas,
                         " distinct schemas or beside a complement"),
            node);
      }
      std::vector<ExprId> class_keys;
      for (size_t c = 0; c < class_values.size(); ++c) {
        std::vector<ExprId> alternatives;
        for (size_t i : class_patterns[c]) alternatives.push_back(patterns[i]);
        class_keys.push_back(pool_.Or(alternatives));
      }
      for (uint32_t set = 1; set < (uint32_t{1} << class_values.size()); ++set) {
        std::vector<ExprId> parts = {base};
        std::vector<NodeId> values;
        for (size_t c = 0; c < class_values.size(); ++c) {
          const bool in = set & (uint32_t{1} << c);
          parts.push_back(in ? class_keys[c] : pool_.Not(class_keys[c]));
          if (in) values.push_back(class_values[c]);
        }
        NodeId value = values[0];
        if (values.size() > 1) {
          auto it = std::find_if(node.pattern_conjunctions.begin(), node.pattern_conjunctions.end(),
                                 [&](const auto& c) { return c.values == values; });
          if (it == node.pattern_conjunctions.end()) {
            return absl::InternalError(
                absl::StrCat("overlapping patternProperties without their conjunction", At(node),
                             ": an engine bug, not a property of the schema"));
          }
          value = it->value;
        }
        if (value == kFalseNode) continue;
        if (absl::Status st = add_class(pool_.And(parts), value); !st.ok()) return st;
      }
      if (additional != kFalseNode) {
        if (absl::Status st = add_class(other_keys, additional); !st.ok()) return st;
      }
    }
    bool additional_in_a_class = overlapping;  // Then the classes are complete.
    for (size_t c = 0; c < class_values.size() && !overlapping; ++c) {
      std::vector<ExprId> alternatives;
      for (size_t i : class_patterns[c]) alternatives.push_back(patterns[i]);
      ExprId keys = pool_.And(base, pool_.Or(alternatives));
      if (class_values[c] == additional && additional != kFalseNode) {
        additional_in_a_class = true;
        keys = class_values.size() == 1 ? base : pool_.Or(keys, other_keys);
      }
      if (absl::Status st = add_class(keys, class_values[c]); !st.ok()) return st;
    }
    if (additional != kFalseNode && !additional_in_a_class) {
      if (absl::Status st = add_class(other_keys, additional); !st.ok()) return st;
    }

    if (options_.any_order_properties) {
      AnyOrderMembersSpec members;
      for (const Declared& d : declared) {
        members.declared.push_back(
            {Key(d.key), CommaKey(d.key), Symbol::Nonterminal(Value(d.value)), d.required});
      }
      for (const Extra& extra : extras) {
        members.extras.push_back(
            {extra.key, extra.comma_key, Symbol::Nonterminal(Value(extra.value)), extra.witnesses});
      }
      members.witnesses = static_cast<uint32_t>(w);
      members.close = Literal("}");
      members.nothing = Symbol::Nonterminal(nothing_);
      members.min_properties = node.min_properties;
      members.max_properties = node.max_properties;
      members.max_states = options_.max_any_order_states;
      members.name = "members" + node.pointer;
      absl::StatusOr<NonterminalId> rest = AddAnyOrderMembers(builder_, members);
      if (!rest.ok()) {
        return absl::Status(rest.status().code(), absl::StrCat(rest.status().message(), At(node)));
      }
      Rule(nt, {Literal("{"), Symbol::Nonterminal(*rest)});
      return absl::OkStatus();
    }

    // States (i, c): declared keys before i are settled, c members written
    // (c counts up to the bound that matters; without min/maxProperties only
    // "none yet" vs "some" matters, for the comma). Two per (i, c), so the
    // grammar is unambiguous: in A(i, c) other keys may come (they stay in
    // A(i, ...)); B(i, c) picks the next declared key, skipping optional ones
    // without admitting other keys between skips. With other keys admitted at
    // every skipped position (one state per position), an undeclared key
    // would be parsed in each of them at once: Earley work grows with the
    // number of optional properties at every member (a 270-property ESLint
    // config took ~15 ms per token).
    const bool counting = node.min_properties > 0 || node.max_properties;
    const uint64_t cap = std::max<uint64_t>(
        1, counting ? (node.max_properties ? *node.max_properties : node.min_properties) : 1);
    // With some_members, each state also carries the set f of entries
    // satisfied so far; "}" needs all of them.
    const uint64_t n = declared.size();
    const uint64_t flags = uint64_t{1} << w;
    const uint64_t all_flags = flags - 1;
    const uint64_t per_flag = 2 * (n + 1) * (cap + 1);
    if (per_flag * flags > options_.max_nonterminals) {
      return AtNode(absl::ResourceExhaustedError(absl::StrCat(
                        "object bounds need ", per_flag * flags, " grammar states", At(node))),
                    node);
    }
    constexpr NonterminalId kUnset = ~NonterminalId{0};
    std::vector<NonterminalId> states(per_flag * flags, kUnset);
    auto state = [&](bool pick, uint64_t i, uint64_t c, uint64_t f) {
      NonterminalId& s =
          states[f * per_flag + (pick ? (n + 1) * (cap + 1) : 0) + i * (cap + 1) + c];
      if (s == kUnset) s = builder_.FreshNonterminal("members");
      return Symbol::Nonterminal(s);
    };
    auto a_state = [&](uint64_t i, uint64_t c, uint64_t f) { return state(false, i, c, f); };
    auto b_state = [&](uint64_t i, uint64_t c, uint64_t f) { return state(true, i, c, f); };
    auto next_count = [&](uint64_t c) { return std::min(c + 1, cap); };
    for (uint64_t f = 0; f < flags; ++f) {
      for (uint64_t c = 0; c <= cap; ++c) {
        const bool room = !node.max_properties || c < *node.max_properties;
        for (uint64_t i = 0; i <= n; ++i) {
          if (absl::Status s = CheckDeadline(node); !s.ok()) return s;
          std::vector<Symbol> comma;
          if (c > 0) comma.push_back(Literal(","));
          const NonterminalId a = a_state(i, c, f).id();
          Rule(a, {b_state(i, c, f)});
          if (room) {
            for (const Extra& extra : extras) {
              std::vector<Symbol> rhs = comma;
              rhs.push_back(extra.key);
              rhs.push_back(Symbol::Nonterminal(Value(extra.value)));
              rhs.push_back(a_state(i, next_count(c), f | extra.witnesses));
              Rule(a, std::move(rhs));
            }
          }
          const NonterminalId b = b_state(i, c, f).id();
          if (i == n && (!counting || c >= node.min_properties) && f == all_flags) {
            Rule(b, {Literal("}")});
          }
          if (i < n) {
            if (room) {
              std::vector<Symbol> rhs = comma;
              rhs.push_back(Key(declared[i].key));
              rhs.push_back(Symbol::Nonterminal(Value(declared[i].value)));
              rhs.push_back(a_state(i + 1, next_count(c), f));
              Rule(b, std::move(rhs));
            }
            if (!declared[i].required) Rule(b, {b_state(i + 1, c, f)});
          }
        }
      }
    }
    // A count state may have no way forward (too few members possible): it
    // then derives nothing, and trimming removes what leads to it.
    for (NonterminalId s : states) {
      if (s != kUnset) Rule(s, {Symbol::Nonterminal(nothing_)});
    }
    Rule(nt, {Literal("{"), a_state(0, 0, 0)});
    return absl::OkStatus();
  }

  // `"key"` + whitespace + `:` for every key of a decoded key language.
  absl::StatusOr<Symbol> KeyClass(ExprId keys, const SchemaNode& node, bool after_comma = false) {
    ExprId quoted = QuotedString(keys);
    if (after_comma) quoted = pool_.Concat(std::vector<ExprId>{pool_.Byte(','), ws_, quoted});
    return KeyToken(quoted, "key" + node.pointer);
  }

  // An encoded key (quotes included) + whitespace + `:`, as one lexeme.
  absl::StatusOr<Symbol> KeyToken(ExprId quoted_key, std::string_view name,
                                  LexemeRole role = LexemeRole::kNone) {
    return Token(pool_.Concat(std::vector<ExprId>{quoted_key, ws_, pool_.Byte(':')}), name,
                 /*literal=*/false, role, false, false, JsonPart::kKey);
  }

  const Schema& schema_;
  const LowerOptions& options_;
  // Decides enum/const values on their whole node (made on first use).
  std::optional<ValueMatcher> value_matcher_;
  ValueMatcher& Values() {
    if (!value_matcher_) value_matcher_.emplace(schema_, options_.ignore_unknown_formats);
    return *value_matcher_;
  }
  GrammarIr& ir_;
  ExprSet& pool_;
  // Emptiness checks made while lowering stop when the compile is cancelled
  // or past its time limit, not only between schema nodes.
  ExprSet::ScopedInterrupt interrupt_{&pool_, options_.cancelled, options_.deadline};
  JsonQuoter quoter_{pool_};
  absl::flat_hash_map<std::pair<std::string, regex::MatchMode>, absl::StatusOr<ExprId>> parsed_;
  GrammarBuilder& builder_;
  const size_t first_nonterminal_;
  // Some array has uniqueItems: `[` and `]` carry frame roles (Literal).
  bool array_frames_ = false;
  // Some array has uniqueItems over OpenContainers: lexemes carry their
  // JsonPart and `{`, `}` frame roles too (UniqueValueArray).
  bool item_values_ = false;
  ExprId ws_ = ExprSet::kEpsilon;
  ExprId leading_ws_ = ExprSet::kNothing;
  NonterminalId nothing_ = 0;
  absl::flat_hash_map<NodeId, NonterminalId> value_nts_;
  std::optional<ExprId> large_integer_magnitude_;  // LargeIntegerExponentRegex().
  std::deque<std::pair<NodeId, NonterminalId>> pending_;
};

}  // namespace

absl::StatusOr<NonterminalId> LowerSchemaInto(const Schema& schema, const LowerOptions& options,
                                              GrammarIr& ir) {
  return Lowering(schema, options, ir).Run();
}

absl::StatusOr<GrammarIr> LowerSchema(const Schema& schema, const LowerOptions& options) {
  GrammarIr ir;
  absl::StatusOr<NonterminalId> start = LowerSchemaInto(schema, options, ir);
  if (!start.ok()) return start.status();
  ir.builder.SetStart(*start);
  return ir;
}

}  // namespace maskd::json_schema
