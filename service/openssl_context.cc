#include "service/openssl_context.h"

#include <openssl/err.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace maskd {

std::string OpenSslErrors() {
  std::string errors;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    absl::StrAppend(&errors, errors.empty() ? "" : "; ", buffer);
  }
  return errors.empty() ? "unknown OpenSSL error" : errors;
}

absl::StatusOr<std::shared_ptr<SSL_CTX>> OpenSslServerContext(const TlsOptions& tls) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (ctx == nullptr) return absl::InternalError(OpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_cert ", tls.cert_file, ": ", OpenSslErrors()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_key ", tls.key_file, " (for --tls_cert ",
                                                   tls.cert_file, "): ", OpenSslErrors()));
  }
  if (tls.mutual()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), tls.client_ca_file.c_str(), nullptr) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls_client_ca ", tls.client_ca_file, ": ", OpenSslErrors()));
    }
    SSL_CTX_set_client_CA_list(ctx.get(), SSL_load_client_CA_file(tls.client_ca_file.c_str()));
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx;
}

}  // namespace maskd
