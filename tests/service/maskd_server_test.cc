// End-to-end tests of the real maskd binary: health checking, reflection,
// the tokenizer RPCs, /metrics, and shutdown on SIGTERM (Compile and Session
// are in engine_rpc_test.cc). One server (with llama3 preloaded) serves the main
// suite; shutdown and startup failures use their own processes.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "harness/maskd_process.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "maskd_test/reflection.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/service/http_get.h"

namespace maskd {
namespace {

using ::maskd::testing::HttpGet;
using ::maskd::testing::MaskdProcess;
using ::maskd::testing::ReadFileOrEmpty;
using ::maskd::testing::TokenizerDir;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;

constexpr auto kShutdownTimeout = std::chrono::seconds(10);

// What a tokenizer.json says independently of maskd's loader: its vocab size
// (max id + 1 over model.vocab and added_tokens) and the id of the
// tokenizer_config.json eos_token.
struct ExpectedTokenizer {
  uint32_t vocab_size = 0;
  uint32_t eos_id = 0;
};

ExpectedTokenizer ReadExpected(const std::string& dir) {
  const nlohmann::json tokenizer = nlohmann::json::parse(ReadFileOrEmpty(dir + "/tokenizer.json"));
  const nlohmann::json config =
      nlohmann::json::parse(ReadFileOrEmpty(dir + "/tokenizer_config.json"));
  const nlohmann::json& eos_field = config.at("eos_token");
  const std::string eos = eos_field.is_string() ? eos_field.get<std::string>()
                                                : eos_field.at("content").get<std::string>();
  ExpectedTokenizer expected;
  uint32_t max_id = 0;
  for (const auto& [token, id] : tokenizer.at("model").at("vocab").items()) {
    max_id = std::max(max_id, id.get<uint32_t>());
    if (token == eos) expected.eos_id = id.get<uint32_t>();
  }
  for (const nlohmann::json& added : tokenizer.at("added_tokens")) {
    const uint32_t id = added.at("id").get<uint32_t>();
    max_id = std::max(max_id, id);
    if (added.at("content") == eos) expected.eos_id = id;
  }
  expected.vocab_size = max_id + 1;
  return expected;
}

// The tokenizer directory a test needs; fails the test (never skips) when
// it is missing.
std::string RequireTokenizerDir(const std::string& name) {
  const std::string dir = TokenizerDir(name);
  EXPECT_FALSE(ReadFileOrEmpty(dir + "/tokenizer.json").empty())
      << "missing " << dir << "/tokenizer.json (set MASKD_TOKENIZER_DIR or run the setup script)";
  return dir;
}

std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(int seconds = 60) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

grpc::health::v1::HealthCheckResponse::ServingStatus CheckHealth(const std::string& address,
                                                                 const std::string& service,
                                                                 grpc::Status* status) {
  auto stub = grpc::health::v1::Health::NewStub(Connect(address));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  *status = stub->Check(ContextWithDeadline(10).get(), request, &response);
  return response.status();
}

class MaskdServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    llama3_dir_ = new std::string(RequireTokenizerDir("llama3"));
    absl::StatusOr<std::unique_ptr<MaskdProcess>> process =
        MaskdProcess::Start({"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                             "--tokenizer=llama3=" + *llama3_dir_, "--allow_register_tokenizer"});
    ASSERT_TRUE(process.ok()) << process.status();
    process_ = process->release();
  }

  static void TearDownTestSuite() {
    if (process_ != nullptr) {
      absl::StatusOr<int> exit_code = process_->Stop(SIGTERM, kShutdownTimeout);
      EXPECT_TRUE(exit_code.ok() && *exit_code == 0) << exit_code.status() << "\nlog:\n"
                                                     << process_->Log();
    }
    delete process_;
    process_ = nullptr;
    delete llama3_dir_;
  }

  void SetUp() override {
    ASSERT_NE(process_, nullptr) << "maskd did not start";
    stub_ = v1::Maskd::NewStub(Connect(process_->grpc_address()));
  }

  // The id of the preloaded llama3 tokenizer, via ListTokenizers.
  std::string Llama3Id() {
    v1::ListTokenizersResponse response;
    grpc::Status status =
        stub_->ListTokenizers(ContextWithDeadline().get(), v1::ListTokenizersRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const v1::TokenizerInfo& info : response.tokenizers()) {
      if (info.name() == "llama3") return info.tokenizer_id();
    }
    ADD_FAILURE() << "llama3 not listed";
    return "";
  }

  static MaskdProcess* process_;
  static std::string* llama3_dir_;
  std::unique_ptr<v1::Maskd::Stub> stub_;
};

MaskdProcess* MaskdServerTest::process_ = nullptr;
std::string* MaskdServerTest::llama3_dir_ = nullptr;

TEST_F(MaskdServerTest, LogsTheActualBoundPorts) {
  EXPECT_THAT(process_->grpc_address(), ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(process_->grpc_address(), "127.0.0.1:0");
  EXPECT_THAT(process_->metrics_address(), ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(process_->metrics_address(), "127.0.0.1:0");
}

TEST_F(MaskdServerTest, HealthCheckSaysServing) {
  grpc::Status status;
  EXPECT_EQ(CheckHealth(process_->grpc_address(), "", &status),
            grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(CheckHealth(process_->grpc_address(), "maskd.v1.Maskd", &status),
            grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(status.ok()) << status.error_message();
  CheckHealth(process_->grpc_address(), "no.such.Service", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(MaskdServerTest, ListsThePreloadedTokenizer) {
  const ExpectedTokenizer expected = ReadExpected(*llama3_dir_);
  ASSERT_EQ(expected.vocab_size, 128256u);

  v1::ListTokenizersResponse response;
  grpc::Status status =
      stub_->ListTokenizers(ContextWithDeadline().get(), v1::ListTokenizersRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const auto llama3 =
      std::find_if(response.tokenizers().begin(), response.tokenizers().end(),
                   [](const v1::TokenizerInfo& info) { return info.name() == "llama3"; });
  ASSERT_NE(llama3, response.tokenizers().end());
  EXPECT_EQ(llama3->vocab_size(), 128256u);
  EXPECT_THAT(llama3->eos_token_ids(), Contains(expected.eos_id));
  EXPECT_EQ(llama3->kind(), v1::TOKENIZER_KIND_BYTE_LEVEL_BPE);
  EXPECT_TRUE(llama3->preloaded());
  EXPECT_EQ(llama3->tokenizer_id().size(), 32u);
  // 256 reserved/special added tokens at the top of the Llama 3 vocabulary.
  EXPECT_GE(llama3->special_token_count(), 256u);
  EXPECT_LT(llama3->special_token_count(), 1000u);

  // Looking the preloaded one up by name gives the same id.
  v1::RegisterTokenizerRequest by_name;
  by_name.set_preloaded_name("llama3");
  v1::RegisterTokenizerResponse found;
  status = stub_->RegisterTokenizer(ContextWithDeadline().get(), by_name, &found);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(found.tokenizer().tokenizer_id(), llama3->tokenizer_id());
  EXPECT_TRUE(found.already_registered());
}

TEST_F(MaskdServerTest, RegistersTokenizerFromBytes) {
  const std::string qwen3_dir = RequireTokenizerDir("qwen3");
  const ExpectedTokenizer expected = ReadExpected(qwen3_dir);

  v1::RegisterTokenizerRequest request;
  request.mutable_files()->set_tokenizer_json(ReadFileOrEmpty(qwen3_dir + "/tokenizer.json"));
  request.mutable_files()->set_tokenizer_config_json(
      ReadFileOrEmpty(qwen3_dir + "/tokenizer_config.json"));
  request.set_name("qwen3");
  v1::RegisterTokenizerResponse response;
  grpc::Status status =
      stub_->RegisterTokenizer(ContextWithDeadline(120).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const v1::TokenizerInfo& info = response.tokenizer();
  EXPECT_EQ(info.name(), "qwen3");
  EXPECT_EQ(info.tokenizer_id().size(), 32u);
  EXPECT_EQ(info.vocab_size(), expected.vocab_size);
  EXPECT_THAT(info.eos_token_ids(), Contains(expected.eos_id));
  EXPECT_FALSE(info.preloaded());
  EXPECT_NE(info.tokenizer_id(), Llama3Id());

  v1::ListTokenizersResponse listed;
  status = stub_->ListTokenizers(ContextWithDeadline().get(), v1::ListTokenizersRequest(), &listed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<std::string> ids;
  for (const v1::TokenizerInfo& each : listed.tokenizers()) ids.push_back(each.tokenizer_id());
  EXPECT_THAT(ids, Contains(info.tokenizer_id()));

  // The same bytes again: same id, nothing new loaded.
  v1::RegisterTokenizerResponse again;
  status = stub_->RegisterTokenizer(ContextWithDeadline(120).get(), request, &again);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(again.tokenizer().tokenizer_id(), info.tokenizer_id());
  EXPECT_TRUE(again.already_registered());

  // Unregistered: gone from the list; a second time NOT_FOUND; preloaded
  // tokenizers cannot be unregistered.
  v1::UnregisterTokenizerRequest unregister;
  unregister.set_tokenizer_id(info.tokenizer_id());
  v1::UnregisterTokenizerResponse unregistered;
  status = stub_->UnregisterTokenizer(ContextWithDeadline().get(), unregister, &unregistered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(unregistered.removed());
  listed.Clear();
  status = stub_->ListTokenizers(ContextWithDeadline().get(), v1::ListTokenizersRequest(), &listed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ids.clear();
  for (const v1::TokenizerInfo& each : listed.tokenizers()) ids.push_back(each.tokenizer_id());
  EXPECT_THAT(ids, ::testing::Not(Contains(info.tokenizer_id())));
  status = stub_->UnregisterTokenizer(ContextWithDeadline().get(), unregister, &unregistered);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  unregister.set_tokenizer_id(Llama3Id());
  status = stub_->UnregisterTokenizer(ContextWithDeadline().get(), unregister, &unregistered);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
}

TEST_F(MaskdServerTest, RejectsBadTokenizerInput) {
  v1::RegisterTokenizerRequest garbage;
  garbage.mutable_files()->set_tokenizer_json(std::string("\x01\xff not json {", 14));
  v1::RegisterTokenizerResponse response;
  grpc::Status status = stub_->RegisterTokenizer(ContextWithDeadline().get(), garbage, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("cannot load tokenizer: "));
  // The loader's own explanation follows the prefix.
  EXPECT_GT(status.error_message().size(), std::string("cannot load tokenizer: ").size() + 5);

  v1::RegisterTokenizerRequest no_model;
  no_model.mutable_files()->set_tokenizer_json(R"({"version": "1.0"})");
  status = stub_->RegisterTokenizer(ContextWithDeadline().get(), no_model, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("model"));

  v1::RegisterTokenizerRequest unknown;
  unknown.set_preloaded_name("no-such-tokenizer");
  status = stub_->RegisterTokenizer(ContextWithDeadline().get(), unknown, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("no-such-tokenizer"));

  status = stub_->RegisterTokenizer(ContextWithDeadline().get(), v1::RegisterTokenizerRequest(),
                                    &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(MaskdServerTest, ServesPrometheusMetrics) {
  Llama3Id();  // At least one counted RPC.
  const std::string response = HttpGet(process_->metrics_address(), "/metrics");
  ASSERT_THAT(response, HasSubstr(" 200 ")) << response;
  EXPECT_THAT(response, HasSubstr("maskd_build_info{"));
  EXPECT_THAT(response, HasSubstr("version=\"0."));
  EXPECT_THAT(response, HasSubstr("commit=\""));
  EXPECT_THAT(response, HasSubstr("\nprocess_resident_memory_bytes "));
  EXPECT_THAT(response, HasSubstr("\nprocess_cpu_seconds_total "));
  EXPECT_THAT(response, HasSubstr("\nprocess_open_fds "));
  EXPECT_THAT(response, HasSubstr("\nprocess_start_time_seconds "));
  EXPECT_THAT(response,
              HasSubstr("maskd_rpc_requests_total{code=\"OK\",method=\"ListTokenizers\"}"));
  EXPECT_THAT(response, HasSubstr("\nmaskd_tokenizers "));
}

TEST_F(MaskdServerTest, ReflectionListsAndDescribesTheService) {
  auto stub =
      grpc::reflection::v1alpha::ServerReflection::NewStub(Connect(process_->grpc_address()));
  auto context = ContextWithDeadline();
  auto stream = stub->ServerReflectionInfo(context.get());

  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  grpc::reflection::v1alpha::ServerReflectionResponse listed;
  ASSERT_TRUE(stream->Read(&listed));
  std::vector<std::string> services;
  for (const auto& service : listed.list_services_response().service()) {
    services.push_back(service.name());
  }
  EXPECT_THAT(services, Contains("maskd.v1.Maskd"));

  grpc::reflection::v1alpha::ServerReflectionRequest describe;
  describe.set_file_containing_symbol("maskd.v1.Maskd");
  ASSERT_TRUE(stream->Write(describe));
  grpc::reflection::v1alpha::ServerReflectionResponse described;
  ASSERT_TRUE(stream->Read(&described));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  bool found_service = false;
  for (const std::string& bytes : described.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    for (const auto& service : file.service()) {
      if (file.package() != "maskd.v1" || service.name() != "Maskd") continue;
      found_service = true;
      std::vector<std::string> methods;
      for (const auto& method : service.method()) {
        methods.push_back(method.name());
        if (method.name() == "Session") {
          EXPECT_TRUE(method.client_streaming());
          EXPECT_TRUE(method.server_streaming());
        }
      }
      EXPECT_THAT(methods,
                  IsSupersetOf({"RegisterTokenizer", "ListTokenizers", "Compile", "Session"}));
    }
  }
  EXPECT_TRUE(found_service) << described.DebugString().substr(0, 2000);
}

TEST(MaskdShutdownTest, SigtermDrainsAndExitsZero) {
  absl::StatusOr<std::unique_ptr<MaskdProcess>> process =
      MaskdProcess::Start({"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"});
  ASSERT_TRUE(process.ok()) << process.status();
  grpc::Status status;
  EXPECT_EQ(CheckHealth((*process)->grpc_address(), "", &status),
            grpc::health::v1::HealthCheckResponse::SERVING);

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGTERM, kShutdownTimeout);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status() << "\nlog:\n" << (*process)->Log();
  EXPECT_EQ(*exit_code, 0) << (*process)->Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT((*process)->Log(), HasSubstr("received SIGTERM"));
}

TEST(MaskdShutdownTest, SigintAlsoExitsZero) {
  absl::StatusOr<std::unique_ptr<MaskdProcess>> process =
      MaskdProcess::Start({"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"});
  ASSERT_TRUE(process.ok()) << process.status();
  absl::StatusOr<int> exit_code = (*process)->Stop(SIGINT, kShutdownTimeout);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0) << (*process)->Log();
}

TEST(MaskdStartupTest, MissingTokenizerFailsWithItsPath) {
  std::string log;
  absl::StatusOr<int> exit_code =
      MaskdProcess::RunToExit({"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                               "--tokenizer=ghost=/nonexistent/ghost"},
                              &log, std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_NE(*exit_code, 0);
  EXPECT_THAT(log, HasSubstr("/nonexistent/ghost/tokenizer.json"));
  EXPECT_THAT(log, HasSubstr("maskd: error: "));
}

TEST(MaskdStartupTest, HelpListsEveryFlagAndExitsZero) {
  std::string log;
  absl::StatusOr<int> exit_code =
      MaskdProcess::RunToExit({"--help"}, &log, std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status();
  EXPECT_EQ(*exit_code, 0) << log;
  EXPECT_THAT(log, Not(HasSubstr("No flags matched")));
  for (const char* flag :
       {"--listen", "--metrics_listen", "--tokenizer", "--threads", "--compile_threads",
        "--cache_bytes", "--compile_time_limit", "--max_spec_bytes", "--session_idle_timeout",
        "--shutdown_grace", "--tls_cert"}) {
    EXPECT_THAT(log, HasSubstr(std::string(flag) + " (")) << log;
  }
  EXPECT_THAT(log, HasSubstr("default: 127.0.0.1:50051"));
}

}  // namespace
}  // namespace maskd
