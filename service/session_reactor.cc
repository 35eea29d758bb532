#include "service/session_reactor.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "service/bounded_text.h"
#include "service/request_parse.h"
#include "service/service_metrics.h"
#include "service/session_registry.h"

namespace maskd {
namespace {

// The client's deadline for the stream, if any (bounds inline compiles).
absl::Time StreamDeadline(const grpc::CallbackServerContext* context) {
  const auto deadline = context->deadline();
  if (deadline >= std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), BoundedText(status.message()));
}

}  // namespace

SessionReactor::SessionReactor(SessionRegistry* registry, grpc::CallbackServerContext* context,
                               const SessionEnv& env, std::string tenant)
    : registry_(registry),
      context_(context),
      env_(env),
      tenant_(std::move(tenant)),
      opened_(std::chrono::steady_clock::now()),
      last_request_(opened_),
      stream_(env, tenant_) {}

// gRPC never runs reactions inline inside StartRead/StartWrite/Finish (their
// tags are not inlineable), so calling those under mu_ cannot re-enter it.
void SessionReactor::Start(std::optional<grpc::Status> refusal, bool holds_stream_quota) {
  std::lock_guard<std::mutex> lock(mu_);
  holds_stream_quota_ = holds_stream_quota;
  if (refusal.has_value()) {
    FinishLocked(*std::move(refusal));
    return;
  }
  StartRead(&read_buffer_);
}

void SessionReactor::End(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kFinished || end_wanted_.has_value()) return;
  if (state_ == State::kReading) {
    FinishLocked(std::move(status));
  } else {
    end_wanted_ = std::move(status);  // after the step in flight is answered
  }
}

void SessionReactor::EndIfIdleSince(std::chrono::steady_clock::time_point cutoff,
                                    grpc::Status status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kReading && last_request_ < cutoff) {
      FinishLocked(std::move(status));
      return;
    }
    if (state_ != State::kWriting || write_start_ >= cutoff || stalled_) return;
    // The client has not taken the last response for the whole timeout:
    // the write never completes by itself, so cancel the call (the write
    // then fails and the stream finishes, freeing its sequences).
    stalled_ = true;
  }
  context_->TryCancel();
}

void SessionReactor::FinishLocked(grpc::Status status) {
  if (state_ == State::kFinished) return;
  state_ = State::kFinished;
  final_code_ = status.error_code();
  Finish(std::move(status));
}

void SessionReactor::OnReadDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A request that raced with End is dropped: the stream is over.
    if (state_ == State::kFinished) return;
    if (!ok) {
      // The client half-closed (or the call is gone): sequences end with it.
      FinishLocked(grpc::Status::OK);
      return;
    }
    state_ = State::kStepping;
    step_start_ = std::chrono::steady_clock::now();
    last_request_ = step_start_;
  }
  absl::Status parsed = ParseRequest(read_buffer_, &request_);
  read_buffer_.Clear();
  if (!parsed.ok()) {
    // Nothing of the request can be trusted: the stream ends, saying why.
    std::lock_guard<std::mutex> lock(mu_);
    FinishLocked(ToGrpc(absl::InvalidArgumentError(absl::StrCat(
        parsed.message(), "; the stream ends (its sequences are closed), open a new one"))));
    return;
  }
  std::vector<int> compiles = stream_.InlineCompiles(request_);
  if (!compiles.empty()) {
    AwaitCompiles(compiles);
    return;
  }
  Dispatch(/*may_run_inline=*/true);
}

void SessionReactor::AwaitCompiles(const std::vector<int>& indices) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = State::kCompiling;
    precompiled_.assign(static_cast<size_t>(request_.ops_size()), std::nullopt);
    // One more than the compiles: the loop below holds the last one, so the
    // step cannot start while compiles are still being started.
    compiles_pending_ = indices.size() + 1;
  }
  const absl::Time deadline = StreamDeadline(context_);
  auto one_done = [this] {
    bool ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready = --compiles_pending_ == 0;
      if (ready) state_ = State::kStepping;
    }
    if (ready) Dispatch(/*may_run_inline=*/false);
  };
  for (int index : indices) {
    std::shared_ptr<CompileWait> wait = env_.compiler->OpenGrammarAsync(
        request_.ops(index).open(), tenant_, deadline,
        [this, index, one_done](absl::StatusOr<OpenedGrammar> opened) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            precompiled_[index] = std::move(opened);
          }
          one_done();
        });
    bool abandon = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (wait != nullptr) waits_.push_back(wait);
      abandon = cancelled_;
    }
    if (abandon && wait != nullptr) wait->Abandon();
  }
  one_done();
}

