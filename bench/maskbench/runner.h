// Runs one MaskBench schema through the engine the way the benchmark's harness
// does: compile (TTFM), then teacher-force every instance token by token,
// computing the mask before each token (TBM = mask + consume), and check EOS at
// the end.
#ifndef MASKD_BENCH_MASKBENCH_RUNNER_H_
#define MASKD_BENCH_MASKBENCH_RUNNER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "bench/maskbench/stats.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "harness/maskbench_data.h"

namespace maskd::maskbench {

enum class Verdict {
  kPass,               // compiled, every instance got the expected verdict
  kCompileError,       // the engine refused the schema
  kValidationError,    // a valid instance was rejected (or could not end)
  kInvalidationError,  // an invalid instance was accepted to the end
  kEngineError,        // mask and AcceptToken disagreed, an Internal compile error, or the
                       // grammar reported a non-OK status(): a bug or a hit budget
  kTimeout,
};

const char* VerdictName(Verdict v);

struct SchemaResult {
  std::string name;
  Verdict verdict = Verdict::kPass;
  std::string reason;  // compile error text or the failing instance/token
  bool has_tests = false;
  uint64_t compile_ns = 0;
  uint64_t tokens = 0;
  uint64_t forced_tokens = 0;  // steps where exactly one token was allowed
  LatencySamples mask_ns;      // one sample per token: mask + consume
  // The slowest token (mask + consume), to find the outliers behind TBM max.
  uint64_t slowest_ns = 0;
  std::string slowest_where;  // "test I token J (id K)"
};

// What TBM and TTFM are measured with. Wall time is what a worker sees; the
// calling thread's CPU time leaves out the time the thread waited for a core,
// so runs on a loaded, shared machine stay comparable (it still counts page
// faults and cache misses that other processes cause).
enum class TimingClock { kWall, kThreadCpu };

struct RunOptions {
  CompileOptions compile;
  std::chrono::milliseconds time_limit{30'000};
  TimingClock clock = TimingClock::kWall;
};

// Deterministic for a given engine; `cancelled` is polled between tokens so a
// watchdog can stop a schema that ran past its time limit.
SchemaResult RunSchema(const SchemaCase& schema, std::shared_ptr<const Tokenizer> tokenizer,
                       const RunOptions& options, const std::atomic<bool>& cancelled);

}  // namespace maskd::maskbench

#endif  // MASKD_BENCH_MASKBENCH_RUNNER_H_
