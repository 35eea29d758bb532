#include "clients/cpp/channel.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/client_interceptor.h"

namespace maskd::client {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", what, " ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return std::move(contents).str();
}

// Adds `authorization: Bearer TOKEN` to every call's initial metadata. An
// interceptor rather than call credentials, which gRPC sends only over TLS:
// a sidecar on a Unix socket may use tokens without TLS.
class BearerTokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerTokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenInterceptorFactory(const std::string& token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&header_);
  }

 private:
  // Outlives every interceptor: the channel owns the factory.
  const std::string header_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannelOrError(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(options.max_message_bytes);
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  if (options.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.load_balancing_policy.empty()) {
    args.SetLoadBalancingPolicyName(options.load_balancing_policy);
  }

  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("a TLS client certificate and its key go together");
  }
  if (!options.tls_cert_file.empty() && options.tls_ca_file.empty()) {
    return absl::InvalidArgumentError("a TLS client certificate needs the server's CA too");
  }
  if (!options.tls_ca_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    absl::StatusOr<std::string> ca = ReadFile(options.tls_ca_file, "TLS CA file");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    if (!options.tls_cert_file.empty()) {
      absl::StatusOr<std::string> cert = ReadFile(options.tls_cert_file, "TLS certificate file");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadFile(options.tls_key_file, "TLS key file");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *std::move(cert);
      ssl.pem_private_key = *std::move(key);
    }
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  }
  if (options.bearer_token.empty()) {
    return grpc::CreateCustomChannel(options.target, credentials, args);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerTokenInterceptorFactory>(options.bearer_token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(options.target, credentials, args,
                                                                 std::move(interceptors));
}

std::shared_ptr<grpc::Channel> CreateChannel(const ChannelOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = CreateChannelOrError(options);
  if (!channel.ok()) {
    std::fprintf(stderr, "maskd client: %s\n", std::string(channel.status().message()).c_str());
    std::abort();
  }
  return *std::move(channel);
}

std::unique_ptr<grpc::ClientContext> ContextWithTimeout(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (timeout != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  return context;
}

}  // namespace maskd::client
