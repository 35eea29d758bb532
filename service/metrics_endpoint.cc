#include "service/metrics_endpoint.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"
#include "service/https_metrics_server.h"

namespace maskd {
namespace {

// Plain HTTP: prometheus-cpp's civetweb Exposer.
class CivetMetricsEndpoint final : public MetricsEndpoint {
 public:
  explicit CivetMetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer)
      : exposer_(std::move(exposer)) {}
  void RegisterCollectable(const std::weak_ptr<prometheus::Collectable>& collectable) override {
    exposer_->RegisterCollectable(collectable);
  }
  int port() const override {
    const std::vector<int> ports = exposer_->GetListeningPorts();
    return ports.empty() ? 0 : ports.front();
  }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> StartMetricsEndpoint(
    const std::string& listen, const TlsOptions& tls, int threads, absl::Duration request_timeout) {
  if (tls.enabled()) {
    absl::StatusOr<std::unique_ptr<HttpsMetricsServer>> https =
        HttpsMetricsServer::Start(listen, tls);
    if (!https.ok()) return https.status();
    return std::unique_ptr<MetricsEndpoint>(*std::move(https));
  }
  try {
    return std::unique_ptr<MetricsEndpoint>(std::make_unique<CivetMetricsEndpoint>(
        std::make_unique<prometheus::Exposer>(std::vector<std::string>{
            "listening_ports", listen, "num_threads", std::to_string(std::max(1, threads)),
            "request_timeout_ms",
            std::to_string(std::max<int64_t>(1, absl::ToInt64Milliseconds(request_timeout)))})));
  } catch (const std::exception& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": ", error.what()));
  }
}

}  // namespace maskd
