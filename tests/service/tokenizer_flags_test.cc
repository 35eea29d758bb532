#include "service/tokenizer_flags.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Collect(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return CollectFlagValues(static_cast<int>(argv.size()), argv.data(), "tokenizer");
}

TEST(TokenizerFlagsTest, CollectsEveryOccurrenceInEverySpelling) {
  EXPECT_THAT(Collect({"maskd", "--tokenizer=a", "--listen=x", "--tokenizer", "b,c", "-tokenizer=d",
                       "--tokenizers=no", "--", "--tokenizer=after"}),
              ElementsAre("a", "b,c", "d"));
}

TEST(TokenizerFlagsTest, ParsesNamesAndDirectories) {
  absl::StatusOr<std::vector<TokenizerSource>> sources =
      ParseTokenizerFlags({"llama3", "qwen=/models/qwen, gptoss"}, "/cache");
  ASSERT_TRUE(sources.ok()) << sources.status();
  ASSERT_EQ(sources->size(), 3u);
  EXPECT_EQ((*sources)[0].name, "llama3");
  EXPECT_EQ((*sources)[0].dir, "/cache/llama3");
  EXPECT_EQ((*sources)[1].name, "qwen");
  EXPECT_EQ((*sources)[1].dir, "/models/qwen");
  EXPECT_EQ((*sources)[2].dir, "/cache/gptoss");
}

TEST(TokenizerFlagsTest, RejectsEmptyPartsAndDuplicates) {
  EXPECT_FALSE(ParseTokenizerFlags({"=/dir"}, "/cache").ok());
  EXPECT_FALSE(ParseTokenizerFlags({"name="}, "/cache").ok());
  EXPECT_FALSE(ParseTokenizerFlags({"a", "a=/x"}, "/cache").ok());
}

TEST(TokenizerFlagsTest, DefaultCacheDirFollowsXdgThenHome) {
  // Restore the environment afterwards: other tests in this binary may run
  // in the same process.
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home != nullptr ? old_home : "";
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = old_xdg != nullptr ? old_xdg : "";
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(DefaultTokenizerCacheDir(), "/xdg/maskd/tokenizers");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultTokenizerCacheDir(), "/home/u/.cache/maskd/tokenizers");
  setenv("HOME", saved_home.c_str(), 1);
  if (old_xdg != nullptr) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

}  // namespace
}  // namespace maskd
