// The tokenizers one maskd replica knows, by content-hash id and by name.
// Thread-safe: RPC handlers register and look up concurrently. Loading (a
// multi-megabyte JSON parse) happens outside the lock so lookups never wait
// on a registration.
#ifndef MASKD_SERVICE_TOKENIZER_REGISTRY_H_
#define MASKD_SERVICE_TOKENIZER_REGISTRY_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

struct TokenizerRegistryLimits {
  // Largest tokenizer.json (and tokenizer_config.json) accepted, in bytes.
  size_t max_tokenizer_json_bytes = size_t{64} << 20;
  // Most distinct tokenizers held at once (each costs tens of MiB).
  size_t max_tokenizers = 32;
};

// One registered tokenizer and what the service reports about it.
struct RegisteredTokenizer {
  std::shared_ptr<const Tokenizer> tokenizer;
  // Ids that masks never allow, counted once at registration.
  size_t special_token_count = 0;
  // Loaded by the --tokenizer flag at startup.
  bool preloaded = false;
};

struct RegisterOutcome {
  RegisteredTokenizer entry;
  // The content (or name) was already there; nothing new was loaded.
  bool already_registered = false;
};

// Parses tokenizer files; injectable so registry logic is testable without
// multi-megabyte fixtures.
using TokenizerLoader = std::function<absl::StatusOr<std::shared_ptr<const Tokenizer>>(
    std::string_view tokenizer_json, std::string_view tokenizer_config_json,
    const TokenizerOptions& options)>;

class TokenizerRegistry {
 public:
  explicit TokenizerRegistry(TokenizerRegistryLimits limits = {},
                             TokenizerLoader loader = &Tokenizer::FromJson);

  // Loads a tokenizer from file contents. `name` (may be empty) is bound to
  // it; `eos_override` (may be empty) replaces the files' EOS ids.
  // Registering identical content again returns the existing entry.
  // Errors: INVALID_ARGUMENT (bad name, or the loader's message),
  // RESOURCE_EXHAUSTED (size or count limit), ALREADY_EXISTS (name bound to
  // different content, or same content with different EOS ids).
  absl::StatusOr<RegisterOutcome> Register(std::string_view tokenizer_json,
                                           std::string_view tokenizer_config_json,
                                           const std::string& name,
                                           const std::vector<TokenId>& eos_override,
                                           bool preloaded = false);

  // Reads DIR/tokenizer.json (+ optional DIR/tokenizer_config.json) and
  // registers it as preloaded under `name`. NOT_FOUND if tokenizer.json is
  // missing.
  absl::StatusOr<RegisterOutcome> Preload(const std::string& name, const std::string& dir);

  // NOT_FOUND when unknown.
  absl::StatusOr<RegisteredTokenizer> FindById(std::string_view id) const;
  absl::StatusOr<RegisteredTokenizer> FindByName(std::string_view name) const;

  // Every tokenizer once, sorted by name then id.
  std::vector<RegisteredTokenizer> List() const;
  size_t size() const;

  // Names are what operators type and what labels metrics: 1-128 of
  // [A-Za-z0-9._-], starting with a letter or digit.
  static bool IsValidName(std::string_view name);

 private:
  TokenizerRegistryLimits limits_;
  TokenizerLoader loader_;

  mutable std::mutex mutex_;
  std::map<std::string, RegisteredTokenizer, std::less<>> by_id_;  // guarded by mutex_
  std::map<std::string, std::string, std::less<>> id_by_name_;     // guarded by mutex_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_TOKENIZER_REGISTRY_H_
