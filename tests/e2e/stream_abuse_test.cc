// Issue 13, findings 1.6 (streams and errors), against the real maskd over
// loopback: each test reproduces what one misbehaving client did to the
// server and checks the documented behaviour instead.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kMaxMessageBytes = 1 << 20;
// 256 KiB of cache: 16 shards of 16 KiB, so a mid-sized grammar is larger
// than a shard and is never cached.
constexpr int kCacheBytes = 256 << 10;
constexpr char kSchema[] = R"({"type":"object","properties":{"a":{"type":"string"}}})";

// Connects a TCP socket to host:port; -1 on failure. `timeout_s` bounds reads.
int Connect(const std::string& address, int timeout_s) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{};
  tv.tv_sec = timeout_s;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET /metrics that gives up after `timeout_s` without data; empty then.
std::string FetchMetricsWithin(const std::string& address, int timeout_s) {
  const int fd = Connect(address, timeout_s);
  if (fd < 0) return "";
  std::string response;
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address + "\r\n\r\n";
  if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[8192];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  }
  close(fd);
  return response;
}

class StreamAbuseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        StartMaskd({absl::StrCat("--max_message_bytes=", kMaxMessageBytes),
                    "--session_idle_timeout=2s", "--metrics_threads=2",
                    "--metrics_request_timeout=30s", absl::StrCat("--cache_bytes=", kCacheBytes)});
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
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
      delete server_;
    }
    delete compiled_;
  }

  static std::unique_ptr<v1::Maskd::Stub> Stub() {
    return v1::Maskd::NewStub(
        grpc::CreateChannel(server_->grpc_address(), grpc::InsecureChannelCredentials()));
  }

  // A request opening sequences [first, first + n) by handle, bitmask masks
  // (16 KiB each for Llama 3).
  static v1::StepRequest OpenRequest(uint64_t first, int n) {
    v1::StepRequest request;
    for (int i = 0; i < n; ++i) {
      v1::SequenceOp* op = request.add_ops();
      op->set_sequence_id(first + static_cast<uint64_t>(i));
      op->mutable_open()->set_handle(compiled_->handle);
      op->mutable_open()->set_mask_encoding(v1::MASK_ENCODING_BITMASK);
    }
    return request;
  }

  static std::optional<double> WaitForMetric(const std::string& sample,
                                             const std::function<bool(double)>& want,
                                             int seconds = 20) {
    return e2e::WaitForMetric(server_->metrics_address(), sample, want, seconds);
  }

  static testing::MaskdProcess* server_;
  static client::MaskdClient* client_;
  static CompiledSchema* compiled_;
};

testing::MaskdProcess* StreamAbuseTest::server_ = nullptr;
client::MaskdClient* StreamAbuseTest::client_ = nullptr;
CompiledSchema* StreamAbuseTest::compiled_ = nullptr;

