// The service benchmark's token source: MaskBench dev schemas that compile,
// each with the Llama-3 token ids of its valid instances, compiled both on
// the server (a handle) and in process (for the engine baseline).
#ifndef MASKD_BENCH_SERVICE_STEP_WORKLOAD_H_
#define MASKD_BENCH_SERVICE_STEP_WORKLOAD_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/maskbench/stats.h"
#include "clients/cpp/client.h"
#include "compiler/matcher/matcher.h"

namespace maskd::service_bench {

struct Instance {
  size_t schema = 0;  // index into Workload::handles / grammars
  std::vector<TokenId> tokens;
};

struct Workload {
  std::vector<std::string> handles;
  std::vector<std::shared_ptr<const CompiledGrammar>> grammars;
  std::vector<Instance> instances;
  size_t tokens = 0;
};

// Loads `sample` schemas of `maskbench_path` (a deterministic sample), keeps
// those that compile on both sides with at least one valid instance.
absl::StatusOr<Workload> BuildWorkload(const client::MaskdClient& client,
                                       const std::string& tokenizer_id,
                                       std::shared_ptr<const Tokenizer> tokenizer,
                                       const std::string& maskbench_path, size_t sample);

// What the engine alone costs per decoding step of one sequence, on one
// thread: the mask (FillMask) plus consuming the token, and everything a
// server step computes (mask, token, stop status, jump-forward).
struct EngineBaseline {
  maskbench::LatencySamples mask_and_accept_ns;
  maskbench::LatencySamples full_step_ns;
};

// Teacher-forces every instance `passes` times (the first pass warms the
// grammars' lazily built caches, as the server's warm-up does; only the
// last pass is recorded).
EngineBaseline MeasureEngine(const Workload& workload, int passes);

}  // namespace maskd::service_bench

#endif  // MASKD_BENCH_SERVICE_STEP_WORKLOAD_H_
