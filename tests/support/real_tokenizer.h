// Loading a real tokenizer (harness/data_paths.h says where they are) in a
// test: a missing one FAILS the test (never skips it).
#ifndef MASKD_TESTS_SUPPORT_REAL_TOKENIZER_H_
#define MASKD_TESTS_SUPPORT_REAL_TOKENIZER_H_

#include <memory>
#include <string>

#include "compiler/tokenizer/tokenizer.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"

namespace maskd::testing {

// Loads a real tokenizer; a missing or broken one fails the calling test.
inline std::shared_ptr<const Tokenizer> LoadRealTokenizer(const std::string& name) {
  auto tokenizer = Tokenizer::FromDirectory(TokenizerDir(name));
  EXPECT_TRUE(tokenizer.ok()) << "tokenizer " << name << " not loadable from " << TokenizerDir(name)
                              << ": " << tokenizer.status() << " (set MASKD_TOKENIZER_DIR)";
  return tokenizer.ok() ? *tokenizer : nullptr;
}

}  // namespace maskd::testing

#endif  // MASKD_TESTS_SUPPORT_REAL_TOKENIZER_H_
