// libFuzzer target: bytes -> a $ref-heavy JSON Schema under a chosen draft
// (definitions referencing each other, allOf of if/then rules on boolean and
// string switches, anyOf/oneOf/not, array items, sibling $id/$anchor and
// keywords beside $ref) -> compile -> a universe of small instances.
// Aborts when
//  * the compile fails with Internal (an error the engine did not mean to
//    give, e.g. a dangling nonterminal: the class issue 12 found in large
//    configuration schemas), or with an empty message;
//  * the engine accepts an instance the reference validator rejects on the
//    schema as written (an invalidation error). The other direction is not
//    checked: objects follow the schema's property order, so a valid
//    instance in another order is rightly outside the language.
// tests/fuzz/gen_ref_schemas.py writes the same shapes as MaskBench files.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "tests/fuzz/fuzz_vocab.h"
#include "tests/json_schema/reference_validator.h"

namespace {

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  uint8_t Next() { return pos < size ? data[pos++] : 0; }
  int Pick(int n) { return Next() % n; }
};

constexpr const char* kDrafts[] = {
    "http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema"};
// Properties are always declared in this order, which is the order of the
// instances' keys too.
constexpr const char* kKeys[] = {"kind", "size", "enabled", "items"};

class SchemaWriter {
 public:
  SchemaWriter(Reader& in, int draft, int defs) : in_(in), draft_(draft), defs_(defs) {}

  std::string DefsKey() const { return draft_ >= 3 ? "$defs" : "definitions"; }

  std::string Ref() {
    const int target = in_.Pick(defs_);
    switch (in_.Pick(3)) {
      case 0:
        if (draft_ >= 3) return "{\"$ref\":\"#d" + std::to_string(target) + "\"}";  // $anchor
        break;
      case 1:
        if (draft_ == 1 || draft_ == 2) {
          return "{\"$ref\":\"d" + std::to_string(target) + ".json\"}";  // $id
        }
        break;
      default:
        break;
    }
    return "{\"$ref\":\"#/" + DefsKey() + "/d" + std::to_string(target) + "\"}";
  }

  std::string Leaf() {
    static const char* kLeaves[] = {R"({"type":"string"})",
                                    R"({"type":"integer","minimum":0,"maximum":3})",
                                    R"({"type":"boolean"})",
                                    R"({"const":"a"})",
                                    R"({"enum":[1,"a",null,true]})",
                                    R"({"type":["string","null"]})",
                                    R"({"type":"string","pattern":"^a"})",
                                    R"({"type":"number","exclusiveMinimum":1})",
                                    R"({})",
                                    R"(false)"};
    return kLeaves[in_.Pick(10)];
  }

  std::string Rule(int depth) {
    const std::string key = kKeys[in_.Pick(4)];
    static const char* kValues[] = {"true", "false", "\"a\"", "1", "null"};
    std::string out = R"({"if":{"properties":{")" + key + R"(":{"const":)" + kValues[in_.Pick(5)] +
                      R"(}},"required":[")" + key + R"("]},"then":)" + Sub(depth - 1);
    if (in_.Pick(3) == 0) out += ",\"else\":" + Sub(depth - 1);
    return out + "}";
  }

  std::string Object(int depth) {
    std::string out = R"({"type":"object","properties":{)";
    bool first = true;
    for (const char* key : kKeys) {
      if (in_.Pick(2) == 0) continue;
      out += std::string(first ? "" : ",") + "\"" + key + "\":" + Sub(depth - 1);
      first = false;
    }
    out += "}";
    if (in_.Pick(3) == 0) out += ",\"allOf\":[" + Rule(depth) + "," + Rule(depth) + "]";
    if (in_.Pick(4) == 0) out += R"(,"required":[")" + std::string(kKeys[in_.Pick(4)]) + "\"]";
    if (in_.Pick(5) == 0) out += R"(,"additionalProperties":false)";
    return out + "}";
  }

  std::string Sub(int depth) {
    if (depth <= 0) return in_.Pick(2) ? Leaf() : Ref();
    switch (in_.Pick(10)) {
      case 0:
        return Leaf();
      case 1:
        return Ref();
      case 2:
        return R"({"type":"array","items":)" + Sub(depth - 1) + "}";
      case 3:
        return R"({"anyOf":[)" + Sub(depth - 1) + "," + Sub(depth - 1) + "]}";
      case 4:
        return R"({"allOf":[)" + Rule(depth) + "," + Rule(depth) + "]}";
      case 5:
        return Object(depth);
      case 6:
        return R"({"not":)" + Sub(depth - 1) + "}";
      case 7:
        return R"({"oneOf":[)" + Sub(depth - 1) + "," + Sub(depth - 1) + "]}";
      case 8: {  // Keywords beside $ref: ignored before 2019-09, applied after.
        std::string ref = Ref();
        ref.pop_back();
        return ref + (in_.Pick(2) ? R"(,"type":"object"})" : R"(,"$id":"other.json"})");
      }
      default:
        return R"({"type":"object","properties":{"enabled":{"type":"boolean"},"size":{}},"allOf":[)" +
               Rule(depth) + "," + Rule(depth) + "]}";
    }
  }

  std::string Definition(int index) {
    std::string body = Object(2);
    body.pop_back();
    const std::string name = "d" + std::to_string(index);
    // Named by $anchor from 2019-09 on, by a relative $id in drafts 6 and 7.
    if (draft_ >= 3) body += R"(,"$anchor":")" + name + "\"";
    if (draft_ == 1 || draft_ == 2) body += R"(,"$id":")" + name + ".json\"";
    return "\"" + name + "\":" + body + "}";
  }

  std::string Root() {
    std::string defs;
    for (int i = 0; i < defs_; ++i) defs += (i ? "," : "") + Definition(i);
    std::string root = Object(3);
    root.pop_back();
    return R"({"$schema":")" + std::string(kDrafts[draft_]) + R"(",")" + DefsKey() + "\":{" + defs +
           "}," + root.substr(1) + "}";
  }

 private:
  Reader& in_;
  int draft_;
  int defs_;
};

