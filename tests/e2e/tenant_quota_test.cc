// Per-tenant quotas on the real maskd binary (issue 13 §2): two tenants
// (bearer tokens); one at its stream or sequence quota is refused with
// RESOURCE_EXHAUSTED naming the quota and the tenant, while the other goes
// on, and the tenant gets its place back when it closes what it held.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "harness/maskd_process.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kTokenA[] = "quota-tenant-a-token-0123456789";
constexpr char kTokenB[] = "quota-tenant-b-token-9876543210";
constexpr char kTokenC[] = "quota-tenant-c-token-5555555555";
constexpr int kStreamQuota = 2;
constexpr int kSequenceQuota = 3;
constexpr int kQueueInAll = 6;
constexpr int kQueuePerTenant = 4;

// One Session stream of one tenant, driven synchronously.
class Stream {
 public:
  Stream(v1::Maskd::Stub* stub, const std::string& token) {
    context_.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    stream_ = stub->Session(&context_);
  }

  // One request and its response; false when the stream ended instead.
  bool Step(const v1::StepRequest& request, v1::StepResponse* response) {
    return stream_->Write(request) && stream_->Read(response);
  }

  grpc::Status Close() {
    stream_->WritesDone();
    v1::StepResponse ignored;
    while (stream_->Read(&ignored)) {
    }
    return stream_->Finish();
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>> stream_;
};

class TenantQuotaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string pattern = ::testing::TempDir() + "maskd_quota_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = new std::string(pattern);
    std::ofstream(*dir_ + "/tokens")
        << "tenant-a " << kTokenA << "\ntenant-b " << kTokenB << "\ntenant-c " << kTokenC << "\n";
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        StartMaskd({"--auth_token_file=" + *dir_ + "/tokens",
                    absl::StrCat("--max_streams_per_tenant=", kStreamQuota),
                    absl::StrCat("--max_sequences_per_tenant=", kSequenceQuota),
                    // One compile at a time; 6 queued in all, 4 per tenant.
                    "--compile_threads=1", absl::StrCat("--max_queued_compiles=", kQueueInAll),
                    absl::StrCat("--max_queued_compiles_per_tenant=", kQueuePerTenant),
                    "--max_spec_bytes=4194304"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    stub_ = v1::Maskd::NewStub(
                grpc::CreateChannel(server_->grpc_address(), grpc::InsecureChannelCredentials()))
                .release();
    // A regex grammar every open below uses by handle.
    grpc::ClientContext list_context;
    list_context.AddMetadata("authorization", absl::StrCat("Bearer ", kTokenA));
    v1::ListTokenizersResponse tokenizers;
    ASSERT_TRUE(stub_->ListTokenizers(&list_context, {}, &tokenizers).ok());
    ASSERT_EQ(tokenizers.tokenizers_size(), 1);
    grpc::ClientContext compile_context;
    compile_context.AddMetadata("authorization", absl::StrCat("Bearer ", kTokenA));
    v1::CompileRequest compile;
    compile.set_tokenizer_id(tokenizers.tokenizers(0).tokenizer_id());
    compile.mutable_spec()->set_regex("[ab]+");
    v1::CompileResponse compiled;
    const grpc::Status status = stub_->Compile(&compile_context, compile, &compiled);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(compiled.has_grammar()) << compiled.error().message();
    handle_ = new std::string(compiled.grammar().handle());
  }

  static void TearDownTestSuite() {
    delete stub_;
    if (server_ != nullptr) {
      // The slow compiles the queue test leaves behind are cancelled by the
      // drain, and maskd exits within --shutdown_compile_grace (5 s) even
      // if one has not reached the engine's next check.
      const auto stop_timeout = std::chrono::seconds(30);
      EXPECT_EQ(server_->Stop(SIGTERM, stop_timeout).value_or(-1), 0);
      delete server_;
    }
    if (dir_ != nullptr) std::system(absl::StrCat("rm -rf ", *dir_).c_str());
    delete dir_;
    delete handle_;
  }

  static v1::StepRequest Open(std::vector<uint64_t> ids) {
    v1::StepRequest request;
    for (uint64_t id : ids) {
      v1::SequenceOp* op = request.add_ops();
      op->set_sequence_id(id);
      op->mutable_open()->set_handle(*handle_);
    }
    return request;
  }

  static v1::StepRequest Close(uint64_t id) {
    v1::StepRequest request;
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    op->mutable_close();
    return request;
  }

  // Waits until the server's gauge for `tenant` reads `want`.
  static void ExpectGauge(const std::string& name, const std::string& tenant, double want) {
    const std::string sample = absl::StrCat(name, "{tenant=\"", tenant, "\"}");
    const std::optional<double> seen = WaitForMetric(
        server_->metrics_address(), sample, [&](double v) { return v == want; }, 20);
    EXPECT_EQ(seen.value_or(-1), want) << sample;
  }

  static std::string* dir_;
  static std::string* handle_;
  static testing::MaskdProcess* server_;
  static v1::Maskd::Stub* stub_;
};

std::string* TenantQuotaTest::dir_ = nullptr;
std::string* TenantQuotaTest::handle_ = nullptr;
testing::MaskdProcess* TenantQuotaTest::server_ = nullptr;
v1::Maskd::Stub* TenantQuotaTest::stub_ = nullptr;

TEST_F(TenantQuotaTest, TenantAtItsStreamQuotaDoesNotStopAnother) {
  v1::StepResponse response;
  std::vector<std::unique_ptr<Stream>> held;
  for (int i = 0; i < kStreamQuota; ++i) {
    held.push_back(std::make_unique<Stream>(stub_, kTokenA));
    ASSERT_TRUE(held.back()->Step({}, &response)) << held.back()->Close().error_message();
  }
  ExpectGauge("maskd_tenant_streams", "tenant-a", kStreamQuota);

  Stream refused(stub_, kTokenA);
  EXPECT_FALSE(refused.Step({}, &response));
  const grpc::Status status = refused.Close();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("tenant \"tenant-a\""));
  EXPECT_THAT(status.error_message(), HasSubstr("--max_streams_per_tenant"));

