// GET /metrics over HTTPS with OpenSSL (metrics_endpoint.h says why not
// civetweb). Deliberately small: one acceptor thread, each connection on its
// own thread (at most kMaxConnections at once, more are closed at once),
// 5 s socket timeouts so a stalled or half-sent request holds only its own
// thread, and `Connection: close` after each answer. Any path but /metrics
// is 404, any method but GET 405.
#ifndef MASKD_SERVICE_HTTPS_METRICS_SERVER_H_
#define MASKD_SERVICE_HTTPS_METRICS_SERVER_H_

#include <openssl/ssl.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "service/metrics_endpoint.h"

namespace maskd {

class HttpsMetricsServer final : public MetricsEndpoint {
 public:
  static constexpr int kMaxConnections = 8;

  // Loads the certificate, key and (mutual TLS) client CA, binds `listen`.
  static absl::StatusOr<std::unique_ptr<HttpsMetricsServer>> Start(const std::string& listen,
                                                                   const TlsOptions& tls);
  // Stops accepting and waits for the connections in flight (each ends
  // within its socket timeout).
  ~HttpsMetricsServer() override;

  void RegisterCollectable(const std::weak_ptr<prometheus::Collectable>& collectable) override;
  int port() const override { return port_; }
  absl::Status ReloadTls() override;

 private:
  HttpsMetricsServer() = default;
  void AcceptLoop();
  void Serve(int fd);
  std::string Exposition();

  // The TLS files as loaded now; connections in flight keep the context
  // they started with.
  std::shared_ptr<SSL_CTX> Context();

  TlsOptions tls_;
  std::mutex ctx_mu_;
  std::shared_ptr<SSL_CTX> ctx_;  // guarded by ctx_mu_
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;

  std::mutex mu_;
  std::condition_variable connection_ended_;
  int connections_ = 0;                                               // guarded by mu_
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables_;  // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_HTTPS_METRICS_SERVER_H_
