// maskctl compile SPEC_FILE: compiles on the server, prints the handle and
// the compile stats, or the server's precise error.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/maskctl/commands.h"
#include "clients/cpp/maskctl/common.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"
#include "clients/cpp/maskctl/spec_file.h"
#include "clients/cpp/spec.h"

namespace maskd::maskctl {
namespace {

// What `kind:` prints: the spec kind, and for grammars their dialect.
std::string KindLabel(const v1::ConstraintSpec& spec) {
  if (spec.kind_case() != v1::ConstraintSpec::kGrammar) return client::SpecKindName(spec);
  switch (spec.grammar().dialect()) {
    case v1::GRAMMAR_DIALECT_GBNF:
      return "gbnf";
    case v1::GRAMMAR_DIALECT_LARK:
      return "lark";
    case v1::GRAMMAR_DIALECT_EBNF:
      return "ebnf";
    default:
      return client::SpecKindName(spec);
  }
}

// Compiles `spec` and prints the handle and stats, or the server's error.

int CompileAndPrint(const char* kName, absl::StatusOr<v1::ConstraintSpec> spec) {
  if (!spec.ok()) return Fail(kName, kExitUsage, spec.status().message());
  absl::StatusOr<v1::CompileOptions> options = CompileOptionsFromFlags(CompileOptionFlagValues());
  if (!options.ok()) return Fail(kName, kExitUsage, options.status().message());

  std::unique_ptr<client::MaskdClient> client = ClientFromFlags();
  absl::StatusOr<v1::TokenizerInfo> tokenizer =
      client->FindTokenizer(absl::GetFlag(FLAGS_tokenizer));
  if (!tokenizer.ok()) return FailWithStatus(kName, tokenizer.status(), kExitServerError);
  const std::string kind = KindLabel(*spec);
  absl::StatusOr<client::CompileResult> result =
      client->Compile(tokenizer->tokenizer_id(), *std::move(spec), *std::move(options));
  if (!result.ok()) return FailWithStatus(kName, result.status(), kExitRejected);

  const v1::CompileStats& stats = result->stats;
  const double compile_ms = static_cast<double>(stats.compile_time().seconds()) * 1e3 +
                            stats.compile_time().nanos() / 1e6;
  std::cout << "handle: " << result->handle << "\n"
            << "tokenizer: " << tokenizer->name() << " (" << result->tokenizer_id << ")\n"
            << "kind: " << kind << "\n"
            << "compile_time: " << absl::StrFormat("%.3f ms", compile_ms) << "\n"
            << "cache_hit: " << (stats.cache_hit() ? "true" : "false") << "\n"
            << "lexer_states: " << stats.lexer_states() << "\n"
            << "grammar_rules: " << stats.grammar_rules() << "\n"
            << "size_bytes: " << stats.size_bytes() << "\n";
  if (stats.ignored_keywords_size() > 0) {
    std::cout << "ignored_keywords: " << absl::StrJoin(stats.ignored_keywords(), ", ") << "\n";
  }
  for (const std::string& warning : stats.warnings()) std::cout << "warning: " << warning << "\n";
  return kExitOk;
}

}  // namespace

int RunCompile(const Args& args) {
  constexpr char kName[] = "compile";
  if (args.size() > 1) return Fail(kName, kExitUsage, "takes one SPEC_FILE");
  const std::string path = args.empty() ? "" : args[0];
  return CompileAndPrint(
      kName, ReadSpecFile(path, absl::GetFlag(FLAGS_kind), absl::GetFlag(FLAGS_start_rule)));
}

int RunTools(const Args& args) {
  constexpr char kName[] = "tools";
  if (args.size() != 1) return Fail(kName, kExitUsage, "takes one TOOLS_JSON file");
  return CompileAndPrint(
      kName, ReadToolsFile(args[0], absl::GetFlag(FLAGS_format), absl::GetFlag(FLAGS_require_call),
                           absl::GetFlag(FLAGS_single_call)));
}

}  // namespace maskd::maskctl
