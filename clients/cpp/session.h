// One Session stream: many sequences multiplexed on one bidirectional gRPC
// stream. Ops for any number of sequences are queued (Open, Advance,
// Rollback, Close) and one Step() sends them as one StepRequest and returns
// the per-sequence results of its StepResponse, in op order.
//
// Failover: the Session remembers each open sequence's spec and accepted
// tokens (SequenceLedger). When the stream ends with UNAVAILABLE (the replica
// was drained or died; or CANCELLED that the caller did not ask for, which is
// how a replica shutting down turns streams away), it starts a new stream through the same channel
// (any replica), reopens every sequence with its spec inline, replays its tokens, and resends the
// step that failed: the caller gets the same results as if nothing had happened. FailoverOptions
// turns it off and bounds the retries.
//
// Thread safety: a Session is driven by one thread at a time (queue ops,
// Step, Finish). Cancel() alone may be called from any thread, at any time,
// to abort a Step() blocked on the network (a cancelled step never fails over).
#ifndef MASKD_CLIENTS_CPP_SESSION_H_
#define MASKD_CLIENTS_CPP_SESSION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/cpp/mask.h"
#include "clients/cpp/sequence_ledger.h"
#include "clients/cpp/session_stream.h"
#include "clients/cpp/spec_book.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"
#include "maskd/v1/maskd.grpc.pb.h"

namespace maskd::client {

// One failover, as reported to FailoverOptions::on_failover.
struct FailoverEvent {
  absl::Status cause;             // the stream failure that started it (UNAVAILABLE or CANCELLED)
  int attempts = 0;               // new streams tried (1 when the first one worked)
  size_t sequences_restored = 0;  // reopened with their tokens replayed
  // Sequences that could not be rebuilt (opened by an unknown handle, or the
  // new replica refused the reopen or replay): their ops in the step that
  // failed get this error instead of a result, and they are forgotten.
  std::map<uint64_t, absl::Status> sequences_lost;
  absl::Duration duration;  // from the failure to the resent step's answer
};

struct FailoverOptions {
  // On by default; false: a stream failure is the caller's, as without it.
  bool enabled = true;
  // New streams tried per failure before giving up (the last error is then
  // Step()'s error).
  int max_attempts = 6;
  // Wait before attempt k (k = 1, 2, ...): initial_backoff * multiplier^(k-1),
  // at most max_backoff, minus a random fraction of up to `jitter` of it, so
  // that the workers of a dead replica do not all reconnect at once.
  absl::Duration initial_backoff = absl::Milliseconds(20);
  double multiplier = 2.0;
  absl::Duration max_backoff = absl::Seconds(2);
  double jitter = 0.5;
  // Limits of the restore requests (the server's --max_ops_per_request and
  // its tokens-per-op caps).
  size_t max_ops_per_request = 1024;
  size_t max_tokens_per_op = 4096;
  // Called (on the thread driving the Session) after each failover.
  std::function<void(const FailoverEvent&)> on_failover;
};

// The wait before failover attempt `attempt` (1, 2, ...) under `f`, where
// `unit_random` in [0, 1) is the jitter's draw: initial_backoff *
// multiplier^(attempt-1) capped at max_backoff, less unit_random * jitter of
// it. Session draws unit_random uniformly per attempt.
absl::Duration FailoverBackoff(const FailoverOptions& f, int attempt, double unit_random);

struct SessionOptions {
  // Deadline of the whole stream (gRPC has no per-message deadline on a
  // stream); infinite for a worker's long-lived stream.
  absl::Duration stream_deadline = absl::InfiniteDuration();
  // Slots of the stream's mask dictionary (session.proto, SessionOptions):
  // repeated masks then come as a few bytes instead of up to 16 KiB. The
  // client keeps up to this many decoded masks (16 KiB each for a 128k
  // vocabulary); the server may grant fewer. 0: off.
  uint32_t mask_dictionary_slots = 256;
  FailoverOptions failover;
};

struct OpenOptions {
  v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO;
  // How many tokens a later Rollback may undo (the server keeps that many
  // snapshots).
  uint32_t max_rollback_tokens = 0;
  // Token healing: the prompt's last tokens (session.proto,
  // OpenSequence.prompt_tail_tokens); the open's result says how many to
  // drop (SequenceResult::prompt_tokens_to_drop). Empty: no healing.
  std::vector<TokenId> prompt_tail_tokens;
  // Reasoning token budget (the grammar needs a reasoning_end_marker): the
  // marker is forced after this many tokens. Unset: none.
  std::optional<uint32_t> max_reasoning_tokens;
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

