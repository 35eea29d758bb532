#include "service/compile_request.h"

#include <openssl/sha.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "compiler/json_schema/canonical_json.h"
#include "compiler/structural_tag/tool_calls.h"

namespace maskd {
namespace {

// Appends a length-prefixed field, so that no two different field sequences
// serialize to the same bytes.
void AppendField(std::string& out, std::string_view field) {
  absl::StrAppend(&out, field.size(), ":");
  out.append(field.data(), field.size());
  out.push_back(';');
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

// Only what changes the compiled grammar goes in: limits (time, memory) do
// not, so a handle compiled under one server's limits opens on another's.
std::string ComputeHandle(const CompileJob& job) {
  std::string key = "maskd.grammar.v1;";
  AppendField(key, job.tokenizer_id);
  AppendField(key, SpecKindLabel(job.spec.kind));
  AppendField(key, absl::StrCat(static_cast<int>(job.spec.dialect)));
  // A schema is hashed in its canonical spelling: the same schema from
  // Python (json.dumps: spaces, \u escapes) and from a file is one handle.
  std::optional<std::string> canonical;
  if (job.spec.kind == SpecKind::kJsonSchema) {
    canonical = json_schema::CanonicalJsonText(job.spec.text);
  }
  AppendField(key, canonical.has_value() ? *canonical : job.spec.text);
  AppendField(key, job.start_rule);
  AppendField(key, absl::StrCat(job.spec.choices.size()));
  for (const std::string& choice : job.spec.choices) AppendField(key, choice);
  const CompileOptions& o = job.options;
  AppendField(key, absl::StrCat(static_cast<int>(o.whitespace), ",", o.max_whitespace_run, ",",
                                o.strict, ",", o.additional_properties_default_false, ",",
                                static_cast<int>(o.property_order), ",", o.max_recursion_depth, ",",
                                static_cast<int>(o.unknown_formats)));
  AppendField(key, o.reasoning_end_marker);
  // Only when set, so handles of schemas compiled without it stay the same.
  if (!o.default_dialect.empty()) AppendField(key, absl::StrCat("dialect:", o.default_dialect));
  for (const SchemaResource& r : o.schema_resources) {
    AppendField(key, absl::StrCat("resource:", r.uri));
    std::optional<std::string> text = json_schema::CanonicalJsonText(r.text);
    AppendField(key, text.has_value() ? *text : r.text);
  }
  return Sha256Hex(key);
}

// Tool calls become the structural tag the engine builds for them, so the
// handle, the cache and the errors are those of a structural tag.
absl::Status TranslateToolCalls(const v1::ToolCallsSpec& spec, GrammarSpec& out) {
  ToolCallFormat format;
  switch (spec.format()) {
    case v1::TOOL_CALL_FORMAT_LLAMA3_JSON:
      format = ToolCallFormat::kLlama3Json;
      break;
    case v1::TOOL_CALL_FORMAT_QWEN3:
      format = ToolCallFormat::kQwen3;
      break;
    case v1::TOOL_CALL_FORMAT_HARMONY:
      format = ToolCallFormat::kHarmony;
      break;
    case v1::TOOL_CALL_FORMAT_LLAMA3_PYTHON_TAG:
      format = ToolCallFormat::kLlama3PythonTag;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("spec.tool_calls.format ", spec.format(),
                       " is not a known format (LLAMA3_JSON = 1, QWEN3 = 2, HARMONY = 3, "
                       "LLAMA3_PYTHON_TAG = 4)"));
  }
  std::vector<ToolSpec> tools;
  for (const v1::Tool& tool : spec.tools()) {
    tools.push_back({tool.name(), tool.parameters_json_schema()});
  }
  ToolCallOptions options;
  options.require_call = spec.require_call();
  options.single_call = spec.single_call();
  absl::StatusOr<std::string> tag = ToolCallStructuralTag(tools, format, options);
  if (!tag.ok()) {
    // A bad tool list is the spec's fault, answered in CompileResponse.error.
    absl::Status error = tag.status();
    error.SetPayload(kSpecErrorPayload, absl::Cord("tool_calls"));
    return error;
  }
  out.kind = SpecKind::kStructuralTag;
  out.text = *std::move(tag);
  return absl::OkStatus();
}

absl::Status TranslateSpec(const v1::ConstraintSpec& spec, GrammarSpec& out) {
  switch (spec.kind_case()) {
    case v1::ConstraintSpec::kJsonSchema:
      out.kind = SpecKind::kJsonSchema;
      out.text = spec.json_schema();
      return absl::OkStatus();
    case v1::ConstraintSpec::kRegex:
      out.kind = SpecKind::kRegex;
      out.text = spec.regex();
      return absl::OkStatus();
    case v1::ConstraintSpec::kGrammar:
      out.kind = SpecKind::kEbnf;
      out.text = spec.grammar().text();
      out.start_rule = spec.grammar().start_rule();
      switch (spec.grammar().dialect()) {
        case v1::GRAMMAR_DIALECT_GBNF:
          out.dialect = EbnfDialect::kGbnf;
          break;
        case v1::GRAMMAR_DIALECT_LARK:
          out.dialect = EbnfDialect::kLark;
          break;
        case v1::GRAMMAR_DIALECT_EBNF:
          out.dialect = EbnfDialect::kW3cEbnf;
          break;
        default:
          return absl::InvalidArgumentError(
              absl::StrCat("spec.grammar.dialect ", spec.grammar().dialect(),
                           " is not a known dialect (GBNF = 1, LARK = 2, EBNF = 3)"));
      }
      return absl::OkStatus();
    case v1::ConstraintSpec::kChoices:
      out.kind = SpecKind::kChoices;
      out.choices.assign(spec.choices().choices().begin(), spec.choices().choices().end());
      if (out.choices.empty()) {
        return absl::InvalidArgumentError(
            "spec.choices.choices is empty: give at least one choice");
      }
      return absl::OkStatus();
    case v1::ConstraintSpec::kBuiltinJson:
      out.kind = SpecKind::kBuiltinJson;
      return absl::OkStatus();
    case v1::ConstraintSpec::kStructuralTag:
      out.kind = SpecKind::kStructuralTag;
      out.text = spec.structural_tag();
      return absl::OkStatus();
    case v1::ConstraintSpec::kToolCalls:
      return TranslateToolCalls(spec.tool_calls(), out);
    case v1::ConstraintSpec::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "spec has no constraint set (json_schema, regex, grammar, choices, builtin_json, "
      "structural_tag or tool_calls)");
}

size_t SpecBytes(const GrammarSpec& spec) {
  size_t bytes = spec.text.size();
  for (const std::string& choice : spec.choices) bytes += choice.size();
  return bytes;
}

absl::Status TranslateOptions(const v1::CompileOptions& in, const CompileLimits& limits,
                              CompileJob& job) {
  CompileOptions& out = job.options;
  switch (in.whitespace()) {
    case v1::WHITESPACE_MODE_UNSPECIFIED:
    case v1::WHITESPACE_MODE_BOUNDED:
      out.whitespace = WhitespaceMode::kBounded;
      break;
    case v1::WHITESPACE_MODE_COMPACT:
      out.whitespace = WhitespaceMode::kCompact;
      break;
    case v1::WHITESPACE_MODE_FLEXIBLE:
      out.whitespace = WhitespaceMode::kFlexible;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("options.whitespace ", in.whitespace(), " is not a known WhitespaceMode"));
  }
  out.max_whitespace_run = out.whitespace == WhitespaceMode::kBounded
                               ? (in.max_whitespace_run() == 0 ? limits.default_max_whitespace_run
                                                               : in.max_whitespace_run())
                               : 0;
  switch (in.unknown_keywords()) {
    case v1::UNKNOWN_KEYWORD_POLICY_UNSPECIFIED:
    case v1::UNKNOWN_KEYWORD_POLICY_STRICT:
      out.strict = true;
      break;
    case v1::UNKNOWN_KEYWORD_POLICY_PERMISSIVE:
      out.strict = false;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "options.unknown_keywords ", in.unknown_keywords(), " is not a known policy"));
  }
  switch (in.property_order()) {
    case v1::PROPERTY_ORDER_UNSPECIFIED:
    case v1::PROPERTY_ORDER_SCHEMA_ORDER:
      out.property_order = PropertyOrder::kSchemaOrder;
      break;
    case v1::PROPERTY_ORDER_ANY_ORDER:
      out.property_order = PropertyOrder::kAnyOrder;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("options.property_order ", in.property_order(),
                                                     " is not a known PropertyOrder"));
  }
  switch (in.unknown_formats()) {
    case v1::UNKNOWN_FORMAT_POLICY_UNSPECIFIED:
    case v1::UNKNOWN_FORMAT_POLICY_REFUSE:
      out.unknown_formats = UnknownFormats::kRefuse;
      break;
    case v1::UNKNOWN_FORMAT_POLICY_IGNORE:
      out.unknown_formats = UnknownFormats::kIgnore;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "options.unknown_formats ", in.unknown_formats(), " is not a known UnknownFormatPolicy"));
  }
  if (in.max_recursion_depth() > kMaxRecursionDepthLimit) {
    // Deeper specs could overflow a compile thread's stack.
    return absl::InvalidArgumentError(
        absl::StrCat("options.max_recursion_depth ", in.max_recursion_depth(),
                     " is over the engine's limit of ", kMaxRecursionDepthLimit));
  }
  if (in.max_recursion_depth() != 0) out.max_recursion_depth = in.max_recursion_depth();
  out.reasoning_end_marker = in.reasoning_end_marker();
  out.default_dialect = in.default_dialect();
  for (const v1::SchemaResource& r : in.schema_resources()) {
    out.schema_resources.push_back({r.uri(), r.json()});
  }
  job.time_limit = limits.compile_time_limit;
  if (in.has_compile_time_limit()) {
    const absl::Duration asked = absl::Seconds(in.compile_time_limit().seconds()) +
                                 absl::Nanoseconds(in.compile_time_limit().nanos());
    if (asked <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options.compile_time_limit must be positive, got ", absl::FormatDuration(asked)));
    }
    job.time_limit = std::min(asked, limits.compile_time_limit);
  }
  // The engine stops at the server's limit, not the request's: the compile
  // is shared by every caller of the handle, and one in a hurry stops
  // waiting (job.time_limit) without cutting it short for the others.
  out.time_limit_ms = static_cast<uint64_t>(absl::ToInt64Milliseconds(limits.compile_time_limit));
  return absl::OkStatus();
}

}  // namespace

