// One Session RPC (one bidirectional gRPC stream to one replica) and its mask
// dictionary: sends a StepRequest, reads its StepResponse, checks it against
// the protocol and resolves dictionary references. Session (session.h) builds
// the requests on top and replaces the stream when a replica goes away.
//
// Thread safety: one thread drives it; Cancel() may be called from any thread.
#ifndef MASKD_CLIENTS_CPP_SESSION_STREAM_H_
#define MASKD_CLIENTS_CPP_SESSION_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/cpp/mask.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"
#include "maskd/v1/maskd.grpc.pb.h"

namespace maskd::client {

class SessionStream {
 public:
  // Starts the stream; `deadline` is absolute (absl::InfiniteFuture(): none).
  SessionStream(v1::Maskd::Stub* stub, absl::Time deadline, uint32_t wanted_dictionary_slots);
  // Cancels the stream if it was not finished.
  ~SessionStream();
  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // Sends `request` (its request_id replaced by the stream's next one, and
  // on the first request its session_options set) and returns the response;
  // (*resolved)[i] is result i's decoded mask when it came as a dictionary
  // reference or was stored, else null. A stream-level failure is the error,
  // and every later call returns it too.
  absl::StatusOr<v1::StepResponse> SendResolving(
      v1::StepRequest request, std::vector<std::shared_ptr<const TokenMask>>* resolved);

  uint32_t dictionary_slots() const { return static_cast<uint32_t>(dictionary_.size()); }
  std::shared_ptr<const TokenMask> dictionary_mask(uint32_t slot) const {
    return slot < dictionary_.size() ? dictionary_[slot] : nullptr;
  }

  // Half-closes the stream and returns the server's final status. Idempotent.
  absl::Status Finish();
  void Cancel() { context_.TryCancel(); }

  size_t last_request_bytes() const { return last_request_bytes_; }
  size_t last_response_bytes() const { return last_response_bytes_; }

 private:
  // Ends the stream after a failed read/write and remembers why.
  absl::Status Fail(const std::string& what);
  // Ends the stream for a response that breaks the protocol.
  absl::Status ProtocolFailure(absl::Status why);
  absl::Status ApplyDictionary(const v1::StepResponse& response,
                               std::vector<std::shared_ptr<const TokenMask>>* resolved);

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>> stream_;
  const uint32_t wanted_dictionary_slots_;
  // The mask dictionary: as many slots as the server granted.
  std::vector<std::shared_ptr<const TokenMask>> dictionary_;
  uint64_t next_request_id_ = 1;
  absl::Status broken_;         // why sends fail from now on (OK while usable)
  bool finished_ = false;       // stream_->Finish() was called
  absl::Status finish_status_;  // what it returned
  size_t last_request_bytes_ = 0;
  size_t last_response_bytes_ = 0;
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SESSION_STREAM_H_
