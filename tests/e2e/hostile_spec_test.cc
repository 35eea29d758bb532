// Issue 13, finding 1.1: one ~40 KB JSON Schema crashed maskd (a stack
// overflow in a compile thread: SIGSEGV, every stream lost). The real binary
// over real gRPC on loopback: each shape from the report, and specs nested
// 10,000 deep, get an answer (a handle or a spec error naming the limit),
// and the server is still up afterwards: healthy, compiling, and it exits 0
// on SIGTERM (a crashed process would not).
#include <signal.h>

#include <string>
#include <vector>

#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

TEST(HostileSpecTest, StackHungrySpecsGetAnswersAndTheServerStaysUp) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> process = StartMaskd();
  ASSERT_TRUE(process.ok()) << process.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**process);

  const std::string a100k = Repeat("a", 100'000);
  const std::vector<std::string> compiling = {
      R"({"type":"string","pattern":")" + Repeat("a", 40'000) + "\"}",
      R"({"type":"string","pattern":")" + Repeat("[ab]", 50'000) + "\"}",
      R"({"type":"object","propertyNames":{"pattern":")" + Repeat("b", 50'000) + "\"}}",
      R"({"type":"object","properties":{")" + a100k + R"(":{"type":"null"}},"required":[")" +
          a100k + "\"]}",
  };
  for (const std::string& schema : compiling) {
    absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client, schema);
    EXPECT_TRUE(compiled.ok()) << schema.substr(0, 60) << ": " << compiled.status() << "\nlog:\n"
                               << (*process)->Log();
  }

  const std::vector<std::string> too_deep = {
      Repeat(R"({"items":)", 10'000) + "true" + Repeat("}", 10'000),
      R"({"type":"string","pattern":")" + Repeat("(", 10'000) + "a" + Repeat(")", 10'000) + "\"}",
  };
  for (const std::string& schema : too_deep) {
    absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client, schema);
    ASSERT_FALSE(compiled.ok()) << schema.substr(0, 60);
    EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(compiled.status().message(), HasSubstr("max_recursion_depth"));
  }

  // The limit is a request option: raised, the same deep pattern is fine.
  absl::StatusOr<v1::TokenizerInfo> llama3 = client->FindTokenizer("llama3");
  ASSERT_TRUE(llama3.ok()) << llama3.status();
  v1::CompileOptions deeper;
  deeper.set_max_recursion_depth(1000);
  const std::string nested_900 = Repeat("(", 900) + "a" + Repeat(")", 900);
  absl::StatusOr<client::CompileResult> raised =
      client->Compile(llama3->tokenizer_id(), client::RegexSpec(nested_900), deeper);
  EXPECT_TRUE(raised.ok()) << raised.status();
  absl::StatusOr<client::CompileResult> by_default =
      client->Compile(llama3->tokenizer_id(), client::RegexSpec(nested_900));
  ASSERT_FALSE(by_default.ok());
  EXPECT_THAT(by_default.status().message(),
              AllOf(HasSubstr("more than 128 levels"), HasSubstr("offset 129")));

  absl::StatusOr<client::HealthState> health = client->CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status() << "\nlog:\n" << (*process)->Log();
  EXPECT_EQ(*health, client::HealthState::kServing);
  EXPECT_TRUE(CompileForLlama3(*client, R"({"type":"integer"})").ok());
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGTERM, std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status() << "\nlog:\n" << (*process)->Log();
  EXPECT_EQ(*exit_code, 0);
}

}  // namespace
}  // namespace maskd::e2e
