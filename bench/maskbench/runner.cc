#include "bench/maskbench/runner.h"

#include <time.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"

namespace maskd::maskbench {
namespace {

using Clock = std::chrono::steady_clock;

// A stopwatch on RunOptions::clock.
class Stopwatch {
 public:
  explicit Stopwatch(TimingClock clock) : clock_(clock), start_(Now()) {}
  uint64_t ElapsedNs() const { return Now() - start_; }

 private:
  uint64_t Now() const {
    if (clock_ == TimingClock::kWall) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count();
    }
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
  }
  TimingClock clock_;
  uint64_t start_;
};

// A lazily built automaton that hit its budget (CompiledGrammar::status())
// leaves masks that may lack tokens: every verdict reached from them is the
// engine's failure, never the schema's, so it is an engine error.
bool GrammarFailed(const CompiledGrammar& grammar, std::string* where) {
  const absl::Status status = grammar.status();
  if (status.ok()) return false;
  *where = absl::StrCat("grammar status: ", status.ToString());
  return true;
}

bool MaskAllows(const std::vector<uint32_t>& mask, TokenId token) {
  return (mask[token / 32] >> (token % 32)) & 1;
}

// Exactly one token allowed (stops at the second; a popcount of every word
// costs more than the mask with baseline x86-64 code generation).
bool OneAllowed(const std::vector<uint32_t>& mask) {
  bool seen = false;
  for (uint32_t w : mask) {
    if (w == 0) continue;
    if (seen || (w & (w - 1)) != 0) return false;
    seen = true;
  }
  return seen;
}

// Outcome of teacher-forcing one instance.
struct InstanceOutcome {
  bool accepted = false;  // every token allowed and EOS allowed at the end
  std::string where;      // first rejection, for the results file
  bool engine_error = false;
  bool timed_out = false;
};

InstanceOutcome ForceInstance(size_t test, const std::vector<TokenId>& tokens,
                              const std::shared_ptr<const CompiledGrammar>& grammar,
                              const RunOptions& options, Clock::time_point schema_start,
                              const std::atomic<bool>& cancelled, SchemaResult& result) {
  InstanceOutcome out;
  std::unique_ptr<Matcher> matcher = Matcher::Create(grammar);
  std::vector<uint32_t> mask((grammar->tokenizer().vocab_size() + 31) / 32);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (cancelled.load(std::memory_order_relaxed) ||
        Clock::now() - schema_start > options.time_limit) {
      out.timed_out = true;
      return out;
    }
    const Stopwatch watch(options.clock);
    matcher->FillMask(mask);
    bool allowed = MaskAllows(mask, tokens[i]);
    bool consumed = allowed && matcher->AcceptToken(tokens[i]);
    const uint64_t ns = watch.ElapsedNs();
    result.mask_ns.Add(ns);
    if (GrammarFailed(*grammar, &out.where)) {
      out.engine_error = true;
      out.where = absl::StrCat("token ", i, ": ", out.where);
      return out;
    }
    if (ns > result.slowest_ns) {
      result.slowest_ns = ns;
      result.slowest_where = absl::StrCat("test ", test, " token ", i, " (id ", tokens[i], ")");
    }
    ++result.tokens;
    if (OneAllowed(mask)) ++result.forced_tokens;
    if (allowed != consumed) {
      out.engine_error = true;
      out.where = absl::StrCat("token ", i, " (id ", tokens[i], ") in mask but not accepted");
      return out;
    }
    if (!allowed) {
      out.where =
          absl::StrCat("token ", i, " (id ", tokens[i], ", ",
                       std::string(grammar->tokenizer().token_bytes(tokens[i])), ") not allowed");
      return out;
    }
  }
  out.accepted = matcher->CanStop();
  if (!out.accepted) out.where = "EOS not allowed at the end";
  // EOS must be in the mask exactly when the matcher can stop.
  matcher->FillMask(mask);
  if (GrammarFailed(*grammar, &out.where)) {
    out.engine_error = true;
    return out;
  }
  for (TokenId eos : grammar->tokenizer().eos_ids()) {
    if (MaskAllows(mask, eos) != out.accepted) {
      out.engine_error = true;
      out.where = "EOS bit disagrees with CanStop()";
    }
  }
  return out;
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kCompileError:
      return "compile_error";
    case Verdict::kValidationError:
      return "validation_error";
    case Verdict::kInvalidationError:
      return "invalidation_error";
    case Verdict::kEngineError:
      return "engine_error";
    case Verdict::kTimeout:
      return "timeout";
  }
  return "unknown";
}

SchemaResult RunSchema(const SchemaCase& schema, std::shared_ptr<const Tokenizer> tokenizer,
                       const RunOptions& options, const std::atomic<bool>& cancelled) {
  SchemaResult result;
  result.name = schema.name;
  result.has_tests = !schema.tests.empty();
  // Tokenize outside the timed region: the worker sent token ids.
  std::vector<std::vector<TokenId>> tokens;
  tokens.reserve(schema.tests.size());
  for (const Instance& instance : schema.tests) tokens.push_back(tokenizer->Encode(instance.text));

  Clock::time_point schema_start = Clock::now();
  const Stopwatch compile_watch(options.clock);
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = schema.schema;
  absl::StatusOr<std::shared_ptr<const CompiledGrammar>> grammar =
      CompileGrammar(spec, options.compile, tokenizer);
  result.compile_ns = compile_watch.ElapsedNs();
  if (!grammar.ok()) {
    // Internal: an error the engine did not mean to give (a lowering bug),
    // counted against the engine, never as a refusal.
    const absl::StatusCode code = grammar.status().code();
    result.verdict = code == absl::StatusCode::kDeadlineExceeded ? Verdict::kTimeout
                     : code == absl::StatusCode::kInternal       ? Verdict::kEngineError
                                                                 : Verdict::kCompileError;
    result.reason = std::string(grammar.status().message());
    return result;
  }
  if (GrammarFailed(**grammar, &result.reason)) {
    result.verdict = Verdict::kEngineError;
    return result;
  }
  for (size_t i = 0; i < schema.tests.size(); ++i) {
    const Instance& instance = schema.tests[i];
    InstanceOutcome outcome =
        ForceInstance(i, tokens[i], *grammar, options, schema_start, cancelled, result);
    std::string which = absl::StrCat("test ", i, " (", instance.valid ? "valid" : "invalid", "): ");
    if (outcome.timed_out) {
      result.verdict = Verdict::kTimeout;
      result.reason = which + "time limit";
      return result;
    }
    if (outcome.engine_error) {
      result.verdict = Verdict::kEngineError;
      result.reason = which + outcome.where;
      return result;
    }
    if (instance.valid && !outcome.accepted && result.verdict == Verdict::kPass) {
      result.verdict = Verdict::kValidationError;
      result.reason = which + outcome.where;
    }
    if (!instance.valid && outcome.accepted) {
      // Invalidation errors outrank validation errors: they are the ones that
      // let a model emit output the schema forbids.
      result.verdict = Verdict::kInvalidationError;
      result.reason = which + "accepted to the end";
    }
  }
  return result;
}

}  // namespace maskd::maskbench
