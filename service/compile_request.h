// CompileRequest (wire) -> what the engine compiles (GrammarSpec and
// CompileOptions), with the server's defaults filled in, and the grammar
// handle: a content hash of exactly what determines the compiled grammar.
#ifndef MASKD_SERVICE_COMPILE_REQUEST_H_
#define MASKD_SERVICE_COMPILE_REQUEST_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/compile/compile.h"
#include "maskd/v1/compile.pb.h"

namespace maskd {

// Server-side defaults and limits for compiling (set by flags).
struct CompileLimits {
  // Largest spec text (schema, regex, grammar, or all choices together).
  size_t max_spec_bytes = size_t{1} << 20;
  // Longest whitespace run when the request leaves it 0.
  uint32_t default_max_whitespace_run = 32;
  // Longest a compile may take; a request may ask for less, never more.
  absl::Duration compile_time_limit = absl::Seconds(10);
};

// A request translated for the engine.
struct CompileJob {
  std::string tokenizer_id;
  GrammarSpec spec;
  CompileOptions options;
  // Grammar specs only: the start rule (GrammarSpec has no field for it
  // until the engine parses grammars; the handle still tells them apart).
  std::string start_rule;
  // Label for metrics: json_schema|regex|ebnf|choices|builtin_json.
  const char* kind = "";
  // How long this caller waits for the compile: the request's limit, capped
  // by the server's. The engine itself runs up to the server's limit
  // (options.time_limit_ms), so the grammar still lands in the cache.
  absl::Duration time_limit = absl::Seconds(10);
  // Lowercase hex SHA-256 of (tokenizer id, spec, options that change the
  // result), so every replica derives the same handle for the same request.
  std::string handle;
};

// Marks a translation error that is about the spec's content (a bad tool
// list), not the call: answered in CompileResponse.error.
inline constexpr char kSpecErrorPayload[] = "maskd/spec-error";

// Whether a TranslateCompileRequest error belongs in CompileResponse.error
// (UNIMPLEMENTED options, a bad tool list) rather than the RPC status.
bool IsSpecTranslationError(const absl::Status& status);

// Errors: INVALID_ARGUMENT naming the field (no spec, unknown enum value,
// unspecified grammar dialect, negative time limit, max_recursion_depth
// above kMaxRecursionDepthLimit), RESOURCE_EXHAUSTED when the spec is larger
// than limits.max_spec_bytes (naming the limit).
absl::StatusOr<CompileJob> TranslateCompileRequest(const v1::CompileRequest& request,
                                                   const CompileLimits& limits);

// Token healing (OpenSequence.prompt_tail_tokens): `base` with the output
// required to start with `removed_bytes`, under a handle derived from
// base.handle and those bytes (an inline compile and an open by handle of
// the same grammar and prompt end share one cached compile).
CompileJob HealedCompileJob(const CompileJob& base, const std::string& removed_bytes);

// The metrics label of a spec kind.
const char* SpecKindLabel(SpecKind kind);

}  // namespace maskd

#endif  // MASKD_SERVICE_COMPILE_REQUEST_H_
