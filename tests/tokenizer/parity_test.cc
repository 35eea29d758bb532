// Parity with the JavaScript reference tokenizers: every corpus string
// (MaskBench instances + adversarial strings, see
// scripts/tokenizer_reference/) must encode to exactly the reference ids,
// for Llama 3, Qwen3 and gpt-oss. Also Decode(Encode(s)) == s.
//
// The reference directory comes from $MASKD_TOKENIZER_REFERENCE (CTest sets
// it to what the tokenizer_reference_setup fixture produced).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/tokenizer/tokenizer.h"
#include "compiler/tokenizer/utf8.h"
#include "gtest/gtest.h"
#include "tests/support/real_tokenizer.h"
#include "utf8proc.h"

namespace maskd {
namespace {

std::string ReferenceDir() {
  const char* dir = std::getenv("MASKD_TOKENIZER_REFERENCE");
  return dir == nullptr ? "" : dir;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> ReadCorpus() {
  std::vector<std::string> corpus;
  for (const std::string& line : ReadLines(ReferenceDir() + "/corpus.b64")) {
    std::string bytes;
    EXPECT_TRUE(absl::Base64Unescape(line, &bytes)) << line;
    corpus.push_back(std::move(bytes));
  }
  return corpus;
}

const std::vector<std::string>& Corpus() {
  static const auto* corpus = new std::vector<std::string>(ReadCorpus());
  return *corpus;
}

std::vector<TokenId> ParseIds(const std::string& line) {
  std::vector<TokenId> ids;
  for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    uint32_t id = 0;
    EXPECT_TRUE(absl::SimpleAtoi(field, &id)) << "bad reference id " << field;
    ids.push_back(id);
  }
  return ids;
}

std::string Nfc(const std::string& text) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &out,
                   static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  std::string result = n < 0 ? text : std::string(reinterpret_cast<const char*>(out), n);
  std::free(out);
  return result;
}

class ParityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParityTest, EncodeMatchesJavaScriptReferenceOnWholeCorpus) {
  const std::string name = GetParam();
  ASSERT_FALSE(ReferenceDir().empty())
      << "MASKD_TOKENIZER_REFERENCE is not set (run through ctest, whose fixture makes it)";
  auto tokenizer = testing::LoadRealTokenizer(name);
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<std::string> sha = ReadLines(ReferenceDir() + "/" + name + ".sha256");
  ASSERT_EQ(sha.size(), 1u) << "missing " << name << ".sha256 in " << ReferenceDir();
  ASSERT_EQ(tokenizer->id(), sha[0].substr(0, 32))
      << "the tokenizer.json under " << testing::TokenizerDir(name)
      << " is not the file the reference was made from";

  const std::vector<std::string>& corpus = Corpus();
  const std::vector<std::string> reference = ReadLines(ReferenceDir() + "/" + name + ".ids");
  ASSERT_GT(corpus.size(), 20000u);
  ASSERT_EQ(reference.size(), corpus.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::vector<TokenId> ours = tokenizer->Encode(corpus[i]);
    const std::vector<TokenId> expected = ParseIds(reference[i]);
    if (ours == expected) continue;
    if (++mismatches <= 5) {
      ADD_FAILURE() << name << " string #" << i << " \""
                    << absl::CHexEscape(corpus[i].substr(0, 300))
                    << "\"\n  ours:      " << absl::StrJoin(ours, " ")
                    << "\n  reference: " << absl::StrJoin(expected, " ");
    }
  }
  EXPECT_EQ(mismatches, 0u) << name << ": " << mismatches << " of " << corpus.size()
                            << " strings differ from the reference";
}

TEST_P(ParityTest, DecodeOfEncodeGivesTheTextBack) {
  const std::string name = GetParam();
  ASSERT_FALSE(ReferenceDir().empty()) << "MASKD_TOKENIZER_REFERENCE is not set";
  auto tokenizer = testing::LoadRealTokenizer(name);
  ASSERT_NE(tokenizer, nullptr);
  size_t checked = 0;
  size_t failures = 0;
  for (const std::string& text : Corpus()) {
    if (tokenizer_internal::FindInvalidUtf8(text) != std::string::npos) continue;
    // Qwen3 normalizes to NFC first, so NFC text is what comes back.
    const std::string expected = name == "qwen3" ? Nfc(text) : text;
    ++checked;
    if (tokenizer->Decode(tokenizer->Encode(text)) != expected && ++failures <= 3) {
      ADD_FAILURE() << name << ": round trip changed \"" << absl::CHexEscape(text.substr(0, 200))
                    << "\"";
    }
  }
  EXPECT_GT(checked, 20000u);
  EXPECT_EQ(failures, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, ParityTest, ::testing::Values("llama3", "qwen3", "gptoss"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace maskd
