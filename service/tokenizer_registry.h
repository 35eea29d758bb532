// The tokenizers one maskd replica knows, by content-hash id and by name.
// Thread-safe: RPC handlers register and look up concurrently. Loading (a
// multi-megabyte JSON parse) happens outside the lock so lookups never wait
// on a registration.
//
// Who sees what (issue 13 §2): preloaded tokenizers (--tokenizer) and their
// names belong to everyone and can be neither replaced nor unregistered.
// Tokenizers registered over RPC belong to the tenants that registered them:
// a name a tenant gives is visible to that tenant alone (another tenant's
// "qwen3" never shadows anyone's), a preloaded name cannot be bound to other
// content, each tenant holds at most max_tokenizers_per_tenant, and a
// tenant's Unregister drops its hold. Ids are content hashes, so compiling
// by id works for whoever knows the content. When the registry is full, the
// least recently used registered tokenizer that no compiled grammar uses
// makes room.
#ifndef MASKD_SERVICE_TOKENIZER_REGISTRY_H_
#define MASKD_SERVICE_TOKENIZER_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

struct TokenizerRegistryLimits {
  // Largest tokenizer.json (and tokenizer_config.json) accepted, in bytes.
  size_t max_tokenizer_json_bytes = size_t{64} << 20;
  // Most distinct tokenizers held at once (each costs tens of MiB).
  size_t max_tokenizers = 32;
  // Most registered (not preloaded) tokenizers one tenant holds at once.
  size_t max_tokenizers_per_tenant = 4;
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
  // Tokenizers evicted (least recently used, unused) to make room.
  std::vector<std::string> evicted_ids;
};

// Parses tokenizer files; injectable so registry logic is testable without
// multi-megabyte fixtures.
using TokenizerLoader = std::function<absl::StatusOr<std::shared_ptr<const Tokenizer>>(
    std::string_view tokenizer_json, std::string_view tokenizer_config_json,
    const TokenizerOptions& options)>;

// Builds what compiles share for a tokenizer; returns a handle whose
// use_count() is at most `idle_use_count` while no grammar uses it
// (matcher.h PrepareTokenizerIndex), and releases it. Injectable for tests.
struct TokenizerIndexer {
  std::function<absl::StatusOr<std::shared_ptr<const void>>(std::shared_ptr<const Tokenizer>)>
      prepare;
  std::function<void(const std::string& id)> release;
  long idle_use_count = 2;
};
TokenizerIndexer EngineTokenizerIndexer();

class TokenizerRegistry {
 public:
  explicit TokenizerRegistry(TokenizerRegistryLimits limits = {},
                             TokenizerLoader loader = &Tokenizer::FromJson,
                             TokenizerIndexer indexer = EngineTokenizerIndexer());

  // Loads a tokenizer from file contents for `tenant`. `name` (may be empty)
  // is bound to it in the tenant's names; `eos_override` (may be empty)
  // replaces the files' EOS ids. Registering identical content again returns
  // the existing entry (and makes the tenant one of its holders).
  // Errors: INVALID_ARGUMENT (bad name, or the loader's message),
  // RESOURCE_EXHAUSTED (size limit, the tenant's quota, or a full registry
  // whose tokenizers are all in use), ALREADY_EXISTS (a preloaded name or
  // one of the tenant's names bound to different content, or same content
  // with different EOS ids).
  absl::StatusOr<RegisterOutcome> Register(std::string_view tokenizer_json,
                                           std::string_view tokenizer_config_json,
                                           const std::string& name,
                                           const std::vector<TokenId>& eos_override,
                                           std::string_view tenant = "default");

  // Reads DIR/tokenizer.json (+ optional DIR/tokenizer_config.json) and
  // registers it as preloaded under `name`. NOT_FOUND if tokenizer.json is
  // missing.
  absl::StatusOr<RegisterOutcome> Preload(const std::string& name, const std::string& dir);

  // Drops `tenant`'s hold on tokenizer `id` and the names it gave it; the
  // tokenizer goes when no tenant holds it (grammars compiled for it keep
  // working). Returns whether it went. NOT_FOUND when the tenant does not
  // hold it; FAILED_PRECONDITION for a preloaded tokenizer.
  absl::StatusOr<bool> Unregister(std::string_view id, std::string_view tenant);

  // NOT_FOUND when unknown. FindById marks the tokenizer used (LRU).
  absl::StatusOr<RegisteredTokenizer> FindById(std::string_view id) const;
  // A preloaded name, else one of `tenant`'s names.
  absl::StatusOr<RegisteredTokenizer> FindByName(std::string_view name,
                                                 std::string_view tenant = "default") const;

  // The preloaded tokenizers and those `tenant` holds, once each, sorted by
  // name then id.
  std::vector<RegisteredTokenizer> List(std::string_view tenant = "default") const;
  size_t size() const;

  // Names are what operators type and what labels metrics: 1-128 of
  // [A-Za-z0-9._-], starting with a letter or digit.
  static bool IsValidName(std::string_view name);

 private:
  struct Entry {
    RegisteredTokenizer registered;
    std::shared_ptr<const void> index;           // keeps the engine's index; in use when shared
    std::set<std::string, std::less<>> holders;  // tenants (none when preloaded)
    uint64_t last_used = 0;
  };

  absl::StatusOr<RegisterOutcome> Add(std::string_view tokenizer_json,
                                      std::string_view tokenizer_config_json,
                                      const std::string& name,
                                      const std::vector<TokenId>& eos_override,
                                      std::string_view tenant, bool preloaded);
  // Evicts the least recently used unused registered tokenizer; false when
  // every one is preloaded or in use. Caller holds mutex_.
  bool EvictOneLocked(std::vector<std::string>* evicted);
  // Removes `id` and every tenant name bound to it. Caller holds mutex_.
  void EraseLocked(const std::string& id);
  size_t HeldByLocked(std::string_view tenant) const;

  TokenizerRegistryLimits limits_;
  TokenizerLoader loader_;
  TokenizerIndexer indexer_;

  mutable std::mutex mutex_;
  mutable uint64_t clock_ = 0;                                       // guarded by mutex_
  mutable std::map<std::string, Entry, std::less<>> by_id_;          // guarded by mutex_
  std::map<std::string, std::string, std::less<>> preloaded_names_;  // guarded by mutex_
  // (tenant, name) -> id.
  std::map<std::pair<std::string, std::string>, std::string> tenant_names_;  // guarded by mutex_
};

}  // namespace maskd

#endif  // MASKD_SERVICE_TOKENIZER_REGISTRY_H_
