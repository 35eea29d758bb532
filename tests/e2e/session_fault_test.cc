// Faults on Session streams and Compile against the real maskd: a client
// cancelling mid-stream, garbage token ids and other bad ops, unknown
// handles, oversized requests. Each must fail precisely (the fitting code,
// on the sequence or call at fault) while a bystander stream opened before
// the fault keeps getting correct masks, and the server frees what the
// failed streams held (its gauges come back down).
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"
#include "clients/cpp/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// Small limits so oversized requests are cheap to build.
constexpr int kMaxMessageBytes = 1 << 20;
constexpr int kMaxSpecBytes = 64 << 10;

constexpr char kSchema[] =
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},)"
    R"("required":["name","age"],"additionalProperties":false})";
constexpr char kInstance[] = R"({"name": "Ada", "age": 36})";

class SessionFaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        StartMaskd({absl::StrCat("--max_message_bytes=", kMaxMessageBytes),
                    absl::StrCat("--max_spec_bytes=", kMaxSpecBytes)});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Llama3();
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = new std::shared_ptr<const Tokenizer>(*tokenizer);
    client_ = ClientOf(*server_).release();
    absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client_, kSchema);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    tokenizer_id_ = new std::string(compiled->tokenizer_id);
    handle_ = new std::string(compiled->handle);
    tokens_ = new std::vector<TokenId>((*tokenizer)->Encode(kInstance));
  }

  static void TearDownTestSuite() {
    delete client_;
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
      delete server_;
    }
  }

  // Opens `n` sequences 0..n-1 on `session` and checks the first masks allow
  // the instance's first token.
  static void OpenValid(client::Session& session, uint64_t first_id, size_t n) {
    for (size_t i = 0; i < n; ++i) session.Open(first_id + i, *handle_);
    absl::StatusOr<std::vector<client::SequenceResult>> results = session.Step();
    ASSERT_TRUE(results.ok()) << results.status();
    for (const client::SequenceResult& result : *results) {
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_TRUE(result.Allows((*tokens_)[0]));
    }
  }

  // The server's value of a metric sample, polled until `want` holds or 10 s
  // pass (stream teardown is asynchronous on the server).
  static std::optional<double> WaitForMetric(const std::string& sample,
                                             const std::function<bool(double)>& want) {
    return e2e::WaitForMetric(server_->metrics_address(), sample, want, 10);
  }

  static testing::MaskdProcess* server_;
  static client::MaskdClient* client_;
  static std::shared_ptr<const Tokenizer>* tokenizer_;
  static std::string* tokenizer_id_;
  static std::string* handle_;
  static std::vector<TokenId>* tokens_;
};

testing::MaskdProcess* SessionFaultTest::server_ = nullptr;
client::MaskdClient* SessionFaultTest::client_ = nullptr;
std::shared_ptr<const Tokenizer>* SessionFaultTest::tokenizer_ = nullptr;
std::string* SessionFaultTest::tokenizer_id_ = nullptr;
std::string* SessionFaultTest::handle_ = nullptr;
std::vector<TokenId>* SessionFaultTest::tokens_ = nullptr;

// A stream opened before a fault and driven after it: every token of the
// instance must still be allowed and accepted, and the instance complete.
class Bystander {
 public:
  Bystander(const client::MaskdClient& client, const std::string& handle,
            const std::vector<TokenId>& tokens)
      : session_(client.StartSession()), tokens_(tokens) {
    for (uint64_t id = 0; id < kSequences; ++id) session_->Open(id, handle);
    absl::StatusOr<std::vector<client::SequenceResult>> opened = session_->Step();
    EXPECT_TRUE(opened.ok()) << opened.status();
  }

  void RunToTheEnd() {
    for (size_t t = 0; t < tokens_.size(); ++t) {
      for (uint64_t id = 0; id < kSequences; ++id) session_->Advance(id, {&tokens_[t], 1});
      absl::StatusOr<std::vector<client::SequenceResult>> results = session_->Step();
      ASSERT_TRUE(results.ok()) << "bystander at token " << t << ": " << results.status();
      for (const client::SequenceResult& result : *results) {
        ASSERT_TRUE(result.ok()) << "bystander at token " << t << ": " << result.status();
        EXPECT_EQ(result.may_stop(), t + 1 == tokens_.size());
        if (t + 1 < tokens_.size()) {
          EXPECT_TRUE(result.Allows(tokens_[t + 1]));
        }
      }
    }
    for (uint64_t id = 0; id < kSequences; ++id) session_->Close(id);
    absl::StatusOr<std::vector<client::SequenceResult>> closed = session_->Step();
    ASSERT_TRUE(closed.ok()) << closed.status();
    EXPECT_TRUE(session_->Finish().ok());
  }