  // Token healing, on the result of an open with prompt_tail_tokens: how
  // many tokens to drop from the prompt's end, their bytes (the output
  // starts with them) and the healed grammar's handle (empty when nothing
  // was healed).
  bool has_healing() const { return proto_.has_healing(); }
  uint32_t prompt_tokens_to_drop() const { return proto_.healing().prompt_tokens_to_drop(); }
  const std::string& healed_bytes() const { return proto_.healing().removed_bytes(); }
  const std::string& healed_handle() const { return proto_.healing().healed_handle(); }

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
  // `book`: the compile requests of handles the client compiled (may be null:
  // then only sequences opened inline survive a failover).
  Session(v1::Maskd::Stub* stub, const SessionOptions& options,
          std::shared_ptr<const SpecBook> book = nullptr);
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
  // failure (server gone and failover off or exhausted, cancelled, deadline,
  // malformed response) is the error, and every later Step() returns it too.
  absl::StatusOr<std::vector<SequenceResult>> Step();

  // Sends `request` as is (its request_id replaced by the next one, and on
  // the first request of a stream its session_options set from
  // SessionOptions) and returns the raw response: for callers that build
  // requests themselves. Masks in it may be dictionary_refs: the dictionary
  // is kept up to date all the same, and dictionary_mask(slot) resolves them.
  // Fails over like Step(); a sequence lost in a failover gets its error as
  // the result's `error`.
  absl::StatusOr<v1::StepResponse> Send(v1::StepRequest request);

  // Dictionary slots the server granted on the current stream (known after
  // the first Step or Send; 0 before, or when off).
  uint32_t dictionary_slots() const { return stream_->dictionary_slots(); }
  // The mask in a dictionary slot of the current stream; null when the slot
  // is empty or out of range.
  std::shared_ptr<const TokenMask> dictionary_mask(uint32_t slot) const {
    return stream_->dictionary_mask(slot);
  }

  // Half-closes the stream and returns the server's final status (OK after a
  // clean end). Idempotent.
  absl::Status Finish();

  // Aborts the stream from any thread; a blocked Step() returns CANCELLED.
  void Cancel();

  // Failovers completed so far (each a new stream with every sequence rebuilt).
  int failovers() const { return failovers_; }
  // The sequences open as far as the client knows, with their accepted tokens.
  const SequenceLedger& ledger() const { return ledger_; }

  // Bytes of the last request and response messages (serialized sizes).
  size_t last_request_bytes() const { return stream_->last_request_bytes(); }
  size_t last_response_bytes() const { return stream_->last_response_bytes(); }

 private:
  std::unique_ptr<SessionStream> NewStream() const;
  // Sends on the current stream, failing over on UNAVAILABLE.
  absl::StatusOr<v1::StepResponse> SendWithFailover(
      v1::StepRequest request, std::vector<std::shared_ptr<const TokenMask>>* resolved);
  // Replaces the stream and rebuilds every sequence in the ledger on it;
  // `lost` gets the sequences that could not be. A stream failure is the error.
  absl::Status Restore(std::map<uint64_t, absl::Status>* lost);
  // Sends `request` without the ops of `lost` sequences and puts their
  // errors back in op order.
  absl::StatusOr<v1::StepResponse> SendSkippingLost(
      const v1::StepRequest& request, const std::map<uint64_t, absl::Status>& lost,
      std::vector<std::shared_ptr<const TokenMask>>* resolved);
  absl::Duration Backoff(int attempt);
  bool ReplicaWentAway(const absl::Status& status) const;

  v1::Maskd::Stub* const stub_;
  const SessionOptions options_;
  const absl::Time deadline_;  // of every stream of this session
  SequenceLedger ledger_;
  // Guards the swap of stream_ against Cancel() from another thread.
  std::mutex stream_mutex_;
  std::unique_ptr<SessionStream> stream_;
  std::atomic<bool> cancelled_{false};
  absl::Status broken_;  // a failure failover did not (or may not) mend
  v1::StepRequest pending_;
  int failovers_ = 0;
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SESSION_H_