const std::vector<std::string>& Universe() {
  static const auto* values =
      new std::vector<std::string>{"null",
                                   "true",
                                   "1",
                                   "2.0",
                                   "-1",
                                   "\"a\"",
                                   "\"b\"",
                                   "[]",
                                   "[\"a\"]",
                                   "[1,null]",
                                   "{}",
                                   R"({"kind":"a"})",
                                   R"({"kind":true,"size":1})",
                                   R"({"size":"x","enabled":false})",
                                   R"({"kind":{"enabled":true,"items":[]}})",
                                   R"({"size":[{"kind":"a"}],"enabled":true})",
                                   R"({"kind":null,"size":null,"enabled":null,"items":null})",
                                   R"({"enabled":false,"items":[{"size":2}]})",
                                   R"({"kind":1,"items":{"kind":"a"}})"};
  return *values;
}

// With MASKD_FUZZ_STATS set, how many inputs compiled and how many instances
// the engine accepted, printed at exit (to see that inputs get somewhere).
struct Stats {
  size_t inputs = 0, compiled = 0, accepted = 0;
  ~Stats() {
    if (std::getenv("MASKD_FUZZ_STATS") != nullptr) {
      std::fprintf(stderr, "ref_graph: %zu inputs, %zu compiled, %zu instances accepted\n", inputs,
                   compiled, accepted);
    }
  }
};
Stats stats;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskd;
  if (size > 4096) return 0;
  Reader in{data, size};
  const int draft = in.Pick(5);
  const int defs = 1 + in.Pick(4);
  const std::string text = SchemaWriter(in, draft, defs).Root();
  ++stats.inputs;
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = text;
  auto tokenizer = fuzz::FuzzVocab();
  CompileOptions options = fuzz::FuzzCompileOptions();
  options.strict = false;  // Keywords of other drafts are ignored, as validators do.
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar =
      CompileGrammar(spec, options, tokenizer);
  if (!grammar.ok()) {
    if (grammar.status().code() == absl::StatusCode::kInternal ||
        grammar.status().message().empty()) {
      std::fprintf(stderr, "schema: %s\nerror: %s\n", text.c_str(),
                   grammar.status().ToString().c_str());
      std::abort();
    }
    if (const char* v = std::getenv("MASKD_FUZZ_STATS"); v != nullptr && v[0] == '2') {
      std::fprintf(stderr, "refused: %s\n", grammar.status().ToString().substr(0, 160).c_str());
    }
    return 0;
  }
  ++stats.compiled;
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  absl::StatusOr<json_schema::Schema> reference = json_schema::ParseSchema(text, as_written);
  if (!reference.ok()) std::abort();  // The engine parsed it.
  for (const std::string& doc : Universe()) {
    auto matcher = Matcher::Create(*grammar);
    if (!(matcher->AcceptBytes(doc) && matcher->CanStop())) continue;
    ++stats.accepted;
    absl::StatusOr<json_schema::JsonValue> value = json_schema::ParseJsonValue(doc);
    if (!value.ok()) std::abort();
    if (!json_schema::ReferenceValidate(*reference, reference->root, *value)) {
      std::fprintf(stderr, "schema: %s\ninvalid instance accepted: %s\n", text.c_str(),
                   doc.c_str());
      std::abort();
    }
  }
  return 0;
}
