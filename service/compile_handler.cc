#include "service/compile_handler.h"

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
  *spec_error = false;
  absl::StatusOr<RegisteredTokenizer> tokenizer = tokenizers_->FindById(request.tokenizer_id());
  if (!tokenizer.ok()) return tokenizer.status();
  absl::StatusOr<CompileJob> job = TranslateCompileRequest(request, limits_);
  if (!job.ok()) {
    // Unsupported options are about the spec; a missing spec or an
    // oversized one is about the call.
    *spec_error = job.status().code() == absl::StatusCode::kUnimplemented;
    return job.status();
  }
  bool call_deadline = false;
  absl::StatusOr<CompiledHandle> compiled =
      store_->Compile(*job, tokenizer->tokenizer, deadline, &call_deadline);
  if (!compiled.ok()) {
    *spec_error = !call_deadline;
    return compiled.status();
  }
  CompileOutcome outcome;
  outcome.handle = *std::move(compiled);
  outcome.job = *std::move(job);
  return outcome;
}

grpc::Status CompileHandler::Compile(const v1::CompileRequest& request, absl::Time deadline,
                                     v1::CompileResponse* response) const {
  bool spec_error = false;
  absl::StatusOr<CompileOutcome> outcome = CompileGrammar(request, deadline, &spec_error);
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
  stats->set_size_bytes(outcome->handle.grammar->SizeBytes());
  for (const std::string& keyword : engine.ignored_keywords) stats->add_ignored_keywords(keyword);
  return grpc::Status::OK;
}

}  // namespace maskd
