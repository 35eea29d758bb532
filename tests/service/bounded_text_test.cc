// BoundedText and FirstInvalidUtf8: what error messages echo of user input
// is valid UTF-8 (a proto3 string that is not fails to serialize) and short.
#include "service/bounded_text.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "maskd/v1/session.pb.h"
#include "service/request_parse.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

TEST(BoundedTextTest, FindsTheFirstInvalidByte) {
  EXPECT_EQ(FirstInvalidUtf8("plain ascii"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(FirstInvalidUtf8("ab\xff"), 2u);
  EXPECT_EQ(FirstInvalidUtf8("ab\xc3"), 2u);            // truncated
  EXPECT_EQ(FirstInvalidUtf8("\xc0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(FirstInvalidUtf8("x\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
}

TEST(BoundedTextTest, EscapesInvalidBytesAndCutsAtACharacter) {
  EXPECT_EQ(BoundedText("a\xff"
                        "b"),
            "a\\xFFb");
  const std::string long_text = std::string(2000, 'x');
  const std::string bounded = BoundedText(long_text, 100);
  EXPECT_EQ(bounded, std::string(100, 'x') + " ... [2000 bytes in all]");
  // A 3-byte character that would cross the bound is left out whole.
  const std::string euros = std::string(99, 'y') + "\xe2\x82\xac";
  EXPECT_EQ(BoundedText(euros, 100), std::string(99, 'y') + " ... [102 bytes in all]");
  EXPECT_EQ(FirstInvalidUtf8(BoundedText("\xe2\x82\xac\xff\xe2\x82", 5)), std::nullopt);
}

TEST(RequestParseTest, NamesTheStringFieldWithInvalidUtf8) {
  v1::StepRequest request;
  request.add_ops()->set_sequence_id(1);
  v1::SequenceOp* op = request.add_ops();
  op->set_sequence_id(2);
  op->mutable_open()->mutable_compile()->mutable_spec()->set_regex("ok\xfe");
  v1::StepRequest parsed;
  absl::Status status = ParseRequest(request.SerializeAsString(), &parsed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("ops[1].open.compile.spec.regex holds invalid UTF-8 at byte 2 of its 3"));
  EXPECT_THAT(ParseRequest(std::string("\x0a\xff\xff", 3), &parsed).message(),
              HasSubstr("not a valid protobuf encoding"));
  EXPECT_TRUE(ParseRequest(v1::StepRequest().SerializeAsString(), &parsed).ok());
}

}  // namespace
}  // namespace maskd
