#include "service/compile_reactor.h"

#include <utility>

#include "absl/time/clock.h"
#include "service/request_parse.h"
#include "service/status_convert.h"

namespace maskd {

CompileReactor* CompileReactor::Start(const CompileHandler* handler, ServiceMetrics* metrics,
                                      grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                                      const std::string& tenant) {
  auto* reactor = new CompileReactor(handler, metrics, response);
  if (absl::Status parsed = ParseRequest(*request, &reactor->request_); !parsed.ok()) {
    reactor->FinishCall(ToGrpcStatus(parsed));
    reactor->Unref();
    return reactor;
  }
  const auto deadline = context->deadline();
  // No deadline reads as the far future; keep it infinite for the cache.
  const absl::Time rpc_deadline =
      deadline >= std::chrono::system_clock::now() + std::chrono::hours(24 * 365)
          ? absl::InfiniteFuture()
          : absl::FromChrono(deadline);
  std::shared_ptr<CompileWait> wait = handler->CompileGrammarAsync(
      reactor->request_, tenant, rpc_deadline,
      [reactor](absl::StatusOr<CompileOutcome> outcome, bool spec_error) {
        reactor->Answer(outcome, spec_error);
      });
  bool abandon = false;
  {
    std::lock_guard<std::mutex> lock(reactor->mu_);
    reactor->wait_ = wait;
    abandon = reactor->cancelled_;
  }
  if (abandon && wait != nullptr) wait->Abandon();
  reactor->Unref();
  return reactor;
}

void CompileReactor::Answer(const absl::StatusOr<CompileOutcome>& outcome, bool spec_error) {
  v1::CompileResponse response;
  grpc::Status status = handler_->Respond(request_, outcome, spec_error, &response);
  if (status.ok()) SerializeResponse(response, response_);
  FinishCall(std::move(status));
}

void CompileReactor::FinishCall(grpc::Status status) {
  code_ = status.error_code();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
  metrics_->RecordRpc("Compile", code_, elapsed.count());
  if (!status.ok()) metrics_->CountError(static_cast<absl::StatusCode>(code_));
  Finish(std::move(status));
}

void CompileReactor::OnCancel() {
  std::shared_ptr<CompileWait> wait;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    wait = wait_;
  }
  if (wait != nullptr) wait->Abandon();
}

void CompileReactor::OnDone() { Unref(); }

void CompileReactor::Unref() {
  if (refs_.fetch_sub(1) == 1) delete this;
}

}  // namespace maskd
