// An OpenSSL server context from maskd's TLS files: what the HTTPS /metrics
// listener serves with, and how a rotated set of files is checked (the key
// must match the certificate) before gRPC's listener is given it.
#ifndef MASKD_SERVICE_OPENSSL_CONTEXT_H_
#define MASKD_SERVICE_OPENSSL_CONTEXT_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "service/tls_options.h"

namespace maskd {

// A server context for `tls`'s files (TLS 1.2 at least; with a client CA,
// a client certificate is required and verified), or INVALID_ARGUMENT naming
// the flag whose file does not load (or the key that does not match).
absl::StatusOr<std::shared_ptr<SSL_CTX>> OpenSslServerContext(const TlsOptions& tls);

// OpenSSL's queued errors as text (and cleared).
std::string OpenSslErrors();

}  // namespace maskd

#endif  // MASKD_SERVICE_OPENSSL_CONTEXT_H_
