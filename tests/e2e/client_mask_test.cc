// The client's mask decoding: every wire encoding of the same set decodes to
// the same bitmask, single-token tests agree with it, and malformed masks are
// errors naming the offending field.
#include <random>
#include <vector>

#include "clients/cpp/mask.h"
#include "clients/cpp/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A vocabulary size that is not a multiple of 32, so the last word is partial.
constexpr uint32_t kVocab = 100;

v1::Mask AllowList(std::vector<uint32_t> ids, uint32_t vocab = kVocab) {
  v1::Mask mask;
  mask.set_vocab_size(vocab);
  mask.mutable_allow_list()->mutable_token_ids()->Add(ids.begin(), ids.end());
  mask.set_allowed_count(static_cast<uint32_t>(ids.size()));
  return mask;
}

v1::Mask DenyList(std::vector<uint32_t> ids, uint32_t vocab = kVocab) {
  v1::Mask mask;
  mask.set_vocab_size(vocab);
  mask.mutable_deny_list()->mutable_token_ids()->Add(ids.begin(), ids.end());
  mask.set_allowed_count(vocab - static_cast<uint32_t>(ids.size()));
  return mask;
}

v1::Mask Bitmask(const std::vector<uint32_t>& allowed, uint32_t vocab = kVocab) {
  v1::Mask mask;
  mask.set_vocab_size(vocab);
  std::vector<uint32_t> words((vocab + 31) / 32, 0);
  for (uint32_t id : allowed) words[id / 32] |= 1u << (id % 32);
  mask.mutable_bitmask()->mutable_words()->Add(words.begin(), words.end());
  mask.set_allowed_count(static_cast<uint32_t>(allowed.size()));
  return mask;
}

TEST(TokenMaskTest, AllEncodingsOfOneSetDecodeToTheSameBitmask) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint32_t> allowed, denied;
    for (uint32_t id = 0; id < kVocab; ++id) {
      (rng() % 3 == 0 ? allowed : denied).push_back(id);
    }
    absl::StatusOr<TokenMask> from_bits = TokenMask::Decode(Bitmask(allowed));
    absl::StatusOr<TokenMask> from_allow = TokenMask::Decode(AllowList(allowed));
    absl::StatusOr<TokenMask> from_deny = TokenMask::Decode(DenyList(denied));
    ASSERT_TRUE(from_bits.ok()) << from_bits.status();
    ASSERT_TRUE(from_allow.ok()) << from_allow.status();
    ASSERT_TRUE(from_deny.ok()) << from_deny.status();
    const std::vector<uint32_t> words(from_bits->words().begin(), from_bits->words().end());
    EXPECT_EQ(std::vector<uint32_t>(from_allow->words().begin(), from_allow->words().end()), words);
    EXPECT_EQ(std::vector<uint32_t>(from_deny->words().begin(), from_deny->words().end()), words);
    EXPECT_EQ(from_deny->AllowedTokens(), allowed);
    for (uint32_t id = 0; id < kVocab + 5; ++id) {
      const bool expected = std::binary_search(allowed.begin(), allowed.end(), id);
      EXPECT_EQ(from_deny->Allows(id), expected) << id;
      EXPECT_EQ(MaskAllows(Bitmask(allowed), id), expected) << id;
      EXPECT_EQ(MaskAllows(AllowList(allowed), id), expected) << id;
      EXPECT_EQ(MaskAllows(DenyList(denied), id), expected) << id;
    }
  }
}

TEST(TokenMaskTest, DenyListNeverSetsBitsPastTheVocabulary) {
  absl::StatusOr<TokenMask> mask = TokenMask::Decode(DenyList({}));
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(mask->allowed_count(), kVocab);
  EXPECT_EQ(mask->words().back(), (1u << (kVocab % 32)) - 1);
  EXPECT_FALSE(mask->Allows(kVocab));
}

TEST(TokenMaskTest, EmptyAllowListAllowsNothing) {
  absl::StatusOr<TokenMask> mask = TokenMask::Decode(AllowList({}));
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(mask->allowed_count(), 0u);
  EXPECT_THAT(mask->AllowedTokens(), ElementsAre());
}

TEST(TokenMaskTest, MalformedMasksNameTheOffendingField) {
  struct Case {
    v1::Mask mask;
    std::string message;
  };
  v1::Mask short_bitmask = Bitmask({1, 2});
  short_bitmask.mutable_bitmask()->mutable_words()->RemoveLast();
  v1::Mask stray_bit = Bitmask({1});
  stray_bit.mutable_bitmask()->set_words(3, 1u << 31);
  v1::Mask wrong_count = AllowList({1, 2});
  wrong_count.set_allowed_count(5);
  v1::Mask no_vocab = AllowList({});
  no_vocab.set_vocab_size(0);
  const std::vector<Case> cases = {
      {AllowList({5, 3}), "mask.allow_list.token_ids[1] = 3 is not above the id before it (5)"},
      {AllowList({1, 1}), "mask.allow_list.token_ids[1] = 1 is not above"},
      {DenyList({100}), "mask.deny_list.token_ids[0] = 100 is not below vocab_size 100"},
      {short_bitmask, "mask.bitmask has 3 words; vocab_size 100 needs 4"},
      {stray_bit, "mask.bitmask sets bits at or past vocab_size 100"},
      {wrong_count, "mask.allowed_count is 5 but the allow_list allows 2 tokens"},
      {no_vocab, "mask.vocab_size is 0"},
      {v1::Mask(), "mask.vocab_size is 0"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TokenMask> decoded = TokenMask::Decode(c.mask);
    ASSERT_FALSE(decoded.ok()) << c.message;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(decoded.status().message(), HasSubstr(c.message));
  }
  v1::Mask unset;
  unset.set_vocab_size(10);
  EXPECT_THAT(TokenMask::Decode(unset).status().message(), HasSubstr("no encoding"));
  EXPECT_FALSE(MaskAllows(unset, 1));
}

TEST(ClientStatusTest, WireErrorsKeepCodeMessageAndLocation) {
  v1::Error error;
  error.set_code(12);
  error.set_message("unsupported keyword 'not'");
  error.mutable_location()->set_json_pointer("/properties/a/not");
  const absl::Status status = ErrorToStatus(error);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), "unsupported keyword 'not'");
  EXPECT_TRUE(IsItemError(status));
  EXPECT_FALSE(IsItemError(absl::UnimplementedError("unsupported keyword 'not'")));
  ASSERT_TRUE(SourceLocationOf(status).has_value());
  EXPECT_EQ(DescribeLocation(*SourceLocationOf(status)), "/properties/a/not");

  v1::Error text_error;
  text_error.set_code(3);
  text_error.mutable_location()->mutable_text()->set_line(2);
  text_error.mutable_location()->mutable_text()->set_column(5);
  text_error.mutable_location()->mutable_text()->set_byte_offset(17);
  EXPECT_EQ(DescribeLocation(*SourceLocationOf(ErrorToStatus(text_error))),
            "line 2, column 5 (byte 17)");

  // A code-0 error is a server bug and must not read as success.
  EXPECT_EQ(ErrorToStatus(v1::Error()).code(), absl::StatusCode::kUnknown);
  EXPECT_FALSE(SourceLocationOf(ErrorToStatus(v1::Error())).has_value());
}

}  // namespace
}  // namespace maskd::client
