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
#include "service/compile_handler.h"
#include "service/credential_reloader.h"
#include "service/grammar_store.h"
#include "service/grpc_tls_files.h"
#include "service/health_service.h"
#include "service/maskd_service.h"
#include "service/memory_budget.h"
#include "service/memory_metrics.h"
#include "service/memory_release.h"
#include "service/metrics_endpoint.h"
#include "service/process_metrics.h"
#include "service/security_options.h"
#include "service/service_metrics.h"
#include "service/session_registry.h"
#include "service/session_stream.h"
#include "service/tenant_quotas.h"
#include "service/thread_pool.h"
#include "service/tokenizer_flags.h"
#include "service/tokenizer_registry.h"

namespace maskd {

struct ServerOptions {
  // host:port for gRPC (port 0 picks a free port), or unix:///PATH for a
  // Unix socket (sidecar mode: the worker in the same pod connects to it).
  std::string listen = "127.0.0.1:50051";
  // Permission bits given to the Unix socket file after binding. Connecting
  // needs write permission on the socket, and gRPC creates it under the umask
  // (0755 with the usual 022: nobody but maskd's own user could connect), so
  // a worker running as another user needs group or other write access.
  // Ignored for TCP.
  unsigned unix_socket_mode = 0660;
  // host:port for GET /metrics; port 0 picks a free port; empty disables it.
  std::string metrics_listen = "127.0.0.1:9464";
  // Most threads the gRPC server may use for unary calls (Session streams
  // run on the callback API and hold no thread).
  int grpc_threads = 64;
  // Threads computing Session steps (0: one per core).
  size_t step_threads = 0;
  // Largest request or response message, in bytes (tokenizer.json uploads
  // are ~10 MiB).
  int max_message_bytes = 64 << 20;
  std::vector<TokenizerSource> preload;
  TokenizerRegistryLimits tokenizer_limits;
  GrammarStoreOptions cache;
  CompileLimits compile_limits;
  SessionLimits session_limits;
  // Streams and sequences one tenant may hold at once (tenant_quotas.h).
  TenantQuotaLimits tenant_quotas;
  // A stream with no request for this long is ended; zero: never.
  absl::Duration session_idle_timeout = absl::Minutes(10);
  // /metrics: threads serving it, and how long one waits for a scraper's
  // request (or for it to read the answer), so a half-sent request holds
  // one thread for that long at most instead of blocking every scraper.
  int metrics_threads = 4;
  absl::Duration metrics_request_timeout = absl::Seconds(5);
  // How often freed memory may be returned to the OS (malloc_trim after a
  // stream ends); zero: never.
  absl::Duration memory_release_interval = absl::Seconds(1);
  // The process-wide memory budget (memory_budget.h) sessions, sequences,
  // dictionaries, compiles in flight and the cache draw on; 0: no limit.
  size_t memory_budget_bytes = 0;
  // TLS on both listeners, bearer tokens (security_options.h).
  SecurityOptions security;
};

class Server {
 public:
  // Loads the preloaded tokenizers, then binds both ports. Fails (without
  // leaving anything running) if a tokenizer cannot be loaded or a port
  // cannot be bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);

  ~Server();

  // Where the server actually listens, with the bound port ("127.0.0.1:41234"),
  // or the unix:///PATH it was given.
  const std::string& grpc_address() const { return grpc_address_; }
  // Empty when metrics are disabled.
  const std::string& metrics_address() const { return metrics_address_; }

  // Drains: health turns NOT_SERVING, new Session streams are refused with
  // UNAVAILABLE, open streams end (UNAVAILABLE) once their step in flight is
  // answered, new calls are refused; in-flight calls get up to `grace`, then
  // are cancelled. Idempotent.
  void Shutdown(absl::Duration grace);

  // Reads the token file and the /metrics TLS files again now (SIGHUP);
  // they are also reloaded when they change (SecurityOptions::reload_interval).
  void ReloadCredentials();

  // For in-process tests.
  ServiceMetrics& metrics() { return *metrics_; }
  const MemoryBudget& memory_budget() const { return *budget_; }

 private:
  Server() = default;

  std::unique_ptr<TokenizerRegistry> tokenizers_;
  std::unique_ptr<ServiceMetrics> metrics_;
  std::shared_ptr<ProcessCollector> process_collector_;
  // Before the store and sessions, which charge it, and gone after them.
  std::unique_ptr<MemoryBudget> budget_;
  std::shared_ptr<MemoryCollector> memory_collector_;
  std::unique_ptr<GrammarStore> store_;
  std::unique_ptr<ThreadPool> step_pool_;
  std::unique_ptr<MemoryReleaser> releaser_;
  std::unique_ptr<TenantQuotas> quotas_;
  std::unique_ptr<CompileHandler> compile_;
  std::unique_ptr<SessionRegistry> session_;
  std::unique_ptr<TokenAuthHolder> auth_;
  std::unique_ptr<CredentialReloader> reloader_;
  // The copies of the TLS files gRPC's listener watches (SIGHUP refreshes
  // them); outlives the gRPC server, which reads them.
  std::unique_ptr<GrpcTlsFiles> grpc_tls_files_;
  std::unique_ptr<MaskdService> service_;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<MetricsEndpoint> exposer_;
  std::string grpc_address_;
  std::string metrics_address_;
  bool shut_down_ = false;
};

// "host:port" -> "host:<port>" (keeps IPv6 brackets).
std::string ReplacePort(const std::string& address, int port);

}  // namespace maskd

#endif  // MASKD_SERVICE_SERVER_H_
