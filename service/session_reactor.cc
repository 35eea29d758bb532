#include "service/session_reactor.h"

#include <string>
#include <utility>

#include "absl/time/clock.h"
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

}  // namespace

SessionReactor::SessionReactor(SessionRegistry* registry, grpc::CallbackServerContext* context,
                               const SessionEnv& env)
    : registry_(registry),
      context_(context),
      env_(env),
      opened_(std::chrono::steady_clock::now()),
      last_request_(opened_),
      stream_(env) {}

// gRPC never runs reactions inline inside StartRead/StartWrite/Finish (their
// tags are not inlineable), so calling those under mu_ cannot re-enter it.
void SessionReactor::Start(std::optional<grpc::Status> refusal) {
  std::lock_guard<std::mutex> lock(mu_);
  if (refusal.has_value()) {
    FinishLocked(*std::move(refusal));
    return;
  }
  StartRead(&request_);
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
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kReading && last_request_ < cutoff) FinishLocked(std::move(status));
}

void SessionReactor::FinishLocked(grpc::Status status) {
  if (state_ == State::kFinished) return;
  state_ = State::kFinished;
  final_code_ = status.error_code();
  Finish(std::move(status));
}

void SessionReactor::OnReadDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
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
  lock.unlock();
  // A small step costs less than handing it to the pool and back.
  if (stream_.RunsInline(request_)) {
    RunStep();
  } else {
    env_.pool->Submit([this] { RunStep(); });
  }
}

void SessionReactor::RunStep() {
  response_.Clear();
  absl::Status status = stream_.Step(request_, StreamDeadline(context_), &response_);
  if (status.ok()) {
    StartWrite(&response_);
    return;
  }
  // The request broke the stream's contract: end it instead of answering.
  std::lock_guard<std::mutex> lock(mu_);
  FinishLocked(
      grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message())));
}

void SessionReactor::OnWriteDone(bool ok) {
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - step_start_;
  env_.metrics->ObserveStep(took.count(), static_cast<size_t>(request_.ops_size()));
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) {
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the response could not be sent"));
    return;
  }
  if (end_wanted_.has_value()) {
    FinishLocked(*std::move(end_wanted_));
    return;
  }
  state_ = State::kReading;
  last_request_ = std::chrono::steady_clock::now();
  StartRead(&request_);
}

void SessionReactor::OnDone() {
  grpc::StatusCode code;
  {
    std::lock_guard<std::mutex> lock(mu_);
    code = final_code_;
  }
  const std::chrono::duration<double> lifetime = std::chrono::steady_clock::now() - opened_;
  env_.metrics->RecordRpc("Session", code, lifetime.count());
  if (code != grpc::StatusCode::OK) env_.metrics->CountError(static_cast<absl::StatusCode>(code));
  env_.metrics->active_streams().Decrement();
  // The registry's reference goes last: `self` may destroy this object as the
  // function returns.
  std::shared_ptr<SessionReactor> self = registry_->Unregister(this);
}

}  // namespace maskd
