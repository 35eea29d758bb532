// Who may talk to maskd and over what: TLS on both listeners, the bearer
// tokens that name tenants, and which tokenizers tenants may register.
#ifndef MASKD_SERVICE_SECURITY_OPTIONS_H_
#define MASKD_SERVICE_SECURITY_OPTIONS_H_

#include <memory>

#include "service/tls_options.h"
#include "service/token_auth.h"

namespace maskd {

struct SecurityOptions {
  TlsOptions tls;
  // Shared with the service; authentication is off when it holds no token.
  std::shared_ptr<const TokenAuthenticator> auth = std::make_shared<TokenAuthenticator>();
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SECURITY_OPTIONS_H_
