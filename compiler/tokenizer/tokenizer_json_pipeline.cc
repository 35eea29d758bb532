#include "compiler/tokenizer/tokenizer_json_pipeline.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "compiler/tokenizer/string_view_compat.h"
#include "compiler/tokenizer/tokenizer_json_dom.h"

namespace maskd::tokenizer_internal {
namespace {

// GPT-2's pre-tokenizer pattern, used by ByteLevel with use_regex = true.
constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

}  // namespace

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

absl::Status ParseNormalizer(const element& value, absl::string_view path,
                             std::vector<NormalizerStep>& steps) {
  if (value.is_null()) return absl::OkStatus();
  object obj;
  if (value.get(obj) != simdjson::SUCCESS) {
    return Invalid("tokenizer.json", absl::StrCat(path, " is not an object"));
  }
  absl::StatusOr<std::string_view> type = StringMember(obj, "type", path);
  if (!type.ok()) return type.status();
  using Kind = NormalizerStep::Kind;
  if (*type == "Sequence") {
    array list;
    const std::optional<element> normalizers = Member(obj, "normalizers");
    if (!normalizers.has_value() || normalizers->get(list) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", absl::StrCat(path, ".normalizers is not an array"));
    }
    size_t i = 0;
    for (element child : list) {
      absl::Status status =
          ParseNormalizer(child, absl::StrCat(path, ".normalizers[", i++, "]"), steps);
      if (!status.ok()) return status;
    }
  } else if (*type == "NFC" || *type == "NFD" || *type == "NFKC" || *type == "NFKD") {
    steps.push_back({*type == "NFC"    ? Kind::kNfc
                     : *type == "NFD"  ? Kind::kNfd
                     : *type == "NFKC" ? Kind::kNfkc
                                       : Kind::kNfkd,
                     "", ""});
  } else if (*type == "Lowercase") {
    steps.push_back({Kind::kLowercase, "", ""});
  } else if (*type == "Prepend") {
    absl::StatusOr<std::string_view> prepend = StringMember(obj, "prepend", path);
    if (!prepend.ok()) return prepend.status();
    steps.push_back({Kind::kPrepend, std::string(*prepend), ""});
  } else if (*type == "Replace") {
    std::optional<element> pattern = Member(obj, "pattern");
    object pattern_obj;
    if (!pattern.has_value() || pattern->get(pattern_obj) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", absl::StrCat(path, ".pattern is not an object"));
    }
    if (Member(pattern_obj, "String") == std::nullopt) {
      return Invalid("tokenizer.json",
                     absl::StrCat(path,
                                  ".pattern: only {\"String\": ...} replacements are "
                                  "supported, not regex ones"));
    }
    absl::StatusOr<std::string_view> literal =
        StringMember(pattern_obj, "String", absl::StrCat(path, ".pattern"));
    if (!literal.ok()) return literal.status();
    absl::StatusOr<std::string_view> content = StringMember(obj, "content", path);
    if (!content.ok()) return content.status();
    steps.push_back({Kind::kReplace, std::string(*literal), std::string(*content)});
  } else {
    return Invalid("tokenizer.json",
                   absl::StrCat(path, ".type ", Quote(*type), " is not a supported normalizer"));
  }
  return absl::OkStatus();
}

absl::Status ParsePreTokenizer(const element& value, absl::string_view path,
                               std::vector<PreTokenizerStep>& steps, bool& byte_level) {
  if (value.is_null()) return absl::OkStatus();
  object obj;
  if (value.get(obj) != simdjson::SUCCESS) {
    return Invalid("tokenizer.json", absl::StrCat(path, " is not an object"));
  }
  absl::StatusOr<std::string_view> type = StringMember(obj, "type", path);
  if (!type.ok()) return type.status();
  if (*type == "Sequence") {
    array list;
    const std::optional<element> children = Member(obj, "pretokenizers");
    if (!children.has_value() || children->get(list) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", absl::StrCat(path, ".pretokenizers is not an array"));
    }
    size_t i = 0;
    for (element child : list) {
      absl::Status status = ParsePreTokenizer(
          child, absl::StrCat(path, ".pretokenizers[", i++, "]"), steps, byte_level);
      if (!status.ok()) return status;
    }
  } else if (*type == "ByteLevel") {
    byte_level = true;
    absl::StatusOr<bool> prefix = BoolMember(obj, "add_prefix_space", false, path);
    absl::StatusOr<bool> use_regex = BoolMember(obj, "use_regex", true, path);
    if (!prefix.ok()) return prefix.status();
    if (!use_regex.ok()) return use_regex.status();
    if (*prefix) {
      PreTokenizerStep step;
      step.kind = PreTokenizerStep::Kind::kPrefixSpace;
      steps.push_back(std::move(step));
    }
    if (*use_regex) {
      steps.push_back({PreTokenizerStep::Kind::kSplit, std::string(kGpt2Pattern), false,
                       PreTokenizerStep::Behavior::kInvert});
    }
  } else if (*type == "Metaspace") {
    PreTokenizerStep step;
    step.kind = PreTokenizerStep::Kind::kMetaspace;
    absl::StatusOr<std::string_view> replacement = StringMember(obj, "replacement", path);
    if (!replacement.ok()) return replacement.status();
    step.pattern = std::string(*replacement);
    absl::StatusOr<bool> split = BoolMember(obj, "split", true, path);
    if (!split.ok()) return split.status();
    step.split = *split;
    // Old files say add_prefix_space; newer ones prepend_scheme.
    absl::StatusOr<bool> add_prefix = BoolMember(obj, "add_prefix_space", true, path);
    if (!add_prefix.ok()) return add_prefix.status();
    step.prepend =
        *add_prefix ? PreTokenizerStep::Prepend::kAlways : PreTokenizerStep::Prepend::kNever;
    if (const std::optional<element> scheme = Member(obj, "prepend_scheme"); scheme.has_value()) {
      std::string_view name;
      if (scheme->get(name) != simdjson::SUCCESS ||
          (name != "always" && name != "first" && name != "never")) {
        return Invalid(
            "tokenizer.json",
            absl::StrCat(path, ".prepend_scheme is not \"always\", \"first\" or \"never\""));
      }
      step.prepend = name == "always"  ? PreTokenizerStep::Prepend::kAlways
                     : name == "first" ? PreTokenizerStep::Prepend::kFirst
                                       : PreTokenizerStep::Prepend::kNever;
    }
    steps.push_back(std::move(step));
  } else if (*type == "Split") {
    PreTokenizerStep step;
    std::optional<element> pattern = Member(obj, "pattern");
    object pattern_obj;
    if (!pattern.has_value() || pattern->get(pattern_obj) != simdjson::SUCCESS) {
      return Invalid("tokenizer.json", absl::StrCat(path, ".pattern is not an object"));
    }
    const bool is_regex = Member(pattern_obj, "Regex").has_value();
    absl::StatusOr<std::string_view> source =
        StringMember(pattern_obj, is_regex ? "Regex" : "String", absl::StrCat(path, ".pattern"));
    if (!source.ok()) return source.status();
    step.pattern = std::string(*source);
    step.literal = !is_regex;
    absl::StatusOr<bool> invert = BoolMember(obj, "invert", false, path);
    if (!invert.ok()) return invert.status();
    absl::StatusOr<std::string_view> behavior = StringMember(obj, "behavior", path);
    if (!behavior.ok()) return behavior.status();
    const std::string lower = absl::AsciiStrToLower(AbslView(*behavior));
    if (*invert) {
      step.behavior = PreTokenizerStep::Behavior::kInvert;
    } else if (lower == "isolated") {
      step.behavior = PreTokenizerStep::Behavior::kIsolated;
    } else if (lower == "removed") {
      step.behavior = PreTokenizerStep::Behavior::kRemoved;
    } else {
      return Invalid("tokenizer.json", absl::StrCat(path, ".behavior ", Quote(*behavior),
                                                    " is not supported (Isolated, Removed)"));
    }
    steps.push_back(std::move(step));
  } else {
    return Invalid("tokenizer.json",
                   absl::StrCat(path, ".type ", Quote(*type), " is not a supported pre-tokenizer"));
  }
  return absl::OkStatus();
}

bool DecoderIsByteLevel(const object& root) {
  const std::optional<element> decoder = Member(root, "decoder");
  object obj;
  if (!decoder.has_value() || decoder->get(obj) != simdjson::SUCCESS) return false;
  std::string_view type;
  if (obj["type"].get(type) != simdjson::SUCCESS) return false;
  if (type == "ByteLevel") return true;
  array list;
  if (type != "Sequence" || obj["decoders"].get(list) != simdjson::SUCCESS) return false;
  for (element child : list) {
    object child_obj;
    if (child.get(child_obj) == simdjson::SUCCESS &&
        child_obj["type"].get(type) == simdjson::SUCCESS && type == "ByteLevel") {
      return true;
    }
  }
  return false;
}

}  // namespace maskd::tokenizer_internal
