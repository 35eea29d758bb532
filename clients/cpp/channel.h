// Connecting to maskd: one place that sets the message size limits and the
// default deadline every client call uses.
#ifndef MASKD_CLIENTS_CPP_CHANNEL_H_
#define MASKD_CLIENTS_CPP_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace maskd::client {

struct ChannelOptions {
  // gRPC target, e.g. "127.0.0.1:50051" or "dns:///maskd-headless:50051".
  std::string target = "127.0.0.1:50051";
  // Largest message sent or received. Masks are at most ~16 KiB per sequence,
  // but a step over many sequences or a tokenizer upload is megabytes; keep
  // this at or below the server's --max_message_bytes.
  int max_message_bytes = 64 << 20;
  // Deadline of each unary RPC (RegisterTokenizer, ListTokenizers, Compile,
  // health). Session streams take theirs from SessionOptions.
  absl::Duration rpc_deadline = absl::Seconds(30);
  // A connection of its own instead of sharing one with other channels to the
  // same target (gRPC pools connections per process by default): benchmarks
  // use it so S streams are S TCP connections, as S workers would be.
  bool own_connection = false;
  // gRPC load-balancing policy, e.g. "round_robin" to spread streams over
  // every address of an `ipv4:a,b,c` list or a headless DNS name (and to go
  // on with the others when one dies); empty: gRPC's default (pick_first).
  std::string load_balancing_policy;
};

// Insecure (plaintext) channel: maskd serves inside a cluster or on loopback.
std::shared_ptr<grpc::Channel> CreateChannel(const ChannelOptions& options);

// A context whose deadline is `timeout` from now (none when infinite).
std::unique_ptr<grpc::ClientContext> ContextWithTimeout(absl::Duration timeout);

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_CHANNEL_H_
