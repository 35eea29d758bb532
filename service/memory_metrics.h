// The memory budget and the cache's per-tenant charge as Prometheus gauges,
// read at scrape time: maskd_memory_budget_bytes{kind} (what each kind holds:
// sessions, sequences, dictionaries, compiles, cache), maskd_memory_budget_limit_bytes,
// maskd_memory_budget_refusals_total{kind} and maskd_cache_tenant_bytes{tenant}
// (cached and held grammars by the tenant whose compile stored them).
#ifndef MASKD_SERVICE_MEMORY_METRICS_H_
#define MASKD_SERVICE_MEMORY_METRICS_H_

#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "service/grammar_store.h"
#include "service/memory_budget.h"

namespace maskd {

class MemoryCollector : public prometheus::Collectable {
 public:
  // Both must outlive the collector's registration.
  MemoryCollector(const MemoryBudget* budget, GrammarStore* store)
      : budget_(budget), store_(store) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const MemoryBudget* budget_;
  GrammarStore* store_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_MEMORY_METRICS_H_