 private:
  static constexpr uint64_t kSequences = 3;
  std::unique_ptr<client::Session> session_;
  const std::vector<TokenId>& tokens_;
};

TEST_F(SessionFaultTest, ClientCancelMidStreamFreesItsSequences) {
  Bystander bystander(*client_, *handle_, *tokens_);
  {
    std::unique_ptr<client::Session> doomed = client_->StartSession();
    OpenValid(*doomed, 100, 50);
    for (uint64_t id = 100; id < 150; ++id) doomed->Advance(id, {&(*tokens_)[0], 1});
    // Cancel while the step may be in flight: it either completed before the
    // cancel or fails with CANCELLED, never anything else.
    std::thread canceller([&] { doomed->Cancel(); });
    absl::StatusOr<std::vector<client::SequenceResult>> racing = doomed->Step();
    canceller.join();
    if (!racing.ok()) {
      EXPECT_EQ(racing.status().code(), absl::StatusCode::kCancelled);
    }
    absl::StatusOr<std::vector<client::SequenceResult>> after = doomed->Step();
    ASSERT_FALSE(after.ok());
    EXPECT_EQ(after.status().code(), absl::StatusCode::kCancelled) << after.status();
  }
  // Only the bystander's 3 sequences stay open on the server.
  std::optional<double> open =
      WaitForMetric("maskd_active_sessions", [](double v) { return v == 3; });
  ASSERT_TRUE(open.has_value()) << "maskd_active_sessions missing from /metrics";
  EXPECT_EQ(*open, 3);
  bystander.RunToTheEnd();
  EXPECT_EQ(WaitForMetric("maskd_active_sessions", [](double v) { return v == 0; }), 0);
  EXPECT_EQ(WaitForMetric("maskd_active_streams", [](double v) { return v == 0; }), 0);
}

TEST_F(SessionFaultTest, GarbageOpsFailOnTheirSequenceOnly) {
  Bystander bystander(*client_, *handle_, *tokens_);
  std::unique_ptr<client::Session> session = client_->StartSession();
  OpenValid(*session, 1, 2);
  const TokenId first = (*tokens_)[0];
  const TokenId past_vocab = 128256;
  const TokenId huge = 0xFFFFFFFFu;
  const TokenId bos = 128000;  // <|begin_of_text|>: special, never allowed
  const std::vector<TokenId> first_then_huge = {first, huge};

  session->Advance(1, {&huge, 1});
  session->Advance(2, {&first, 1});  // a good op in the same batch
  absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].status().code(), absl::StatusCode::kInvalidArgument)
      << (*results)[0].status();
  EXPECT_THAT((*results)[0].status().message(), HasSubstr("4294967295"));
  EXPECT_EQ((*results)[0].tokens_accepted(), 0u);
  EXPECT_TRUE((*results)[1].ok()) << (*results)[1].status();

  // Each failure leaves sequence 1 where it was (at the start), so the first
  // token is still accepted afterwards.
  struct Bad {
    std::string what;
    std::function<void()> queue;
    absl::StatusCode code;
    uint32_t tokens_accepted;
  };
  const std::vector<Bad> bad = {
      {"id past the vocabulary",
       [&] {
         session->Advance(1, {&past_vocab, 1});
       },
       absl::StatusCode::kInvalidArgument, 0},
      {"special token",
       [&] {
         session->Advance(1, {&bos, 1});
       },
       absl::StatusCode::kInvalidArgument, 0},
      {"rollback without history", [&] { session->Rollback(1, 1); },
       absl::StatusCode::kInvalidArgument, 0},
      {"good token then garbage", [&] { session->Advance(1, first_then_huge); },
       absl::StatusCode::kInvalidArgument, 1},
  };
  for (const Bad& b : bad) {
    b.queue();
    results = session->Step();
    ASSERT_TRUE(results.ok()) << b.what << ": " << results.status();
    EXPECT_EQ((*results)[0].status().code(), b.code) << b.what << ": " << (*results)[0].status();
    EXPECT_EQ((*results)[0].tokens_accepted(), b.tokens_accepted) << b.what;
    if (b.tokens_accepted == 1) {
      // The good token stayed: undo it the only way there is, by reopening.
      session->Close(1);
      ASSERT_TRUE(session->Step().ok());
      OpenValid(*session, 1, 1);
    }
  }
  session->Advance(1, {&first, 1});
  results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE((*results)[0].ok()) << (*results)[0].status();

  // Ops naming sequences wrongly.
  session->Advance(77, {&first, 1});  // never opened
  session->Close(78);                 // never opened
  session->Open(2, *handle_);         // already open
  session->Advance(1, {});
  session->Close(1);  // the same sequence twice in one request
  results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].status().code(), absl::StatusCode::kNotFound) << (*results)[0].status();
  EXPECT_EQ((*results)[1].status().code(), absl::StatusCode::kNotFound) << (*results)[1].status();
  EXPECT_FALSE((*results)[2].ok());
  EXPECT_TRUE((*results)[3].ok()) << (*results)[3].status();
  EXPECT_EQ((*results)[4].status().code(), absl::StatusCode::kInvalidArgument)
      << (*results)[4].status();
  EXPECT_TRUE(session->Finish().ok());
  bystander.RunToTheEnd();
}

