#include "service/session_call.h"

#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "service/service_metrics.h"
#include "service/session_handler.h"

namespace maskd {
namespace {

// The client's deadline for the stream, if any (bounds inline compiles).
absl::Time StreamDeadline(const grpc::ServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline >= std::chrono::system_clock::now() + std::chrono::hours(24 * 365)) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

}  // namespace

SessionCall::SessionCall(SessionHandler* handler, grpc::ServerCompletionQueue* queue,
                         const SessionEnv& env)
    : handler_(handler), queue_(queue), env_(env), io_(&context_), stream_(env) {}

// The async API completes operations only through the queue, never inside
// the call that starts them, so starting one under mu_ cannot re-enter it.
void SessionCall::Request(SessionAsyncService* service) {
  std::lock_guard<std::mutex> lock(mu_);
  // Must precede the request; fires only if a stream is accepted.
  context_.AsyncNotifyWhenDone(&done_tag_);
  pending_ = 1;
  service->RequestSession(&context_, &io_, queue_, queue_, &accepted_tag_);
}

void SessionCall::OnEvent(Event event, bool ok) {
  switch (event) {
    case Event::kAccepted:
      OnAccepted(ok);
      return;
    case Event::kRead:
      OnRead(ok);
      return;
    case Event::kWritten:
      OnWritten(ok);
      return;
    case Event::kFinished:
    case Event::kDone:
      break;
  }
  bool release;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --pending_;
    release = ReleasableLocked();
  }
  if (release) Release();
}

void SessionCall::OnAccepted(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --pending_;
    if (ok) {
      accepted_ = true;
      ++pending_;  // the done notification is armed now
      opened_ = std::chrono::steady_clock::now();
      last_request_ = opened_;
    } else {
      state_ = State::kFinished;  // the server is shutting down; no stream came
    }
  }
  if (!ok) {
    Release();
    return;
  }
  // Outside mu_: the handler takes its own lock and may call End.
  std::optional<grpc::Status> refusal = handler_->Accepted(queue_);
  std::lock_guard<std::mutex> lock(mu_);
  if (refusal.has_value()) {
    FinishLocked(*std::move(refusal));
  } else if (end_wanted_.has_value()) {
    FinishLocked(*std::move(end_wanted_));
  } else {
    StartReadLocked();
  }
}

void SessionCall::End(grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kFinished || end_wanted_.has_value()) return;
  if (state_ == State::kReading) {
    // Finishing with a Read outstanding is allowed; the Read then fails.
    FinishLocked(std::move(status));
  } else {
    end_wanted_ = std::move(status);  // once accepted, or after the step in flight
  }
}

void SessionCall::EndIfIdleSince(std::chrono::steady_clock::time_point cutoff,
                                 grpc::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kReading && last_request_ < cutoff) FinishLocked(std::move(status));
}

void SessionCall::StartReadLocked() {
  state_ = State::kReading;
  ++pending_;
  io_.Read(&request_, &read_tag_);
}

void SessionCall::FinishLocked(grpc::Status status) {
  if (state_ == State::kFinished) return;
  state_ = State::kFinished;
  final_code_ = status.error_code();
  ++pending_;
  io_.Finish(status, &finished_tag_);
}

void SessionCall::OnRead(bool ok) {
  bool over;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --pending_;
    over = state_ == State::kFinished;
    if (over) {
      // A request that raced with End is dropped: the stream is over.
      if (!ReleasableLocked()) return;
      // Nothing is outstanding, so nothing else can touch the call.
    } else if (!ok) {
      // The client half-closed (or the call is gone): sequences end with it.
      FinishLocked(grpc::Status::OK);
      return;
    } else {
      state_ = State::kStepping;
      step_start_ = std::chrono::steady_clock::now();
      last_request_ = step_start_;
    }
  }
  if (over) {
    Release();
  } else if (stream_.RunsInline(request_)) {
    // A small step costs less than handing it to the pool and back.
    RunStep();
  } else {
    env_.pool->Submit([this] { RunStep(); });
  }
}

void SessionCall::RunStep() {
  response_.Clear();
  absl::Status status = stream_.Step(request_, StreamDeadline(context_), &response_);
  std::lock_guard<std::mutex> lock(mu_);
  if (status.ok()) {
    ++pending_;
    io_.Write(response_, &written_tag_);
    return;
  }
  // The request broke the stream's contract: end it instead of answering.
  FinishLocked(
      grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message())));
}

void SessionCall::OnWritten(bool ok) {
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - step_start_;
  env_.metrics->ObserveStep(took.count(), static_cast<size_t>(request_.ops_size()));
  std::lock_guard<std::mutex> lock(mu_);
  --pending_;
  if (!ok) {
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the response could not be sent"));
  } else if (end_wanted_.has_value()) {
    FinishLocked(*std::move(end_wanted_));
  } else {
    last_request_ = std::chrono::steady_clock::now();
    StartReadLocked();
  }
}

void SessionCall::Release() {
  bool accepted;
  grpc::StatusCode code;
  std::chrono::steady_clock::time_point opened;
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepted = accepted_;
    code = final_code_;
    opened = opened_;
  }
  if (accepted) {
    const std::chrono::duration<double> lifetime = std::chrono::steady_clock::now() - opened;
    env_.metrics->RecordRpc("Session", code, lifetime.count());
    if (code != grpc::StatusCode::OK) env_.metrics->CountError(static_cast<absl::StatusCode>(code));
    env_.metrics->active_streams().Decrement();
  }
  // The handler's reference goes last: `self` destroys this object as the
  // function returns.
  std::shared_ptr<SessionCall> self = handler_->Unregister(this, accepted);
}

}  // namespace maskd
