#include "service/tenant_quotas.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace maskd {

TenantQuotas::TenantQuotas(const TenantQuotaLimits& limits, prometheus::Registry& registry)
    : limits_(limits),
      streams_family_(&prometheus::BuildGauge()
                           .Name("maskd_tenant_streams")
                           .Help("Open Session streams by tenant (--max_streams_per_tenant).")
                           .Register(registry)),
      sequences_family_(
          &prometheus::BuildGauge()
               .Name("maskd_tenant_sequences")
               .Help("Open sequences by tenant, over all its streams (--max_sequences_per_tenant).")
               .Register(registry)),
      refusals_family_(&prometheus::BuildCounter()
                            .Name("maskd_tenant_quota_refusals_total")
                            .Help("Requests refused because a tenant was at a quota, by tenant "
                                  "and quota (the flag's name).")
                            .Register(registry)) {}

TenantQuotas::Held& TenantQuotas::HeldLocked(const std::string& tenant) {
  auto [it, inserted] = held_.try_emplace(tenant);
  if (inserted) {
    it->second.streams_gauge = &streams_family_->Add({{"tenant", tenant}});
    it->second.sequences_gauge = &sequences_family_->Add({{"tenant", tenant}});
  }
  return it->second;
}

void TenantQuotas::CountRefusal(const std::string& tenant, const char* quota) {
  refusals_family_->Add({{"tenant", tenant}, {"quota", quota}}).Increment();
}

absl::Status TenantQuotas::AcquireStream(const std::string& tenant) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Held& held = HeldLocked(tenant);
    if (held.streams < limits_.max_streams) {
      ++held.streams;
      held.streams_gauge->Increment();
      return absl::OkStatus();
    }
  }
  CountRefusal(tenant, "max_streams_per_tenant");
  return absl::ResourceExhaustedError(
      absl::StrCat("tenant \"", tenant, "\" already holds ", limits_.max_streams,
                   " open Session streams, its quota (--max_streams_per_tenant); close one or "
                   "retry later"));
}

void TenantQuotas::ReleaseStream(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = HeldLocked(tenant);
  if (held.streams == 0) return;
  --held.streams;
  held.streams_gauge->Decrement();
}

absl::Status TenantQuotas::AcquireSequence(const std::string& tenant) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Held& held = HeldLocked(tenant);
    if (held.sequences < limits_.max_sequences) {
      ++held.sequences;
      held.sequences_gauge->Increment();
      return absl::OkStatus();
    }
  }
  CountRefusal(tenant, "max_sequences_per_tenant");
  return absl::ResourceExhaustedError(
      absl::StrCat("tenant \"", tenant, "\" already holds ", limits_.max_sequences,
                   " open sequences over its streams, its quota (--max_sequences_per_tenant); "
                   "close some or retry later"));
}

void TenantQuotas::ReleaseSequences(const std::string& tenant, size_t count) {
  if (count == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Held& held = HeldLocked(tenant);
  const size_t released = std::min(count, held.sequences);
  held.sequences -= released;
  held.sequences_gauge->Decrement(static_cast<double>(released));
}

size_t TenantQuotas::streams(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(tenant);
  return it == held_.end() ? 0 : it->second.streams;
}

size_t TenantQuotas::sequences(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(tenant);
  return it == held_.end() ? 0 : it->second.sequences;
}

}  // namespace maskd
