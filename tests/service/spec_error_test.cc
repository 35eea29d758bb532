// FillSpecError reads an error's place from its Status payloads
// (compiler/errors/spec_location.h), never from its message text.
#include "service/spec_error.h"

#include "compiler/errors/spec_location.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

TEST(SpecErrorTest, JsonPointerComesFromThePayload) {
  v1::Error error;
  FillSpecError(WithJsonPointer(absl::UnimplementedError("\"not\" at /a"), "/a/not"),
                SpecKind::kJsonSchema, "{}", &error);
  EXPECT_EQ(error.code(), static_cast<int32_t>(absl::StatusCode::kUnimplemented));
  EXPECT_EQ(error.message(), "\"not\" at /a");
  EXPECT_EQ(error.location().json_pointer(), "/a/not");
}

TEST(SpecErrorTest, MessageTextAloneGivesNoPlace) {
  v1::Error error;
  FillSpecError(absl::InvalidArgumentError("unknown keyword \"x\" at /properties/a"),
                SpecKind::kJsonSchema, "{}", &error);
  EXPECT_FALSE(error.has_location());
  FillSpecError(absl::InvalidArgumentError("regex: nothing to repeat at offset 0"),
                SpecKind::kRegex, "*", &error);
  EXPECT_FALSE(error.has_location());
}

TEST(SpecErrorTest, RegexOffsetBecomesLineAndColumn) {
  v1::Error error;
  // Offset 4 is after "a", "é" (two bytes) and "b": column 4.
  FillSpecError(WithByteOffset(absl::InvalidArgumentError("bad"), 4), SpecKind::kRegex,
                "a\xC3\xA9"
                "b(?=c)",
                &error);
  EXPECT_EQ(error.location().text().byte_offset(), 4u);
  EXPECT_EQ(error.location().text().line(), 1u);
  EXPECT_EQ(error.location().text().column(), 4u);
}

TEST(SpecErrorTest, GrammarLineColumnGetsItsByteOffset) {
  v1::Error error;
  FillSpecError(WithLineColumn(absl::InvalidArgumentError("bad"), 2, 3), SpecKind::kEbnf,
                "root ::= a\n\xC3\xA9x ::= y", &error);
  EXPECT_EQ(error.location().text().line(), 2u);
  EXPECT_EQ(error.location().text().column(), 3u);
  EXPECT_EQ(error.location().text().byte_offset(), 14u);  // 11 bytes of line 1, "é" is 2
}

TEST(SpecErrorTest, APayloadOfAnotherKindIsNotUsed) {
  // A schema's `pattern` error carries the pattern's offset: not a place in
  // the schema's text.
  v1::Error error;
  FillSpecError(WithByteOffset(absl::InvalidArgumentError("bad pattern"), 3), SpecKind::kJsonSchema,
                "{}", &error);
  EXPECT_FALSE(error.has_location());
}

}  // namespace
}  // namespace maskd
