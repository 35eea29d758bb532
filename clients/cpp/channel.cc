#include "clients/cpp/channel.h"

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace maskd::client {

std::shared_ptr<grpc::Channel> CreateChannel(const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(options.max_message_bytes);
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  if (options.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.load_balancing_policy.empty()) {
    args.SetLoadBalancingPolicyName(options.load_balancing_policy);
  }
  return grpc::CreateCustomChannel(options.target, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<grpc::ClientContext> ContextWithTimeout(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (timeout != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  return context;
}

}  // namespace maskd::client