// One scraper that sends half a request must not block /metrics for the
// others (civetweb ran one thread, held until the request completed).
TEST_F(StreamAbuseTest, HalfSentHttpRequestDoesNotBlockMetrics) {
  const int stuck = Connect(server_->metrics_address(), 1);
  ASSERT_GE(stuck, 0);
  const std::string half = "GET /metr";
  ASSERT_EQ(write(stuck, half.data(), half.size()), static_cast<ssize_t>(half.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The server waits up to --metrics_request_timeout=30s for the rest: only
  // a free thread answers this within 5 s.
  const std::string scraped = FetchMetricsWithin(server_->metrics_address(), 5);
  close(stuck);
  EXPECT_THAT(scraped, HasSubstr("maskd_active_streams"));
}

// A client that sends requests but never reads a response kept its stream
// and its sequences' memory forever (the idle timeout only watched reads).
TEST_F(StreamAbuseTest, ClientThatStopsReadingLosesItsStream) {
  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  grpc::ClientContext context;
  auto stream = stub->Session(&context);
  // 48 masks of 16 KiB: 768 KiB per response, within the 1 MiB limit. The
  // client's receive window fills after a few responses; the server's next
  // write then waits for a read that never comes.
  std::thread writer([&] {
    stream->Write(OpenRequest(0, 48));
    v1::StepRequest again;
    for (int i = 0; i < 48; ++i) {
      v1::SequenceOp* op = again.add_ops();
      op->set_sequence_id(static_cast<uint64_t>(i));
      op->mutable_advance();
    }
    for (int i = 0; i < 100; ++i) {
      if (!stream->Write(again)) break;
    }
  });
  EXPECT_THAT(WaitForMetric("maskd_active_sessions", [](double v) { return v == 48; }),
              ::testing::Optional(48.0));
  // --session_idle_timeout=2s: the stream and its 48 sequences go.
  EXPECT_THAT(WaitForMetric("maskd_active_streams", [](double v) { return v == 0; }),
              ::testing::Optional(0.0));
  EXPECT_THAT(WaitForMetric("maskd_active_sessions", [](double v) { return v == 0; }),
              ::testing::Optional(0.0));
  context.TryCancel();
  writer.join();
  grpc::Status status = stream->Finish();
  EXPECT_FALSE(status.ok());
}

// A request whose strings are not UTF-8 cannot be parsed: the stream ended
// with OK and no answer. Now INVALID_ARGUMENT naming the field.
TEST_F(StreamAbuseTest, UnparsableStepRequestEndsStreamWithInvalidArgument) {
  v1::StepRequest request;
  v1::SequenceOp* op = request.add_ops();
  op->set_sequence_id(7);
  v1::CompileRequest* compile = op->mutable_open()->mutable_compile();
  compile->set_tokenizer_id(compiled_->tokenizer_id);
  compile->mutable_spec()->set_json_schema("{\"const\": \"\xff\xfe\"}");
  v1::StepRequest check;
  ASSERT_FALSE(check.ParseFromString(request.SerializeAsString()));  // really unparsable

  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto stream = stub->Session(&context);
  ASSERT_TRUE(stream->Write(request));
  v1::StepResponse response;
  EXPECT_FALSE(stream->Read(&response));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("ops[0].open.compile.spec.json_schema"));
  EXPECT_THAT(status.error_message(), HasSubstr("UTF-8"));
}

// The same in a Compile call failed with INTERNAL and an empty message.
TEST_F(StreamAbuseTest, CompileWithInvalidUtf8IsInvalidArgument) {
  v1::CompileRequest request;
  request.set_tokenizer_id(compiled_->tokenizer_id);
  request.mutable_spec()->set_regex("ab\xc3(");
  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::CompileResponse response;
  grpc::Status status = stub->Compile(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("spec.regex holds invalid UTF-8 at byte 2"));
}

// A response over the message limit ended the whole stream; now the masks
// that do not fit fail their own ops and the stream goes on.
TEST_F(StreamAbuseTest, ResponseOverMessageLimitFailsOpsNotTheStream) {
  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  auto stream = stub->Session(&context);
  constexpr int kOpens = 100;  // 100 x 16 KiB: 1.6 MB, over the 1 MiB limit
  ASSERT_TRUE(stream->Write(OpenRequest(0, kOpens)));
  v1::StepResponse response;
  ASSERT_TRUE(stream->Read(&response)) << stream->Finish().error_message();
  ASSERT_EQ(response.results_size(), kOpens);
  EXPECT_LE(response.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));
  std::vector<uint64_t> cut;
  for (const v1::SequenceResult& result : response.results()) {
    if (result.has_error()) {
      EXPECT_EQ(result.error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_THAT(result.error().message(), HasSubstr("--max_message_bytes"));
      EXPECT_FALSE(result.has_mask());
      cut.push_back(result.sequence_id());
    } else {
      EXPECT_TRUE(result.has_mask());
    }
  }
  EXPECT_GT(cut.size(), 0u);
  EXPECT_LT(cut.size(), static_cast<size_t>(kOpens));
  // Those sequences are open: an advance without tokens brings their masks.
  v1::StepRequest again;
  for (uint64_t id : cut) {
    v1::SequenceOp* op = again.add_ops();
    op->set_sequence_id(id);
    op->mutable_advance();
  }
  ASSERT_TRUE(stream->Write(again));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(static_cast<size_t>(response.results_size()), cut.size());
  for (const v1::SequenceResult& result : response.results()) {
    EXPECT_FALSE(result.has_error()) << result.error().message();
    EXPECT_TRUE(result.has_mask());
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// User input echoed in errors was unbounded: a 100 KB tokenizer id in a
// status message passed gRPC's metadata limit ("metadata size exceeds
// limit"), a 100 KB property name made a 100 KB error.
TEST_F(StreamAbuseTest, ErrorMessagesEchoInputBounded) {
  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  {
    v1::CompileRequest request;
    request.set_tokenizer_id(std::string(100000, 'x'));
    request.mutable_spec()->set_json_schema("{}");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::CompileResponse response;
    grpc::Status status = stub->Compile(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
    EXPECT_LT(status.error_message().size(), 2048u);
    EXPECT_THAT(status.error_message(), HasSubstr("bytes in all"));
  }
  {
    const std::string name(100000, 'p');
    v1::CompileRequest request;
    request.set_tokenizer_id(compiled_->tokenizer_id);
    request.mutable_spec()->set_json_schema(
        absl::StrCat(R"({"type":"object","properties":{")", name, R"(":{"type":"nonsense"}}})"));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::CompileResponse response;
    grpc::Status status = stub->Compile(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(response.has_error());
    EXPECT_LT(response.error().message().size(), 2048u);
    EXPECT_LT(response.error().location().json_pointer().size(), 2048u);
    EXPECT_THAT(response.error().message(), HasSubstr("bytes in all"));
  }
}

// A grammar over 1/16 of the cache budget was never cached: Compile gave a
// handle that open then answered NOT_FOUND. Now it is held for its opens.
TEST_F(StreamAbuseTest, OversizedGrammarHandleStillOpens) {
  std::string schema = R"({"enum":[)";
  for (int i = 0; i < 3000; ++i) absl::StrAppend(&schema, i == 0 ? "" : ",", i);
  absl::StrAppend(&schema, "]}");
  std::unique_ptr<v1::Maskd::Stub> stub = Stub();
  v1::CompileRequest request;
  request.set_tokenizer_id(compiled_->tokenizer_id);
  request.mutable_spec()->set_json_schema(schema);
  v1::CompileResponse compiled;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    grpc::Status status = stub->Compile(&context, request, &compiled);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(compiled.has_grammar()) << compiled.error().message();
  }
  // The precondition: larger than a shard (the cache would not keep it).
  ASSERT_GT(compiled.grammar().stats().size_bytes(), static_cast<uint64_t>(kCacheBytes / 16));

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  auto stream = stub->Session(&context);
  v1::StepRequest open;
  v1::SequenceOp* op = open.add_ops();
  op->set_sequence_id(1);
  op->mutable_open()->set_handle(compiled.grammar().handle());
  ASSERT_TRUE(stream->Write(open));
  v1::StepResponse response;
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_TRUE(response.results(0).has_mask());
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  // A repeat is answered from the held grammar, not recompiled.
  grpc::ClientContext again_context;
  again_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::CompileResponse again;
  ASSERT_TRUE(stub->Compile(&again_context, request, &again).ok());
  EXPECT_TRUE(again.grammar().stats().cache_hit());
}

}  // namespace
}  // namespace maskd::e2e
