#include "service/service_metrics.h"

namespace maskd {
namespace {

// `count` bucket bounds: first, first * factor, ...
prometheus::Histogram::BucketBoundaries Powers(double first, double factor, int count) {
  prometheus::Histogram::BucketBoundaries bounds;
  for (double bound = first; count-- > 0; bound *= factor) bounds.push_back(bound);
  return bounds;
}

}  // namespace

BuildInfo CurrentBuildInfo() {
#ifndef MASKD_VERSION
#define MASKD_VERSION "unknown"
#endif
#ifndef MASKD_GIT_COMMIT
#define MASKD_GIT_COMMIT "unknown"
#endif
  return {MASKD_VERSION, MASKD_GIT_COMMIT};
}

ServiceMetrics::ServiceMetrics(const BuildInfo& build_info)
    : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::BuildGauge()
      .Name("maskd_build_info")
      .Help("Always 1; labels say which maskd build is running.")
      .Register(*registry_)
      .Add({{"version", build_info.version}, {"commit", build_info.commit}})
      .Set(1);
  rpc_total_ = &prometheus::BuildCounter()
                    .Name("maskd_rpc_requests_total")
                    .Help("Finished maskd RPCs by method and gRPC status code.")
                    .Register(*registry_);
  tenant_calls_ = &prometheus::BuildCounter()
                       .Name("maskd_tenant_calls_total")
                       .Help(
                           "Maskd calls by tenant (bearer token), method and gRPC code; "
                           "Session streams counted when opened.")
                       .Register(*registry_);
  rpc_seconds_ = &prometheus::BuildHistogram()
                      .Name("maskd_rpc_duration_seconds")
                      .Help("Latency of unary maskd RPCs and lifetime of streams.")
                      .Register(*registry_);
  tokenizers_ = &prometheus::BuildGauge()
                     .Name("maskd_tokenizers")
                     .Help("Tokenizers registered on this replica.")
                     .Register(*registry_)
                     .Add({});
  active_streams_ = &prometheus::BuildGauge()
                         .Name("maskd_active_streams")
                         .Help("Open Session streams.")
                         .Register(*registry_)
                         .Add({});
  compile_seconds_ = &prometheus::BuildHistogram()
                          .Name("maskd_compile_duration_seconds")
                          .Help("Real compiles (cache misses) by spec kind and outcome.")
                          .Register(*registry_);
  auto& cache_requests = prometheus::BuildCounter()
                             .Name("maskd_cache_requests_total")
                             .Help(
                                 "Compile cache lookups: hit, miss (compiled, or handle not "
                                 "held), join (waited for an in-flight compile).")
                             .Register(*registry_);
  cache_hits_ = &cache_requests.Add({{"result", "hit"}});
  cache_misses_ = &cache_requests.Add({{"result", "miss"}});
  cache_joins_ = &cache_requests.Add({{"result", "join"}});
  cache_evictions_ = &prometheus::BuildCounter()
                          .Name("maskd_cache_evictions_total")
                          .Help("Compiled grammars evicted to keep the cache in its byte budget.")
                          .Register(*registry_)
                          .Add({});
  cache_bytes_ = &prometheus::BuildGauge()
                      .Name("maskd_cache_bytes")
                      .Help("Bytes held by the compile cache.")
                      .Register(*registry_)
                      .Add({});
  cache_entries_ = &prometheus::BuildGauge()
                        .Name("maskd_cache_entries")
                        .Help("Entries (grammars and cached errors) in the compile cache.")
                        .Register(*registry_)
                        .Add({});
  mask_seconds_ = &prometheus::BuildHistogram()
                       .Name("maskd_mask_duration_seconds")
                       .Help("Time to compute one sequence's token mask.")
                       .Register(*registry_)
                       .Add({}, Powers(1e-6, 2, 24));  // 1 µs .. ~8 s
  step_seconds_ = &prometheus::BuildHistogram()
                       .Name("maskd_step_duration_seconds")
                       .Help("One Session request, from receipt to its response written.")
                       .Register(*registry_)
                       .Add({}, Powers(25e-6, 2, 20));  // 25 µs .. ~13 s
  step_batch_size_ = &prometheus::BuildHistogram()
                          .Name("maskd_step_batch_size")
                          .Help("Sequence ops per Session request.")
                          .Register(*registry_)
                          .Add({}, Powers(1, 2, 11));  // 1, 2, 4, ... 1024
  active_sessions_ = &prometheus::BuildGauge()
                          .Name("maskd_active_sessions")
                          .Help("Open sequences across all Session streams.")
                          .Register(*registry_)
                          .Add({});
  auto& tokens = prometheus::BuildCounter()
                     .Name("maskd_tokens_total")
                     .Help("Tokens and draft tokens checked against masks, by result.")
                     .Register(*registry_);
  tokens_accepted_ = &tokens.Add({{"result", "accepted"}});
  tokens_rejected_ = &tokens.Add({{"result", "rejected"}});
  jump_forward_bytes_ = &prometheus::BuildCounter()
                             .Name("maskd_jump_forward_bytes_total")
                             .Help("Forced bytes returned as jump-forward.")
                             .Register(*registry_)
                             .Add({});
  errors_ = &prometheus::BuildCounter()
                 .Name("maskd_errors_total")
                 .Help("Per-sequence errors, spec errors and failed RPCs, by gRPC code.")
                 .Register(*registry_);
  auto& mask_bytes = prometheus::BuildCounter()
                         .Name("maskd_mask_bytes_total")
                         .Help("Mask payload bytes sent, by encoding.")
                         .Register(*registry_);
  mask_bytes_[0] = &mask_bytes.Add({{"encoding", "bitmask"}});
  mask_bytes_[1] = &mask_bytes.Add({{"encoding", "allow"}});
  mask_bytes_[2] = &mask_bytes.Add({{"encoding", "deny"}});
  mask_bytes_[3] = &mask_bytes.Add({{"encoding", "dictionary_ref"}});
}

