// Lowering of structural tags (structural_tag.h) to grammar IR. Free text is
// a lexeme that runs up to and including the first occurrence of a trigger
// (or of a tag's end): "ends with t and holds no earlier occurrence", so the
// longest-match lexer ends it exactly there and the parser takes over.
#include "compiler/structural_tag/structural_tag.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/grammar_text/grammar_text.h"
#include "compiler/grammar_text/ir_import.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/regex/ecma_regex.h"

namespace maskd {
namespace {

using json_schema::JsonValue;
using regex::ExprId;
using regex::ExprSet;

const JsonValue* Member(const JsonValue& object, std::string_view key) {
  if (object.kind() != JsonValue::Kind::kObject) return nullptr;
  for (const auto& [k, v] : object.members()) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string Child(const std::string& pointer, std::string_view key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return pointer + "/" + escaped;
}

std::string Child(const std::string& pointer, size_t index) {
  return absl::StrCat(pointer, "/", index);
}

absl::Status Invalid(std::string_view message, const std::string& pointer) {
  return WithJsonPointer(
      absl::InvalidArgumentError(absl::StrCat("structural_tag: ", std::string(message), " at ",
                                              pointer.empty() ? "/" : pointer)),
      pointer);
}

absl::Status Unsupported(std::string_view message, const std::string& pointer) {
  return WithJsonPointer(
      absl::UnimplementedError(absl::StrCat("structural_tag: ", std::string(message), " at ",
                                            pointer.empty() ? "/" : pointer)),
      pointer);
}

// One tag of triggered_tags / tags_with_separator / a "tag" format.
struct TagSpec {
  std::string begin;
  const JsonValue* content = nullptr;
  std::string content_pointer;
  std::vector<std::string> ends;
  std::string pointer;
};

class TagLowering {
 public:
  explicit TagLowering(const StructuralTagOptions& options)
      : options_(options), pool_(*ir_.pool), builder_(ir_.builder) {}

  absl::StatusOr<GrammarIr> Run(const JsonValue& doc) {
    if (doc.kind() != JsonValue::Kind::kObject) {
      return Invalid("the document must be a JSON object", "");
    }
    absl::StatusOr<NonterminalId> start;
    if (const JsonValue* format = Member(doc, "format")) {
      if (const JsonValue* type = Member(doc, "type");
          type != nullptr &&
          (type->kind() != JsonValue::Kind::kString || type->string() != "structural_tag")) {
        return Invalid("\"type\" beside \"format\" must be \"structural_tag\"", "/type");
      }
      if (const JsonValue* needed = Member(doc, "special_tokens")) {
        if (absl::Status s = CheckSpecialTokens(*needed); !s.ok()) return s;
      }
      start = Lower(*format, "/format", /*at_end=*/true, nullptr);
    } else if (Member(doc, "structures") != nullptr) {
      start = Legacy(doc);
    } else {
      return Invalid("expected \"format\" or the legacy \"structures\" and \"triggers\"", "");
    }
    if (!start.ok()) return start.status();
    builder_.SetStart(*start);
    return std::move(ir_);
  }

 private:
  // maskd's "special_tokens": [...] beside "format": texts that must each be
  // one special token of the compile's tokenizer (a preset such as harmony
  // means nothing as plain text).
  absl::Status CheckSpecialTokens(const JsonValue& needed) {
    absl::StatusOr<std::vector<std::string>> texts = Strings(needed, "/special_tokens");
    if (!texts.ok()) return texts.status();
    for (size_t i = 0; i < texts->size(); ++i) {
      const std::string& text = (*texts)[i];
      std::vector<TokenId> ids;
      if (options_.tokenizer != nullptr) ids = options_.tokenizer->Encode(text);
      if (ids.size() != 1 || !IsSpecialTerminal(ids[0])) {
        return Invalid(
            absl::StrCat("\"", text, "\" is not a special token of tokenizer ",
                         options_.tokenizer != nullptr ? options_.tokenizer->name() : "(none)"),
            Child("/special_tokens", i));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> String(const JsonValue& object, std::string_view key,
                                     const std::string& pointer) {
    const JsonValue* v = Member(object, key);
    if (v == nullptr) return Invalid(absl::StrCat("missing \"", std::string(key), "\""), pointer);
    if (v->kind() != JsonValue::Kind::kString) {
      return Invalid("expected a string", Child(pointer, key));
    }
    return v->string();
  }

  absl::StatusOr<bool> Bool(const JsonValue& object, std::string_view key,
                            const std::string& pointer) {
    const JsonValue* v = Member(object, key);
    if (v == nullptr) return false;
    if (v->kind() != JsonValue::Kind::kBoolean) {
      return Invalid("expected a boolean", Child(pointer, key));
    }
    return v->boolean();
  }

  absl::StatusOr<std::vector<std::string>> Strings(const JsonValue& v, const std::string& pointer) {
    if (v.kind() != JsonValue::Kind::kArray)
      return Invalid("expected an array of strings", pointer);
    std::vector<std::string> out;
    for (size_t i = 0; i < v.items().size(); ++i) {
      if (v.items()[i].kind() != JsonValue::Kind::kString) {
        return Invalid("expected a string", Child(pointer, i));
      }
      out.push_back(v.items()[i].string());
    }
    return out;
  }

  // The symbols of a literal: none for "", else literal lexemes for its
  // text and, where the compile's tokenizer has a special token (EOS
  // excepted) whose text occurs in it, that token as a token terminal, as
  // XGrammar maps a tag's begin/end that is a special token's text to it.
  std::vector<Symbol> LiteralSymbols(const std::string& s) {
    if (s.empty()) return {};
    LexemeFlags flags;
    flags.literal = true;
    std::vector<Symbol> out;
    std::string text;
    auto flush = [&] {
      if (text.empty()) return;
      out.push_back(Symbol::Lexeme(
          builder_.AddLexeme(absl::StrCat("\"", text, "\""), pool_.Literal(text), flags)));
      text.clear();
    };
    if (!HasSpecialToken(s)) {
      text = s;
    } else {
      for (TokenId id : options_.tokenizer->Encode(s)) {
        if (!IsSpecialTerminal(id)) {
          text += options_.tokenizer->token_bytes(id);
          continue;
        }
        flush();
        out.push_back(Symbol::Lexeme(builder_.AddTokenLexeme(
            std::string(options_.tokenizer->token_bytes(id)), {id}, false, ExprSet::kNothing)));
      }
    }
    flush();
    return out;
  }

  // A special token other than EOS: what LiteralSymbols makes a token
  // terminal.
  bool IsSpecialTerminal(TokenId id) const {
    const Tokenizer& t = *options_.tokenizer;
    if (!t.is_special(id) || t.token_bytes(id).empty()) return false;
    return std::find(t.eos_ids().begin(), t.eos_ids().end(), id) == t.eos_ids().end();
  }
  bool HasSpecialToken(const std::string& s) const {
    if (options_.tokenizer == nullptr) return false;
    for (TokenId id : options_.tokenizer->Encode(s)) {
      if (IsSpecialTerminal(id)) return true;
    }
    return false;
  }

  NonterminalId Fresh(std::string_view hint) { return builder_.FreshNonterminal(hint); }

  // NT ::= body followed by one of `follow` (or just body when null).
  NonterminalId Followed(NonterminalId body, const std::vector<std::string>* follow) {
    if (follow == nullptr) return body;
    const NonterminalId nt = Fresh("followed");
    for (const std::string& f : *follow) {
      std::vector<Symbol> rhs = {Symbol::Nonterminal(body)};
      for (Symbol s : LiteralSymbols(f)) rhs.push_back(s);
      builder_.AddRule(nt, std::move(rhs));
    }
    return nt;
  }

  ExprId AnyOf(const std::vector<std::string>& literals) {
    std::vector<ExprId> parts;
    for (const std::string& s : literals) parts.push_back(pool_.Literal(s));
    return pool_.Or(parts);
  }

  // Whether `e` encodes with a special token (a token terminal) first.
  bool StartsWithSpecialToken(const std::string& e) const {
    if (options_.tokenizer == nullptr) return false;
    const std::vector<TokenId> ids = options_.tokenizer->Encode(e);
    return !ids.empty() && IsSpecialTerminal(ids[0]);
  }

  // Any bytes up to and including the first occurrence of any of `ends`.
  // An end that starts with a special token (harmony's `<|end|>`) is that
  // token's terminal after the text: free text is bytes and never holds a
  // special token, so the text ends exactly where the token comes (and it
  // must hold no occurrence of a text end before it). An end holding a
  // special token after some text is refused.
  NonterminalId AnyTextThen(const std::vector<std::string>& ends, const std::string& pointer,
                            absl::Status* error) {
    std::vector<std::string> text_ends, token_ends;
    for (const std::string& e : ends) {
      if (e.empty()) {
        *error = Unsupported("any_text followed by an empty string never ends", pointer);
        return 0;
      }
      if (StartsWithSpecialToken(e)) {
        token_ends.push_back(e);
        continue;
      }
      if (HasSpecialToken(e)) {
        *error = Unsupported(absl::StrCat("any_text followed by \"", e,
                                          "\", which holds a special token after text (free "
                                          "text is bytes)"),
                             pointer);
        return 0;
      }
      text_ends.push_back(e);
    }
    const ExprId any = ExprSet::kAnyByteString;
    const NonterminalId nt = Fresh("any_text_then_end");
    if (!text_ends.empty()) {
      const ExprId all = AnyOf(text_ends);
      // No occurrence of an end that finishes before the last byte.
      const ExprId no_earlier =
          pool_.Not(pool_.Concat(std::vector<ExprId>{any, all, ExprSet::kAnyByte, any}));
      for (const std::string& e : text_ends) {
        const ExprId re = pool_.And(pool_.Concat(any, pool_.Literal(e)), no_earlier);
        builder_.AddRule(
            nt, {Symbol::Lexeme(builder_.AddLexeme(absl::StrCat("text then \"", e, "\""), re))});
      }
    }
    if (!token_ends.empty()) {
      ExprId text = pool_.NonEmpty(any);
      if (!text_ends.empty()) {
        text = pool_.And(text,
                         pool_.Not(pool_.Concat(std::vector<ExprId>{any, AnyOf(text_ends), any})));
      }
      const Symbol text_lexeme = Symbol::Lexeme(builder_.AddLexeme("any_text", text));
      for (const std::string& e : token_ends) {
        std::vector<Symbol> end = LiteralSymbols(e);
        builder_.AddRule(nt, end);
        end.insert(end.begin(), text_lexeme);
        builder_.AddRule(nt, std::move(end));
      }
    }
    return nt;
  }

  // Lowers `format` to a nonterminal. With `follow` set, the nonterminal also
  // matches one of those literals after the format (so any_text can end at
  // it); `at_end` says nothing follows in the whole output.
  absl::StatusOr<NonterminalId> Lower(const JsonValue& format, const std::string& pointer,
                                      bool at_end, const std::vector<std::string>* follow) {
    if (format.kind() != JsonValue::Kind::kObject)
      return Invalid("expected a format object", pointer);
    absl::StatusOr<std::string> type = String(format, "type", pointer);
    if (!type.ok()) return type.status();
    if (*type == "any_text") {
      if (follow != nullptr) {
        absl::Status error;
        const NonterminalId nt = AnyTextThen(*follow, pointer, &error);
        if (!error.ok()) return error;
        return nt;
      }
      if (!at_end) {
        return Unsupported(
            "any_text must end the output or be followed by a literal (a tag's end, a "
            "const_string)",
            pointer);
      }
      const NonterminalId nt = Fresh("any_text");
      builder_.AddRule(nt, {});
      builder_.AddRule(nt, {Symbol::Lexeme(builder_.AddLexeme(
                               "any_text", pool_.NonEmpty(ExprSet::kAnyByteString)))});
      return nt;
    }
    if (*type == "const_string") {
      absl::StatusOr<std::string> value = String(format, "value", pointer);
      if (!value.ok()) return value.status();
      const NonterminalId nt = Fresh("const_string");
      builder_.AddRule(nt, LiteralSymbols(*value));
      return Followed(nt, follow);
    }
    if (*type == "regex") {
      absl::StatusOr<std::string> pattern = String(format, "pattern", pointer);
      if (!pattern.ok()) return pattern.status();
      absl::StatusOr<ExprId> re =
          regex::ParseEcmaRegex(*pattern, &pool_, regex::MatchMode::kFullMatch);
      if (!re.ok()) return WithJsonPointer(re.status(), Child(pointer, "pattern"));
      const NonterminalId nt = Fresh("regex");
      const ExprId non_empty = pool_.NonEmpty(*re);
      absl::StatusOr<bool> empty = pool_.IsEmpty(non_empty);
      if (!empty.ok()) return empty.status();
      if (!*empty) builder_.AddRule(nt, {Symbol::Lexeme(builder_.AddLexeme("regex", non_empty))});
      if (pool_.Nullable(*re)) builder_.AddRule(nt, {});
      if (*empty && !pool_.Nullable(*re))
        return Invalid("the regex matches nothing", Child(pointer, "pattern"));
      return Followed(nt, follow);
    }
    if (*type == "json_schema") {
      const JsonValue* schema = Member(format, "json_schema");
      if (schema == nullptr) return Invalid("missing \"json_schema\"", pointer);
      const bool legacy = std::any_of(legacy_contents_.begin(), legacy_contents_.end(),
                                      [&](const auto& c) { return c.get() == &format; });
      absl::StatusOr<NonterminalId> nt =
          Schema(*schema, legacy ? Child(pointer, "schema") : Child(pointer, "json_schema"));
      if (!nt.ok()) return nt.status();
      return Followed(*nt, follow);
    }
    if (*type == "grammar") {
      absl::StatusOr<std::string> text = String(format, "grammar", pointer);
      if (!text.ok()) return text.status();
      // XGrammar's grammar format is its EBNF; the text's own errors keep
      // their line:column and gain the pointer to the text.
      grammar_text::GrammarTextOptions text_options;
      text_options.max_nesting = options_.parse.max_depth;
      text_options.json.parse = options_.parse;
      text_options.json.lower = options_.lower;
      absl::StatusOr<GrammarIr> sub = grammar_text::BuildGrammarTextIr(
          *text, grammar_text::Dialect::kXGrammarEbnf, text_options);
      if (!sub.ok()) return WithJsonPointer(sub.status(), Child(pointer, "grammar"));
      return Followed(grammar_text::ImportIr(*sub, "grammar", ir_), follow);
    }
    if (*type == "sequence" || *type == "or") {
      const JsonValue* elements = Member(format, "elements");
      const std::string elements_pointer = Child(pointer, "elements");
      if (elements == nullptr || elements->kind() != JsonValue::Kind::kArray ||
          elements->items().empty()) {
        return Invalid("\"elements\" must be a non-empty array",
                       elements == nullptr ? pointer : elements_pointer);
      }
      const std::vector<JsonValue>& items = elements->items();
      const NonterminalId nt = Fresh(*type);
      if (*type == "or") {
        for (size_t i = 0; i < items.size(); ++i) {
          absl::StatusOr<NonterminalId> branch =
              Lower(items[i], Child(elements_pointer, i), at_end, follow);
          if (!branch.ok()) return branch.status();
          builder_.AddRule(nt, {Symbol::Nonterminal(*branch)});
        }
        return nt;
      }
      std::vector<Symbol> rhs;
      for (size_t i = 0; i < items.size(); ++i) {
        const std::string item_pointer = Child(elements_pointer, i);
        const bool last = i + 1 == items.size();
        if (last) {
          absl::StatusOr<NonterminalId> part = Lower(items[i], item_pointer, at_end, follow);
          if (!part.ok()) return part.status();
          rhs.push_back(Symbol::Nonterminal(*part));
          break;
        }
        // Free text directly before a const_string (any_text, triggered_tags,
        // an or or a sequence ending in them) ends at that string: the
        // element is lowered with it as its follow.
        const JsonValue* next_type = Member(items[i + 1], "type");
        if (next_type != nullptr && next_type->kind() == JsonValue::Kind::kString &&
            next_type->string() == "const_string") {
          absl::StatusOr<std::string> value =
              String(items[i + 1], "value", Child(elements_pointer, i + 1));
          if (!value.ok()) return value.status();
          const std::vector<std::string> next = {*value};
          const bool next_last = i + 2 == items.size();
          absl::StatusOr<NonterminalId> part = Lower(items[i], item_pointer, false, &next);
          if (!part.ok()) return part.status();
          rhs.push_back(Symbol::Nonterminal(*part));
          ++i;
          if (next_last && follow != nullptr) {
            // The sequence's own follow comes after the const_string.
            const NonterminalId empty = Fresh("empty");
            builder_.AddRule(empty, {});
            rhs.push_back(Symbol::Nonterminal(Followed(empty, follow)));
          }
          continue;
        }
        absl::StatusOr<NonterminalId> part = Lower(items[i], item_pointer, false, nullptr);
        if (!part.ok()) return part.status();
        rhs.push_back(Symbol::Nonterminal(*part));
      }
      builder_.AddRule(nt, std::move(rhs));
      return nt;
    }
    if (*type == "tag") {
      absl::StatusOr<TagSpec> tag = ReadTag(format, pointer);
      if (!tag.ok()) return tag.status();
      absl::StatusOr<NonterminalId> nt = Tag(*tag);
      if (!nt.ok()) return nt.status();
      return Followed(*nt, follow);
    }
    if (*type == "triggered_tags" || *type == "tags_with_separator") {
      const JsonValue* tags_value = Member(format, "tags");
      const std::string tags_pointer = Child(pointer, "tags");
      if (tags_value == nullptr || tags_value->kind() != JsonValue::Kind::kArray) {
        return Invalid("\"tags\" must be an array", tags_value == nullptr ? pointer : tags_pointer);
      }
      std::vector<TagSpec> tags;
      for (size_t i = 0; i < tags_value->items().size(); ++i) {
        absl::StatusOr<TagSpec> tag = ReadTag(tags_value->items()[i], Child(tags_pointer, i));
        if (!tag.ok()) return tag.status();
        tags.push_back(*std::move(tag));
      }
      absl::StatusOr<bool> at_least_one = Bool(format, "at_least_one", pointer);
      if (!at_least_one.ok()) return at_least_one.status();
      absl::StatusOr<bool> stop_after_first = Bool(format, "stop_after_first", pointer);
      if (!stop_after_first.ok()) return stop_after_first.status();
      if (*type == "tags_with_separator") {
        absl::StatusOr<std::string> separator = String(format, "separator", pointer);
        if (!separator.ok()) return separator.status();
        absl::StatusOr<NonterminalId> nt =
            TagsWithSeparator(tags, *separator, *at_least_one, *stop_after_first, pointer);
        if (!nt.ok()) return nt.status();
        return Followed(*nt, follow);
      }
      const JsonValue* triggers_value = Member(format, "triggers");
      if (triggers_value == nullptr) return Invalid("missing \"triggers\"", pointer);
      absl::StatusOr<std::vector<std::string>> triggers =
          Strings(*triggers_value, Child(pointer, "triggers"));
      if (!triggers.ok()) return triggers.status();
      if (follow == nullptr && !at_end && !(*at_least_one && *stop_after_first)) {
        return Unsupported(
            "triggered_tags must end the output or be followed by a literal (a tag's end, a "
            "const_string): its free text would not end",
            pointer);
      }
      for (const std::string& f : follow != nullptr ? *follow : std::vector<std::string>{}) {
        if (f.empty()) {
          return Unsupported("triggered_tags followed by an empty string never ends", pointer);
        }
      }
      // With a follow, the free text ends at it (the nonterminal includes it).
      return TriggeredTags(*triggers, tags, *at_least_one, *stop_after_first, pointer, follow);
    }
    return Invalid(absl::StrCat("unknown format type \"", *type, "\""), Child(pointer, "type"));
  }

  absl::StatusOr<TagSpec> ReadTag(const JsonValue& tag, const std::string& pointer) {
    if (tag.kind() != JsonValue::Kind::kObject) return Invalid("expected a tag object", pointer);
    if (const JsonValue* type = Member(tag, "type");
        type != nullptr && (type->kind() != JsonValue::Kind::kString || type->string() != "tag")) {
      return Invalid("expected \"type\": \"tag\"", Child(pointer, "type"));
    }
    TagSpec spec;
    spec.pointer = pointer;
    absl::StatusOr<std::string> begin = String(tag, "begin", pointer);
    if (!begin.ok()) return begin.status();
    spec.begin = *begin;
    spec.content = Member(tag, "content");
    if (spec.content == nullptr) return Invalid("missing \"content\"", pointer);
    spec.content_pointer = Child(pointer, "content");
    const JsonValue* end = Member(tag, "end");
    if (end == nullptr) return Invalid("missing \"end\"", pointer);
    if (end->kind() == JsonValue::Kind::kString) {
      spec.ends = {end->string()};
    } else {
      absl::StatusOr<std::vector<std::string>> ends = Strings(*end, Child(pointer, "end"));
      if (!ends.ok()) return ends.status();
      if (ends->empty()) return Invalid("\"end\" lists no string", Child(pointer, "end"));
      spec.ends = *std::move(ends);
    }
    return spec;
  }

  // begin content end; `skip_begin` bytes of begin were already matched (by
  // the trigger's free-text lexeme).
  absl::StatusOr<NonterminalId> Tag(const TagSpec& tag, size_t skip_begin = 0) {
    absl::StatusOr<NonterminalId> content =
        Lower(*tag.content, tag.content_pointer, false, &tag.ends);
    if (!content.ok()) return content.status();
    const NonterminalId nt = Fresh("tag");
    std::vector<Symbol> rhs = LiteralSymbols(tag.begin.substr(skip_begin));
    rhs.push_back(Symbol::Nonterminal(*content));
    builder_.AddRule(nt, std::move(rhs));
    return nt;
  }

  NonterminalId Schema(const JsonValue& schema, const std::string& pointer, absl::Status* error) {
    absl::StatusOr<json_schema::Schema> parsed =
        json_schema::ParseSchema(schema.ToJson(), options_.parse);
    absl::StatusOr<NonterminalId> nt =
        parsed.ok() ? json_schema::LowerSchemaInto(*parsed, options_.lower, ir_)
                    : absl::StatusOr<NonterminalId>(parsed.status());
    if (!nt.ok()) {
      const std::string inner = JsonPointerOf(nt.status()).value_or("");
      *error = WithJsonPointer(nt.status(), pointer + inner);
      return 0;
    }
    return *nt;
  }

  absl::StatusOr<NonterminalId> Schema(const JsonValue& schema, const std::string& pointer) {
    absl::Status error;
    const NonterminalId nt = Schema(schema, pointer, &error);
    if (!error.ok()) return error;
    return nt;
  }

  absl::StatusOr<NonterminalId> TagsWithSeparator(const std::vector<TagSpec>& tags,
                                                  const std::string& separator, bool at_least_one,
                                                  bool stop_after_first,
                                                  const std::string& pointer) {
    if (tags.empty()) return Invalid("\"tags\" is empty", Child(pointer, "tags"));
    const NonterminalId one = Fresh("one_tag");
    for (const TagSpec& tag : tags) {
      absl::StatusOr<NonterminalId> nt = Tag(tag);
      if (!nt.ok()) return nt.status();
      builder_.AddRule(one, {Symbol::Nonterminal(*nt)});
    }
    const NonterminalId nt = Fresh("tags_with_separator");
    if (!at_least_one) builder_.AddRule(nt, {});
    if (stop_after_first) {
      builder_.AddRule(nt, {Symbol::Nonterminal(one)});
      return nt;
    }
    // list ::= one | list separator one
    const NonterminalId list = Fresh("tag_list");
    builder_.AddRule(list, {Symbol::Nonterminal(one)});
    std::vector<Symbol> rhs = {Symbol::Nonterminal(list)};
    for (Symbol s : LiteralSymbols(separator)) rhs.push_back(s);
    rhs.push_back(Symbol::Nonterminal(one));
    builder_.AddRule(list, std::move(rhs));
    builder_.AddRule(nt, {Symbol::Nonterminal(list)});
    return nt;
  }

  // The grammar keeps every tag's end in the same lexeme as the free text
  // after it ("END then free text up to a trigger", "END then free text to
  // the end"): a lexeme that ends exactly at a token boundary and cannot go
  // on makes the next mask a parser walk of the whole vocabulary, while a
  // position inside free text is a cached lexer-only mask. Tags whose content
  // must end at its end literal (any_text) keep the end in their own lexeme.
  //   top_c      ::= final_free [unless at_least_one and no tag yet]
  //                | free_then_t after_t
  //   after_t    ::= body_m rest_m | full_m after     (tags m beginning with t)
  //   rest_m     ::= END_m then free text | END_m then free text then t after_t
  //                  (stop_after_first: END_m alone)
  //   after      ::= top_1 (stop_after_first: nothing)
  // Inside a sequence (or a tag's content), `follow` lists the literals that
  // come next: free text where the part may end (not before the first tag
  // with at_least_one) runs up to the first occurrence of a trigger or of a
  // follow literal; a trigger starts a tag, a follow literal ends the part
  // (final_free is then "free text then f", and the nonterminal returned
  // includes f).
  absl::StatusOr<NonterminalId> TriggeredTags(const std::vector<std::string>& triggers,
                                              const std::vector<TagSpec>& tags, bool at_least_one,
                                              bool stop_after_first, const std::string& pointer,
                                              const std::vector<std::string>* follow = nullptr) {
    if (triggers.empty()) return Invalid("\"triggers\" is empty", Child(pointer, "triggers"));
    for (size_t i = 0; i < triggers.size(); ++i) {
      if (triggers[i].empty()) {
        return Invalid("a trigger is empty", Child(Child(pointer, "triggers"), i));
      }
      if (HasSpecialToken(triggers[i])) {
        return Unsupported(absl::StrCat("the trigger \"", triggers[i],
                                        "\" holds a special token (free text is bytes)"),
                           Child(Child(pointer, "triggers"), i));
      }
    }
    if (tags.empty() && at_least_one) {
      return Invalid("at_least_one with no tags", Child(pointer, "tags"));
    }
    const ExprId any = ExprSet::kAnyByteString;
    const std::vector<std::string> stops = follow != nullptr ? *follow : std::vector<std::string>{};
    std::vector<std::string> terminators = triggers;
    terminators.insert(terminators.end(), stops.begin(), stops.end());
    // Free text up to and including the first occurrence of `x` among the
    // strings `first_of` (triggers, and the follow literals where the part
    // may end).
    auto free_then = [&](const std::string& x, const std::vector<std::string>& first_of) {
      const ExprId no_earlier = pool_.Not(
          pool_.Concat(std::vector<ExprId>{any, AnyOf(first_of), ExprSet::kAnyByte, any}));
      return pool_.And(pool_.Concat(any, pool_.Literal(x)), no_earlier);
    };
    const ExprId no_trigger =
        pool_.Not(pool_.Concat(std::vector<ExprId>{any, AnyOf(triggers), any}));
    const NonterminalId top0 = Fresh("free_text");
    const NonterminalId top1 = stop_after_first ? top0 : Fresh("free_text_after_a_tag");
    std::vector<NonterminalId> after_trigger;
    for (size_t i = 0; i < triggers.size(); ++i) after_trigger.push_back(Fresh("after_trigger"));
    // final_free ::= "" | free text without a trigger (at the end of the
    // output), or free text then f (before a follow literal f).
    const NonterminalId final_free = Fresh("final_free_text");
    if (follow == nullptr) {
      builder_.AddRule(final_free, {});
      builder_.AddRule(
          final_free,
          {Symbol::Lexeme(builder_.AddLexeme("free text", pool_.NonEmpty(no_trigger)))});
    } else {
      for (const std::string& f : stops) {
        builder_.AddRule(
            final_free,
            {Symbol::Lexeme(builder_.AddLexeme(absl::StrCat("free text then \"", f, "\""),
                                               free_then(f, terminators)))});
      }
    }
    for (NonterminalId top : {top0, top1}) {
      const bool may_end = top != top0 || !at_least_one;
      if (may_end) builder_.AddRule(top, {Symbol::Nonterminal(final_free)});
      for (size_t i = 0; i < triggers.size(); ++i) {
        const Symbol lexeme = Symbol::Lexeme(
            builder_.AddLexeme(absl::StrCat("free text then \"", triggers[i], "\""),
                               free_then(triggers[i], may_end ? terminators : triggers)));
        builder_.AddRule(top, {lexeme, Symbol::Nonterminal(after_trigger[i])});
      }
      if (top1 == top0) break;
    }
    std::vector<bool> tag_has_trigger(tags.size(), false);
    for (size_t i = 0; i < triggers.size(); ++i) {
      const std::string& t = triggers[i];
      for (size_t j = 0; j < tags.size(); ++j) {
        if (!tags[j].begin.starts_with(t)) continue;
        tag_has_trigger[j] = true;
        const TagSpec& tag = tags[j];
        // Contents that end on their own (not at the end literal) get the
        // merged end; the rest (any_text, sequences and ors that may hold it)
        // keep the whole tag.
        const bool any_text_content = [&] {
          const JsonValue* type = Member(*tag.content, "type");
          if (type == nullptr || type->kind() != JsonValue::Kind::kString) return true;
          const std::string& k = type->string();
          return !(k == "const_string" || k == "json_schema" || k == "regex" || k == "tag" ||
                   k == "tags_with_separator");
        }();
        if (any_text_content) {
          // full_m after
          absl::StatusOr<NonterminalId> full = Tag(tag, t.size());
          if (!full.ok()) return full.status();
          const NonterminalId then =
              stop_after_first ? Followed(*full, follow) : Fresh("tag_then_free_text");
          if (!stop_after_first) {
            builder_.AddRule(then, {Symbol::Nonterminal(*full), Symbol::Nonterminal(top1)});
          }
          builder_.AddRule(after_trigger[i], {Symbol::Nonterminal(then)});
          continue;
        }
        // body_m rest_m
        absl::StatusOr<NonterminalId> content =
            Lower(*tag.content, tag.content_pointer, false, nullptr);
        if (!content.ok()) return content.status();
        NonterminalId rest = Fresh("tag_end");
        for (const std::string& e : tag.ends) {
          if (stop_after_first) {
            builder_.AddRule(rest, LiteralSymbols(e));
            continue;
          }
          if (follow == nullptr) {
            builder_.AddRule(rest,
                             {Symbol::Lexeme(builder_.AddLexeme(
                                 absl::StrCat("\"", e, "\" then free text"),
                                 pool_.NonEmpty(pool_.Concat(pool_.Literal(e), no_trigger))))});
            if (e.empty()) builder_.AddRule(rest, {});
          } else {
            for (const std::string& f : stops) {
              builder_.AddRule(
                  rest, {Symbol::Lexeme(builder_.AddLexeme(
                            absl::StrCat("\"", e, "\" then free text then \"", f, "\" (after)"),
                            pool_.Concat(pool_.Literal(e), free_then(f, terminators))))});
            }
          }
          for (size_t k = 0; k < triggers.size(); ++k) {
            builder_.AddRule(
                rest, {Symbol::Lexeme(builder_.AddLexeme(
                           absl::StrCat("\"", e, "\" then free text then \"", triggers[k], "\""),
                           pool_.Concat(pool_.Literal(e), free_then(triggers[k], terminators)))),
                       Symbol::Nonterminal(after_trigger[k])});
          }
        }
        if (stop_after_first) rest = Followed(rest, follow);
        std::vector<Symbol> rhs = LiteralSymbols(tag.begin.substr(t.size()));
        rhs.push_back(Symbol::Nonterminal(*content));
        rhs.push_back(Symbol::Nonterminal(rest));
        builder_.AddRule(after_trigger[i], std::move(rhs));
      }
    }
    for (size_t j = 0; j < tags.size(); ++j) {
      if (!tag_has_trigger[j]) {
        return Invalid("the tag's begin starts with no trigger", Child(tags[j].pointer, "begin"));
      }
    }
    return top0;
  }

  absl::StatusOr<NonterminalId> Legacy(const JsonValue& doc) {
    const JsonValue* structures = Member(doc, "structures");
    if (structures->kind() != JsonValue::Kind::kArray)
      return Invalid("expected an array", "/structures");
    std::vector<TagSpec> tags;
    for (size_t i = 0; i < structures->items().size(); ++i) {
      const JsonValue& s = structures->items()[i];
      const std::string pointer = Child("/structures", i);
      if (s.kind() != JsonValue::Kind::kObject) return Invalid("expected an object", pointer);
      TagSpec tag;
      tag.pointer = pointer;
      absl::StatusOr<std::string> begin = String(s, "begin", pointer);
      if (!begin.ok()) return begin.status();
      absl::StatusOr<std::string> end = String(s, "end", pointer);
      if (!end.ok()) return end.status();
      tag.begin = *begin;
      tag.ends = {*end};
      const JsonValue* schema = Member(s, "schema");
      if (schema == nullptr) return Invalid("missing \"schema\"", pointer);
      // The content format is built here; Lower reads it through `content`.
      legacy_contents_.push_back(std::make_unique<JsonValue>(JsonValue::Object(
          {{"type", JsonValue::String("json_schema")}, {"json_schema", *schema}})));
      tag.content = legacy_contents_.back().get();
      // Errors in the schema point at /structures/i/schema, not at the
      // synthesized format.
      tag.content_pointer = pointer;
      tags.push_back(std::move(tag));
    }
    const JsonValue* triggers_value = Member(doc, "triggers");
    if (triggers_value == nullptr) return Invalid("missing \"triggers\"", "");
    absl::StatusOr<std::vector<std::string>> triggers = Strings(*triggers_value, "/triggers");
    if (!triggers.ok()) return triggers.status();
    return TriggeredTags(*triggers, tags, false, false, "");
  }

  const StructuralTagOptions& options_;
  GrammarIr ir_;
  ExprSet& pool_;
  GrammarBuilder& builder_;
  std::vector<std::unique_ptr<JsonValue>> legacy_contents_;
};

}  // namespace

absl::StatusOr<GrammarIr> BuildStructuralTagGrammar(std::string_view text,
                                                    const StructuralTagOptions& options) {
  // The document's nesting bounds the recursion over formats (and embedded
  // schemas) below: refused first, by a linear scan.
  if (const int64_t too_deep = json_schema::JsonDepthViolation(text, options.parse.max_depth);
      too_deep >= 0) {
    return absl::InvalidArgumentError(absl::StrCat("structural_tag: nesting deeper than ",
                                                   options.parse.max_depth,
                                                   " (max_recursion_depth) at byte ", too_deep));
  }
  absl::StatusOr<JsonValue> doc = json_schema::ParseJsonValue(text);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("structural_tag: ", doc.status().message()));
  }
  return TagLowering(options).Run(*doc);
}

}  // namespace maskd
