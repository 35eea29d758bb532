// One Compile call on the gRPC callback API: the request is parsed from its
// raw bytes (a request protobuf refuses is INVALID_ARGUMENT naming the field,
// request_parse.h), the compile is awaited without holding a thread
// (CompileHandler::CompileGrammarAsync), and a client that cancels stops
// waiting (the compile is cancelled when no one else waits for it). So a
// storm of slow compiles holds no gRPC thread and health checks still answer.
#ifndef MASKD_SERVICE_COMPILE_REACTOR_H_
#define MASKD_SERVICE_COMPILE_REACTOR_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "maskd/v1/compile.pb.h"
#include "service/compile_handler.h"
#include "service/service_metrics.h"

namespace maskd {

class CompileReactor final : public grpc::ServerUnaryReactor {
 public:
  // Starts the call; gRPC owns the reactor until OnDone (it deletes itself).
  static CompileReactor* Start(const CompileHandler* handler, ServiceMetrics* metrics,
                               grpc::CallbackServerContext* context,
                               const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                               const std::string& tenant);

  void OnCancel() override;
  void OnDone() override;

 private:
  CompileReactor(const CompileHandler* handler, ServiceMetrics* metrics, grpc::ByteBuffer* response)
      : handler_(handler),
        metrics_(metrics),
        response_(response),
        start_(std::chrono::steady_clock::now()) {}

  // Fills the response and finishes the call (once).
  void Answer(const absl::StatusOr<CompileOutcome>& outcome, bool spec_error);
  void FinishCall(grpc::Status status);
  // Drops one of the two references (gRPC's, until OnDone; Start's, until
  // it returns): a compile answered at once must not free the reactor under
  // Start's feet.
  void Unref();

  const CompileHandler* const handler_;
  ServiceMetrics* const metrics_;
  grpc::ByteBuffer* const response_;
  const std::chrono::steady_clock::time_point start_;
  v1::CompileRequest request_;
  grpc::StatusCode code_ = grpc::StatusCode::OK;  // set before Finish
  std::atomic<int> refs_{2};

  std::mutex mu_;
  std::shared_ptr<CompileWait> wait_;  // guarded by mu_
  bool cancelled_ = false;             // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_COMPILE_REACTOR_H_
