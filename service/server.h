// A running maskd: the gRPC server (Maskd service, health checking,
// reflection), the Prometheus endpoint and the tokenizer registry they share.
// main.cc only parses flags, starts a Server and waits for a signal.
#ifndef MASKD_SERVICE_SERVER_H_
#define MASKD_SERVICE_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "prometheus/exposer.h"
#include "service/maskd_service.h"
#include "service/process_metrics.h"
#include "service/service_metrics.h"
#include "service/tokenizer_flags.h"
#include "service/tokenizer_registry.h"

namespace maskd {

struct ServerOptions {
  // host:port for gRPC; port 0 picks a free port.
  std::string listen = "127.0.0.1:50051";
  // host:port for GET /metrics; port 0 picks a free port; empty disables it.
  std::string metrics_listen = "127.0.0.1:9464";
  // Most threads the gRPC server may use. Each open Session stream holds one,
  // so this bounds concurrent streams plus in-flight unary calls.
  int threads = 64;
  // Largest request or response message, in bytes (tokenizer.json uploads
  // are ~10 MiB).
  int max_message_bytes = 64 << 20;
  std::vector<TokenizerSource> preload;
  TokenizerRegistryLimits tokenizer_limits;
};

class Server {
 public:
  // Loads the preloaded tokenizers, then binds both ports. Fails (without
  // leaving anything running) if a tokenizer cannot be loaded or a port
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);

  ~Server();

  // Where the server actually listens, with the bound port ("127.0.0.1:41234").
  const std::string& grpc_address() const { return grpc_address_; }
  // Empty when metrics are disabled.
  const std::string& metrics_address() const { return metrics_address_; }

  // Stops accepting calls, lets in-flight calls finish for up to `grace`,
  // then cancels the rest. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  Server() = default;

  std::unique_ptr<TokenizerRegistry> tokenizers_;
  std::unique_ptr<ServiceMetrics> metrics_;
  std::shared_ptr<ProcessCollector> process_collector_;
  std::unique_ptr<MaskdService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string grpc_address_;
  std::string metrics_address_;
  bool shut_down_ = false;
};

// "host:port" -> "host:<port>" (keeps IPv6 brackets).
std::string ReplacePort(const std::string& address, int port);

}  // namespace maskd

#endif  // MASKD_SERVICE_SERVER_H_
