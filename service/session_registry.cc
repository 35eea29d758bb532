#include "service/session_registry.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace maskd {

SessionRegistry::SessionRegistry(const SessionEnv& env, absl::Duration idle_timeout)
    : env_(env), idle_timeout_(idle_timeout) {
  if (idle_timeout_ > absl::ZeroDuration()) watcher_ = std::thread([this] { WatchIdle(); });
}

SessionRegistry::~SessionRegistry() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* SessionRegistry::Open(
    grpc::CallbackServerContext* context, const std::string& tenant) {
  auto reactor = std::make_shared<SessionReactor>(this, context, env_, tenant);
  env_.metrics->active_streams().Increment();
  std::optional<grpc::Status> refusal;
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_.emplace(reactor.get(), reactor);
    if (draining_) {
      refusal = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                             "maskd is shutting down and accepts no new Session streams; "
                             "connect to another replica");
    }
  }
  bool holds_quota = false;
  if (!refusal.has_value() && env_.quotas != nullptr) {
    if (absl::Status quota = env_.quotas->AcquireStream(tenant); quota.ok()) {
      holds_quota = true;
    } else {
      refusal = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, std::string(quota.message()));
    }
  }
  reactor->Start(std::move(refusal), holds_quota);
  return reactor.get();
}

void SessionRegistry::BeginDrain() {
  std::vector<std::shared_ptr<SessionReactor>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    for (const auto& [raw, reactor] : live_) live.push_back(reactor);
  }
  for (const std::shared_ptr<SessionReactor>& reactor : live) {
    reactor->End(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                              "maskd is shutting down: the stream ends after its last answered "
                              "step; reopen the sequences on another replica"));
  }
}

size_t SessionRegistry::active_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

std::shared_ptr<SessionReactor> SessionRegistry::Unregister(SessionReactor* reactor) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reactor);
  if (it == live_.end()) return nullptr;
  std::shared_ptr<SessionReactor> owned = std::move(it->second);
  live_.erase(it);
  return owned;
}

void SessionRegistry::WatchIdle() {
  const auto timeout = absl::ToChronoNanoseconds(idle_timeout_);
  // Check a few times per timeout so a stream ends at most ~25% late.
  const auto tick = std::clamp<std::chrono::nanoseconds>(timeout / 4, std::chrono::milliseconds(10),
                                                         std::chrono::seconds(1));
  const std::string message =
      absl::StrCat("no StepRequest for ", absl::FormatDuration(idle_timeout_),
                   " (--session_idle_timeout): the server closed this idle stream and its "
                   "sequences; open a new stream to go on");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto cutoff = std::chrono::steady_clock::now() - timeout;
    std::vector<std::shared_ptr<SessionReactor>> live;
    for (const auto& [raw, reactor] : live_) live.push_back(reactor);
    lock.unlock();
    for (const std::shared_ptr<SessionReactor>& reactor : live) {
      reactor->EndIfIdleSince(cutoff, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, message));
    }
    live.clear();  // may destroy reactors that ended meanwhile, outside mu_
    lock.lock();
  }
}

}  // namespace maskd
