// maskbench: the MaskBench harness (JSONSchemaBench's mask benchmark) for the
// maskd engine. Prints one table; see --help for the flags.
//
//   build/release/bench/maskbench/maskbench --sample 1615
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "bench/maskbench/runner.h"
#include "harness/data_paths.h"
#include "harness/maskbench_data.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, tokenizer, "",
          "tokenizer directory (with tokenizer.json) or file; default: the Llama-3 tokenizer in "
          "$MASKD_TOKENIZER_DIR or ~/.cache/maskd/tokenizers");
ABSL_FLAG(std::string, data, "",
          "MaskBench JSON Lines (.jsonl or .jsonl.gz) or a folder of "
          "*.json; default: $MASKD_MASKBENCH or ../shared/maskbench/dev.jsonl.gz next to the "
          "repository");
ABSL_FLAG(size_t, sample, 0, "run a deterministic sample of N schemas (0: all)");
ABSL_FLAG(double, time_limit_s, 30, "per-schema time limit; past it the schema is a timeout");
ABSL_FLAG(int, threads, 1, "schemas run in parallel (timings are per thread)");
ABSL_FLAG(bool, strict, false,
          "unknown JSON Schema keywords are compile errors (default: ignored, as validators do)");
ABSL_FLAG(std::string, property_order, "schema",
          "object keys in 'schema' order or in 'any' order (each declared key at most once), "
          "as MaskBench's instances, written by json.dumps from parsed documents, may have them");
ABSL_FLAG(std::string, unknown_formats, "refuse",
          "JSON Schema formats without an exact language: 'refuse' the schema or 'ignore' "
          "them (plain strings)");
ABSL_FLAG(std::string, summary_json, "", "write the table's numbers as one JSON object here");
ABSL_FLAG(std::string, results, "", "write one JSON line per schema (verdict, reason) here");
ABSL_FLAG(std::string, clock, "wall",
          "what TBM and TTFM measure: wall, or thread_cpu (the calling thread's CPU time: "
          "comparable between runs on a loaded machine)");
ABSL_FLAG(int64_t, state_mask_hot_nodes, -1,
          "CompileOptions::state_mask_hot_nodes (whole masks cached by parse state at lexer "
          "positions whose walks visited this many trie nodes); -1: the engine's default");
ABSL_FLAG(int, slowest, 10,
          "list this many schemas with the slowest token and the slowest compile");

