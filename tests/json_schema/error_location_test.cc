// Every front end attaches where its error is as an absl::Status payload
// (compiler/errors/spec_location.h), through the whole compile: the JSON
// pointer of the schema part at fault, the offset into a regex. One case per
// kind of place an error is made (parsing, normalization, rewriting of
// combinators, lowering), each checked against the place its message names.
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "compiler/compile/compile.h"
#include "compiler/errors/spec_location.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "harness/maskbench_data.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> Vocab() {
  static const auto* vocab = new std::shared_ptr<const Tokenizer>([] {
    std::vector<std::string> tokens;
    for (int c = 32; c < 127; ++c) tokens.push_back(std::string(1, static_cast<char>(c)));
    return std::make_shared<const testing::SmallVocabTokenizer>(tokens, "locations");
  }());
  return *vocab;
}

absl::Status CompileError(SpecKind kind, const std::string& text) {
  GrammarSpec spec;
  spec.kind = kind;
  spec.text = text;
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> g =
      CompileGrammar(spec, CompileOptions(), Vocab());
  return g.status();
}

struct SchemaCase {
  const char* name;  // the test's name
  const char* schema;
  absl::StatusCode code;
  const char* pointer;  // nullptr: no pointer (the message says "at the root")
};

// Printed as its name (gtest would print the bytes, addresses included, into
// the CTest test names).
void PrintTo(const SchemaCase& c, std::ostream* out) { *out << c.name; }

class SchemaErrorLocationTest : public ::testing::TestWithParam<SchemaCase> {};

TEST_P(SchemaErrorLocationTest, PayloadNamesThePlaceTheMessageNames) {
  const SchemaCase& c = GetParam();
  const absl::Status status = CompileError(SpecKind::kJsonSchema, c.schema);
  ASSERT_EQ(status.code(), c.code) << status;
  const std::optional<std::string> pointer = JsonPointerOf(status);
  if (c.pointer == nullptr) {
    EXPECT_EQ(pointer, std::nullopt) << status;
    return;
  }
  ASSERT_TRUE(pointer.has_value()) << status;
  EXPECT_EQ(*pointer, c.pointer) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(" at ") + c.pointer));
}

INSTANTIATE_TEST_SUITE_P(
    EveryStage, SchemaErrorLocationTest,
    ::testing::Values(
        // Parsing.
        SchemaCase{"MalformedJson", R"({"type": )", absl::StatusCode::kInvalidArgument, "/"},
        SchemaCase{"KeywordOfTheWrongType", R"({"properties": {"a": {"minLength": "x"}}})",
                   absl::StatusCode::kInvalidArgument, "/properties/a/minLength"},
        SchemaCase{"UnknownKeyword", R"({"properties": {"a": {"frobnicate": 1}}})",
                   absl::StatusCode::kInvalidArgument, "/properties/a"},
        SchemaCase{"SchemaNotAnObject", R"({"properties": {"a": 3}})",
                   absl::StatusCode::kInvalidArgument, "/properties/a"},
        SchemaCase{"UnresolvableRef", R"({"properties": {"a": {"$ref": "#/$defs/missing"}}})",
                   absl::StatusCode::kInvalidArgument, "/properties/a/$ref"},
        SchemaCase{"RemoteRef", R"({"properties": {"a": {"$ref": "https://example.com/s.json"}}})",
                   absl::StatusCode::kUnimplemented, "/properties/a/$ref"},
        // Normalization. (A schema that matches nothing, such as `false`, is
        // no error: it compiles to a grammar that allows nothing.)
        SchemaCase{"CircularRef", R"({"$defs": {"x": {"$ref": "#/$defs/x"}}, "$ref": "#/$defs/x"})",
                   absl::StatusCode::kInvalidArgument, "/$defs/x"},
        // Rewriting combinators: "not" without an exact complement.
        SchemaCase{"NotWithoutComplement",
                   R"({"properties": {"a": {"not": {"uniqueItems": true}}}})",
                   absl::StatusCode::kUnimplemented, "/properties/a/not"},
        // Lowering.
        SchemaCase{"UnknownFormat",
                   R"({"properties": {"a": {"type": "string", "format": "topic"}}})",
                   absl::StatusCode::kUnimplemented, "/properties/a"},
        SchemaCase{"UniqueItems",
                   R"({"properties": {"a": {"type": "array", "uniqueItems": true,
                       "items": {"type": "integer", "minimum": 0}}}})",
                   absl::StatusCode::kUnimplemented, "/properties/a"},
        SchemaCase{
            "UniqueItemsAtTheRoot",
            R"({"type": "array", "uniqueItems": true, "items": {"type": "integer", "minimum": 0}})",
            absl::StatusCode::kUnimplemented, nullptr}),
    [](const ::testing::TestParamInfo<SchemaCase>& info) { return std::string(info.param.name); });

