// Where tests find the real tokenizers: $MASKD_TOKENIZER_DIR/<name>/, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers/<name>/. Tests FAIL (not
// skip) when a tokenizer is missing.
#ifndef MASKD_TESTS_TOKENIZER_TOKENIZER_PATHS_H_
#define MASKD_TESTS_TOKENIZER_TOKENIZER_PATHS_H_

#include <cstdlib>
#include <memory>
#include <string>

#include "compiler/tokenizer/tokenizer.h"
#include "gtest/gtest.h"

namespace maskd::testing {

inline std::string TokenizerRoot() {
  if (const char* dir = std::getenv("MASKD_TOKENIZER_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache != '\0') {
    return std::string(cache) + "/maskd/tokenizers";
  }
  const char* home = std::getenv("HOME");
  return std::string(home == nullptr ? "" : home) + "/.cache/maskd/tokenizers";
}

inline std::string TokenizerDir(const std::string& name) { return TokenizerRoot() + "/" + name; }

// Loads a real tokenizer; a missing or broken one fails the calling test.
inline std::shared_ptr<const Tokenizer> LoadRealTokenizer(const std::string& name) {
  auto tokenizer = Tokenizer::FromDirectory(TokenizerDir(name));
  EXPECT_TRUE(tokenizer.ok()) << "tokenizer " << name << " not loadable from " << TokenizerDir(name)
                              << ": " << tokenizer.status() << " (set MASKD_TOKENIZER_DIR)";
  return tokenizer.ok() ? *tokenizer : nullptr;
}

}  // namespace maskd::testing

#endif  // MASKD_TESTS_TOKENIZER_TOKENIZER_PATHS_H_
