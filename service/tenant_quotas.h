// Per-tenant quotas on what a tenant holds at once: open Session streams and
// open sequences (tenant = the bearer token's tenant, "default" without
// tokens). One tenant at its quota is refused (RESOURCE_EXHAUSTED naming the
// flag and the tenant) while every other tenant goes on: a flood by one
// token cannot use up what the replica has for all.
//
// What a tenant holds is published as gauges labelled by tenant
// (maskd_tenant_streams, maskd_tenant_sequences), refusals as
// maskd_tenant_quota_refusals_total{tenant,quota}.
#ifndef MASKD_SERVICE_TENANT_QUOTAS_H_
#define MASKD_SERVICE_TENANT_QUOTAS_H_

#include <cstddef>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace maskd {

struct TenantQuotaLimits {
  // Session streams one tenant may hold open (--max_streams_per_tenant).
  size_t max_streams = 1024;
  // Sequences one tenant may hold open over all its streams
  // (--max_sequences_per_tenant).
  size_t max_sequences = 65536;
};

class TenantQuotas {
 public:
  // Registers the tenant metric families on `registry`.
  TenantQuotas(const TenantQuotaLimits& limits, prometheus::Registry& registry);

  TenantQuotas(const TenantQuotas&) = delete;
  TenantQuotas& operator=(const TenantQuotas&) = delete;

  // Takes one stream of `tenant`'s quota, or RESOURCE_EXHAUSTED (nothing
  // taken). Every OK is matched by one ReleaseStream.
  absl::Status AcquireStream(const std::string& tenant);
  void ReleaseStream(const std::string& tenant);

  // Takes one open sequence of `tenant`'s quota, or RESOURCE_EXHAUSTED.
  absl::Status AcquireSequence(const std::string& tenant);
  void ReleaseSequences(const std::string& tenant, size_t count);

  size_t streams(const std::string& tenant) const;
  size_t sequences(const std::string& tenant) const;
  const TenantQuotaLimits& limits() const { return limits_; }

 private:
  struct Held {
    size_t streams = 0;
    size_t sequences = 0;
    prometheus::Gauge* streams_gauge = nullptr;
    prometheus::Gauge* sequences_gauge = nullptr;
  };
  // The tenant's entry, created (with its gauges) on first use; caller
  // holds mu_.
  Held& HeldLocked(const std::string& tenant);
  void CountRefusal(const std::string& tenant, const char* quota);

  const TenantQuotaLimits limits_;
  prometheus::Family<prometheus::Gauge>* streams_family_;
  prometheus::Family<prometheus::Gauge>* sequences_family_;
  prometheus::Family<prometheus::Counter>* refusals_family_;

  mutable std::mutex mu_;
  // Tenants are few (the token file's names): entries are kept, so the
  // gauges keep reporting 0 after a tenant's last stream.
  absl::flat_hash_map<std::string, Held> held_;  // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_TENANT_QUOTAS_H_