const char* SpecKindLabel(SpecKind kind) {
  switch (kind) {
    case SpecKind::kJsonSchema:
      return "json_schema";
    case SpecKind::kRegex:
      return "regex";
    case SpecKind::kEbnf:
      return "ebnf";
    case SpecKind::kChoices:
      return "choices";
    case SpecKind::kBuiltinJson:
      return "builtin_json";
    case SpecKind::kStructuralTag:
      return "structural_tag";
  }
  return "unknown";
}

CompileJob HealedCompileJob(const CompileJob& base, const std::string& removed_bytes) {
  CompileJob healed = base;
  // A grammar already healed (opened by its healed handle) keeps its own
  // prefix after the newly removed bytes.
  healed.options.required_prefix = removed_bytes + base.options.required_prefix;
  std::string key = "maskd.healed.v1;";
  AppendField(key, base.handle);
  AppendField(key, removed_bytes);
  healed.handle = Sha256Hex(key);
  return healed;
}

absl::StatusOr<CompileJob> TranslateCompileRequest(const v1::CompileRequest& request,
                                                   const CompileLimits& limits) {
  CompileJob job;
  job.tokenizer_id = request.tokenizer_id();
  if (absl::Status s = TranslateSpec(request.spec(), job.spec); !s.ok()) return s;
  if (job.spec.kind == SpecKind::kEbnf) job.start_rule = request.spec().grammar().start_rule();
  job.kind = SpecKindLabel(job.spec.kind);
  if (const size_t bytes = SpecBytes(job.spec); bytes > limits.max_spec_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("spec is ", bytes,
                                                     " bytes, over this server's limit of ",
                                                     limits.max_spec_bytes, " (--max_spec_bytes)"));
  }
  if (absl::Status s = TranslateOptions(request.options(), limits, job); !s.ok()) return s;
  // The $ref documents are spec too: the same limit covers them all.
  if (!job.options.schema_resources.empty()) {
    size_t bytes = SpecBytes(job.spec);
    for (const SchemaResource& r : job.options.schema_resources) {
      bytes += r.uri.size() + r.text.size();
    }
    if (bytes > limits.max_spec_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "spec and schema_resources are ", bytes, " bytes, over this server's limit of ",
          limits.max_spec_bytes, " (--max_spec_bytes)"));
    }
  }
  job.handle = ComputeHandle(job);
  return job;
}

bool IsSpecTranslationError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented ||
         status.GetPayload(kSpecErrorPayload).has_value();
}

}  // namespace maskd
