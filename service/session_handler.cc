#include "service/session_handler.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace maskd {

SessionHandler::SessionHandler(const SessionEnv& env, absl::Duration idle_timeout)
    : env_(env), idle_timeout_(idle_timeout) {
  if (idle_timeout_ > absl::ZeroDuration()) watcher_ = std::thread([this] { WatchIdle(); });
}

SessionHandler::~SessionHandler() {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    watcher_stopping_ = true;
  }
  changed_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void SessionHandler::AddQueues(grpc::ServerBuilder* builder, size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
    queues_.push_back(builder->AddCompletionQueue());
  }
}

void SessionHandler::Serve(SessionAsyncService* service) {
  service_ = service;
  for (size_t i = 0; i < queues_.size(); ++i) {
    grpc::ServerCompletionQueue* queue = queues_[i].get();
    RequestStream(queue);
    queue_threads_.emplace_back([this, queue, i] {
      const std::string name = absl::StrCat("maskd-session-", i);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      PollQueue(queue);
    });
  }
}

void SessionHandler::PollQueue(grpc::ServerCompletionQueue* queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) {
    const auto* call_tag = static_cast<const SessionCall::Tag*>(tag);
    call_tag->call->OnEvent(call_tag->event, ok);
  }
}

void SessionHandler::RequestStream(grpc::ServerCompletionQueue* queue) {
  auto call = std::make_shared<SessionCall>(this, queue, env_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Past this, a queue may be shut down: no operation may start on it.
    if (stopping_) return;
    live_.emplace(call.get(), call);
  }
  call->Request(service_);
}

std::optional<grpc::Status> SessionHandler::Accepted(grpc::ServerCompletionQueue* queue) {
  RequestStream(queue);
  env_.metrics->active_streams().Increment();
  std::lock_guard<std::mutex> lock(mu_);
  ++accepted_;
  if (!draining_) return std::nullopt;
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "maskd is shutting down and accepts no new Session streams; "
                      "connect to another replica");
}

void SessionHandler::BeginDrain() {
  std::vector<std::shared_ptr<SessionCall>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    for (const auto& [raw, call] : live_) live.push_back(call);
  }
  for (const std::shared_ptr<SessionCall>& call : live) {
    call->End(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           "maskd is shutting down: the stream ends after its last answered "
                           "step; reopen the sequences on another replica"));
  }
}

void SessionHandler::Stop() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    // Each call's operations complete (the server has cancelled what it
    // did not finish); steps in flight on the pool write and see it fail.
    changed_cv_.wait(lock, [this] { return live_.empty(); });
  }
  for (const std::unique_ptr<grpc::ServerCompletionQueue>& queue : queues_) queue->Shutdown();
  for (std::thread& thread : queue_threads_) thread.join();
  // Without threads (Serve never ran), the queues still need draining.
  if (queue_threads_.empty()) {
    for (const std::unique_ptr<grpc::ServerCompletionQueue>& queue : queues_)
      PollQueue(queue.get());
  }
}

size_t SessionHandler::active_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accepted_;
}

std::shared_ptr<SessionCall> SessionHandler::Unregister(SessionCall* call, bool accepted) {
  std::shared_ptr<SessionCall> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(call);
    if (it == live_.end()) return nullptr;
    owned = std::move(it->second);
    live_.erase(it);
    if (accepted) --accepted_;
  }
  changed_cv_.notify_all();
  return owned;
}

void SessionHandler::WatchIdle() {
  const auto timeout = absl::ToChronoNanoseconds(idle_timeout_);
  // Check a few times per timeout so a stream ends at most ~25% late.
  const auto tick = std::clamp<std::chrono::nanoseconds>(timeout / 4, std::chrono::milliseconds(10),
                                                         std::chrono::seconds(1));
  const std::string message =
      absl::StrCat("no StepRequest for ", absl::FormatDuration(idle_timeout_),
                   " (--session_idle_timeout): the server closed this idle stream and its "
                   "sequences; open a new stream to go on");
  std::unique_lock<std::mutex> lock(mu_);
  while (!changed_cv_.wait_for(lock, tick, [this] { return watcher_stopping_; })) {
    const auto cutoff = std::chrono::steady_clock::now() - timeout;
    std::vector<std::shared_ptr<SessionCall>> live;
    for (const auto& [raw, call] : live_) live.push_back(call);
    lock.unlock();
    for (const std::shared_ptr<SessionCall>& call : live) {
      call->EndIfIdleSince(cutoff, grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, message));
    }
    live.clear();  // may destroy calls that ended meanwhile, outside mu_
    lock.lock();
  }
}

}  // namespace maskd
