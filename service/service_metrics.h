// The service's own Prometheus metrics (DESIGN.md §5), in one registry that
// the metrics endpoint exposes. The names are a team contract (the dashboard,
// the alerts and the tests use them): change none without changing those.
#ifndef MASKD_SERVICE_SERVICE_METRICS_H_
#define MASKD_SERVICE_SERVICE_METRICS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "cache/cache_stats.h"
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
  // Who made the call: one per unary RPC with its final code, one per
  // Session stream when it is opened (code OK, or UNAUTHENTICATED). `tenant`
  // is the token's tenant ("default" without tokens), "-" when the caller
  // could not be authenticated (no tenant name starts with '-').
  void CountTenantCall(const std::string& tenant, const std::string& method, grpc::StatusCode code);
  void SetTokenizerCount(size_t count);
  prometheus::Gauge& active_streams() { return *active_streams_; }

  // One real compile (a cache miss) of a spec of `kind` (json_schema, regex,
  // ...) and its outcome.
  void RecordCompile(const char* kind, const absl::Status& outcome, double seconds);
  // Cache lookups: hit (a cached value or cached error), miss (started a
  // compile, or a handle this replica does not hold), join (waited for a
  // compile already in flight).
  void CountCacheHit() { cache_hits_->Increment(); }
  void CountCacheMiss() { cache_misses_->Increment(); }
  void CountCacheJoin() { cache_joins_->Increment(); }
  void CountCacheEviction() { cache_evictions_->Increment(); }
  void SetCacheSize(const CacheStats& stats);

  // Time to compute one sequence's mask (the engine's FillMask).
  void ObserveMask(double seconds) { mask_seconds_->Observe(seconds); }
  // One Session request: receive to response written, and its op count.
  void ObserveStep(double seconds, size_t batch_size);
  prometheus::Gauge& active_sessions() { return *active_sessions_; }
  void CountTokens(uint64_t accepted, uint64_t rejected);
  void CountJumpForwardBytes(uint64_t bytes) { jump_forward_bytes_->Increment(bytes); }
  // A per-sequence or per-spec error, or a failed RPC, by gRPC code.
  void CountError(absl::StatusCode code);
  enum class MaskEncodingLabel { kBitmask, kAllow, kDeny, kDictionaryRef };
  void CountMaskBytes(MaskEncodingLabel encoding, uint64_t bytes);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* rpc_total_;
  prometheus::Family<prometheus::Histogram>* rpc_seconds_;
  prometheus::Family<prometheus::Counter>* tenant_calls_;
  prometheus::Gauge* tokenizers_;
  prometheus::Gauge* active_streams_;
  prometheus::Family<prometheus::Histogram>* compile_seconds_;
  prometheus::Counter* cache_hits_;
  prometheus::Counter* cache_misses_;
  prometheus::Counter* cache_joins_;
  prometheus::Counter* cache_evictions_;
  prometheus::Gauge* cache_bytes_;
  prometheus::Gauge* cache_entries_;
  prometheus::Histogram* mask_seconds_;
  prometheus::Histogram* step_seconds_;
  prometheus::Histogram* step_batch_size_;
  prometheus::Gauge* active_sessions_;
  prometheus::Counter* tokens_accepted_;
  prometheus::Counter* tokens_rejected_;
  prometheus::Counter* jump_forward_bytes_;
  prometheus::Family<prometheus::Counter>* errors_;
  prometheus::Counter* mask_bytes_[4];
};

// Feeds a compile cache's events into ServiceMetrics (cache request counts,
// evictions, and the size gauges, refreshed from `stats` on every event).
// Compile latency is recorded by the compiling code, which knows the kind.
class CacheMetricsObserver final : public CacheObserver {
 public:
  explicit CacheMetricsObserver(ServiceMetrics* metrics) : metrics_(metrics) {}
  // The cache to read sizes from; set once, before any event.
  void set_stats_source(std::function<CacheStats()> source) { stats_ = std::move(source); }

  void OnHit() override;
  void OnMiss() override;
  void OnErrorHit() override;
  void OnJoin() override;
  void OnEviction(size_t bytes) override;
  void OnOversized(size_t bytes) override;
  void OnComputeDone(absl::Duration elapsed, const absl::Status& status) override;

 private:
  void RefreshSize();

  ServiceMetrics* metrics_;
  std::function<CacheStats()> stats_;
};

// "OK", "INVALID_ARGUMENT", ...: the label value for a gRPC status code.
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace maskd

#endif  // MASKD_SERVICE_SERVICE_METRICS_H_
