#include "service/tokenizer_registry.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile/token_healing.h"
#include "compiler/matcher/matcher.h"

namespace maskd {
namespace {

size_t CountSpecial(const Tokenizer& tokenizer) {
  size_t count = 0;
  for (size_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.is_special(static_cast<TokenId>(id))) ++count;
  }
  return count;
}

// Reads a whole file; NOT_FOUND when it cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return std::move(contents).str();
}

}  // namespace

TokenizerIndexer EngineTokenizerIndexer() {
  TokenizerIndexer indexer;
  indexer.prepare = [](std::shared_ptr<const Tokenizer> tokenizer) {
    // Token healing's sorted vocabulary too, so the first open that heals
    // does not build it on a request thread.
    PrepareTokenHealing(tokenizer);
    return PrepareTokenizerIndex(std::move(tokenizer));
  };
  indexer.release = &ReleaseTokenizerIndex;
  // The engine's process-wide cache and the registry's handle.
  indexer.idle_use_count = 2;
  return indexer;
}

TokenizerRegistry::TokenizerRegistry(TokenizerRegistryLimits limits, TokenizerLoader loader,
                                     TokenizerIndexer indexer)
    : limits_(limits), loader_(std::move(loader)), indexer_(std::move(indexer)) {}

bool TokenizerRegistry::IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!is_alnum(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

absl::StatusOr<RegisterOutcome> TokenizerRegistry::Register(
    std::string_view tokenizer_json, std::string_view tokenizer_config_json,
    const std::string& name, const std::vector<TokenId>& eos_override, std::string_view tenant) {
  return Add(tokenizer_json, tokenizer_config_json, name, eos_override, tenant,
             /*preloaded=*/false);
}

size_t TokenizerRegistry::HeldByLocked(std::string_view tenant) const {
  size_t held = 0;
  for (const auto& [id, entry] : by_id_) held += entry.holders.contains(tenant) ? 1 : 0;
  return held;
}

absl::StatusOr<RegisterOutcome> TokenizerRegistry::Add(std::string_view tokenizer_json,
                                                       std::string_view tokenizer_config_json,
                                                       const std::string& name,
                                                       const std::vector<TokenId>& eos_override,
                                                       std::string_view tenant, bool preloaded) {
  if (!name.empty() && !IsValidName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid tokenizer name '", name.substr(0, 128),
                     "': use 1-128 of [A-Za-z0-9._-], starting with a letter or digit"));
  }
  if (tokenizer_json.empty()) {
    return absl::InvalidArgumentError("tokenizer.json is empty");
  }
  const size_t limit = limits_.max_tokenizer_json_bytes;
  if (tokenizer_json.size() > limit || tokenizer_config_json.size() > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "tokenizer files of ", tokenizer_json.size(), " + ", tokenizer_config_json.size(),
        " bytes exceed the per-file limit of ", limit, " bytes"));
  }
  TokenizerOptions options;
  options.name = name;
  options.eos_override = eos_override;
  absl::StatusOr<std::shared_ptr<const Tokenizer>> loaded =
      loader_(tokenizer_json, tokenizer_config_json, options);
  if (!loaded.ok()) {
    // The loader's message names the problem; keep it, but make the code
    // INVALID_ARGUMENT whatever the loader chose: the input is at fault.
    return absl::InvalidArgumentError(
        absl::StrCat("cannot load tokenizer: ", loaded.status().message()));
  }
  std::shared_ptr<const Tokenizer> tokenizer = *std::move(loaded);
  const std::string& id = tokenizer->id();

  // Refusals that need no index first, so a refused upload builds nothing.
  auto check_names = [&]() -> absl::Status {
    if (name.empty()) return absl::OkStatus();
    if (auto bound = preloaded_names_.find(name); bound != preloaded_names_.end()) {
      if (bound->second == id) return absl::OkStatus();
      return absl::AlreadyExistsError(absl::StrCat("tokenizer name '", name,
                                                   "' is a preloaded tokenizer of this server (",
                                                   bound->second, "); choose another name"));
    }
    if (!preloaded) {
      auto bound = tenant_names_.find({std::string(tenant), name});
      if (bound != tenant_names_.end() && bound->second != id) {
        return absl::AlreadyExistsError(absl::StrCat(
            "tokenizer name '", name, "' is already bound to tokenizer ", bound->second));
      }
    } else if (std::any_of(tenant_names_.begin(), tenant_names_.end(),
                           [&](const auto& bound) { return bound.first.second == name; })) {
      return absl::AlreadyExistsError(
          absl::StrCat("tokenizer name '", name, "' is already registered by a tenant"));
    }
    return absl::OkStatus();
  };
  // Binds the name and the tenant's hold on an entry that is in by_id_.
  auto bind = [&](Entry& entry) {
    entry.last_used = ++clock_;
    if (preloaded) {
      if (!name.empty()) preloaded_names_.emplace(name, id);
      return;
    }
    if (!entry.registered.preloaded) entry.holders.emplace(tenant);
    const bool preloaded_name = preloaded_names_.contains(name);
    if (!name.empty() && !preloaded_name)
      tenant_names_.emplace(std::pair{std::string(tenant), name}, id);
  };
  auto check_quota = [&](const Entry* existing) -> absl::Status {
    if (preloaded || (existing != nullptr &&
                      (existing->registered.preloaded || existing->holders.contains(tenant)))) {
      return absl::OkStatus();
    }
    if (HeldByLocked(tenant) >= limits_.max_tokenizers_per_tenant) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "tenant '", std::string(tenant), "' holds ", limits_.max_tokenizers_per_tenant,
          " registered tokenizers (--max_tokenizers_per_tenant); UnregisterTokenizer one first"));
    }
    return absl::OkStatus();
  };
  auto join_existing = [&](Entry& existing) -> absl::StatusOr<RegisterOutcome> {
    const std::vector<TokenId>& existing_eos = existing.registered.tokenizer->eos_ids();
    if (existing_eos != tokenizer->eos_ids()) {
      return absl::AlreadyExistsError(absl::StrCat("tokenizer ", id,
                                                   " is already registered with eos ids [",
                                                   absl::StrJoin(existing_eos, ","), "], not [",
                                                   absl::StrJoin(tokenizer->eos_ids(), ","), "]"));
    }
    if (absl::Status quota = check_quota(&existing); !quota.ok()) return quota;
    bind(existing);
    return RegisterOutcome{existing.registered, /*already_registered=*/true, {}};
  };

  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (absl::Status names = check_names(); !names.ok()) return names;
    if (auto existing = by_id_.find(id); existing != by_id_.end()) {
      return join_existing(existing->second);
    }
    if (absl::Status quota = check_quota(nullptr); !quota.ok()) return quota;
  }

  // The vocabulary's token trie, built now rather than by the first Compile
  // (outside the lock: tens of ms for a 128k vocabulary).
  absl::StatusOr<std::shared_ptr<const void>> index = indexer_.prepare(tokenizer);
  if (!index.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot index tokenizer: ", index.status().message()));
  }
  const size_t special_count = CountSpecial(*tokenizer);

  std::lock_guard<std::mutex> lock(mutex_);
  // Someone may have registered the same content or taken the name meanwhile.
  if (absl::Status names = check_names(); !names.ok()) return names;
  if (auto existing = by_id_.find(id); existing != by_id_.end()) {
    return join_existing(existing->second);
  }
  if (absl::Status quota = check_quota(nullptr); !quota.ok()) return quota;
  RegisterOutcome outcome;
  while (by_id_.size() >= limits_.max_tokenizers) {
    if (!EvictOneLocked(&outcome.evicted_ids)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tokenizer limit of ", limits_.max_tokenizers,
                       " reached (--max_tokenizers) and every registered tokenizer is in use"));
    }
  }
  Entry& entry = by_id_[id];
  entry.registered = RegisteredTokenizer{tokenizer, special_count, preloaded};
  entry.index = *std::move(index);
  bind(entry);
  outcome.entry = entry.registered;
  return outcome;
}

