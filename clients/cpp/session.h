// One Session stream: many sequences multiplexed on one bidirectional gRPC
// stream. Ops for any number of sequences are queued (Open, Advance,
// Rollback, Close) and one Step() sends them as one StepRequest and returns
// the per-sequence results of its StepResponse, in op order.
//
// Thread safety: a Session is driven by one thread at a time (queue ops,
// Step, Finish). Cancel() alone may be called from any thread, at any time,
// to abort a Step() blocked on the network.
#ifndef MASKD_CLIENTS_CPP_SESSION_H_
#define MASKD_CLIENTS_CPP_SESSION_H_

#include <cstdint>
#include <memory>
#include <span>
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

struct SessionOptions {
  // Deadline of the whole stream (gRPC has no per-message deadline on a
  // stream); infinite for a worker's long-lived stream.
  absl::Duration stream_deadline = absl::InfiniteDuration();
  // Slots of the stream's mask dictionary (session.proto, SessionOptions):
  // repeated masks then come as a few bytes instead of up to 16 KiB. The
  // client keeps up to this many decoded masks (16 KiB each for a 128k
  // vocabulary); the server may grant fewer. 0: off.
  uint32_t mask_dictionary_slots = 256;
};

struct OpenOptions {
  v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO;
  // How many tokens a later Rollback may undo (the server keeps that many
  // snapshots).
  uint32_t max_rollback_tokens = 0;
};

struct AdvanceOptions {
  // Undo this many accepted tokens before the new ones.
  uint32_t rollback_tokens = 0;
  // Speculative tokens verified after the committed ones, kept while allowed.
  std::vector<TokenId> draft_tokens;
  // Skip the mask in the response.
  bool omit_mask = false;
};

// The outcome of one op. Owns its wire message; the accessors read it. A
// mask that came as a dictionary reference (or was stored in the dictionary)
// is held decoded, shared with the Session's dictionary.
class SequenceResult {
 public:
  explicit SequenceResult(v1::SequenceResult proto,
                          std::shared_ptr<const TokenMask> resolved_mask = nullptr)
      : proto_(std::move(proto)), resolved_mask_(std::move(resolved_mask)) {}

  uint64_t sequence_id() const { return proto_.sequence_id(); }
  // The per-sequence error (OK when the op succeeded). Failures never end the
  // stream or affect other sequences.
  absl::Status status() const;
  bool ok() const { return !proto_.has_error(); }

  bool has_mask() const { return proto_.has_mask(); }
  // The mask as sent (any encoding, possibly a dictionary_ref); empty
  // message when !has_mask().
  const v1::Mask& wire_mask() const { return proto_.mask(); }
  // The mask as a bitmask, dictionary references resolved; InvalidArgument
  // when there is none or it is malformed.
  absl::StatusOr<TokenMask> DecodeMask() const;
  // The decoded mask shared with the dictionary, without a copy: set when
  // the mask came as a dictionary_ref or was stored; null otherwise.
  const std::shared_ptr<const TokenMask>& dictionary_mask() const { return resolved_mask_; }
  // Tests one token without decoding; false when there is no mask.
  bool Allows(TokenId token) const {
    if (resolved_mask_ != nullptr) return resolved_mask_->Allows(token);
    return has_mask() && MaskAllows(proto_.mask(), token);
  }

  v1::StopStatus stop() const { return proto_.stop(); }
  bool may_stop() const {
    return proto_.stop() == v1::STOP_STATUS_MAY_STOP || proto_.stop() == v1::STOP_STATUS_MUST_STOP;
  }
  bool must_stop() const { return proto_.stop() == v1::STOP_STATUS_MUST_STOP; }

  // Forced continuation (empty when the next byte is not forced).
  const std::string& jump_forward_bytes() const { return proto_.jump_forward().bytes(); }
  std::span<const TokenId> jump_forward_tokens() const {
    return {proto_.jump_forward().token_ids().data(),
            static_cast<size_t>(proto_.jump_forward().token_ids_size())};
  }

