#include "service/service_metrics.h"

namespace maskd {

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