namespace maskd::maskbench {
namespace {

using Clock = std::chrono::steady_clock;

// The reason a compile failed, without the instance-specific tail: the table
// groups compile errors by it.
std::string ReasonClass(const std::string& reason) {
  std::string head = reason.substr(0, reason.find(" at /"));
  return head.substr(0, 100);
}

struct Worker {
  std::atomic<bool> cancelled{false};
  std::atomic<int64_t> started_ns{0};  // of the current schema; 0 when idle
  std::atomic<size_t> current{0};      // index into `picked` of the current schema
};

// The schemas behind TBM max and TTFM max: the tail list.
void PrintSlowest(const std::vector<SchemaResult>& results, size_t n) {
  if (n == 0) return;
  std::vector<const SchemaResult*> by_token, by_compile;
  for (const SchemaResult& r : results) {
    if (r.tokens > 0) by_token.push_back(&r);
    if (r.verdict != Verdict::kCompileError) by_compile.push_back(&r);
  }
  auto top = [n](std::vector<const SchemaResult*>& v, auto key) {
    std::sort(v.begin(), v.end(),
              [&](const SchemaResult* a, const SchemaResult* b) { return key(*a) > key(*b); });
    if (v.size() > n) v.resize(n);
  };
  top(by_token, [](const SchemaResult& r) { return r.slowest_ns; });
  top(by_compile, [](const SchemaResult& r) { return r.compile_ns; });
  std::printf("\nslowest tokens (mask + consume):\n");
  for (const SchemaResult* r : by_token) {
    std::printf("  %10.1f us  %s  %s\n", r->slowest_ns / 1000.0, r->name.c_str(),
                r->slowest_where.c_str());
  }
  std::printf("\nslowest compiles (TTFM):\n");
  for (const SchemaResult* r : by_compile) {
    std::printf("  %10.1f us  %s  %s\n", r->compile_ns / 1000.0, r->name.c_str(),
                VerdictName(r->verdict));
  }
}

int Main() {
  std::string tokenizer_path = absl::GetFlag(FLAGS_tokenizer);
  if (tokenizer_path.empty()) tokenizer_path = testing::TokenizerDir("llama3");
  auto tokenizer = Tokenizer::FromDirectory(tokenizer_path);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "maskbench: tokenizer: %s\n", tokenizer.status().ToString().c_str());
    return 2;
  }
  // As a server does when it loads a tokenizer (and llguidance when it
  // builds its token trie): the vocabulary index is not part of any TTFM.
  if (absl::Status prepared = PrepareTokenizer(*tokenizer); !prepared.ok()) {
    std::fprintf(stderr, "maskbench: tokenizer: %s\n", prepared.ToString().c_str());
    return 2;
  }
  std::string data = absl::GetFlag(FLAGS_data);
  if (data.empty()) data = testing::MaskBenchPath();
  auto cases = LoadMaskBench(data);
  if (!cases.ok()) {
    std::fprintf(stderr, "maskbench: data: %s\n", cases.status().ToString().c_str());
    return 2;
  }
  std::vector<size_t> picked = DeterministicSample(
      cases->size(), absl::GetFlag(FLAGS_sample) ? absl::GetFlag(FLAGS_sample) : cases->size());
  RunOptions options;
  options.compile.strict = absl::GetFlag(FLAGS_strict);
  if (absl::GetFlag(FLAGS_state_mask_hot_nodes) >= 0) {
    options.compile.state_mask_hot_nodes =
        static_cast<uint64_t>(absl::GetFlag(FLAGS_state_mask_hot_nodes));
  }
  if (absl::GetFlag(FLAGS_property_order) == "any") {
    options.compile.property_order = PropertyOrder::kAnyOrder;
  } else if (absl::GetFlag(FLAGS_property_order) != "schema") {
    std::fprintf(stderr, "maskbench: --property_order must be 'schema' or 'any', not '%s'\n",
                 absl::GetFlag(FLAGS_property_order).c_str());
    return 2;
  }
  if (absl::GetFlag(FLAGS_unknown_formats) == "ignore") {
    options.compile.unknown_formats = UnknownFormats::kIgnore;
  } else if (absl::GetFlag(FLAGS_unknown_formats) != "refuse") {
    std::fprintf(stderr, "maskbench: --unknown_formats must be 'refuse' or 'ignore', not '%s'\n",
                 absl::GetFlag(FLAGS_unknown_formats).c_str());
    return 2;
  }
  options.time_limit =
      std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_time_limit_s) * 1000));
  if (const std::string clock = absl::GetFlag(FLAGS_clock); clock == "thread_cpu") {
    options.clock = TimingClock::kThreadCpu;
  } else if (clock != "wall") {
    std::fprintf(stderr, "maskbench: --clock must be wall or thread_cpu, not '%s'\n",
                 clock.c_str());
    return 2;
  }

  std::vector<SchemaResult> results(picked.size());
  std::vector<bool> done(picked.size(), false);
  std::mutex mu;
  std::atomic<size_t> next{0};
  const Clock::time_point run_start = Clock::now();
  auto now_ns = [&] { return (Clock::now() - run_start).count() + 1; };

  // Each worker takes schemas off a shared counter. A watchdog abandons a worker
  // whose schema hangs past the limit (inside one engine call, where the
  // per-token check cannot see it), counts that schema as a timeout and starts a
  // replacement, so the run goes on.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  auto start_worker = [&]() {
    workers.push_back(std::make_unique<Worker>());
    Worker* w = workers.back().get();
    threads.emplace_back([&, w] {
      for (size_t i; (i = next.fetch_add(1)) < picked.size();) {
        w->current = i;
        w->started_ns = now_ns();
        SchemaResult r = RunSchema((*cases)[picked[i]], *tokenizer, options, w->cancelled);
        w->started_ns = 0;
        std::lock_guard<std::mutex> lock(mu);
        if (w->cancelled) return;  // the watchdog already counted it
        results[i] = std::move(r);
        done[i] = true;
      }
    });
  };
  const int thread_count = std::max(1, absl::GetFlag(FLAGS_threads));
  for (int t = 0; t < thread_count; ++t) start_worker();
  size_t abandoned = 0;
  const int64_t grace_ns = options.time_limit.count() * 1'000'000 * 3 / 2;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mu);
    size_t finished = 0;
    for (bool d : done) finished += d;
    if (finished == picked.size()) break;
    for (size_t k = 0; k < workers.size(); ++k) {
      Worker* w = workers[k].get();
      int64_t started = w->started_ns;
      if (started == 0 || w->cancelled || now_ns() - started < grace_ns) continue;
      w->cancelled = true;
      ++abandoned;
      size_t i = w->current;
      results[i].name = (*cases)[picked[i]].name;
      results[i].has_tests = !(*cases)[picked[i]].tests.empty();
      results[i].verdict = Verdict::kTimeout;
      results[i].reason = "watchdog: an engine call ran past the time limit";
      done[i] = true;
      threads[k].detach();
      start_worker();
    }
  }
  for (size_t k = 0; k < threads.size(); ++k) {
    if (threads[k].joinable() && !workers[k]->cancelled) threads[k].join();
  }

  // Aggregate.
  std::map<Verdict, size_t> verdicts;
  std::map<std::string, size_t> compile_reasons;
  LatencySamples tbm, ttfm;
  uint64_t tokens = 0, forced = 0;
  size_t with_tests = 0, passing = 0;
  for (SchemaResult& r : results) {
    ++verdicts[r.verdict];
    if (r.has_tests) {
      ++with_tests;
      if (r.verdict == Verdict::kPass) ++passing;
    }
    if (r.verdict == Verdict::kCompileError) ++compile_reasons[ReasonClass(r.reason)];
    if (r.verdict != Verdict::kCompileError) ttfm.Add(r.compile_ns);
    tbm.Merge(r.mask_ns);
    tokens += r.tokens;
    forced += r.forced_tokens;
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const double peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;

  nlohmann::ordered_json summary;
  summary["property_order"] = absl::GetFlag(FLAGS_property_order);
  summary["unknown_formats"] = absl::GetFlag(FLAGS_unknown_formats);
  summary["clock"] = absl::GetFlag(FLAGS_clock);
  summary["schemas"] = results.size();
  summary["with_tests"] = with_tests;
  summary["passing"] = passing;
  summary["compile_errors"] = verdicts[Verdict::kCompileError];
  summary["validation_errors"] = verdicts[Verdict::kValidationError];
  summary["invalidation_errors"] = verdicts[Verdict::kInvalidationError];
  summary["engine_errors"] = verdicts[Verdict::kEngineError];
  summary["timeouts"] = verdicts[Verdict::kTimeout];
  summary["tokens"] = tokens;
  summary["forced_token_share"] = tokens ? static_cast<double>(forced) / tokens : 0.0;
  for (auto [label, p] : {std::pair{"avg", -1.0},
                          {"p50", 50.0},
                          {"p75", 75.0},
                          {"p90", 90.0},
                          {"p95", 95.0},
                          {"p99", 99.0},
                          {"p99.9", 99.9},
                          {"max", 100.0}}) {
    summary["tbm_us"][label] = p < 0 ? tbm.MeanUs() : tbm.PercentileUs(p);
  }
  for (auto [label, p] : {std::pair{"p50", 50.0},
                          {"p75", 75.0},
                          {"p90", 90.0},
                          {"p95", 95.0},
                          {"p99", 99.0},
                          {"max", 100.0}}) {
    summary["ttfm_us"][label] = ttfm.PercentileUs(p);
  }
  summary["peak_rss_mib"] = peak_rss_mib;
  summary["compile_error_reasons"] = compile_reasons;

  std::printf("| metric | value |\n|---|---:|\n");
  std::printf("| schemas | %zu |\n| with tests | %zu |\n", results.size(), with_tests);
  std::printf("| passing (of with tests) | %zu (%.1f%%) |\n", passing,
              with_tests ? 100.0 * passing / with_tests : 0.0);
  for (Verdict v : {Verdict::kCompileError, Verdict::kValidationError, Verdict::kInvalidationError,
                    Verdict::kEngineError, Verdict::kTimeout}) {
    std::printf("| %s | %zu |\n", VerdictName(v), verdicts[v]);
  }
  for (auto& [label, value] : summary["tbm_us"].items()) {
    std::printf("| TBM %s (us) | %.1f |\n", label.c_str(), value.get<double>());
  }
  for (auto& [label, value] : summary["ttfm_us"].items()) {
    std::printf("| TTFM %s (us) | %.1f |\n", label.c_str(), value.get<double>());
  }
  std::printf("| tokens | %llu |\n| forced-token share | %.1f%% |\n| peak RSS (MiB) | %.0f |\n",
              static_cast<unsigned long long>(tokens),
              100.0 * summary["forced_token_share"].get<double>(), peak_rss_mib);
  if (!compile_reasons.empty()) {
    std::printf("\ncompile errors by reason:\n");
    for (auto& [reason, n] : compile_reasons) std::printf("  %5zu  %s\n", n, reason.c_str());
  }
  PrintSlowest(results, static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_slowest))));

  if (std::string path = absl::GetFlag(FLAGS_summary_json); !path.empty()) {
    std::ofstream(path) << summary.dump(2) << "\n";
  }
  if (std::string path = absl::GetFlag(FLAGS_results); !path.empty()) {
    std::ofstream out(path);
    for (const SchemaResult& r : results) {
      nlohmann::ordered_json line;
      line["name"] = r.name;
      line["verdict"] = VerdictName(r.verdict);
      line["reason"] = r.reason;
      line["compile_us"] = r.compile_ns / 1000.0;
      line["tokens"] = r.tokens;
      line["slowest_token_us"] = r.slowest_ns / 1000.0;
      line["slowest_token"] = r.slowest_where;
      out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  }
  std::fflush(stdout);
  // Abandoned workers may still be running inside the engine: do not wait.
  if (abandoned) std::_Exit(0);
  return 0;
}

}  // namespace
}  // namespace maskd::maskbench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "MaskBench harness for the maskd engine. Flags may be spelled with - or _ "
      "(--summary-json or --summary_json).");
  // absl flags are spelled with underscores; accept the dashed spelling too.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> normalized;
  for (std::string& arg : args) {
    if (arg.rfind("--", 0) == 0) {
      for (size_t i = 2; i < arg.size() && arg[i] != '='; ++i) {
        if (arg[i] == '-') arg[i] = '_';
      }
    }
    normalized.push_back(arg.data());
  }
  absl::ParseCommandLine(static_cast<int>(normalized.size()), normalized.data());
  return maskd::maskbench::Main();
}
