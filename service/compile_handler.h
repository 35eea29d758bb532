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
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/compile/compile.h"
#include "compiler/compile/token_healing.h"
#include "grpcpp/support/status.h"
#include "maskd/v1/compile.pb.h"
#include "maskd/v1/session.pb.h"
#include "service/compile_request.h"
#include "service/grammar_recipes.h"
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

// The grammar a Session open op starts from (CompileHandler::OpenGrammar).
struct OpenedGrammar {
  std::shared_ptr<const CompiledGrammar> grammar;
  // The cache key `grammar` is held under (the healed handle when healed):
  // the stream charges the grammar's growth to the cache under it.
  std::string handle;
  // Set when the open carried prompt_tail_tokens (tokens_to_drop 0: nothing
  // healed, `grammar` is the plain one).
  std::optional<Healing> healing;
  std::string healed_handle;  // the healed grammar's handle, when healed
  // The grammar's CompileOptions::reasoning_end_marker and the length of its
  // required_prefix (healed bytes come before the reasoning), when the open
  // asks for a reasoning budget (empty and 0 otherwise).
  std::string reasoning_end_marker;
  size_t required_prefix_bytes = 0;
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

  // The grammar for a Session open op: its handle's (cached) or its inline
  // compile's, healed when it carries prompt_tail_tokens (a compile of its
  // own, see HealedCompileJob), with its reasoning marker when it asks for
  // a reasoning budget. `done` gets it exactly once, as for
  // CompileGrammarAsync. Errors are the op's: the inline compile's prefixed
  // "open.compile: ", NOT_FOUND for a handle this replica does not hold (or
  // holds without its recipe, for healing or a budget), INVALID_ARGUMENT
  // for a prompt tail over kMaxPromptTailTokens.
  using OpenCallback = absl::AnyInvocable<void(absl::StatusOr<OpenedGrammar> opened) &&>;
  std::shared_ptr<CompileWait> OpenGrammarAsync(const v1::OpenSequence& open,
                                                const std::string& tenant, absl::Time deadline,
                                                OpenCallback done) const;
  // As OpenGrammarAsync, waiting on the calling thread.
  absl::StatusOr<OpenedGrammar> OpenGrammar(const v1::OpenSequence& open,
                                            absl::Time deadline) const;
  // Whether an open op may need a compile (inline, or healing).
  static bool OpenMayCompile(const v1::OpenSequence& open);

  // Most OpenSequence.prompt_tail_tokens read.
  static constexpr int kMaxPromptTailTokens = 1024;

  // The recipes of the handles compiled here (for healing and budgets by
  // handle).
  GrammarRecipes& recipes() const { return recipes_; }

  // The Compile RPC's answer for `outcome`: the response filled, or the
  // failed call's status.
  grpc::Status Respond(const v1::CompileRequest& request,
                       const absl::StatusOr<CompileOutcome>& outcome, bool spec_error,
                       v1::CompileResponse* response) const;

 private:
  const TokenizerRegistry* tokenizers_;
  GrammarStore* store_;
  // Compiles `job` through the store and records its recipe on success.
  std::shared_ptr<CompileWait> CompileJobAsync(std::shared_ptr<CompileJob> job,
                                               std::shared_ptr<const Tokenizer> tokenizer,
                                               const std::string& tenant, absl::Time deadline,
                                               OutcomeCallback done) const;

  ServiceMetrics* metrics_;
  CompileLimits limits_;
  mutable GrammarRecipes recipes_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_COMPILE_HANDLER_H_
