// SIGTERM while a Session stream is busy: every step the client sent is
// either answered completely and correctly or the stream ends with a clean
// status (no partial response, no hang); new streams are refused during the
// drain; the process exits 0; a new maskd process then serves the same
// content-addressed handle with the same masks.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::AnyOf;

constexpr char kSchema[] =
    R"({"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string",)"
    R"("pattern":"^[0-9]{5}$"}},"required":["city","zip"],"additionalProperties":false})";
constexpr char kInstance[] = R"({"city": "Springfield", "zip": "12345"})";
constexpr int kSequences = 8;

v1::CompileRequest CompileRequestFor(const std::string& tokenizer_id) {
  v1::CompileRequest request;
  request.set_tokenizer_id(tokenizer_id);
  *request.mutable_spec() = client::JsonSchemaSpec(kSchema);
  return request;
}

// Bitmasks of the instance's prefixes on one server, from one sequence
// opened with an inline compile (a fresh replica needs no prior Compile).
std::vector<std::vector<uint32_t>> PrefixMasks(const client::MaskdClient& client,
                                               const v1::CompileRequest& compile,
                                               const std::vector<TokenId>& tokens) {
  std::vector<std::vector<uint32_t>> masks;
  std::unique_ptr<client::Session> session = client.StartSession();
  session->OpenInline(1, compile);
  for (size_t t = 0; t <= tokens.size(); ++t) {
    if (t > 0) session->Advance(1, {&tokens[t - 1], 1});
    absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
    EXPECT_TRUE(results.ok()) << results.status();
    if (!results.ok()) return masks;
    absl::StatusOr<client::TokenMask> mask = (*results)[0].DecodeMask();
    EXPECT_TRUE(mask.ok()) << mask.status();
    if (!mask.ok()) return masks;
    masks.emplace_back(mask->words().begin(), mask->words().end());
  }
  EXPECT_TRUE(session->Finish().ok());
  return masks;
}

TEST(ServerRestartTest, SigtermMidStreamEndsCleanlyAndANewServerServes) {
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Llama3();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::vector<TokenId> tokens = (*tokenizer)->Encode(kInstance);

  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> first =
      StartMaskd({"--shutdown_grace=2s"});
  ASSERT_TRUE(first.ok()) << first.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**first);
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer("llama3");
  ASSERT_TRUE(info.ok()) << info.status();
  const v1::CompileRequest compile = CompileRequestFor(info->tokenizer_id());
  absl::StatusOr<client::CompileResult> compiled = client->Compile(compile);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::vector<std::vector<uint32_t>> before = PrefixMasks(*client, compile, tokens);
  ASSERT_EQ(before.size(), tokens.size() + 1);

  // The busy stream: kSequences sequences replaying the instance over and
  // over (close at the end, reopen), until the stream fails.
  std::atomic<int> answered_steps{0};
  absl::Status end_status;
  std::string wrong_answer;
  std::thread worker([&] {
    std::unique_ptr<client::Session> session = client->StartSession();
    std::vector<size_t> accepted(kSequences, 0);  // tokens accepted so far
    std::vector<bool> closing(kSequences, false);
    for (int s = 0; s < kSequences; ++s) session->Open(s, compiled->handle);
    while (true) {
      absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
      if (!results.ok()) {
        end_status = results.status();
        return;
      }
      ++answered_steps;
      for (int s = 0; s < kSequences; ++s) {
        const client::SequenceResult& result = (*results)[s];
        if (!result.ok()) {
          wrong_answer = absl::StrCat("sequence ", s, ": ", result.status().ToString());
          return;
        }
        if (closing[s]) {
          closing[s] = false;
          accepted[s] = 0;
          session->Open(s, compiled->handle);
          continue;
        }
        // A full, correct answer: the mask of this prefix, bit for bit.
        absl::StatusOr<client::TokenMask> mask = result.DecodeMask();
        if (!mask.ok() || !std::equal(mask->words().begin(), mask->words().end(),
                                      before[accepted[s]].begin(), before[accepted[s]].end())) {
          wrong_answer = absl::StrCat("sequence ", s, " prefix ", accepted[s], ": wrong mask");
          return;
        }
        if (accepted[s] == tokens.size()) {
          session->Close(s);
          closing[s] = true;
        } else {
          session->Advance(s, {&tokens[accepted[s]], 1});
          ++accepted[s];
        }
      }
    }
  });
  while (answered_steps < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kill((*first)->pid(), SIGTERM), 0);
  // Draining: a new stream is refused.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    std::unique_ptr<client::Session> late = client->StartSession();
    late->Open(1, compiled->handle);
    EXPECT_FALSE(late->Step().ok());
  }
  worker.join();
  EXPECT_EQ(wrong_answer, "");
  EXPECT_THAT(end_status.code(),
              AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kCancelled))
      << end_status;
  EXPECT_EQ((*first)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0) << (*first)->Log();

  // A fresh process: the same compile request gives the same handle, and
  // the same masks for every prefix.
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> second = StartMaskd();
  ASSERT_TRUE(second.ok()) << second.status();
  std::unique_ptr<client::MaskdClient> second_client = ClientOf(**second);
  EXPECT_EQ(PrefixMasks(*second_client, compile, tokens), before);
  absl::StatusOr<client::CompileResult> recompiled = second_client->Compile(compile);
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_EQ(recompiled->handle, compiled->handle);
  EXPECT_EQ((*second)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
}