bool TokenizerRegistry::EvictOneLocked(std::vector<std::string>* evicted) {
  const Entry* victim = nullptr;
  std::string victim_id;
  for (const auto& [id, entry] : by_id_) {
    if (entry.registered.preloaded) continue;
    // Compiled grammars (cached or in sessions) share the index.
    if (entry.index != nullptr && entry.index.use_count() > indexer_.idle_use_count) continue;
    if (victim == nullptr || entry.last_used < victim->last_used) {
      victim = &entry;
      victim_id = id;
    }
  }
  if (victim == nullptr) return false;
  EraseLocked(victim_id);
  evicted->push_back(std::move(victim_id));
  return true;
}

void TokenizerRegistry::EraseLocked(const std::string& id) {
  for (auto it = tenant_names_.begin(); it != tenant_names_.end();) {
    it = it->second == id ? tenant_names_.erase(it) : std::next(it);
  }
  by_id_.erase(id);
  if (indexer_.release) indexer_.release(id);
}

absl::StatusOr<bool> TokenizerRegistry::Unregister(std::string_view id, std::string_view tenant) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_id_.find(id);
  if (it != by_id_.end() && it->second.registered.preloaded) {
    return absl::FailedPreconditionError(absl::StrCat(
        "tokenizer ", std::string(id), " is preloaded (--tokenizer) and cannot be unregistered"));
  }
  if (it == by_id_.end() || !it->second.holders.contains(tenant)) {
    return absl::NotFoundError(absl::StrCat(
        "tenant '", std::string(tenant), "' has not registered tokenizer '", std::string(id), "'"));
  }
  it->second.holders.erase(it->second.holders.find(tenant));
  for (auto name = tenant_names_.begin(); name != tenant_names_.end();) {
    name = name->first.first == tenant && name->second == id ? tenant_names_.erase(name)
                                                             : std::next(name);
  }
  if (!it->second.holders.empty()) return false;
  EraseLocked(std::string(id));
  return true;
}

