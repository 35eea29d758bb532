// What the end-to-end tests share: a real maskd with the Llama-3 tokenizer
// on a free loopback port, the same tokenizer in process, MaskBench, and the
// server's /metrics.
#ifndef MASKD_TESTS_E2E_E2E_SUPPORT_H_
#define MASKD_TESTS_E2E_E2E_SUPPORT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clients/cpp/client.h"
#include "compiler/tokenizer/tokenizer.h"
#include "harness/maskd_process.h"

namespace maskd::e2e {

// testing::TokenizerDir("llama3") (harness/data_paths.h).
std::string Llama3Dir();

// maskd --tokenizer=llama3=DIR on 127.0.0.1:0 (gRPC and metrics) with a 1 s
// shutdown grace, plus `extra`.
absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> StartMaskd(
    const std::vector<std::string>& extra = {});

// The Llama-3 tokenizer loaded in this process (loaded once, shared).
absl::StatusOr<std::shared_ptr<const Tokenizer>> Llama3();

// A client of `process` with generous deadlines (ASan builds are slow).
std::unique_ptr<client::MaskdClient> ClientOf(const testing::MaskdProcess& process);

// A JSON Schema compiled by `client`'s server for its Llama-3 tokenizer.
struct CompiledSchema {
  std::string tokenizer_id;  // the server's id of "llama3"
  std::string handle;
};
absl::StatusOr<CompiledSchema> CompileForLlama3(const client::MaskdClient& client,
                                                const std::string& schema);

// GET http://ADDRESS/metrics; empty on failure.
std::string FetchMetrics(const std::string& metrics_address);

// The value of the sample `name_with_labels` (e.g.
// `maskd_active_sessions` or `maskd_errors_total{code="NOT_FOUND"}`) in a
// Prometheus text exposition; nullopt when absent.
std::optional<double> MetricValue(const std::string& exposition, const std::string& sample);

// Polls the server's /metrics until `sample` satisfies `want` or `seconds`
// pass (the server updates gauges asynchronously); the last value seen.
std::optional<double> WaitForMetric(const std::string& metrics_address, const std::string& sample,
                                    const std::function<bool(double)>& want, int seconds);

}  // namespace maskd::e2e

#endif  // MASKD_TESTS_E2E_E2E_SUPPORT_H_