// SIGTERM with a slow compile in flight (a 200,000-value enum, seconds to
// compile): its caller is answered UNAVAILABLE at once, not after the
// compile (the drain used to wait for it, then answer OK) nor CANCELLED at
// the grace; the compile is cancelled, and the process exits within
// --shutdown_compile_grace of the drain even if the compile has not yet
// reached the engine's next check.
TEST(ServerRestartTest, SigtermCancelsACompileInFlightAndAnswersUnavailable) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server = StartMaskd(
      {"--shutdown_grace=60s", "--shutdown_compile_grace=2s", "--max_spec_bytes=4000000"});
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**server);
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer("llama3");
  ASSERT_TRUE(info.ok()) << info.status();
  std::string schema = R"({"enum":[)";
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&schema, i, ",");
  schema += R"("end"]})";
  v1::CompileRequest request;
  request.set_tokenizer_id(info->tokenizer_id());
  *request.mutable_spec() = client::JsonSchemaSpec(schema);

  absl::Status compile_status;
  std::chrono::steady_clock::time_point answered;
  std::thread caller([&] {
    compile_status = client->Compile(request).status();
    answered = std::chrono::steady_clock::now();
  });
  // The compile is running once the memory budget holds its estimate.
  ASSERT_GT(
      WaitForMetric((*server)->metrics_address(), R"(maskd_memory_budget_bytes{kind="compiles"})",
                    [](double v) { return v > 0; }, 30)
          .value_or(0),
      0)
      << (*server)->Log();
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill((*server)->pid(), SIGTERM), 0);
  caller.join();
  EXPECT_EQ(compile_status.code(), absl::StatusCode::kUnavailable) << compile_status;
  EXPECT_THAT(compile_status.message(), ::testing::HasSubstr("shutting down"));
  const double answer_s = std::chrono::duration<double>(answered - signalled).count();
  EXPECT_EQ((*server)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0) << (*server)->Log();
  const double exit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  std::printf("compile answered %.2f s after SIGTERM, process gone after %.2f s\n", answer_s,
              exit_s);
  EXPECT_LT(answer_s, 1.5);
  // The drain (no stream left; civetweb's stop alone takes about 2.5 s)
  // plus at most the 2 s compile grace.
  EXPECT_LT(exit_s, 20.0);
}

}  // namespace
}  // namespace maskd::e2e
