#include "service/security_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for TLS on the gRPC and /metrics listeners (with --tls_key); "
          "empty: plaintext.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle; set: mutual TLS, every gRPC and /metrics client must present a "
          "certificate this CA signed.");
ABSL_FLAG(std::string, auth_token_file, "",
          "File of `TENANT TOKEN` lines; set: every Maskd RPC needs `authorization: Bearer "
          "TOKEN` (UNAUTHENTICATED otherwise) and is charged to that token's tenant. Health and "
          "reflection stay open. Empty: no tokens, every call is tenant \"default\".");

ABSL_FLAG(absl::Duration, credentials_reload_interval, absl::Seconds(60),
          "How often --auth_token_file and the TLS files are checked for changes and reloaded "
          "(new connections and calls see the new ones; a file that fails to load is logged and "
          "the old ones stay); SIGHUP reloads them all at once (gRPC's listener within a second). "
          "0: only on SIGHUP.");
ABSL_FLAG(bool, allow_register_tokenizer, false,
          "Accept tokenizer uploads (RegisterTokenizer with files); off: only preloaded "
          "tokenizers (--tokenizer) are served and uploads are PERMISSION_DENIED.");
ABSL_FLAG(int, max_tokenizers_per_tenant, 4,
          "Most uploaded tokenizers one tenant holds at once (RESOURCE_EXHAUSTED beyond).");

namespace maskd {

absl::StatusOr<SecurityOptions> SecurityOptionsFromFlags() {
  SecurityOptions options;
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  if (absl::Status valid = ValidateTlsOptions(options.tls); !valid.ok()) return valid;
  options.reload_interval = absl::GetFlag(FLAGS_credentials_reload_interval);
  if (options.reload_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--credentials_reload_interval must be >= 0");
  }
  // gRPC's certificate watcher counts whole seconds.
  options.tls.reload_interval_seconds =
      options.reload_interval == absl::ZeroDuration()
          ? 0
          : static_cast<unsigned>(std::max<int64_t>(
                1, absl::ToInt64Seconds(absl::Ceil(options.reload_interval, absl::Seconds(1)))));
  options.allow_register_tokenizer = absl::GetFlag(FLAGS_allow_register_tokenizer);
  if (absl::GetFlag(FLAGS_max_tokenizers_per_tenant) < 1) {
    return absl::InvalidArgumentError("--max_tokenizers_per_tenant must be >= 1");
  }
  options.max_tokenizers_per_tenant =
      static_cast<size_t>(absl::GetFlag(FLAGS_max_tokenizers_per_tenant));
  const std::string token_file = absl::GetFlag(FLAGS_auth_token_file);
  if (!token_file.empty()) {
    absl::StatusOr<TokenAuthenticator> auth = TokenAuthenticator::FromFile(token_file);
    if (!auth.ok()) {
      return absl::Status(auth.status().code(),
                          absl::StrCat("--auth_token_file: ", auth.status().message()));
    }
    options.auth = std::make_shared<const TokenAuthenticator>(*std::move(auth));
    options.auth_token_file = token_file;
  }
  return options;
}

}  // namespace maskd
