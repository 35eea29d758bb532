#include "service/compile_handler.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "compiler/compile/compile.h"
#include "google/protobuf/util/time_util.h"
#include "service/spec_error.h"
#include "service/status_convert.h"

namespace maskd {

absl::StatusOr<CompileOutcome> CompileHandler::CompileGrammar(const v1::CompileRequest& request,
                                                              absl::Time deadline,
                                                              bool* spec_error) const {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::StatusOr<CompileOutcome>> result;
  std::shared_ptr<CompileWait> wait = CompileGrammarAsync(
      request, "", deadline, [&](absl::StatusOr<CompileOutcome> outcome, bool spec) {
        std::lock_guard<std::mutex> lock(mu);
        result = std::move(outcome);
        *spec_error = spec;
        cv.notify_all();
      });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return result.has_value(); });
  return *std::move(result);
}

std::shared_ptr<CompileWait> CompileHandler::CompileGrammarAsync(const v1::CompileRequest& request,
                                                                 const std::string& tenant,
                                                                 absl::Time deadline,
                                                                 OutcomeCallback done) const {
  absl::StatusOr<RegisteredTokenizer> tokenizer = tokenizers_->FindById(request.tokenizer_id());
  if (!tokenizer.ok()) {
    std::move(done)(tokenizer.status(), false);
    return nullptr;
  }
  absl::StatusOr<CompileJob> job = TranslateCompileRequest(request, limits_);
  if (!job.ok()) {
    // Unsupported options and bad tool lists are about the spec; a missing
    // spec or an oversized one is about the call.
    const bool spec_error = IsSpecTranslationError(job.status());
    std::move(done)(job.status(), spec_error);
    return nullptr;
  }
  return CompileJobAsync(std::make_shared<CompileJob>(*std::move(job)), tokenizer->tokenizer,
                         tenant, deadline, std::move(done));
}

std::shared_ptr<CompileWait> CompileHandler::CompileJobAsync(
    std::shared_ptr<CompileJob> shared_job, std::shared_ptr<const Tokenizer> tokenizer,
    const std::string& tenant, absl::Time deadline, OutcomeCallback done) const {
  return store_->CompileAsync(
      *shared_job, std::move(tokenizer), tenant, deadline,
      [this, shared_job, done = std::move(done)](absl::StatusOr<CompiledHandle> compiled,
                                                 bool about_call) mutable {
        if (!compiled.ok()) {
          std::move(done)(compiled.status(), !about_call);
          return;
        }
        recipes_.Record(*shared_job);
        CompileOutcome outcome;
        outcome.handle = *std::move(compiled);
        outcome.job = std::move(*shared_job);
        std::move(done)(std::move(outcome), false);
      });
}

grpc::Status CompileHandler::Compile(const v1::CompileRequest& request, absl::Time deadline,
                                     v1::CompileResponse* response) const {
  bool spec_error = false;
  absl::StatusOr<CompileOutcome> outcome = CompileGrammar(request, deadline, &spec_error);
  return Respond(request, outcome, spec_error, response);
}

grpc::Status CompileHandler::Respond(const v1::CompileRequest& request,
                                     const absl::StatusOr<CompileOutcome>& outcome, bool spec_error,
                                     v1::CompileResponse* response) const {
  if (!outcome.ok()) {
    // A failed RPC is counted by the RPC's recorder; a spec error is not a
    // failed RPC, so it is counted here.
    if (!spec_error) return ToGrpcStatus(outcome.status());
    metrics_->CountError(outcome.status().code());
    SpecKind kind = SpecKind::kBuiltinJson;
    std::string_view text;
    if (request.spec().kind_case() == v1::ConstraintSpec::kJsonSchema) {
      kind = SpecKind::kJsonSchema;
      text = request.spec().json_schema();
    } else if (request.spec().kind_case() == v1::ConstraintSpec::kRegex) {
      kind = SpecKind::kRegex;
      text = request.spec().regex();
    } else if (request.spec().kind_case() == v1::ConstraintSpec::kGrammar) {
      kind = SpecKind::kEbnf;
      text = request.spec().grammar().text();
    } else if (request.spec().kind_case() == v1::ConstraintSpec::kStructuralTag ||
               request.spec().kind_case() == v1::ConstraintSpec::kToolCalls) {
      kind = SpecKind::kStructuralTag;
    }
    FillSpecError(outcome.status(), kind, text, response->mutable_error());
    return grpc::Status::OK;
  }
  v1::CompiledGrammar* out = response->mutable_grammar();
  out->set_handle(outcome->job.handle);
  out->set_tokenizer_id(outcome->job.tokenizer_id);
  v1::CompileStats* stats = out->mutable_stats();
  *stats->mutable_compile_time() = google::protobuf::util::TimeUtil::NanosecondsToDuration(
      absl::ToInt64Nanoseconds(outcome->handle.wait_time));
  stats->set_cache_hit(outcome->handle.cache_hit);
  const CompileStats& engine = outcome->handle.grammar->stats();
  stats->set_grammar_rules(engine.rules);
  stats->set_lexer_states(outcome->handle.grammar->LexerStates());
  stats->set_size_bytes(outcome->handle.grammar->SizeBytes());
  for (const std::string& keyword : engine.ignored_keywords) stats->add_ignored_keywords(keyword);
  for (const std::string& warning : engine.warnings) stats->add_warnings(warning);
  return grpc::Status::OK;
}

}  // namespace maskd