  uint32_t tokens_accepted() const { return proto_.tokens_accepted(); }
  uint32_t drafts_accepted() const { return proto_.drafts_accepted(); }

  const v1::SequenceResult& proto() const { return proto_; }

 private:
  v1::SequenceResult proto_;
  std::shared_ptr<const TokenMask> resolved_mask_;
};

class Session {
 public:
  // Starts the stream (MaskdClient::StartSession is the usual way in).
  Session(v1::Maskd::Stub* stub, const SessionOptions& options);
  // Cancels the stream if it was not finished.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Queue one op for the next Step(). Sequence ids are the caller's; a
  // sequence may take one op per step (the server answers a second with
  // INVALID_ARGUMENT on that sequence).
  void Open(uint64_t sequence_id, std::string handle, const OpenOptions& options = {});
  // Opens with an inline compile request: no prior Compile on this replica.
  void OpenInline(uint64_t sequence_id, v1::CompileRequest compile,
                  const OpenOptions& options = {});
  void Advance(uint64_t sequence_id, std::span<const TokenId> tokens,
               const AdvanceOptions& options = {});
  void Rollback(uint64_t sequence_id, uint32_t tokens);
  void Close(uint64_t sequence_id);
  size_t pending_ops() const { return pending_.ops_size(); }

  // Sends the queued ops as one request (even none) and waits for its
  // response. The results are in op order, one per op. A stream-level
  // failure (server gone, cancelled, deadline, malformed response) is the
  // error, and every later Step() returns it too.
  absl::StatusOr<std::vector<SequenceResult>> Step();

  // Sends `request` as is (its request_id replaced by the next one, and on
  // the first request its session_options set from SessionOptions) and
  // returns the raw response: for callers that build requests themselves.
  // Masks in it may be dictionary_refs: the dictionary is kept up to date
  // all the same, and dictionary_mask(slot) resolves them.
  absl::StatusOr<v1::StepResponse> Send(v1::StepRequest request);

  // Dictionary slots the server granted (known after the first Step or
  // Send; 0 before, or when off).
  uint32_t dictionary_slots() const { return static_cast<uint32_t>(dictionary_.size()); }
  // The mask in a dictionary slot; null when the slot is empty or out of
  // range.
  std::shared_ptr<const TokenMask> dictionary_mask(uint32_t slot) const {
    return slot < dictionary_.size() ? dictionary_[slot] : nullptr;
  }

  // Half-closes the stream and returns the server's final status (OK after a
  // clean end). Idempotent.
  absl::Status Finish();

  // Aborts the stream from any thread; a blocked Step() returns CANCELLED.
  void Cancel() { context_.TryCancel(); }

  // Bytes of the last request and response messages (serialized sizes).
  size_t last_request_bytes() const { return last_request_bytes_; }
  size_t last_response_bytes() const { return last_response_bytes_; }

 private:
  // Ends the stream after a failed read/write and remembers why.
  absl::Status Fail(const std::string& what);
  // Ends the stream for a response that breaks the protocol.
  absl::Status ProtocolFailure(absl::Status why);
  // Applies the response's dictionary stores and resolves its references,
  // in result order: (*resolved)[i] is result i's decoded mask when it came
  // as a reference or was stored, else null. An error is a protocol failure.
  absl::Status ApplyDictionary(const v1::StepResponse& response,
                               std::vector<std::shared_ptr<const TokenMask>>* resolved);
  absl::StatusOr<v1::StepResponse> SendResolving(
      v1::StepRequest request, std::vector<std::shared_ptr<const TokenMask>>* resolved);

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>> stream_;
  const uint32_t wanted_dictionary_slots_;
  // The mask dictionary: as many slots as the server granted.
  std::vector<std::shared_ptr<const TokenMask>> dictionary_;
  v1::StepRequest pending_;
  uint64_t next_request_id_ = 1;
  absl::Status broken_;         // why Step fails from now on (OK while usable)
  bool finished_ = false;       // stream_->Finish() was called
  absl::Status finish_status_;  // what it returned
  size_t last_request_bytes_ = 0;
  size_t last_response_bytes_ = 0;
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SESSION_H_
