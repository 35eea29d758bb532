// Connecting to maskd: one place that sets the message size limits and the
// default deadline every client call uses.
#ifndef MASKD_CLIENTS_CPP_CHANNEL_H_
#define MASKD_CLIENTS_CPP_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
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

  // TLS: set tls_ca_file (PEM bundle that signed the server's certificate)
  // to connect over TLS; empty: plaintext. For mutual TLS also give this
  // client's certificate chain and key. tls_server_name overrides the name
  // checked against the server certificate (default: the target's host).
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  // Sent as `authorization: Bearer TOKEN` on every call (health included)
  // when the server has an --auth_token_file; empty: none.
  std::string bearer_token;
};

// A channel to maskd: plaintext, or TLS/mutual TLS per the options, with the
// bearer token attached to every call. Fails only when a TLS file cannot be
// read (NOT_FOUND naming it) or cert and key are not given together.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannelOrError(const ChannelOptions& options);

// CreateChannelOrError for callers whose options cannot fail (no TLS
// files); aborts with the message otherwise.
std::shared_ptr<grpc::Channel> CreateChannel(const ChannelOptions& options);

// A context whose deadline is `timeout` from now (none when infinite).
std::unique_ptr<grpc::ClientContext> ContextWithTimeout(absl::Duration timeout);

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_CHANNEL_H_
