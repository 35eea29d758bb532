// TLS for maskd's two listeners (gRPC and /metrics): a server certificate
// and key, and optionally a client CA that turns on mutual TLS (a client
// must present a certificate signed by it, or the handshake fails).
#ifndef MASKD_SERVICE_TLS_OPTIONS_H_
#define MASKD_SERVICE_TLS_OPTIONS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace maskd {

struct TlsOptions {
  std::string cert_file;       // PEM certificate chain, server's first
  std::string key_file;        // PEM private key of that certificate
  std::string client_ca_file;  // PEM CA bundle; set: clients must present a cert it signed
  // How often the gRPC listener reads the three files again (a rotated
  // certificate is served to new connections without a restart); 0: read
  // once at start. maskd's server points the listener at private copies
  // watched every second (grpc_tls_files.h), so SIGHUP takes effect at once.
  unsigned reload_interval_seconds = 60;

  bool enabled() const { return !cert_file.empty(); }
  bool mutual() const { return !client_ca_file.empty(); }
};

// INVALID_ARGUMENT unless cert and key are both given or both absent, and
// a client CA comes with them; NOT_FOUND naming a file that cannot be read.
absl::Status ValidateTlsOptions(const TlsOptions& tls);

// Insecure credentials when TLS is off; otherwise TLS credentials that
// require (and verify) a client certificate when a client CA is set. With a
// reload interval the files are watched (gRPC's FileWatcherCertificateProvider:
// replace the key and certificate together, e.g. by renaming both into place).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServerCredentials(
    const TlsOptions& tls);

// Reads a whole file; NOT_FOUND naming it when it cannot be opened.
absl::StatusOr<std::string> ReadPemFile(const std::string& path, const char* what);

}  // namespace maskd

#endif  // MASKD_SERVICE_TLS_OPTIONS_H_
