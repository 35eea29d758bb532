// The service's own Prometheus metrics (DESIGN.md §5), in one registry that
// the metrics endpoint exposes. Engine metrics (compile latency, cache,
// masks) join this registry as the engine lands.
#ifndef MASKD_SERVICE_SERVICE_METRICS_H_
#define MASKD_SERVICE_SERVICE_METRICS_H_

#include <memory>
#include <string>

#include "grpcpp/support/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace maskd {

// Version and commit baked in at build time.
struct BuildInfo {
  std::string version;
  std::string commit;
};
BuildInfo CurrentBuildInfo();

class ServiceMetrics {
 public:
  explicit ServiceMetrics(const BuildInfo& build_info);

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // Counts one finished RPC by method and gRPC code and records its latency.
  void RecordRpc(const std::string& method, grpc::StatusCode code, double seconds);
  void SetTokenizerCount(size_t count);
  prometheus::Gauge& active_streams() { return *active_streams_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* rpc_total_;
  prometheus::Family<prometheus::Histogram>* rpc_seconds_;
  prometheus::Gauge* tokenizers_;
  prometheus::Gauge* active_streams_;
};

// "OK", "INVALID_ARGUMENT", ...: the label value for a gRPC status code.
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace maskd

#endif  // MASKD_SERVICE_SERVICE_METRICS_H_