TEST_F(SessionFaultTest, UnknownHandleIsNotFoundOnThatSequence) {
  Bystander bystander(*client_, *handle_, *tokens_);
  std::unique_ptr<client::Session> session = client_->StartSession();
  const std::string unknown(32, 'f');
  session->Open(1, unknown);
  session->Open(2, *handle_);
  absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].status().code(), absl::StatusCode::kNotFound) << (*results)[0].status();
  EXPECT_THAT((*results)[0].status().message(), HasSubstr(unknown));
  EXPECT_TRUE((*results)[1].ok()) << (*results)[1].status();
  // The failed open left nothing behind: the id is free to open again.
  session->Open(1, *handle_);
  results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_TRUE(session->Finish().ok());

  // Compile against a tokenizer id the server does not have: the call fails.
  absl::StatusOr<client::CompileResult> compiled =
      client_->Compile(std::string(32, '0'), client::JsonSchemaSpec(kSchema));
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kNotFound) << compiled.status();
  EXPECT_FALSE(client::IsItemError(compiled.status()));
  bystander.RunToTheEnd();
}

TEST_F(SessionFaultTest, OversizedRequestsAreResourceExhausted) {
  Bystander bystander(*client_, *handle_, *tokens_);
  // Over --max_spec_bytes but within the message limit: refused by maskd.
  const std::string big_choice(kMaxSpecBytes + 1, 'a');
  absl::StatusOr<client::CompileResult> compiled =
      client_->Compile(*tokenizer_id_, client::ChoicesSpec({big_choice}));
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kResourceExhausted) << compiled.status();
  EXPECT_THAT(compiled.status().message(), HasSubstr("spec"));

  // Over --max_message_bytes: refused by gRPC before maskd sees it.
  compiled =
      client_->Compile(*tokenizer_id_, client::RegexSpec(std::string(kMaxMessageBytes, 'a')));
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kResourceExhausted) << compiled.status();

  // A step too big for the message limit ends that stream (gRPC cannot
  // answer one message of a stream with an error) and nothing else.
  std::unique_ptr<client::Session> session = client_->StartSession();
  OpenValid(*session, 1, 1);
  const std::vector<TokenId> flood(kMaxMessageBytes / 2, 100'000);  // 3 bytes each on the wire
  session->Advance(1, flood);
  absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kResourceExhausted) << results.status();
  bystander.RunToTheEnd();

  // The server still serves new streams.
  std::unique_ptr<client::Session> fresh = client_->StartSession();
  OpenValid(*fresh, 1, 1);
  EXPECT_TRUE(fresh->Finish().ok());
}

}  // namespace
}  // namespace maskd::e2e
