#include "compiler/tokenizer/tokenizer_json_split.h"

#include <algorithm>
#include <array>

namespace maskd::tokenizer_internal {
namespace {

using simdjson::SUCCESS;
namespace ondemand = simdjson::ondemand;

struct Span {
  const char* begin = nullptr;
  const char* end = nullptr;
};

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// On-Demand tells where a value starts but not where it ends. A value is
// followed, after whitespace only, by the separator `expected` (',' before
// the next member, '}' closing the object) that precedes `next`: the value
// ends there. nullptr when that byte is not `expected`.
const char* EndBefore(const char* next, const char* first, char expected) {
  const char* at = next;
  while (at > first && IsJsonSpace(at[-1])) --at;
  if (at == first || at[-1] != expected) return nullptr;
  return at - 1;
}

// Where the first model.vocab (an object) and model.merges (an array) are.
// Any error, or a document that is not laid out as expected, ends the search.
simdjson::error_code FindBigMembers(ondemand::parser& parser, const PaddedJson& json, Span& vocab,
                                    Span& merges) {
  const char* first = json.text().data();
  ondemand::document doc;
  SIMDJSON_TRY(parser.iterate(first, json.text().size(), json.capacity()).get(doc));
  ondemand::object root;
  SIMDJSON_TRY(doc.get_object().get(root));
  for (auto root_member : root) {
    ondemand::field member;
    SIMDJSON_TRY(std::move(root_member).get(member));
    std::string_view key;
    SIMDJSON_TRY(member.unescaped_key().get(key));
    if (key != "model") continue;
    // The first "model" is the one the DOM lookup would use: stop after it.
    ondemand::object model;
    SIMDJSON_TRY(member.value().get_object().get(model));
    bool vocab_seen = false;
    bool merges_seen = false;
    Span* open = nullptr;  // A span whose end is the next separator.
    for (auto model_member : model) {
      ondemand::field field;
      SIMDJSON_TRY(std::move(model_member).get(field));
      if (open != nullptr) {
        const char* quote = reinterpret_cast<const char*>(field.key().raw()) - 1;
        open->end = EndBefore(quote, first, ',');
        if (open->end == nullptr) return simdjson::TAPE_ERROR;
        open = nullptr;
      }
      SIMDJSON_TRY(field.unescaped_key().get(key));
      const bool is_vocab = key == "vocab" && !vocab_seen;
      const bool is_merges = key == "merges" && !merges_seen;
      if (!is_vocab && !is_merges) continue;
      (is_vocab ? vocab_seen : merges_seen) = true;
      ondemand::json_type type;
      SIMDJSON_TRY(field.value().type().get(type));
      if (type != (is_vocab ? ondemand::json_type::object : ondemand::json_type::array)) continue;
      Span& span = is_vocab ? vocab : merges;
      SIMDJSON_TRY(field.value().current_location().get(span.begin));
      open = &span;
    }
    if (open != nullptr) {  // The last member: it ends at the model's closing brace.
      const char* after_model;
      SIMDJSON_TRY(doc.current_location().get(after_model));
      open->end = EndBefore(after_model, first, '}');
      if (open->end == nullptr) return simdjson::TAPE_ERROR;
    }
    return SUCCESS;
  }
  return SUCCESS;
}

}  // namespace

TokenizerJsonParts SplitTokenizerJson(ondemand::parser& parser, const PaddedJson& json) {
  TokenizerJsonParts parts;
  Span vocab, merges;
  if (FindBigMembers(parser, json, vocab, merges) != SUCCESS) {
    parts.skeleton = std::string(json.text());
    return parts;
  }
  struct Cut {
    Span span;
    std::string_view placeholder;
    std::string_view* text;
  };
  std::array<Cut, 2> cuts = {Cut{vocab, "{}", &parts.vocab}, Cut{merges, "[]", &parts.merges}};
  std::sort(cuts.begin(), cuts.end(),
            [](const Cut& a, const Cut& b) { return a.span.begin < b.span.begin; });
  const char* copied = json.text().data();
  for (const Cut& cut : cuts) {
    if (cut.span.begin == nullptr || cut.span.end == nullptr) continue;
    parts.skeleton.append(copied, cut.span.begin);
    parts.skeleton.append(cut.placeholder);
    *cut.text = std::string_view(cut.span.begin, cut.span.end - cut.span.begin);
    copied = cut.span.end;
  }
  parts.skeleton.append(copied, json.text().data() + json.text().size());
  return parts;
}

}  // namespace maskd::tokenizer_internal
