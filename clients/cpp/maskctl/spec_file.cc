#include "clients/cpp/maskctl/spec_file.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/maskctl/flags.h"
#include "clients/cpp/spec.h"

namespace maskd::maskctl {
namespace {

// The kind named by an extension, or empty.
std::string KindFromExtension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  const std::string ext = absl::AsciiStrToLower(path.substr(dot + 1));
  if (ext == "json") return "json_schema";
  if (ext == "regex" || ext == "re") return "regex";
  if (ext == "gbnf") return "gbnf";
  if (ext == "lark") return "lark";
  if (ext == "ebnf") return "ebnf";
  if (ext == "txt") return "choices";
  return "";
}

// One choice per line; a final newline does not make an empty choice, and
// CRLF line ends lose their CR. Other lines are kept verbatim.
std::vector<std::string> SplitChoices(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (std::string& line : lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  return lines;
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

absl::StatusOr<v1::ConstraintSpec> ReadSpecFile(const std::string& path, const std::string& kind,
                                                const std::string& start_rule) {
  const std::string resolved = kind.empty() ? KindFromExtension(path) : kind;
  if (resolved.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot tell the spec kind of '", path,
        "' from its extension (.json, .regex, .re, .gbnf, .lark, .ebnf, .txt); pass --kind"));
  }
  if (resolved == "builtin_json") {
    if (!path.empty()) {
      return absl::InvalidArgumentError("--kind=builtin_json takes no spec file");
    }
    return client::BuiltinJsonSpec();
  }
  if (path.empty()) return absl::InvalidArgumentError("missing SPEC_FILE");
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  if (resolved == "json_schema") return client::JsonSchemaSpec(*std::move(text));
  if (resolved == "regex") {
    // Editors end files with a newline; it is never part of the pattern.
    std::string pattern = *std::move(text);
    if (absl::EndsWith(pattern, "\n")) pattern.pop_back();
    if (absl::EndsWith(pattern, "\r")) pattern.pop_back();
    return client::RegexSpec(std::move(pattern));
  }
  if (resolved == "gbnf") {
    return client::GrammarSpec(v1::GRAMMAR_DIALECT_GBNF, *std::move(text), start_rule);
  }
  if (resolved == "lark") {
    return client::GrammarSpec(v1::GRAMMAR_DIALECT_LARK, *std::move(text), start_rule);
  }
  if (resolved == "ebnf") {
    return client::GrammarSpec(v1::GRAMMAR_DIALECT_EBNF, *std::move(text), start_rule);
  }
  if (resolved == "structural_tag") return client::StructuralTagSpec(*std::move(text));
  if (resolved == "choices") {
    std::vector<std::string> choices = SplitChoices(*text);
    if (choices.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, " has no lines (one choice per line)"));
    }
    return client::ChoicesSpec(std::move(choices));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown --kind '", kind,
      "' (json_schema, regex, gbnf, lark, ebnf, choices, structural_tag or builtin_json)"));
}

CompileOptionFlags CompileOptionFlagValues() {
  return CompileOptionFlags{absl::GetFlag(FLAGS_whitespace), absl::GetFlag(FLAGS_property_order),
                            absl::GetFlag(FLAGS_unknown_formats),
                            absl::GetFlag(FLAGS_default_dialect),
                            absl::GetFlag(FLAGS_schema_resource)};
}

absl::StatusOr<v1::CompileOptions> CompileOptionsFromFlags(const CompileOptionFlags& flags) {
  v1::CompileOptions options;
  if (flags.property_order == "schema") {
    options.set_property_order(v1::PROPERTY_ORDER_SCHEMA_ORDER);
  } else if (flags.property_order == "any") {
    options.set_property_order(v1::PROPERTY_ORDER_ANY_ORDER);
  } else if (!flags.property_order.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --property_order '", flags.property_order, "' (schema or any)"));
  }
  if (flags.unknown_formats == "refuse") {
    options.set_unknown_formats(v1::UNKNOWN_FORMAT_POLICY_REFUSE);
  } else if (flags.unknown_formats == "ignore") {
    options.set_unknown_formats(v1::UNKNOWN_FORMAT_POLICY_IGNORE);
  } else if (!flags.unknown_formats.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --unknown_formats '", flags.unknown_formats, "' (refuse or ignore)"));
  }
  options.set_default_dialect(flags.default_dialect);
  for (const std::string& resource : flags.schema_resources) {
    const size_t eq = resource.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == resource.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--schema_resource '", resource, "' is not URI=FILE"));
    }
    absl::StatusOr<std::string> json = ReadWholeFile(resource.substr(eq + 1));
    if (!json.ok()) return json.status();
    v1::SchemaResource* r = options.add_schema_resources();
    r->set_uri(resource.substr(0, eq));
    r->set_json(*std::move(json));
  }
  const std::string& whitespace = flags.whitespace;
  if (whitespace.empty()) return options;
  if (whitespace == "compact") {
    options.set_whitespace(v1::WHITESPACE_MODE_COMPACT);
  } else if (whitespace == "flexible") {
    options.set_whitespace(v1::WHITESPACE_MODE_FLEXIBLE);
  } else if (whitespace == "bounded") {
    options.set_whitespace(v1::WHITESPACE_MODE_BOUNDED);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --whitespace '", whitespace, "' (compact, flexible or bounded)"));
  }
  return options;
}

}  // namespace maskd::maskctl