void ServiceMetrics::RecordCompile(const char* kind, const absl::Status& outcome, double seconds) {
  const char* label = "internal";
  switch (outcome.code()) {
    case absl::StatusCode::kOk:
      label = "ok";
      break;
    case absl::StatusCode::kInvalidArgument:
      label = "invalid_argument";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      label = "deadline_exceeded";
      break;
    case absl::StatusCode::kResourceExhausted:
      label = "resource_exhausted";
      break;
    case absl::StatusCode::kUnimplemented:
      label = "unimplemented";
      break;
    case absl::StatusCode::kCancelled:
      label = "cancelled";  // every caller left (grammar_store.h)
      break;
    default:
      break;
  }
  // 100 µs .. ~26 s: from a choices list to a pathological schema.
  static const auto* kBuckets = new prometheus::Histogram::BucketBoundaries(Powers(100e-6, 2, 19));
  compile_seconds_->Add({{"kind", kind}, {"outcome", label}}, *kBuckets).Observe(seconds);
}

void ServiceMetrics::SetCacheSize(const CacheStats& stats) {
  cache_bytes_->Set(static_cast<double>(stats.bytes));
  cache_entries_->Set(static_cast<double>(stats.entries));
}

void ServiceMetrics::ObserveStep(double seconds, size_t batch_size) {
  step_seconds_->Observe(seconds);
  step_batch_size_->Observe(static_cast<double>(batch_size));
}

void ServiceMetrics::CountTokens(uint64_t accepted, uint64_t rejected) {
  if (accepted > 0) tokens_accepted_->Increment(static_cast<double>(accepted));
  if (rejected > 0) tokens_rejected_->Increment(static_cast<double>(rejected));
}

void ServiceMetrics::CountError(absl::StatusCode code) {
  errors_->Add({{"code", GrpcCodeName(static_cast<grpc::StatusCode>(code))}}).Increment();
}

void ServiceMetrics::CountMaskBytes(MaskEncodingLabel encoding, uint64_t bytes) {
  mask_bytes_[static_cast<int>(encoding)]->Increment(static_cast<double>(bytes));
}

void CacheMetricsObserver::RefreshSize() {
  if (stats_) metrics_->SetCacheSize(stats_());
}

void CacheMetricsObserver::OnHit() {
  metrics_->CountCacheHit();
  RefreshSize();
}

void CacheMetricsObserver::OnMiss() {
  metrics_->CountCacheMiss();
  RefreshSize();
}

// A cached error answers the request from the cache like a value does.
void CacheMetricsObserver::OnErrorHit() {
  metrics_->CountCacheHit();
  RefreshSize();
}

void CacheMetricsObserver::OnJoin() { metrics_->CountCacheJoin(); }

void CacheMetricsObserver::OnEviction(size_t /*bytes*/) {
  metrics_->CountCacheEviction();
  RefreshSize();
}

void CacheMetricsObserver::OnOversized(size_t /*bytes*/) { RefreshSize(); }

void CacheMetricsObserver::OnComputeDone(absl::Duration /*elapsed*/,
                                         const absl::Status& /*status*/) {
  RefreshSize();
}

void ServiceMetrics::CountTenantCall(const std::string& tenant, const std::string& method,
                                     grpc::StatusCode code) {
  tenant_calls_->Add({{"tenant", tenant}, {"method", method}, {"code", GrpcCodeName(code)}})
      .Increment();
}

void ServiceMetrics::RecordRpc(const std::string& method, grpc::StatusCode code, double seconds) {
  rpc_total_->Add({{"method", method}, {"code", GrpcCodeName(code)}}).Increment();
  // 50 µs .. ~6.5 s in powers of 2: unary calls range from lookups to
  // multi-megabyte tokenizer loads.
  static const auto* kBuckets = [] {
    auto* buckets = new prometheus::Histogram::BucketBoundaries;
    for (double bound = 50e-6; bound < 10; bound *= 2) buckets->push_back(bound);
    return buckets;
  }();
  rpc_seconds_->Add({{"method", method}}, *kBuckets).Observe(seconds);
}

void ServiceMetrics::SetTokenizerCount(size_t count) {
  tokenizers_->Set(static_cast<double>(count));
}

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return "UNKNOWN";
  }
}

}  // namespace maskd
