#include "service/tls_options.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace maskd {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", what, " file ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (contents.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " file ", path, " is empty"));
  }
  return std::move(contents).str();
}

absl::Status ValidateTlsOptions(const TlsOptions& tls) {
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
  }
  if (tls.mutual() && !tls.enabled()) {
    return absl::InvalidArgumentError(
        "--tls_client_ca (mutual TLS) needs --tls_cert and --tls_key");
  }
  if (!tls.enabled()) return absl::OkStatus();
  for (const auto& [path, what] :
       {std::pair{tls.cert_file, "--tls_cert"}, std::pair{tls.key_file, "--tls_key"},
        std::pair{tls.client_ca_file, "--tls_client_ca"}}) {
    if (path.empty()) continue;
    if (absl::StatusOr<std::string> pem = ReadPemFile(path, what); !pem.ok()) return pem.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServerCredentials(
    const TlsOptions& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  if (tls.reload_interval_seconds > 0) {
    // The files were checked by ValidateTlsOptions; the provider reads them
    // now and again every interval, keeping the last good ones.
    auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        tls.key_file, tls.cert_file, tls.client_ca_file, tls.reload_interval_seconds);
    grpc::experimental::TlsServerCredentialsOptions options(provider);
    options.watch_identity_key_cert_pairs();
    if (tls.mutual()) {
      options.watch_root_certs();
      options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    } else {
      options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    }
    return grpc::experimental::TlsServerCredentials(options);
  }
  absl::StatusOr<std::string> cert = ReadPemFile(tls.cert_file, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile(tls.key_file, "--tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options(
      tls.mutual() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (tls.mutual()) {
    absl::StatusOr<std::string> ca = ReadPemFile(tls.client_ca_file, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *std::move(ca);
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace maskd
