// Serves Session streams (one SessionReactor each) and owns what concerns
// all of them: the set of live streams, the idle-session timeout (a watcher
// thread ends streams with no request for that long), and draining on
// shutdown (new streams refused, open ones ended once their step is
// answered).
#ifndef MASKD_SERVICE_SESSION_REGISTRY_H_
#define MASKD_SERVICE_SESSION_REGISTRY_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "grpcpp/support/server_callback.h"
#include "maskd/v1/session.pb.h"
#include "service/session_reactor.h"
#include "service/session_stream.h"

namespace maskd {

class SessionRegistry {
 public:
  // `idle_timeout` zero or less: streams never time out.
  SessionRegistry(const SessionEnv& env, absl::Duration idle_timeout);
  // Stops the watcher. Every stream must have ended (the gRPC server shut
  // down) before.
  ~SessionRegistry();

  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // A new stream of `tenant` (its compiles count against the tenant's
  // queue); gRPC owns the reactor until its OnDone.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Open(
      grpc::CallbackServerContext* context, const std::string& tenant = "");

  // New streams are refused with UNAVAILABLE; open ones end with
  // UNAVAILABLE as soon as they have answered their step in flight.
  void BeginDrain();

  size_t active_streams() const;

 private:
  friend class SessionReactor;
  // Called from the reactor's OnDone; returns the registry's reference so the
  // reactor is destroyed when the caller lets go of it.
  std::shared_ptr<SessionReactor> Unregister(SessionReactor* reactor);
  void WatchIdle();

  const SessionEnv env_;
  const absl::Duration idle_timeout_;

  mutable std::mutex mu_;
  absl::flat_hash_map<SessionReactor*, std::shared_ptr<SessionReactor>> live_;  // guarded by mu_
  bool draining_ = false;                                                       // guarded by mu_
  bool stopping_ = false;                                                       // guarded by mu_
  std::condition_variable stop_cv_;
  std::thread watcher_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_REGISTRY_H_
