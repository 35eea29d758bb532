// The maskd C++ client: tokenizers, Compile and health as plain calls that
// return absl::Status(Or) with the server's code and message, and Session
// streams (session.h) for the per-step masks.
//
// Thread safety: a MaskdClient may be used from any number of threads at
// once (it holds only the channel and stubs, which are thread-safe); each
// Session it starts belongs to one thread at a time.
#ifndef MASKD_CLIENTS_CPP_CLIENT_H_
#define MASKD_CLIENTS_CPP_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "clients/cpp/channel.h"
#include "clients/cpp/session.h"
#include "clients/cpp/spec_book.h"
#include "maskd/v1/maskd.grpc.pb.h"

namespace maskd::client {

struct CompileResult {
  std::string handle;
  std::string tokenizer_id;
  v1::CompileStats stats;
};

// grpc.health.v1 serving states (same numbers as the protocol).
enum class HealthState { kUnknown = 0, kServing = 1, kNotServing = 2, kServiceUnknown = 3 };
const char* HealthStateName(HealthState state);

class MaskdClient {
 public:
  explicit MaskdClient(const ChannelOptions& options);
  // Over an existing channel (e.g. shared with other stubs).
  MaskdClient(std::shared_ptr<grpc::Channel> channel, absl::Duration rpc_deadline);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // RegisterTokenizer with the request as given (files or a preloaded name).
  absl::StatusOr<v1::RegisterTokenizerResponse> RegisterTokenizer(
      const v1::RegisterTokenizerRequest& request) const;
  // Looks up a tokenizer preloaded on the server by name.
  absl::StatusOr<v1::TokenizerInfo> RegisterPreloaded(std::string name) const;
  absl::StatusOr<std::vector<v1::TokenizerInfo>> ListTokenizers() const;
  // Drops this caller's (tenant's) registration; true when the tokenizer
  // left the server (maskd.proto).
  absl::StatusOr<bool> UnregisterTokenizer(const std::string& tokenizer_id) const;
  // The tokenizer whose name or id is `name_or_id`; NotFound naming the ones
  // the server has otherwise.
  absl::StatusOr<v1::TokenizerInfo> FindTokenizer(std::string_view name_or_id) const;

  // A spec error (malformed, unsupported, too costly) is the server's
  // per-spec error as a status, its source location in the payload (see
  // status.h); call-level failures are the RPC's status.
  absl::StatusOr<CompileResult> Compile(const v1::CompileRequest& request) const;
  absl::StatusOr<CompileResult> Compile(std::string tokenizer_id, v1::ConstraintSpec spec,
                                        v1::CompileOptions options = {}) const;

  // Standard gRPC health check of `service` ("" = the server as a whole).
  // The RPC's failure (unreachable, NOT_FOUND for an unknown service) is the
  // error.
  absl::StatusOr<HealthState> CheckHealth(const std::string& service = "") const;

  // A Session on this client's channel. Sequences opened by a handle this
  // client compiled survive a failover (the client remembers the spec).
  std::unique_ptr<Session> StartSession(const SessionOptions& options = {}) const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Maskd::Stub> stub_;
  absl::Duration rpc_deadline_;
  std::shared_ptr<SpecBook> spec_book_ = std::make_shared<SpecBook>();
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_CLIENT_H_