  // The other tenant is not affected, nor are tenant-a's open streams.
  Stream other(stub_, kTokenB);
  EXPECT_TRUE(other.Step(Open({1}), &response));
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_TRUE(held[0]->Step(Open({1}), &response));
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_TRUE(other.Close().ok());

  // A closed stream gives its place back.
  EXPECT_TRUE(held.back()->Close().ok());
  held.pop_back();
  ExpectGauge("maskd_tenant_streams", "tenant-a", kStreamQuota - 1);
  Stream again(stub_, kTokenA);
  EXPECT_TRUE(again.Step({}, &response));
  EXPECT_TRUE(again.Close().ok());
  for (auto& stream : held) EXPECT_TRUE(stream->Close().ok());
  ExpectGauge("maskd_tenant_streams", "tenant-a", 0);
  ExpectGauge("maskd_tenant_sequences", "tenant-a", 0);
  const std::string metrics = FetchMetrics(server_->metrics_address());
  EXPECT_GE(MetricValue(metrics,
                        "maskd_tenant_quota_refusals_total{quota=\"max_streams_per_"
                        "tenant\",tenant=\"tenant-a\"}")
                .value_or(0),
            1);
}

TEST_F(TenantQuotaTest, TenantAtItsSequenceQuotaDoesNotStopAnother) {
  v1::StepResponse response;
  // tenant-a's sequences over two streams add up to its quota.
  Stream first(stub_, kTokenA);
  Stream second(stub_, kTokenA);
  ASSERT_TRUE(first.Step(Open({1, 2}), &response));
  for (const v1::SequenceResult& result : response.results()) {
    EXPECT_FALSE(result.has_error()) << result.error().message();
  }
  ASSERT_TRUE(second.Step(Open({1, 2}), &response));
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  ASSERT_TRUE(response.results(1).has_error());
  EXPECT_EQ(response.results(1).error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(response.results(1).error().message(), HasSubstr("tenant \"tenant-a\""));
  EXPECT_THAT(response.results(1).error().message(), HasSubstr("--max_sequences_per_tenant"));
  ExpectGauge("maskd_tenant_sequences", "tenant-a", kSequenceQuota);

  // tenant-b opens its whole quota meanwhile.
  Stream other(stub_, kTokenB);
  ASSERT_TRUE(other.Step(Open({1, 2, 3}), &response));
  for (const v1::SequenceResult& result : response.results()) {
    EXPECT_FALSE(result.has_error()) << result.error().message();
  }
  ExpectGauge("maskd_tenant_sequences", "tenant-b", kSequenceQuota);

  // A closed sequence gives its place back; a stream that ends gives back
  // all of its sequences.
  ASSERT_TRUE(first.Step(Close(1), &response));
  EXPECT_FALSE(response.results(0).has_error());
  ASSERT_TRUE(second.Step(Open({2}), &response));
  EXPECT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
  EXPECT_TRUE(first.Close().ok());
  EXPECT_TRUE(second.Close().ok());
  ExpectGauge("maskd_tenant_sequences", "tenant-a", 0);
  EXPECT_TRUE(other.Close().ok());
  ExpectGauge("maskd_tenant_sequences", "tenant-b", 0);
}

// The compile queue is bounded per tenant and in all: two tenants filling
// their own queues meet the server's bound, and a third tenant is refused by
// it too, each refusal naming the bound that was reached.
TEST_F(TenantQuotaTest, CompileQueueIsBoundedInAllBesideEachTenant) {
  // A 100,000-value enum: about a second to compile; distinct per call.
  auto slow_request = [](const std::string& tag) {
    std::string schema = R"({"enum":[)";
    for (int i = 0; i < 100000; ++i) absl::StrAppend(&schema, i, ",");
    absl::StrAppend(&schema, "\"", tag, "\"]}");
    v1::CompileRequest request;
    grpc::ClientContext list_context;
    list_context.AddMetadata("authorization", absl::StrCat("Bearer ", kTokenA));
    v1::ListTokenizersResponse tokenizers;
    EXPECT_TRUE(stub_->ListTokenizers(&list_context, {}, &tokenizers).ok());
    request.set_tokenizer_id(tokenizers.tokenizers(0).tokenizer_id());
    request.mutable_spec()->set_json_schema(schema);
    return request;
  };
  std::mutex mu;
  std::map<std::string, std::vector<grpc::Status>> outcomes;  // by token
  auto compile = [&](const std::string& token, const v1::CompileRequest& request, int seconds) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    v1::CompileResponse response;
    const grpc::Status status = stub_->Compile(&context, request, &response);
    std::lock_guard<std::mutex> lock(mu);
    outcomes[token].push_back(status);
  };
  std::vector<v1::CompileRequest> requests;
  for (int i = 0; i < 2 * kQueuePerTenant + 1; ++i) {
    requests.push_back(slow_request(absl::StrCat("queue-", i)));
  }
  std::vector<std::thread> callers;
  // tenant-a fills its own queue (4), then tenant-b's calls fill the
  // server's (6) and the rest are refused by it.
  for (int i = 0; i < kQueuePerTenant; ++i) {
    callers.emplace_back(compile, kTokenA, requests[i], 3);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < kQueuePerTenant; ++i) {
    callers.emplace_back(compile, kTokenB, requests[kQueuePerTenant + i], 3);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  compile(kTokenC, requests.back(), 3);
  for (std::thread& caller : callers) caller.join();

  auto refusals = [&](const std::string& token) {
    std::vector<std::string> out;
    for (const grpc::Status& status : outcomes[token]) {
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        out.push_back(status.error_message());
      }
    }
    return out;
  };
  EXPECT_THAT(refusals(kTokenA), ::testing::IsEmpty());
  // Only the server's bound refused tenant-b (its own queue had room).
  const std::vector<std::string> refused_b = refusals(kTokenB);
  EXPECT_GE(refused_b.size(), 1u);
  EXPECT_LE(refused_b.size(), static_cast<size_t>(2 * kQueuePerTenant - kQueueInAll));
  for (const std::string& message : refused_b) {
    EXPECT_THAT(message, HasSubstr("this server's limit (--max_queued_compiles)"));
  }
  ASSERT_EQ(refusals(kTokenC).size(), 1u);
  EXPECT_THAT(refusals(kTokenC)[0], HasSubstr("(--max_queued_compiles)"));
  // A tenant at its own bound is refused by it, naming the tenant.
  std::vector<std::thread> more;
  for (int i = 0; i < kQueuePerTenant + 1; ++i) {
    more.emplace_back(compile, kTokenA, slow_request(absl::StrCat("again-", i)), 2);
  }
  for (std::thread& caller : more) caller.join();
  std::vector<std::string> refused_a = refusals(kTokenA);
  ASSERT_GE(refused_a.size(), 1u);
  EXPECT_THAT(refused_a, ::testing::Contains(AllOf(HasSubstr("tenant \"tenant-a\""),
                                                   HasSubstr("--max_queued_compiles_per_tenant"))));
}

