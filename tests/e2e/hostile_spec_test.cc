// Issue 13, finding 1.1: one ~40 KB JSON Schema crashed maskd (a stack
// overflow in a compile thread: SIGSEGV, every stream lost). The real binary
// over real gRPC on loopback: each shape from the report, and specs nested
// 10,000 deep, get an answer (a handle or a spec error naming the limit),
// and the server is still up afterwards: healthy, compiling, and it exits 0
// on SIGTERM (a crashed process would not).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "maskd/v1/maskd.grpc.pb.h"
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

// A pattern slow to match (`a?` x 3,000 then `a` x 3,000) compiles in
// milliseconds, but its first mask took 100 s of a step thread (every
// stream on that thread waited). Now the grammar's DFA fails past its work
// limit per new state: the open fails alone with RESOURCE_EXHAUSTED naming
// the limit, and a stream stepping beside it on the only step thread goes on.
TEST(HostileSpecTest, SlowToMatchPatternFailsItsOpenAndOtherStreamsGoOn) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> process =
      StartMaskd({"--threads=1", "--inline_step_ops=0"});
  ASSERT_TRUE(process.ok()) << process.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**process);
  absl::StatusOr<CompiledSchema> victim = CompileForLlama3(*client, R"({"type":"integer"})");
  ASSERT_TRUE(victim.ok()) << victim.status();
  absl::StatusOr<client::CompileResult> slow = client->Compile(
      victim->tokenizer_id, client::RegexSpec(Repeat("a?", 3000) + Repeat("a", 3000)));
  ASSERT_TRUE(slow.ok()) << slow.status();

  auto stub = v1::Maskd::NewStub(
      grpc::CreateChannel((*process)->grpc_address(), grpc::InsecureChannelCredentials()));
  // The victim: one sequence, stepped without tokens until the hostile open
  // is answered.
  std::atomic<bool> hostile_answered{false};
  std::atomic<int> victim_steps{0};
  std::thread victim_thread([&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto stream = stub->Session(&context);
    v1::StepRequest open;
    open.add_ops()->set_sequence_id(1);
    open.mutable_ops(0)->mutable_open()->set_handle(victim->handle);
    v1::StepResponse response;
    if (!stream->Write(open) || !stream->Read(&response)) return;
    v1::StepRequest step;
    step.add_ops()->set_sequence_id(1);
    step.mutable_ops(0)->mutable_advance();
    while (!hostile_answered.load() || victim_steps.load() < 5) {
      if (!stream->Write(step) || !stream->Read(&response)) break;
      if (!response.results(0).has_error()) ++victim_steps;
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  });

  for (int i = 0; i < 3000 && victim_steps.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (victim_steps.load() == 0) {
    hostile_answered = true;
    victim_thread.join();
    FAIL() << "the victim stream never stepped";
  }
  grpc::ClientContext context;
  // The old server needed ~100 s: it fails here instead of hanging the suite.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->Session(&context);
  v1::StepRequest open;
  open.add_ops()->set_sequence_id(7);
  open.mutable_ops(0)->mutable_open()->set_handle(slow->handle);
  v1::StepResponse response;
  const bool answered = stream->Write(open) && stream->Read(&response);
  hostile_answered = true;
  victim_thread.join();
  ASSERT_TRUE(answered) << stream->Finish().error_message();
  ASSERT_EQ(response.results_size(), 1);
  ASSERT_TRUE(response.results(0).has_error());
  EXPECT_EQ(response.results(0).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(response.results(0).error().message(), HasSubstr("max_mask_work"));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_GE(victim_steps.load(), 5);

  absl::StatusOr<client::HealthState> health = client->CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, client::HealthState::kServing);
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGTERM, std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0);
}

}  // namespace
}  // namespace maskd::e2e
