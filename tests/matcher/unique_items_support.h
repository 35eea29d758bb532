// What the uniqueItems tests (json_schema_unique_{items,numbers,objects}_test)
// share: compiling a schema for a small vocabulary, whole-document
// acceptance, every array of a few atoms, and the reference validator's
// verdict on a document.
#ifndef MASKD_TESTS_MATCHER_UNIQUE_ITEMS_SUPPORT_H_
#define MASKD_TESTS_MATCHER_UNIQUE_ITEMS_SUPPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compile/compile.h"
#include "compiler/json_schema/json_value.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/json_schema/reference_validator.h"

namespace maskd::unique_items_testing {

// `schema` as a JSON Schema spec for `vocab`; `cached` false turns the mask
// cache off (the walks it would serve are then made every time).
inline absl::StatusOr<std::shared_ptr<const CompiledGrammar>> CompileSchema(
    const std::string& schema, WhitespaceMode whitespace, std::shared_ptr<const Tokenizer> vocab,
    bool cached = true, bool any_order = false) {
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema;
  CompileOptions options;
  options.whitespace = whitespace;
  if (any_order) options.property_order = PropertyOrder::kAnyOrder;
  if (!cached) options.mask_cache_bytes = 0;
  return CompileGrammar(spec, options, std::move(vocab));
}

// The whole of `doc` is accepted and may end there.
inline bool Accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  return m->AcceptBytes(doc) && m->CanStop();
}

// Every array of at most `max_len` atoms (JSON texts), repeats included.
inline std::vector<std::vector<std::string>> Arrays(const std::vector<std::string>& atoms,
                                                    size_t max_len) {
  std::vector<std::vector<std::string>> out = {{}};
  for (size_t begin = 0; begin < out.size(); ++begin) {
    if (out[begin].size() == max_len) continue;
    for (const std::string& a : atoms) {
      std::vector<std::string> next = out[begin];
      next.push_back(a);
      out.push_back(std::move(next));
    }
  }
  return out;
}

// `[` items joined by `sep` `]`.
inline std::string Text(const std::vector<std::string>& items, const char* sep) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out + "]";
}

// json.dumps spacing of a compact text: ", " between items and members, ": "
// after keys (strings are copied as they are).
inline std::string Spaced(const std::string& compact) {
  std::string out;
  bool in_string = false, escaped = false;
  for (char c : compact) {
    out.push_back(c);
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == ',' || c == ':') out.push_back(' ');
  }
  return out;
}

// The schema as written (no combinator rewriting), for the reference validator.
inline json_schema::Schema Reference(const std::string& schema) {
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(schema, as_written);
  EXPECT_TRUE(reference.ok()) << schema << ": " << reference.status();
  return reference.ok() ? *std::move(reference) : json_schema::Schema();
}

// The reference validator's verdict on `doc` (false when it is not JSON).
inline bool Valid(const json_schema::Schema& reference, const std::string& doc) {
  absl::StatusOr<json_schema::JsonValue> value = json_schema::ParseJsonValue(doc);
  return value.ok() && json_schema::ReferenceValidate(reference, reference.root, *value);
}

}  // namespace maskd::unique_items_testing

#endif  // MASKD_TESTS_MATCHER_UNIQUE_ITEMS_SUPPORT_H_
