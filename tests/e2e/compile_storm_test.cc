// Issue 13, findings 1.2 and 1.3, against the real maskd over loopback:
// slow compiles (Compile calls and inline-compile opens) must not stall
// other streams' steps nor health checks, the compile queue is bounded,
// and a compile every caller abandoned stops.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::HasSubstr;

constexpr int kQueuePerTenant = 4;
constexpr char kSchema[] = R"({"type":"object","properties":{"a":{"type":"integer"}}})";

// A schema that takes about a second or more to compile (a 100,000-value
// enum; issue 13 measured 1.1 s), distinct per `tag` so nothing is cached.
std::string SlowSchema(const std::string& tag, int values = 100000) {
  std::string schema = R"({"enum":[)";
  for (int i = 0; i < values; ++i) absl::StrAppend(&schema, i, ",");
  absl::StrAppend(&schema, "\"", tag, "\"]}");
  return schema;
}

class CompileStormTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One step thread and one compile thread: an inline compile on the step
    // pool would hold the only step thread. 16 gRPC threads: 100 blocking
    // Compile calls would take all of them.
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        StartMaskd({"--threads=1", "--compile_threads=1", "--grpc_threads=16",
                    absl::StrCat("--max_queued_compiles_per_tenant=", kQueuePerTenant),
                    "--max_queued_compiles=64", "--max_spec_bytes=4194304", "--inline_step_ops=0",
                    "--compile_time_limit=120s"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    client_ = ClientOf(*server_).release();
    absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client_, kSchema);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    compiled_ = new CompiledSchema(*compiled);
  }

  static void TearDownTestSuite() {
    delete client_;
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(60)).value_or(-1), 0);
      delete server_;
    }
    delete compiled_;
  }

  static std::shared_ptr<grpc::Channel> Channel() {
    return grpc::CreateChannel(server_->grpc_address(), grpc::InsecureChannelCredentials());
  }

  static v1::CompileRequest SlowRequest(const std::string& tag) {
    v1::CompileRequest request;
    request.set_tokenizer_id(compiled_->tokenizer_id);
    request.mutable_spec()->set_json_schema(SlowSchema(tag));
    return request;
  }

  static std::optional<double> WaitForMetric(const std::string& sample,
                                             const std::function<bool(double)>& want, int seconds) {
    return e2e::WaitForMetric(server_->metrics_address(), sample, want, seconds);
  }

  static testing::MaskdProcess* server_;
  static client::MaskdClient* client_;
  static CompiledSchema* compiled_;
};

// Sanitizer builds run the server and the 100 callers several times slower on
// CI's 2 cores: a health check there may take seconds to be scheduled, so it
// gets a longer deadline, and the storm (bounded by the callers' 3 s) has
// room for fewer checks (2 of them, once, beside the rest of the ASan suite
// at -j2). What the test proves is the same: every check during the storm
// is answered SERVING, none RESOURCE_EXHAUSTED.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kHealthDeadlineSeconds = 10;
constexpr int kMinHealthChecks = 1;
#else
constexpr int kHealthDeadlineSeconds = 2;
constexpr int kMinHealthChecks = 11;
#endif

testing::MaskdProcess* CompileStormTest::server_ = nullptr;
client::MaskdClient* CompileStormTest::client_ = nullptr;
CompiledSchema* CompileStormTest::compiled_ = nullptr;

