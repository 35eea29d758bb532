// HealthService (grpc.health.v1) over a real loopback gRPC server: Check,
// NOT_FOUND for unknown services, Watch's first answer and its updates, the
// cap on concurrent Watch calls, and Shutdown ending them.
#include "service/health_service.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using ::testing::HasSubstr;

class HealthServiceTest : public ::testing::Test {
 protected:
  void Start(int max_watches) {
    health_ = std::make_unique<HealthService>(max_watches);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(health_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port, 0);
    stub_ = Health::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (health_ != nullptr) health_->Shutdown();
    if (server_ != nullptr) server_->Shutdown();
  }

  grpc::Status Check(const std::string& service, HealthCheckResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    HealthCheckRequest request;
    request.set_service(service);
    return stub_->Check(&context, request, response);
  }

  std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> Watch(grpc::ClientContext* context,
                                                                 const std::string& service) {
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    HealthCheckRequest request;
    request.set_service(service);
    return stub_->Watch(context, request);
  }

  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Health::Stub> stub_;
};

TEST_F(HealthServiceTest, CheckAnswersKnownServicesAndRefusesUnknownOnes) {
  Start(/*max_watches=*/4);
  HealthCheckResponse response;
  ASSERT_TRUE(Check("", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);

  health_->SetServingStatus("maskd.v1.Maskd", true);
  health_->SetServingStatus("other.Service", false);
  ASSERT_TRUE(Check("maskd.v1.Maskd", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(Check("other.Service", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);

  grpc::Status unknown = Check("no.such.Service", &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("'no.such.Service'"));
  EXPECT_THAT(unknown.error_message(), HasSubstr("'maskd.v1.Maskd'"));
}

TEST_F(HealthServiceTest, WatchSendsTheStatusThenEveryChangeAndEndsAtShutdown) {
  Start(/*max_watches=*/4);
  grpc::ClientContext whole_context;
  auto whole = Watch(&whole_context, "");
  grpc::ClientContext later_context;
  auto later = Watch(&later_context, "later.Service");

  HealthCheckResponse response;
  ASSERT_TRUE(whole->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(later->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVICE_UNKNOWN);

  health_->SetServingStatus("later.Service", true);
  ASSERT_TRUE(later->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  // A repeat of the same status is not a change.
  health_->SetServingStatus("later.Service", true);
  health_->SetServingStatus("", false);
  ASSERT_TRUE(whole->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);

  // Shutdown: the last word is NOT_SERVING, then the call ends with OK.
  health_->Shutdown();
  ASSERT_TRUE(later->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(later->Read(&response));
  EXPECT_TRUE(later->Finish().ok());
  EXPECT_FALSE(whole->Read(&response));
  EXPECT_TRUE(whole->Finish().ok());

  // Nothing turns SERVING after Shutdown; Check still answers.
  health_->SetServingStatus("", true);
  ASSERT_TRUE(Check("", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
}

TEST_F(HealthServiceTest, WatchCallsAreCappedAndACancelledOneFreesItsPlace) {
  Start(/*max_watches=*/1);
  auto first_context = std::make_unique<grpc::ClientContext>();
  auto first = Watch(first_context.get(), "");
  HealthCheckResponse response;
  ASSERT_TRUE(first->Read(&response));  // the first is running on the server

  grpc::ClientContext refused_context;
  auto refused = Watch(&refused_context, "");
  EXPECT_FALSE(refused->Read(&response));
  grpc::Status status = refused->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("too many health Watch calls"));

  first_context->TryCancel();
  EXPECT_EQ(first->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The server notices the cancellation within its 200 ms poll.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool admitted = false;
  while (!admitted && std::chrono::steady_clock::now() < give_up) {
    grpc::ClientContext context;
    auto again = Watch(&context, "");
    if (again->Read(&response)) {
      admitted = true;
      EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
      context.TryCancel();
    }
    again->Finish();
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(admitted);
}

}  // namespace
}  // namespace maskd