TEST(RegexErrorLocationTest, PayloadIsTheOffsetTheMessageNames) {
  const absl::Status lookahead = CompileError(SpecKind::kRegex, "ab(?=c)");
  ASSERT_FALSE(lookahead.ok());
  EXPECT_EQ(ByteOffsetOf(lookahead), 2u) << lookahead;
  EXPECT_THAT(std::string(lookahead.message()), HasSubstr("offset 2"));

  const absl::Status unclosed = CompileError(SpecKind::kRegex, "a(b");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_EQ(ByteOffsetOf(unclosed), 1u) << unclosed;

  const absl::Status property = CompileError(SpecKind::kRegex, "x\\p{Nope}");
  ASSERT_FALSE(property.ok());
  EXPECT_EQ(ByteOffsetOf(property), 1u) << property;
  EXPECT_THAT(std::string(property.message()), EndsWith("(at offset 1)"));
}

// How the service found the pointer before payloads existed: the text after
// the last " at /" of the message, up to ": " or ")". The oracle for the
// check below that payloads changed no location the service reports.
std::string PointerInMessage(std::string_view message) {
  const size_t at = message.rfind(" at /");
  if (at == std::string_view::npos) return "";
  std::string_view rest = message.substr(at + 4);
  if (const size_t colon = rest.find(": "); colon != std::string_view::npos) {
    rest = rest.substr(0, colon);
  }
  if (const size_t paren = rest.find(')'); paren != std::string_view::npos) {
    rest = rest.substr(0, paren);
  }
  while (!rest.empty() && absl::ascii_isspace(static_cast<unsigned char>(rest.back()))) {
    rest.remove_suffix(1);
  }
  return std::string(rest);
}

// Every MaskBench refusal in a sample (the JSON Schema front end, as the
// benchmark runs it) names the same place in its payload as the old text
// search found, except where that search cut a key holding ": " or ")" short
// (a patternProperties regex as a key): the payload has the whole pointer.
TEST(SchemaErrorLocationTest, MaskBenchRefusalsAgreeWithTheirMessages) {
  absl::StatusOr<std::vector<maskbench::SchemaCase>> cases =
      maskbench::LoadMaskBenchSample(testing::MaskBenchPath(), 1000);
  ASSERT_TRUE(cases.ok()) << cases.status() << " (set MASKD_MASKBENCH)";
  int refusals = 0, with_pointer = 0;
  for (const maskbench::SchemaCase& schema_case : *cases) {
    const std::string& text = schema_case.schema;
    absl::StatusOr<json_schema::Schema> schema = json_schema::ParseSchema(text, {});
    absl::Status status = schema.status();
    if (schema.ok()) status = json_schema::LowerSchema(*schema, {}).status();
    if (status.ok()) continue;
    ++refusals;
    const std::string old_search = PointerInMessage(std::string(status.message()));
    const std::string payload = JsonPointerOf(status).value_or("");
    with_pointer += !payload.empty();
    if (payload == old_search) continue;
    // Only a cut key may differ: the payload continues the old result with
    // ")" or ": ", and the message names the whole payload.
    EXPECT_TRUE(
        payload.size() > old_search.size() && payload.rfind(old_search, 0) == 0 &&
        (payload[old_search.size()] == ')' || payload.compare(old_search.size(), 2, ": ") == 0))
        << schema_case.name << ": payload " << payload << ", old search " << old_search;
    EXPECT_THAT(std::string(status.message()), HasSubstr(" at " + payload));
  }
  std::printf("%d refusals in the sample, %d of them with a JSON pointer\n", refusals,
              with_pointer);
  // The sample holds refusals of many kinds (about 3% of the schemas refuse,
  // fewer as coverage grows: 400 schemas held 12 once multipleOf of any
  // divisor compiled, so the sample is 1,000).
  EXPECT_GT(refusals, 15);
  EXPECT_GT(with_pointer, 10);
}

TEST(SpecLocationTest, PayloadsRoundTripAndTheLastOneWins) {
  absl::Status status = absl::InvalidArgumentError("bad");
  EXPECT_EQ(JsonPointerOf(status), std::nullopt);
  EXPECT_EQ(ByteOffsetOf(status), std::nullopt);
  EXPECT_EQ(LineColumnOf(status), std::nullopt);
  status = WithJsonPointer(WithJsonPointer(status, "/inner"), "/outer");
  EXPECT_EQ(JsonPointerOf(status), "/outer");
  status = WithByteOffset(status, 17);
  EXPECT_EQ(ByteOffsetOf(status), 17u);
  status = WithLineColumn(status, 3, 14);
  EXPECT_EQ(LineColumnOf(status), std::make_pair(uint32_t{3}, uint32_t{14}));
  EXPECT_EQ(JsonPointerOf(status), "/outer");  // the others stay
  EXPECT_TRUE(WithJsonPointer(absl::OkStatus(), "/x").ok());
  EXPECT_EQ(JsonPointerOf(WithJsonPointer(absl::OkStatus(), "/x")), std::nullopt);
}

}  // namespace
}  // namespace maskd
