// Who may talk to maskd and over what: TLS on both listeners, the bearer
// tokens that name tenants, and which tokenizers tenants may register.
#ifndef MASKD_SERVICE_SECURITY_OPTIONS_H_
#define MASKD_SERVICE_SECURITY_OPTIONS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/time/time.h"

#include "service/tls_options.h"
#include "service/token_auth.h"

namespace maskd {

struct SecurityOptions {
  TlsOptions tls;
  // Shared with the service; authentication is off when it holds no token.
  std::shared_ptr<const TokenAuthenticator> auth = std::make_shared<TokenAuthenticator>();
  // Where `auth` came from (--auth_token_file), read again on reload; empty:
  // no token file.
  std::string auth_token_file;
  // How often the token file and the TLS files are checked for changes
  // (mtime, size, inode) and reloaded; SIGHUP reloads at once. Zero: only
  // on SIGHUP (gRPC's TLS listener then never reloads).
  absl::Duration reload_interval = absl::Seconds(60);
  // RegisterTokenizer with files (an upload) is PERMISSION_DENIED unless set;
  // looking up a preloaded tokenizer by name always works.
  bool allow_register_tokenizer = false;
  // Most uploaded tokenizers one tenant holds at once.
  size_t max_tokenizers_per_tenant = 4;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SECURITY_OPTIONS_H_
