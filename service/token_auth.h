// Bearer-token authentication: the --auth_token_file maps tokens to tenant
// names. Every Maskd RPC presents `authorization: Bearer TOKEN`; the tenant
// it maps to is who the call is charged to (quotas, metrics labels). Without
// a token file every call is the tenant "default" and no token is checked.
// Health checking and reflection are never authenticated (kubelet probes
// carry no token).
#ifndef MASKD_SERVICE_TOKEN_AUTH_H_
#define MASKD_SERVICE_TOKEN_AUTH_H_

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace maskd {

// The tenant of every call when no token file is configured.
inline constexpr absl::string_view kDefaultTenant = "default";

class TokenAuthenticator {
 public:
  // No tokens: authentication off, everyone is kDefaultTenant.
  TokenAuthenticator() = default;

  // Parses a token file: one `TENANT TOKEN` pair per line (whitespace
  // between), blank lines and lines starting with '#' ignored. Tenants are
  // 1-64 of [A-Za-z0-9._-] (they label metrics); tokens are 16-4096
  // printable ASCII characters without spaces. Several tokens may map to one
  // tenant (rotation). INVALID_ARGUMENT names the line; a token given twice
  // is an error. An empty file is an error too (it would lock everyone out
  // while looking like authentication is on).
  static absl::StatusOr<TokenAuthenticator> FromFileContents(absl::string_view contents);
  static absl::StatusOr<TokenAuthenticator> FromFile(const std::string& path);

  bool enabled() const { return !tenant_by_digest_.empty(); }
  size_t token_count() const { return tenant_by_digest_.size(); }

  // The value of the `authorization` metadata (absent: empty) -> tenant.
  // UNAUTHENTICATED when authentication is on and the header is missing,
  // not "Bearer TOKEN", or the token is unknown; the message never echoes
  // the token.
  absl::StatusOr<std::string> Authenticate(absl::string_view authorization_header) const;

  // Tenant names: 1-64 of [A-Za-z0-9._-], starting with a letter or digit.
  static bool IsValidTenant(absl::string_view tenant);

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest Sha256(absl::string_view token);

  // Tokens are kept only as SHA-256 digests: the lookup compares digests,
  // so its timing says nothing about how much of a guessed token matched,
  // and a memory dump does not reveal the tokens.
  std::map<Digest, std::string> tenant_by_digest_;
};

// The authenticator in force. Reloading the token file swaps it whole, so a
// call authenticates against one consistent set of tokens.
class TokenAuthHolder {
 public:
  explicit TokenAuthHolder(std::shared_ptr<const TokenAuthenticator> initial)
      : current_(std::move(initial)) {}

  std::shared_ptr<const TokenAuthenticator> Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }
  void Set(std::shared_ptr<const TokenAuthenticator> next) {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::move(next);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const TokenAuthenticator> current_;  // guarded by mu_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_TOKEN_AUTH_H_