void SessionReactor::Dispatch(bool may_run_inline) {
  // A small step costs less than handing it to the pool and back.
  if (may_run_inline && stream_.RunsInline(request_)) {
    RunStep();
  } else {
    env_.pool->Submit([this] { RunStep(); });
  }
}

void SessionReactor::RunStep() {
  response_.Clear();
  const absl::Status status = stream_.Step(request_, StreamDeadline(context_), &response_,
                                           precompiled_.empty() ? nullptr : &precompiled_);
  std::vector<std::shared_ptr<CompileWait>> waits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    precompiled_.clear();
    waits.swap(waits_);
  }
  if (!status.ok()) {
    // The request broke the stream's contract: end it instead of answering.
    std::lock_guard<std::mutex> lock(mu_);
    FinishLocked(ToGrpc(status));
    return;
  }
  SerializeResponse(response_, &write_buffer_);
  if (env_.budget != nullptr) {
    // The request and the response (and its serialized copy) are held until
    // the write is done: the budget sees them (a 1,024-mask response is
    // 16 MiB twice), so opens elsewhere are refused before RSS passes it.
    const size_t held =
        request_.SpaceUsedLong() + response_.SpaceUsedLong() + write_buffer_.Length();
    env_.budget->Release(MemoryKind::kSessions, io_charged_);
    env_.budget->Charge(MemoryKind::kSessions, held);
    io_charged_ = held;
  }
  std::lock_guard<std::mutex> lock(mu_);
  state_ = State::kWriting;
  write_start_ = std::chrono::steady_clock::now();
  StartWrite(&write_buffer_);
}

void SessionReactor::OnWriteDone(bool ok) {
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - step_start_;
  env_.metrics->ObserveStep(took.count(), static_cast<size_t>(request_.ops_size()));
  write_buffer_.Clear();
  // Protobuf's Clear keeps what a message allocated for reuse: after a
  // 1,024-op step a stream idled holding 1,024 mask strings (16 MiB with a
  // 128k vocabulary), so 200 such streams held GiBs no budget saw. A large
  // request or response is freed once answered.
  constexpr size_t kKeptMessageBytes = size_t{256} << 10;
  size_t kept = request_.SpaceUsedLong() + response_.SpaceUsedLong();
  if (kept > kKeptMessageBytes) {
    request_ = v1::StepRequest();
    response_ = v1::StepResponse();
    kept = 0;
    // Their pages lie between live sequences' allocations: glibc gives
    // them back only on a trim.
    if (env_.releaser != nullptr) env_.releaser->Note();
  }
  // What stays (up to 256 KiB per stream; 200 streams after 1,024-op steps
  // kept 140 MB) remains charged until the next step or the stream's end.
  if (env_.budget != nullptr) {
    env_.budget->Release(MemoryKind::kSessions, io_charged_);
    env_.budget->Charge(MemoryKind::kSessions, kept);
  }
  io_charged_ = kept;
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) {
    if (stalled_) {
      FinishLocked(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                "the client read no response for --session_idle_timeout: the "
                                "server closed this stream and its sequences"));
    } else {
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the response could not be sent"));
    }
    return;
  }
  if (end_wanted_.has_value()) {
    FinishLocked(*std::move(end_wanted_));
    return;
  }
  state_ = State::kReading;
  last_request_ = std::chrono::steady_clock::now();
  StartRead(&read_buffer_);
}

void SessionReactor::OnCancel() {
  std::vector<std::shared_ptr<CompileWait>> waits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    waits = waits_;
  }
  // Each abandoned wait answers CANCELLED at once; the step then runs and
  // its write fails, which finishes the stream.
  for (const std::shared_ptr<CompileWait>& wait : waits) wait->Abandon();
}

void SessionReactor::OnDone() {
  grpc::StatusCode code;
  bool holds_stream_quota;
  {
    std::lock_guard<std::mutex> lock(mu_);
    code = final_code_;
    holds_stream_quota = holds_stream_quota_;
  }
  const std::chrono::duration<double> lifetime = std::chrono::steady_clock::now() - opened_;
  env_.metrics->RecordRpc("Session", code, lifetime.count());
  if (code != grpc::StatusCode::OK) env_.metrics->CountError(static_cast<absl::StatusCode>(code));
  env_.metrics->active_streams().Decrement();
  if (env_.budget != nullptr) env_.budget->Release(MemoryKind::kSessions, io_charged_);
  io_charged_ = 0;
  if (holds_stream_quota && env_.quotas != nullptr) env_.quotas->ReleaseStream(tenant_);
  // The registry's reference goes last: `self` may destroy this object as the
  // function returns.
  std::shared_ptr<SessionReactor> self = registry_->Unregister(this);
  // The stream's sequences go with it: let the allocator give them back.
  if (env_.releaser != nullptr) env_.releaser->Note();
}

}  // namespace maskd