// --max_cache_bytes_per_tenant through the real maskd, two tenants: one
// floods the cache with new grammars, the other's working set stays cached
// (its repeats are cache hits), while the flood evicts the flooder's own
// oldest grammars (maskd_cache_tenant_quota_evictions_total names it).
TEST(TenantCacheQuotaTest, AFloodEvictsOnlyTheFloodersOwnGrammars) {
  std::string dir = ::testing::TempDir() + "maskd_cache_quota_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/tokens") << "tenant-a " << kTokenA << "\ntenant-b " << kTokenB << "\n";
  auto schema = [](int i) {
    return absl::StrCat(R"({"type":"string","maxLength":)", 100 + i, "}");
  };
  struct Compiled {
    bool cache_hit = false;
    uint64_t size_bytes = 0;
  };
  auto compile = [](v1::Maskd::Stub* stub, const std::string& token, const std::string& spec) {
    grpc::ClientContext list_context;
    list_context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    v1::ListTokenizersResponse tokenizers;
    EXPECT_TRUE(stub->ListTokenizers(&list_context, {}, &tokenizers).ok());
    v1::CompileRequest request;
    request.set_tokenizer_id(tokenizers.tokenizers(0).tokenizer_id());
    request.mutable_spec()->set_json_schema(spec);
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    v1::CompileResponse response;
    const grpc::Status status = stub->Compile(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.has_grammar()) << response.error().message();
    return Compiled{response.grammar().stats().cache_hit(),
                    response.grammar().stats().size_bytes()};
  };
  auto start = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> flags = {"--auth_token_file=" + dir + "/tokens"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server = StartMaskd(flags);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  };
  // One grammar's size on this tokenizer, from a first server.
  uint64_t one = 0;
  {
    std::unique_ptr<testing::MaskdProcess> probe = start({});
    ASSERT_NE(probe, nullptr);
    auto stub = v1::Maskd::NewStub(
        grpc::CreateChannel(probe->grpc_address(), grpc::InsecureChannelCredentials()));
    one = compile(stub.get(), kTokenA, schema(0)).size_bytes;
    EXPECT_EQ(probe->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
  }
  ASSERT_GT(one, 0u);
  const uint64_t quota = 3 * one + one / 2;
  std::unique_ptr<testing::MaskdProcess> server =
      start({absl::StrCat("--max_cache_bytes_per_tenant=", quota)});
  ASSERT_NE(server, nullptr);
  auto stub = v1::Maskd::NewStub(
      grpc::CreateChannel(server->grpc_address(), grpc::InsecureChannelCredentials()));
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(compile(stub.get(), kTokenB, schema(i)).cache_hit);
  constexpr int kFlood = 10;
  for (int i = 0; i < kFlood; ++i) compile(stub.get(), kTokenA, schema(100 + i));
  const std::string metrics = FetchMetrics(server->metrics_address());
  EXPECT_GE(MetricValue(metrics, R"(maskd_cache_tenant_quota_evictions_total{tenant="tenant-a"})")
                .value_or(0),
            kFlood - 4);
  EXPECT_FALSE(
      MetricValue(metrics, R"(maskd_cache_tenant_quota_evictions_total{tenant="tenant-b"})")
          .has_value());
  EXPECT_LE(MetricValue(metrics, R"(maskd_cache_tenant_bytes{tenant="tenant-a"})").value_or(1e18),
            static_cast<double>(quota));
  // tenant-b's working set is still cached; tenant-a's oldest is not.
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(compile(stub.get(), kTokenB, schema(i)).cache_hit) << i;
  EXPECT_FALSE(compile(stub.get(), kTokenA, schema(100)).cache_hit);
  EXPECT_TRUE(compile(stub.get(), kTokenA, schema(100 + kFlood - 1)).cache_hit);
  EXPECT_EQ(server->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

}  // namespace
}  // namespace maskd::e2e
