#include "service/server.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "maskd/v1/maskd.pb.h"
#include "service/log.h"

namespace maskd {

std::string ReplacePort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  // "[::1]" has colons but no port separator after the bracket.
  const size_t bracket = address.rfind(']');
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket)) {
    return absl::StrCat(address, ":", port);
  }
  return absl::StrCat(address.substr(0, colon), ":", port);
}

namespace {

// maskd.proto declares only the service, so no code references maskd.pb.o
// and the linker drops it from libmaskd_proto.a, and with it the file's
// descriptor registration: reflection would then answer "Symbol not found"
// for maskd.v1.Maskd. Referencing its descriptor table keeps it linked; the
// lookup proves reflection can describe the service.
absl::Status CheckServiceDescriptorLinked() {
  [[maybe_unused]] const void* volatile keep = &::descriptor_table_maskd_2fv1_2fmaskd_2eproto;
  if (google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::Maskd::service_full_name()) == nullptr) {
    return absl::InternalError("maskd.v1.Maskd descriptor is not linked in; reflection would fail");
  }
  return absl::OkStatus();
}

// gRPC names Unix sockets "unix:PATH" or "unix:///ABSOLUTE_PATH".
absl::Status SetUnixSocketMode(const std::string& listen, unsigned mode) {
  std::string path = listen.substr(std::string("unix:").size());
  if (path.starts_with("//")) path = path.substr(2);
  if (chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot set the mode of Unix socket ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  if (absl::Status linked = CheckServiceDescriptorLinked(); !linked.ok()) return linked;
  std::unique_ptr<Server> server(new Server());
  TokenizerRegistryLimits tokenizer_limits = options.tokenizer_limits;
  tokenizer_limits.max_tokenizers_per_tenant = options.security.max_tokenizers_per_tenant;
  server->tokenizers_ = std::make_unique<TokenizerRegistry>(tokenizer_limits);
  server->metrics_ = std::make_unique<ServiceMetrics>(CurrentBuildInfo());

  for (const TokenizerSource& source : options.preload) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<RegisterOutcome> outcome = server->tokenizers_->Preload(source.name, source.dir);
    if (!outcome.ok()) {
      return absl::Status(
          outcome.status().code(),
          absl::StrCat("preloading tokenizer '", source.name, "': ", outcome.status().message()));
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const Tokenizer& tokenizer = *outcome->entry.tokenizer;
    MASKD_LOG(INFO) << "tokenizer " << source.name << " loaded from " << source.dir << " (id "
                    << tokenizer.id() << ", " << tokenizer.vocab_size() << " tokens, "
                    << took.count() << " s)";
  }
  server->metrics_->SetTokenizerCount(server->tokenizers_->size());
  server->budget_ = std::make_unique<MemoryBudget>(options.memory_budget_bytes);
  MASKD_LOG(INFO) << "memory budget "
                  << (options.memory_budget_bytes == 0
                          ? std::string("unlimited")
                          : absl::StrCat(options.memory_budget_bytes >> 20, " MiB"));
  GrammarStoreOptions cache = options.cache;
  cache.budget = server->budget_.get();
  server->store_ = std::make_unique<GrammarStore>(cache, server->metrics_.get());
  server->step_pool_ = std::make_unique<ThreadPool>(
      options.step_threads != 0 ? options.step_threads
                                : std::max<size_t>(1, std::thread::hardware_concurrency()));
  server->compile_ =
      std::make_unique<CompileHandler>(server->tokenizers_.get(), server->store_.get(),
                                       server->metrics_.get(), options.compile_limits);
  server->compile_->recipes().SetBudget(server->budget_.get());
  server->releaser_ = std::make_unique<MemoryReleaser>(options.memory_release_interval);
  server->quotas_ =
      std::make_unique<TenantQuotas>(options.tenant_quotas, *server->metrics_->registry());
  SessionEnv env;
  env.quotas = server->quotas_.get();
  env.releaser = server->releaser_.get();
  env.budget = server->budget_.get();
  env.compiler = server->compile_.get();
  env.store = server->store_.get();
  env.pool = server->step_pool_.get();
  env.metrics = server->metrics_.get();
  env.limits = options.session_limits;
  env.limits.max_response_bytes = static_cast<size_t>(options.max_message_bytes);
  server->session_ = std::make_unique<SessionRegistry>(env, options.session_idle_timeout);
  server->auth_ = std::make_unique<TokenAuthHolder>(options.security.auth);
  server->reloader_ = std::make_unique<CredentialReloader>(options.security.reload_interval,
                                                           *server->metrics_->registry());
  if (!options.security.auth_token_file.empty()) {
    server->reloader_->Watch(
        "token_file", {options.security.auth_token_file},
        [holder = server->auth_.get(), path = options.security.auth_token_file]() -> absl::Status {
          absl::StatusOr<TokenAuthenticator> auth = TokenAuthenticator::FromFile(path);
          if (!auth.ok()) return auth.status();
          MASKD_LOG(INFO) << "token file " << path << ": " << auth->token_count()
                          << " bearer tokens";
          holder->Set(std::make_shared<const TokenAuthenticator>(*std::move(auth)));
          return absl::OkStatus();
        });
  }
  server->service_ = std::make_unique<MaskdService>(
      server->tokenizers_.get(), server->metrics_.get(), server->compile_.get(),
      server->session_.get(), server->auth_.get(), options.security.allow_register_tokenizer);

  // maskd serves health itself (health_service.h says why); reflection
  // must be enabled before the builder exists.
  server->health_ = std::make_unique<HealthService>(std::max(1, options.grpc_threads / 4));
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  // gRPC's listener serves private copies of the TLS files, refreshed when
  // the operator's change or on SIGHUP (grpc_tls_files.h).
  TlsOptions grpc_tls = options.security.tls;
  absl::StatusOr<std::unique_ptr<GrpcTlsFiles>> files =
      grpc_tls.enabled() ? GrpcTlsFiles::Create(grpc_tls) : nullptr;
  if (!files.ok() && files.status().code() == absl::StatusCode::kFailedPrecondition) {
    // No writable temporary directory (a read-only root without an emptyDir
    // on $TMPDIR): gRPC watches the operator's files itself, on the reload
    // interval only.
    MASKD_LOG(WARNING) << "gRPC TLS files cannot be copied (" << files.status().message()
                       << "); SIGHUP will not reload gRPC's certificate, only "
                          "--credentials_reload_interval will";
    files = nullptr;
  }
  if (!files.ok()) return files.status();
  if (*files != nullptr) {
    server->grpc_tls_files_ = *std::move(files);
    grpc_tls = server->grpc_tls_files_->copies();
    const TlsOptions& tls = options.security.tls;
    std::vector<std::string> paths = {tls.cert_file, tls.key_file};
    if (tls.mutual()) paths.push_back(tls.client_ca_file);
    server->reloader_->Watch("grpc_tls", std::move(paths),
                             [files = server->grpc_tls_files_.get()] { return files->Refresh(); });
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      GrpcServerCredentials(grpc_tls);
  if (!credentials.ok()) return credentials.status();
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options.listen, *credentials, &bound_port);
  builder.RegisterService(server->service_.get());
  builder.RegisterService(server->health_.get());
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  grpc::ResourceQuota quota("maskd");
  quota.SetMaxThreads(options.grpc_threads);
  builder.SetResourceQuota(quota);
  server->grpc_server_ = builder.BuildAndStart();
  if (server->grpc_server_ == nullptr || bound_port == 0) {
    if (server->grpc_server_ != nullptr) server->grpc_server_->Shutdown();
    return absl::UnavailableError(absl::StrCat("cannot listen for gRPC on ", options.listen));
  }
  if (options.listen.starts_with("unix:")) {
    absl::Status mode = SetUnixSocketMode(options.listen, options.unix_socket_mode);
    if (!mode.ok()) {
      server->grpc_server_->Shutdown();
      return mode;
    }
  }
  // A Unix socket has no port to report (gRPC says 1 for it).
  server->grpc_address_ = options.listen.starts_with("unix:")
                              ? options.listen
                              : ReplacePort(options.listen, bound_port);
  // Per-service status too, so probes may ask for "maskd.v1.Maskd" by name.
  server->health_->SetServingStatus(v1::Maskd::service_full_name(), true);
  MASKD_LOG(INFO) << "grpc listening on " << server->grpc_address_
                  << (options.security.tls.mutual()    ? " (mutual TLS)"
                      : options.security.tls.enabled() ? " (TLS)"
                                                       : "")
                  << (options.security.auth->enabled()
                          ? absl::StrCat(" (", options.security.auth->token_count(),
                                         " bearer tokens)")
                          : "");

  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> exposer =
        StartMetricsEndpoint(options.metrics_listen, options.security.tls, options.metrics_threads,
                             options.metrics_request_timeout);
    if (!exposer.ok()) {
      server->Shutdown(absl::ZeroDuration());
      return exposer.status();
    }
    server->exposer_ = *std::move(exposer);
    server->process_collector_ = std::make_shared<ProcessCollector>();
    server->exposer_->RegisterCollectable(server->metrics_->registry());
    server->exposer_->RegisterCollectable(server->process_collector_);
    server->memory_collector_ =
        std::make_shared<MemoryCollector>(server->budget_.get(), server->store_.get());
    server->exposer_->RegisterCollectable(server->memory_collector_);
    server->metrics_address_ = ReplacePort(options.metrics_listen, server->exposer_->port());
    MASKD_LOG(INFO) << "metrics on " << (options.security.tls.enabled() ? "https" : "http") << "://"
                    << server->metrics_address_ << "/metrics";
    if (options.security.tls.enabled()) {
      const TlsOptions& tls = options.security.tls;
      std::vector<std::string> files = {tls.cert_file, tls.key_file};
      if (tls.mutual()) files.push_back(tls.client_ca_file);
      server->reloader_->Watch("metrics_tls", std::move(files),
                               [exposer = server->exposer_.get()] { return exposer->ReloadTls(); });
    }
  }
  server->reloader_->Start();
  return server;
}

void Server::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  if (grpc_server_ != nullptr) {
    // Health turns NOT_SERVING first so load balancers stop routing here
    // while in-flight calls drain; health Watch calls get it and end.
    health_->Shutdown();
    // Streams end themselves after their step in flight; without this they
    // would hold the server until `grace` and then be cancelled unanswered.
    session_->BeginDrain();
    // Callers waiting for compiles get UNAVAILABLE now and the compiles are
    // cancelled: a slow compile would otherwise hold its call (and the
    // process, which joins the compile threads) past the grace.
    store_->BeginShutdown();
    grpc_server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(grace));
    grpc_server_->Wait();
  }
  // Metrics stay up until gRPC has drained so the drain itself is observable.
  reloader_.reset();
  exposer_.reset();
}

void Server::ReloadCredentials() {
  if (reloader_ != nullptr) reloader_->ReloadNow();
}

Server::~Server() {
  // The watcher reloads into the exposer: stop it first.
  reloader_.reset();
  Shutdown(absl::ZeroDuration());
}

}  // namespace maskd
