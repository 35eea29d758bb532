#include "service/token_auth.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::HasSubstr;

TEST(TokenAuthTest, OffWithoutTokensEveryoneIsTheDefaultTenant) {
  TokenAuthenticator auth;
  EXPECT_FALSE(auth.enabled());
  EXPECT_EQ(*auth.Authenticate(""), "default");
  EXPECT_EQ(*auth.Authenticate("Bearer whatever"), "default");
}

TEST(TokenAuthTest, TokensMapToTheirTenants) {
  absl::StatusOr<TokenAuthenticator> auth = TokenAuthenticator::FromFileContents(
      "# comment\n\n  team-a   aaaaaaaaaaaaaaaa1 \nteam-b\tbbbbbbbbbbbbbbbb2\n"
      "team-a aaaaaaaaaaaaaaaa3\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_TRUE(auth->enabled());
  EXPECT_EQ(auth->token_count(), 3u);
  EXPECT_EQ(*auth->Authenticate("Bearer aaaaaaaaaaaaaaaa1"), "team-a");
  EXPECT_EQ(*auth->Authenticate("bearer aaaaaaaaaaaaaaaa3"), "team-a");  // scheme any case
  EXPECT_EQ(*auth->Authenticate("Bearer bbbbbbbbbbbbbbbb2"), "team-b");
}

TEST(TokenAuthTest, MissingMalformedOrUnknownTokensAreUnauthenticated) {
  absl::StatusOr<TokenAuthenticator> auth =
      TokenAuthenticator::FromFileContents("team-a aaaaaaaaaaaaaaaa1\n");
  ASSERT_TRUE(auth.ok());
  for (const char* header : {"", "aaaaaaaaaaaaaaaa1", "Basic aaaaaaaaaaaaaaaa1",
                             "Bearer aaaaaaaaaaaaaaaa", "Bearer aaaaaaaaaaaaaaaa12", "Bearer "}) {
    absl::StatusOr<std::string> tenant = auth->Authenticate(header);
    EXPECT_EQ(tenant.status().code(), absl::StatusCode::kUnauthenticated) << header;
    // The message never repeats what the caller sent.
    EXPECT_THAT(tenant.status().message(), ::testing::Not(HasSubstr("aaaaaaaaaaaaaaaa")));
  }
}

TEST(TokenAuthTest, BadFilesAreRefusedNamingTheLine) {
  struct Case {
    const char* contents;
    const char* message;
  };
  for (const Case& test : {
           Case{"", "holds no `TENANT TOKEN` line"},
           Case{"team-a\n", "line 1: expected `TENANT TOKEN`, found 1 fields"},
           Case{"# x\nteam-a aaaaaaaaaaaaaaaa1 extra\n", "line 2: expected"},
           Case{"-team aaaaaaaaaaaaaaaa1\n", "line 1: tenant must be"},
           Case{"team{a} aaaaaaaaaaaaaaaa1\n", "line 1: tenant must be"},
           Case{"team-a short\n", "line 1: token must be 16-4096"},
           Case{"team-a aaaaaaaaaaaaaaaa1\nteam-b aaaaaaaaaaaaaaaa1\n",
                "line 2: token given twice"},
       }) {
    absl::StatusOr<TokenAuthenticator> auth = TokenAuthenticator::FromFileContents(test.contents);
    ASSERT_FALSE(auth.ok()) << test.contents;
    EXPECT_EQ(auth.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(auth.status().message(), HasSubstr(test.message));
  }
}

}  // namespace
}  // namespace maskd
