// The Prometheus /metrics listener: plain HTTP through prometheus-cpp's
// civetweb Exposer, or HTTPS (mutual TLS with a client CA) through
// HttpsMetricsServer. Why two: Debian bookworm's civetweb 1.15 loads
// libssl at run time by OpenSSL 1.1 symbol names, and
// SSL_get_peer_certificate is gone from OpenSSL 3, so its HTTPS worker calls
// a null pointer on the first request (measured: SIGSEGV in civetweb-worker).
#ifndef MASKD_SERVICE_METRICS_ENDPOINT_H_
#define MASKD_SERVICE_METRICS_ENDPOINT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "service/tls_options.h"

namespace maskd {

class MetricsEndpoint {
 public:
  virtual ~MetricsEndpoint() = default;
  // Adds what GET /metrics serves; the endpoint holds only a weak reference.
  virtual void RegisterCollectable(const std::weak_ptr<prometheus::Collectable>& collectable) = 0;
  // The bound port.
  virtual int port() const = 0;
  // HTTPS: loads the certificate, key and client CA files again; new
  // connections use them, a failure keeps the previous ones. Plain HTTP:
  // nothing to do.
  virtual absl::Status ReloadTls() { return absl::OkStatus(); }
};

// Binds `listen` (host:port, port 0: any free one): HTTP when `tls` is off,
// HTTPS with the same certificate, key and client CA as gRPC otherwise.
// UNAVAILABLE when it cannot bind or the TLS files do not load.
//
// Plain HTTP serves on `threads` civetweb threads, each waiting at most
// `request_timeout` for a scraper's request (or for it to take the answer),
// so a half-sent request holds one thread that long, never every scraper
// (with one thread and civetweb's default it blocked /metrics for all).
// HTTPS serves each connection on its own thread with socket timeouts.
absl::StatusOr<std::unique_ptr<MetricsEndpoint>> StartMetricsEndpoint(
    const std::string& listen, const TlsOptions& tls, int threads = 4,
    absl::Duration request_timeout = absl::Seconds(5));

}  // namespace maskd

#endif  // MASKD_SERVICE_METRICS_ENDPOINT_H_
