#include "clients/cpp/session.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/status.h"

namespace maskd::client {

absl::Status SequenceResult::status() const {
  return proto_.has_error() ? ErrorToStatus(proto_.error()) : absl::OkStatus();
}

absl::StatusOr<TokenMask> SequenceResult::DecodeMask() const {
  if (resolved_mask_ != nullptr) return *resolved_mask_;
  if (!proto_.has_mask()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sequence ", proto_.sequence_id(), " has no mask in this result"));
  }
  return TokenMask::Decode(proto_.mask());
}

Session::Session(v1::Maskd::Stub* stub, const SessionOptions& options,
                 std::shared_ptr<const SpecBook> book)
    : stub_(stub),
      options_(options),
      deadline_(options.stream_deadline == absl::InfiniteDuration()
                    ? absl::InfiniteFuture()
                    : absl::Now() + options.stream_deadline),
      ledger_(std::move(book)),
      stream_(NewStream()) {}

Session::~Session() = default;

namespace {

void SetOpenOptions(const OpenOptions& options, v1::OpenSequence& open) {
  open.set_mask_encoding(options.encoding);
  open.set_max_rollback_tokens(options.max_rollback_tokens);
  open.mutable_prompt_tail_tokens()->Add(options.prompt_tail_tokens.begin(),
                                         options.prompt_tail_tokens.end());
  if (options.max_reasoning_tokens.has_value()) {
    open.set_max_reasoning_tokens(*options.max_reasoning_tokens);
  }
}

}  // namespace

std::unique_ptr<SessionStream> Session::NewStream() const {
  return std::make_unique<SessionStream>(stub_, deadline_, options_.mask_dictionary_slots);
}

void Session::Open(uint64_t sequence_id, std::string handle, const OpenOptions& options) {
  v1::SequenceOp* op = pending_.add_ops();
  op->set_sequence_id(sequence_id);
  v1::OpenSequence* open = op->mutable_open();
  open->set_handle(std::move(handle));
  SetOpenOptions(options, *open);
}

void Session::OpenInline(uint64_t sequence_id, v1::CompileRequest compile,
                         const OpenOptions& options) {
  v1::SequenceOp* op = pending_.add_ops();
  op->set_sequence_id(sequence_id);
  v1::OpenSequence* open = op->mutable_open();
  *open->mutable_compile() = std::move(compile);
  SetOpenOptions(options, *open);
}

void Session::Advance(uint64_t sequence_id, std::span<const TokenId> tokens,
                      const AdvanceOptions& options) {
  v1::SequenceOp* op = pending_.add_ops();
  op->set_sequence_id(sequence_id);
  v1::AdvanceSequence* advance = op->mutable_advance();
  advance->set_rollback_tokens(options.rollback_tokens);
  advance->mutable_tokens()->Add(tokens.begin(), tokens.end());
  advance->mutable_draft_tokens()->Add(options.draft_tokens.begin(), options.draft_tokens.end());
  advance->set_omit_mask(options.omit_mask);
}

void Session::Rollback(uint64_t sequence_id, uint32_t tokens) {
  AdvanceOptions options;
  options.rollback_tokens = tokens;
  Advance(sequence_id, {}, options);
}

void Session::Close(uint64_t sequence_id) {
  v1::SequenceOp* op = pending_.add_ops();
  op->set_sequence_id(sequence_id);
  op->mutable_close();
}

void Session::Cancel() {
  cancelled_ = true;
  std::lock_guard<std::mutex> lock(stream_mutex_);
  stream_->Cancel();
}

absl::Duration FailoverBackoff(const FailoverOptions& f, int attempt, double unit_random) {
  const double scale = std::pow(std::max(f.multiplier, 1.0), std::max(attempt, 1) - 1);
  const absl::Duration wait = std::min(f.initial_backoff * scale, f.max_backoff);
  // Full-range jitter over the last `jitter` fraction: workers that lost the
  // same replica spread their reconnects instead of arriving together.
  return wait * (1.0 - std::clamp(f.jitter, 0.0, 1.0) * std::clamp(unit_random, 0.0, 1.0));
}

absl::Duration Session::Backoff(int attempt) {
  thread_local absl::BitGen random;
  return FailoverBackoff(options_.failover, attempt, absl::Uniform(random, 0.0, 1.0));
}

absl::Status Session::Restore(std::map<uint64_t, absl::Status>* lost) {
  {
    std::unique_ptr<SessionStream> fresh = NewStream();
    std::lock_guard<std::mutex> lock(stream_mutex_);
    if (cancelled_) fresh->Cancel();
    stream_.swap(fresh);
  }  // the failed stream ends here (it was finished when it failed)
  const std::vector<v1::StepRequest> requests = ledger_.RestoreRequests(
      options_.failover.max_ops_per_request, options_.failover.max_tokens_per_op, lost);
  std::vector<uint64_t> opened_then_lost;
  for (const v1::StepRequest& request : requests) {
    std::vector<std::shared_ptr<const TokenMask>> ignored;
    absl::StatusOr<v1::StepResponse> response = stream_->SendResolving(request, &ignored);
    if (!response.ok()) return response.status();
    for (const v1::SequenceResult& result : response->results()) {
      if (!result.has_error() || lost->contains(result.sequence_id())) continue;
      const absl::Status why = ErrorToStatus(result.error());
      (*lost)[result.sequence_id()] = absl::Status(
          why.code(), absl::StrCat("failover: rebuilding sequence ", result.sequence_id(),
                                   " on another replica failed: ", why.message()));
      if (!request.ops(0).has_open()) opened_then_lost.push_back(result.sequence_id());
    }
  }
  // A sequence whose replay failed is open on the new replica: close it so
  // that the caller may reuse its id.
  if (!opened_then_lost.empty()) {
    v1::StepRequest close;
    for (uint64_t id : opened_then_lost) {
      v1::SequenceOp* op = close.add_ops();
      op->set_sequence_id(id);
      op->mutable_close();
    }
    std::vector<std::shared_ptr<const TokenMask>> ignored;
    absl::StatusOr<v1::StepResponse> response = stream_->SendResolving(close, &ignored);
    if (!response.ok()) return response.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::StepResponse> Session::SendSkippingLost(
    const v1::StepRequest& request, const std::map<uint64_t, absl::Status>& lost,
    std::vector<std::shared_ptr<const TokenMask>>* resolved) {
  v1::StepRequest kept = request;
  kept.clear_ops();
  std::vector<int> kept_index(request.ops_size(), -1);
  for (int i = 0; i < request.ops_size(); ++i) {
    const v1::SequenceOp& op = request.ops(i);
    // A sequence opened by this very request was not open before: it is
    // never lost.
    if (!op.has_open() && lost.contains(op.sequence_id())) continue;
    kept_index[i] = kept.ops_size();
    *kept.add_ops() = op;
  }
  std::vector<std::shared_ptr<const TokenMask>> kept_resolved;
  absl::StatusOr<v1::StepResponse> response = stream_->SendResolving(kept, &kept_resolved);
  if (!response.ok()) return response.status();
  v1::StepResponse merged = *response;
  merged.clear_results();
  resolved->assign(request.ops_size(), nullptr);
  for (int i = 0; i < request.ops_size(); ++i) {
    if (kept_index[i] >= 0) {
      *merged.add_results() = std::move(*response->mutable_results(kept_index[i]));
      (*resolved)[i] = std::move(kept_resolved[kept_index[i]]);
      continue;
    }
    const absl::Status& why = lost.at(request.ops(i).sequence_id());
    v1::SequenceResult* result = merged.add_results();
    result->set_sequence_id(request.ops(i).sequence_id());
    result->mutable_error()->set_code(static_cast<int32_t>(why.code()));
    result->mutable_error()->set_message(std::string(why.message()));
  }
  return merged;
}

// UNAVAILABLE: the replica died or drained. CANCELLED that this client did
// not ask for: a replica shutting down cancels the streams it still has when
// its grace ends, and any stream that reaches it after it stopped accepting.
bool Session::ReplicaWentAway(const absl::Status& status) const {
  return status.code() == absl::StatusCode::kUnavailable ||
         (status.code() == absl::StatusCode::kCancelled && !cancelled_);
}

absl::StatusOr<v1::StepResponse> Session::SendWithFailover(
    v1::StepRequest request, std::vector<std::shared_ptr<const TokenMask>>* resolved) {
  if (!broken_.ok()) return broken_;
  const FailoverOptions& f = options_.failover;
  if (!f.enabled) {  // nothing to remember: no copy of the request, no ledger
    absl::StatusOr<v1::StepResponse> response =
        stream_->SendResolving(std::move(request), resolved);
    if (!response.ok()) broken_ = response.status();
    return response;
  }
  absl::StatusOr<v1::StepResponse> response = stream_->SendResolving(request, resolved);
  if (response.ok()) {
    ledger_.Apply(request, *response);
    return response;
  }
  if (cancelled_ || response.status().code() != absl::StatusCode::kUnavailable) {
    broken_ = response.status();
    return broken_;
  }
  const absl::Time started = absl::Now();
  FailoverEvent event;
  event.cause = response.status();
  absl::Status last = response.status();
  for (int attempt = 1; attempt <= f.max_attempts; ++attempt) {
    event.attempts = attempt;
    absl::SleepFor(Backoff(attempt));
    std::map<uint64_t, absl::Status> lost;
    const size_t sequences = ledger_.entries().size();
    absl::Status restored = Restore(&lost);
    if (restored.ok()) {
      absl::StatusOr<v1::StepResponse> resent = SendSkippingLost(request, lost, resolved);
      if (resent.ok()) {
        for (const auto& [id, why] : lost) ledger_.Forget(id);
        ledger_.Apply(request, *resent);
        ++failovers_;
        event.sequences_restored = sequences - lost.size();
        event.sequences_lost = std::move(lost);
        event.duration = absl::Now() - started;
        if (f.on_failover) f.on_failover(event);
        return resent;
      }
      last = resent.status();
    } else {
      last = restored;
    }
    if (!ReplicaWentAway(last)) break;
  }
  broken_ = absl::Status(last.code(), absl::StrCat("failover gave up after ", event.attempts,
                                                   " new streams (the stream had failed with: ",
                                                   event.cause.message(), "): ", last.message()));
  return broken_;
}

absl::StatusOr<v1::StepResponse> Session::Send(v1::StepRequest request) {
  std::vector<std::shared_ptr<const TokenMask>> resolved;
  return SendWithFailover(std::move(request), &resolved);
}

absl::StatusOr<std::vector<SequenceResult>> Session::Step() {
  v1::StepRequest request;
  request.Swap(&pending_);
  std::vector<std::shared_ptr<const TokenMask>> resolved;
  absl::StatusOr<v1::StepResponse> response = SendWithFailover(std::move(request), &resolved);
  if (!response.ok()) return response.status();
  std::vector<SequenceResult> results;
  results.reserve(response->results_size());
  for (int i = 0; i < response->results_size(); ++i) {
    results.emplace_back(std::move(*response->mutable_results(i)), std::move(resolved[i]));
  }
  return results;
}

absl::Status Session::Finish() { return stream_->Finish(); }

}  // namespace maskd::client