// 100 slow Compile calls at once took every gRPC thread: health checks
// failed with RESOURCE_EXHAUSTED. Now compiles hold no thread, health
// answers throughout, and the calls beyond the tenant's queue are refused.
TEST_F(CompileStormTest, HealthAnswersThroughACompileStormAndTheQueueIsBounded) {
  constexpr int kCalls = 100;
  std::vector<std::string> requests;
  for (int i = 0; i < kCalls; ++i)
    requests.push_back(SlowRequest(absl::StrCat("storm-", i)).SerializeAsString());
  std::atomic<int> refused{0};
  std::atomic<int> other{0};
  std::string refusal;
  std::mutex mu;
  std::vector<std::thread> callers;
  auto channel = Channel();
  for (int i = 0; i < kCalls; ++i) {
    callers.emplace_back([&, i] {
      auto stub = v1::Maskd::NewStub(channel);
      v1::CompileRequest request;
      request.ParseFromString(requests[i]);
      grpc::ClientContext context;
      // The callers give up after 3 s: their compiles are then abandoned.
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
      v1::CompileResponse response;
      grpc::Status status = stub->Compile(&context, request, &response);
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        ++refused;
        std::lock_guard<std::mutex> lock(mu);
        refusal = status.error_message();
      } else {
        ++other;
      }
    });
  }
  int checks = 0;
  int serving = 0;
  std::vector<std::string> failures;
  auto health = grpc::health::v1::Health::NewStub(Channel());
  while (refused.load() + other.load() < kCalls) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(kHealthDeadlineSeconds));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = health->Check(&context, request, &response);
    ++checks;
    if (status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      ++serving;
    } else if (failures.size() < 3) {
      failures.push_back(absl::StrCat(status.error_code(), " ", status.error_message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::thread& t : callers) t.join();
  EXPECT_GE(checks, kMinHealthChecks);
  EXPECT_EQ(serving, checks) << ::testing::PrintToString(failures);
  // At most kQueuePerTenant compiles are queued or running at once, and
  // each takes ~1 s: most of the 100 calls, arriving together, are refused.
  EXPECT_GE(refused.load(), kCalls / 2);
  EXPECT_THAT(refusal, HasSubstr("--max_queued_compiles_per_tenant"));
}

// A compile whose only caller went away (its deadline passed) is cancelled
// at the engine's next check instead of running on.
TEST_F(CompileStormTest, CompileAbandonedByItsCallerIsCancelled) {
  const std::string sample =
      R"(maskd_compile_duration_seconds_count{kind="json_schema",outcome="cancelled"})";
  const double before = MetricValue(FetchMetrics(server_->metrics_address()), sample).value_or(0);
  auto stub = v1::Maskd::NewStub(Channel());
  grpc::Status status;
  // The storm's abandoned compiles hold their queue places until the one
  // compile thread has dropped them: retry while the queue is full (up to
  // 6 minutes: under ASan on a loaded machine 2 minutes were not enough).
  for (int i = 0; i < 900; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    v1::CompileResponse response;
    status = stub->Compile(&context, SlowRequest("abandoned"), &response);
    if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  EXPECT_THAT(WaitForMetric(
                  sample, [&](double v) { return v > before; }, 30),
              ::testing::Optional(::testing::Gt(before)));
}

// An open with an inline compile ran the compile on the step pool: with one
// step thread, every other stream's steps waited for it. Now the open
// waits for the compile cache without a thread and other streams step on.
TEST_F(CompileStormTest, InlineCompileOpenDoesNotStallOtherStreams) {
  auto channel = Channel();
  auto stub = v1::Maskd::NewStub(channel);
  // The victim: 64 sequences, each step a B=64 request (on the step pool).
  grpc::ClientContext victim_context;
  auto victim = stub->Session(&victim_context);
  v1::StepRequest open;
  for (int i = 0; i < 64; ++i) {
    v1::SequenceOp* op = open.add_ops();
    op->set_sequence_id(static_cast<uint64_t>(i));
    op->mutable_open()->set_handle(compiled_->handle);
  }
  v1::StepResponse response;
  ASSERT_TRUE(victim->Write(open));
  ASSERT_TRUE(victim->Read(&response));
  v1::StepRequest step;
  for (int i = 0; i < 64; ++i) {
    v1::SequenceOp* op = step.add_ops();
    op->set_sequence_id(static_cast<uint64_t>(i));
    op->mutable_advance();
  }

  // The slow open, on another stream.
  grpc::ClientContext slow_context;
  auto slow = stub->Session(&slow_context);
  v1::StepRequest slow_open;
  v1::SequenceOp* op = slow_open.add_ops();
  op->set_sequence_id(1);
  // 5,000 values: long enough to step beside, short enough under ASan.
  *op->mutable_open()->mutable_compile() = SlowRequest("inline");
  op->mutable_open()->mutable_compile()->mutable_spec()->set_json_schema(
      SlowSchema("inline", 5000));
  std::atomic<bool> slow_answered{false};
  v1::StepResponse slow_response;
  ASSERT_TRUE(slow->Write(slow_open));
  std::thread reader([&] {
    EXPECT_TRUE(slow->Read(&slow_response));
    slow_answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the compile start

  int steps_while_compiling = 0;
  for (int i = 0; i < 1000 && !slow_answered.load(); ++i) {
    ASSERT_TRUE(victim->Write(step));
    ASSERT_TRUE(victim->Read(&response));
    ASSERT_EQ(response.results_size(), 64);
    EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
    if (!slow_answered.load()) ++steps_while_compiling;
  }
  reader.join();
  EXPECT_GE(steps_while_compiling, 3);
  ASSERT_EQ(slow_response.results_size(), 1);
  EXPECT_FALSE(slow_response.results(0).has_error()) << slow_response.results(0).error().message();
  EXPECT_TRUE(slow_response.results(0).has_mask());
  victim->WritesDone();
  EXPECT_TRUE(victim->Finish().ok());
  slow->WritesDone();
  EXPECT_TRUE(slow->Finish().ok());
}

}  // namespace
}  // namespace maskd::e2e
