// One Session stream on gRPC's async API. A stream belongs to one of the
// SessionHandler's completion queues, and that queue's thread drives it: it
// reads a StepRequest, runs it (a small one without opens right there, see
// SessionLimits::max_inline_step_ops, others on the step pool), writes the
// StepResponse from where the step ran, then reads the next request, so
// responses keep the order of requests and at most one step per stream is in
// flight.
//
// The stream ends when the client half-closes or cancels, or when the server
// ends it (End: drain or idle timeout): at once if it is waiting for a
// request, otherwise right after the step in flight has been answered.
//
// Why not the callback API: in gRPC 1.51 (Debian's) without a background
// poller, a callback-API completion is handed from the thread that polled it
// to a "nexting" thread, one more thread wake-up per read and per write. Here
// each queue has exactly one thread (a completion that another thread of the
// same queue polled costs that wake-up again). Measured with service_step on
// the 2-core development machine, alternating the two servers three times:
// server CPU per empty step 71-88 us against 76-105 us on the callback API,
// B=1 step p50 128-155 us against 126-173 us (bench/service_step/README.md).
// The gain is smaller than the bare API's (an empty round trip in one process:
// p50 ~55-65 us async, ~95-115 us callback) because the client's side and
// the kernel's wake-ups dominate across processes.
#ifndef MASKD_SERVICE_SESSION_CALL_H_
#define MASKD_SERVICE_SESSION_CALL_H_

#include <chrono>
#include <mutex>
#include <optional>

#include "grpcpp/server_context.h"
#include "grpcpp/support/async_stream.h"
#include "maskd/v1/maskd.grpc.pb.h"
#include "maskd/v1/session.pb.h"
#include "service/session_stream.h"

namespace maskd {

class SessionHandler;

// The generated service with Session on the async API (the unary RPCs stay
// synchronous); MaskdService derives from it.
using SessionAsyncService = v1::Maskd::WithAsyncMethod_Session<v1::Maskd::Service>;

class SessionCall {
 public:
  // What a completion-queue tag of a SessionCall stands for.
  enum class Event { kAccepted, kRead, kWritten, kFinished, kDone };
  // The completion-queue tags are these; SessionHandler's queue threads
  // dispatch them with `call->OnEvent(event, ok)`.
  struct Tag {
    SessionCall* call;
    Event event;
  };

  SessionCall(SessionHandler* handler, grpc::ServerCompletionQueue* queue, const SessionEnv& env);

  SessionCall(const SessionCall&) = delete;
  SessionCall& operator=(const SessionCall&) = delete;

  // Asks gRPC for the next Session stream on this call's queue.
  void Request(SessionAsyncService* service);

  // One completion of this call's operations (its queue's thread).
  void OnEvent(Event event, bool ok);

  // Ends the stream with `status` (see the file comment). Thread-safe; the
  // first End wins. `status` must not be OK.
  void End(grpc::Status status);

  // Ends the stream with `status` if it has been waiting for a request
  // since before `cutoff` (checked and ended atomically, so a request that
  // just arrived is still answered).
  void EndIfIdleSince(std::chrono::steady_clock::time_point cutoff, grpc::Status status);

 private:
  // kRequested: waiting for a client to open a stream. kReading: a Read is
  // outstanding. kStepping: a request is being run and answered. kFinished:
  // Finish was called (or no stream ever came); the call is released once
  // every outstanding operation has completed.
  enum class State { kRequested, kReading, kStepping, kFinished };

  void OnAccepted(bool ok);
  void OnRead(bool ok);
  void OnWritten(bool ok);
  // Runs the request just read and starts writing its response (pool thread,
  // or inline on the queue's thread).
  void RunStep();
  // The following require mu_.
  void StartReadLocked();
  // Calls Finish once.
  void FinishLocked(grpc::Status status);
  bool ReleasableLocked() const { return state_ == State::kFinished && pending_ == 0; }
  // Records the stream's outcome and hands the call back to the handler,
  // which destroys it; the caller must not touch `this` afterwards.
  void Release();

  SessionHandler* const handler_;
  grpc::ServerCompletionQueue* const queue_;
  SessionEnv env_;
  grpc::ServerContext context_;
  grpc::ServerAsyncReaderWriter<v1::StepResponse, v1::StepRequest> io_;
  Tag accepted_tag_{this, Event::kAccepted};
  Tag read_tag_{this, Event::kRead};
  Tag written_tag_{this, Event::kWritten};
  Tag finished_tag_{this, Event::kFinished};
  Tag done_tag_{this, Event::kDone};

  std::mutex mu_;
  State state_ = State::kRequested;                     // guarded by mu_
  int pending_ = 0;                                     // outstanding tags; guarded by mu_
  bool accepted_ = false;                               // guarded by mu_
  std::optional<grpc::Status> end_wanted_;              // guarded by mu_
  grpc::StatusCode final_code_ = grpc::StatusCode::OK;  // guarded by mu_
  std::chrono::steady_clock::time_point opened_;        // guarded by mu_
  std::chrono::steady_clock::time_point last_request_;  // guarded by mu_

  // Touched only by the one step in flight (reads and writes alternate).
  SessionStream stream_;
  v1::StepRequest request_;
  v1::StepResponse response_;
  std::chrono::steady_clock::time_point step_start_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_CALL_H_
