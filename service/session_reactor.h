// One Session stream on the gRPC callback API, on raw bytes: reads a
// StepRequest (parsed here, so one protobuf refuses ends the stream with
// INVALID_ARGUMENT naming the field), awaits the grammars of its
// inline-compile opens without holding any thread (the compile cache calls
// back; other streams' steps go on), runs it on the step pool
// (SessionStream::Step; a small one without opens runs on the gRPC thread
// that read it, see SessionLimits::max_inline_step_ops), writes the
// StepResponse, then reads the next one, so responses keep the order of
// requests and at most one step per stream is in flight.
//
// The stream ends when the client half-closes or cancels, or when the
// server ends it (End: drain or idle timeout): at once if it is waiting for a
// request, otherwise right after the step in flight has been answered. A
// client that stops reading (its response cannot be written for the idle
// timeout) loses the stream too: the call is cancelled, freeing its
// sequences.
#ifndef MASKD_SERVICE_SESSION_REACTOR_H_
#define MASKD_SERVICE_SESSION_REACTOR_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "maskd/v1/session.pb.h"
#include "service/grammar_store.h"
#include "service/session_stream.h"

namespace maskd {

class SessionRegistry;

class SessionReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SessionReactor(SessionRegistry* registry, grpc::CallbackServerContext* context,
                 const SessionEnv& env, std::string tenant);

  // Starts reading, or ends the stream with `refusal` at once when set.
  // `holds_stream_quota`: the stream took a place in its tenant's stream
  // quota (env.quotas), given back when it is done.
  void Start(std::optional<grpc::Status> refusal, bool holds_stream_quota = false);

  // Ends the stream with `status` (see the file comment). Thread-safe;
  // the first End wins.
  void End(grpc::Status status);

  // Ends the stream with `status` if it has been waiting for a request
  // since before `cutoff` (checked and ended atomically, so a request that
  // just arrived is still answered), or cancels it if its response has been
  // waiting to be written (the client reads nothing) since before `cutoff`.
  void EndIfIdleSince(std::chrono::steady_clock::time_point cutoff, grpc::Status status);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class State { kReading, kCompiling, kStepping, kWriting, kFinished };

  // Starts the inline compiles of request_ (ops `indices`); the step runs
  // once all are answered.
  void AwaitCompiles(const std::vector<int>& indices);
  // Hands the step to the pool (or runs it here when small).
  void Dispatch(bool may_run_inline);
  // Runs the request just read and starts writing its response.
  void RunStep();
  // Calls Finish once; caller holds mu_.
  void FinishLocked(grpc::Status status);

  SessionRegistry* const registry_;
  grpc::CallbackServerContext* const context_;
  SessionEnv env_;
  const std::string tenant_;
  const std::chrono::steady_clock::time_point opened_;

  std::mutex mu_;
  State state_ = State::kReading;                       // guarded by mu_
  std::optional<grpc::Status> end_wanted_;              // guarded by mu_
  grpc::StatusCode final_code_ = grpc::StatusCode::OK;  // guarded by mu_
  std::chrono::steady_clock::time_point last_request_;  // guarded by mu_
  std::chrono::steady_clock::time_point write_start_;   // guarded by mu_
  bool stalled_ = false;                                // cancelled for not reading; guarded by mu_
  bool cancelled_ = false;                              // guarded by mu_
  bool holds_stream_quota_ = false;                     // guarded by mu_
  std::vector<std::shared_ptr<CompileWait>> waits_;     // guarded by mu_
  size_t compiles_pending_ = 0;                         // guarded by mu_

  // Touched only by the one step in flight (reads and writes alternate).
  SessionStream stream_;
  grpc::ByteBuffer read_buffer_;
  grpc::ByteBuffer write_buffer_;
  // Budget taken for the request and response: while the response is sent,
  // then for what protobuf keeps of them for the next step.
  size_t io_charged_ = 0;
  v1::StepRequest request_;
  v1::StepResponse response_;
  PrecompiledGrammars precompiled_;  // written by compile callbacks, under mu_
  std::chrono::steady_clock::time_point step_start_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_REACTOR_H_
