#include "service/memory_metrics.h"

#include <string>
#include <utility>

namespace maskd {
namespace {

prometheus::ClientMetric Value(double value, std::vector<prometheus::ClientMetric::Label> labels,
                               bool counter) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  if (counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return metric;
}

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> MemoryCollector::Collect() const {
  prometheus::MetricFamily used =
      Family("maskd_memory_budget_bytes",
             "Bytes each kind holds of the process-wide memory budget (--memory_budget_bytes).",
             prometheus::MetricType::Gauge);
  prometheus::MetricFamily refusals =
      Family("maskd_memory_budget_refusals_total",
             "Charges the memory budget refused (RESOURCE_EXHAUSTED), by kind.",
             prometheus::MetricType::Counter);
  for (int k = 0; k < kMemoryKinds; ++k) {
    const auto kind = static_cast<MemoryKind>(k);
    used.metric.push_back(Value(static_cast<double>(budget_->used(kind)),
                                {{"kind", MemoryKindName(kind)}}, /*counter=*/false));
    refusals.metric.push_back(Value(static_cast<double>(budget_->refusals(kind)),
                                    {{"kind", MemoryKindName(kind)}}, /*counter=*/true));
  }
  prometheus::MetricFamily limit =
      Family("maskd_memory_budget_limit_bytes",
             "The process-wide memory budget (--memory_budget_bytes; 0: no limit).",
             prometheus::MetricType::Gauge);
  limit.metric.push_back(Value(static_cast<double>(budget_->limit()), {}, false));
  prometheus::MetricFamily tenants =
      Family("maskd_cache_tenant_bytes",
             "Bytes of cached (and held oversized) grammars by the tenant that last compiled "
             "them (\"-\": stored before the tenant was known).",
             prometheus::MetricType::Gauge);
  for (const auto& [tenant, bytes] : store_->CachedBytesByTenant()) {
    tenants.metric.push_back(Value(static_cast<double>(bytes), {{"tenant", tenant}}, false));
  }
  prometheus::MetricFamily quota_evictions =
      Family("maskd_cache_tenant_quota_evictions_total",
             "Grammars evicted to keep their tenant within --max_cache_bytes_per_tenant (only "
             "ever that tenant's own).",
             prometheus::MetricType::Counter);
  for (const auto& [tenant, count] : store_->TenantQuotaEvictions()) {
    quota_evictions.metric.push_back(
        Value(static_cast<double>(count), {{"tenant", tenant}}, /*counter=*/true));
  }
  std::vector<prometheus::MetricFamily> out;
  out.push_back(std::move(used));
  out.push_back(std::move(refusals));
  out.push_back(std::move(limit));
  out.push_back(std::move(tenants));
  out.push_back(std::move(quota_evictions));
  return out;
}

}  // namespace maskd
