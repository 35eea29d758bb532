// Serves the Compile RPC: translates the request, compiles through the
// replica's GrammarStore (cached by handle, single flight) and answers the
// handle and stats, or the engine's error naming the offending part.
//
// Where errors go (compile.proto): problems with the spec itself (malformed,
// unsupported, too costly, over its compile time limit) are in
// CompileResponse.error with the RPC OK; problems with the call (unknown
// tokenizer NOT_FOUND, spec over --max_spec_bytes RESOURCE_EXHAUSTED, the
// RPC's own deadline DEADLINE_EXCEEDED, no spec INVALID_ARGUMENT) fail the
// RPC.
#ifndef MASKD_SERVICE_COMPILE_HANDLER_H_
#define MASKD_SERVICE_COMPILE_HANDLER_H_

#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/compile/compile.h"
#include "grpcpp/support/status.h"
#include "maskd/v1/compile.pb.h"
#include "service/compile_request.h"
#include "service/grammar_store.h"
#include "service/service_metrics.h"
#include "service/tokenizer_registry.h"

namespace maskd {

// What compiling one request produced, shared by the Compile RPC and inline
// compiles in Session open ops.
struct CompileOutcome {
  CompiledHandle handle;
  CompileJob job;
};

class CompileHandler {
 public:
  // All pointers must outlive the handler.
  CompileHandler(const TokenizerRegistry* tokenizers, GrammarStore* store, ServiceMetrics* metrics,
                 CompileLimits limits)
      : tokenizers_(tokenizers), store_(store), metrics_(metrics), limits_(limits) {}

  // The RPC: `deadline` is the client's (InfiniteFuture when none).
  grpc::Status Compile(const v1::CompileRequest& request, absl::Time deadline,
                       v1::CompileResponse* response) const;

  // Compiles `request` (cache first). Errors carry the code that fits the
  // problem; `spec_error` says whether it is about the spec (an engine
  // refusal or the compile time limit) rather than the call.
  absl::StatusOr<CompileOutcome> CompileGrammar(const v1::CompileRequest& request,
                                                absl::Time deadline, bool* spec_error) const;

  // As CompileGrammar, without blocking: `done` gets the outcome exactly
  // once (on this thread when at hand, else on a compile or timer thread).
  // The wait may be abandoned (CompileWait::Abandon); null when `done` was
  // already called.
  using OutcomeCallback =
      absl::AnyInvocable<void(absl::StatusOr<CompileOutcome> outcome, bool spec_error) &&>;
  std::shared_ptr<CompileWait> CompileGrammarAsync(const v1::CompileRequest& request,
                                                   const std::string& tenant, absl::Time deadline,
                                                   OutcomeCallback done) const;

  // The Compile RPC's answer for `outcome`: the response filled, or the
  // failed call's status.
  grpc::Status Respond(const v1::CompileRequest& request,
                       const absl::StatusOr<CompileOutcome>& outcome, bool spec_error,
                       v1::CompileResponse* response) const;

 private:
  const TokenizerRegistry* tokenizers_;
  GrammarStore* store_;
  ServiceMetrics* metrics_;
  CompileLimits limits_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_COMPILE_HANDLER_H_