absl::StatusOr<RegisterOutcome> TokenizerRegistry::Preload(const std::string& name,
                                                           const std::string& dir) {
  absl::StatusOr<std::string> json = ReadFile(dir + "/tokenizer.json");
  if (!json.ok()) return json.status();
  // tokenizer_config.json is optional: it only names eos_token.
  absl::StatusOr<std::string> config = ReadFile(dir + "/tokenizer_config.json");
  if (!config.ok() && !absl::IsNotFound(config.status())) return config.status();
  absl::StatusOr<RegisterOutcome> outcome =
      Add(*json, config.ok() ? *config : std::string(), name, {}, "", /*preloaded=*/true);
  if (!outcome.ok()) {
    return absl::Status(outcome.status().code(),
                        absl::StrCat(dir, ": ", outcome.status().message()));
  }
  return outcome;
}

absl::StatusOr<RegisteredTokenizer> TokenizerRegistry::FindById(std::string_view id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_id_.find(id);
  if (it == by_id_.end())
    return absl::NotFoundError(absl::StrCat("unknown tokenizer id '", std::string(id), "'"));
  it->second.last_used = ++clock_;
  return it->second.registered;
}

absl::StatusOr<RegisteredTokenizer> TokenizerRegistry::FindByName(std::string_view name,
                                                                  std::string_view tenant) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string id;
  if (auto bound = preloaded_names_.find(name); bound != preloaded_names_.end()) {
    id = bound->second;
  } else if (auto own = tenant_names_.find({std::string(tenant), std::string(name)});
             own != tenant_names_.end()) {
    id = own->second;
  } else {
    return absl::NotFoundError(
        absl::StrCat("no tokenizer named '", std::string(name), "' on this server"));
  }
  Entry& entry = by_id_.at(id);
  entry.last_used = ++clock_;
  return entry.registered;
}

std::vector<RegisteredTokenizer> TokenizerRegistry::List(std::string_view tenant) const {
  std::vector<RegisteredTokenizer> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries.reserve(by_id_.size());
    for (const auto& [id, entry] : by_id_) {
      if (entry.registered.preloaded || entry.holders.contains(tenant)) {
        entries.push_back(entry.registered);
      }
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const RegisteredTokenizer& a, const RegisteredTokenizer& b) {
              if (a.tokenizer->name() != b.tokenizer->name()) {
                return a.tokenizer->name() < b.tokenizer->name();
              }
              return a.tokenizer->id() < b.tokenizer->id();
            });
  return entries;
}

size_t TokenizerRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_id_.size();
}

}  // namespace maskd
