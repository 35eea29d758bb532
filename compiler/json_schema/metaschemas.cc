#include "compiler/json_schema/metaschemas.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "simdjson.h"

namespace maskd::json_schema {
namespace {

struct EmbeddedFile {
  std::string_view name;  // metaschemas/NAME.json
  std::string_view text;
};

constexpr EmbeddedFile kFiles[] = {
#include "compiler/json_schema/metaschemas.inc"
};

std::string_view File(std::string_view name) {
  for (const EmbeddedFile& f : kFiles) {
    if (f.name == name) return f.text;
  }
  return {};
}

// Retrieval URI (as `$ref`s spell them, fragment dropped) -> document.
const absl::flat_hash_map<std::string, std::string>& Documents() {
  static const auto* documents = [] {
    auto* d = new absl::flat_hash_map<std::string, std::string>{
        {"http://json-schema.org/draft-04/schema", std::string(File("draft4"))},
        {"http://json-schema.org/draft-06/schema", std::string(File("draft6"))},
        {"http://json-schema.org/draft-07/schema", std::string(File("draft7"))},
        {"https://json-schema.org/draft/2019-09/schema", std::string(File("draft2019-09"))},
        {"https://json-schema.org/draft/2020-12/schema", std::string(File("draft2020-12"))},
    };
    // vocabularies.json: {URI: metaschema, ...} for the vocabulary
    // metaschemas the 2019-09 and 2020-12 ones `$ref` (meta/core, ...).
    simdjson::dom::parser parser;
    simdjson::padded_string padded(File("vocabularies"));
    simdjson::dom::object vocabularies;
    if (parser.parse(padded).get(vocabularies) == simdjson::SUCCESS) {
      for (auto field : vocabularies) {
        d->emplace(std::string(std::string_view(field.key)), simdjson::to_string(field.value));
      }
    }
    return d;
  }();
  return *documents;
}

}  // namespace

std::optional<std::string_view> BuiltinMetaschema(std::string_view uri) {
  auto it = Documents().find(std::string(uri));
  if (it == Documents().end()) return std::nullopt;
  return std::string_view(it->second);
}

}  // namespace maskd::json_schema
