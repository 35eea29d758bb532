// Serves Session streams (one SessionCall each) and owns what concerns all
// of them: the completion queues and their threads (one thread per queue, so
// a completion is handled by the thread that polled it), the set of live
// streams, the idle-session timeout (a watcher thread ends streams with no
// request for that long), and draining on shutdown (new streams refused,
// open ones ended once their step is answered).
//
// Lifecycle: AddQueues before the gRPC server is built, Serve once it has
// started, BeginDrain and the server's Shutdown, then Stop.
#ifndef MASKD_SERVICE_SESSION_HANDLER_H_
#define MASKD_SERVICE_SESSION_HANDLER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "grpcpp/server_builder.h"
#include "service/session_call.h"
#include "service/session_stream.h"

namespace maskd {

class SessionHandler {
 public:
  // `idle_timeout` zero or less: streams never time out.
  SessionHandler(const SessionEnv& env, absl::Duration idle_timeout);
  // Stops the watcher and, if Stop was not called, the queues.
  ~SessionHandler();

  SessionHandler(const SessionHandler&) = delete;
  SessionHandler& operator=(const SessionHandler&) = delete;

  // Adds `threads` completion queues (at least one) to the server being
  // built.
  void AddQueues(grpc::ServerBuilder* builder, size_t threads);

  // Once the server has started: waits for a stream on every queue and
  // starts the queue threads. `service` must outlive Stop.
  void Serve(SessionAsyncService* service);

  // New streams are refused with UNAVAILABLE; open ones end with
  // UNAVAILABLE as soon as they have answered their step in flight.
  void BeginDrain();

  // After the gRPC server has shut down (its calls are over or cancelled):
  // waits until every SessionCall has seen its last completion, then shuts
  // the queues down and joins their threads. Idempotent.
  void Stop();

  // Streams accepted and not yet over.
  size_t active_streams() const;

 private:
  friend class SessionCall;
  // A SessionCall on `queue` accepted a stream: waits for the next one on
  // that queue; returns the refusal if draining.
  std::optional<grpc::Status> Accepted(grpc::ServerCompletionQueue* queue);
  // Called when a SessionCall is over; returns the handler's reference so
  // the call is destroyed when the caller lets go of it.
  std::shared_ptr<SessionCall> Unregister(SessionCall* call, bool accepted);
  // A new SessionCall waiting for a stream on `queue` (none once stopping).
  void RequestStream(grpc::ServerCompletionQueue* queue);
  void PollQueue(grpc::ServerCompletionQueue* queue);
  void WatchIdle();

  const SessionEnv env_;
  const absl::Duration idle_timeout_;
  SessionAsyncService* service_ = nullptr;
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues_;
  std::vector<std::thread> queue_threads_;

  mutable std::mutex mu_;
  absl::flat_hash_map<SessionCall*, std::shared_ptr<SessionCall>> live_;  // guarded by mu_
  size_t accepted_ = 0;                                                   // guarded by mu_
  bool draining_ = false;                                                 // guarded by mu_
  bool stopping_ = false;                                                 // guarded by mu_
  bool stopped_ = false;                                                  // guarded by mu_
  bool watcher_stopping_ = false;                                         // guarded by mu_
  std::condition_variable changed_cv_;  // live_ shrank or the watcher must stop
  std::thread watcher_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_HANDLER_H_
