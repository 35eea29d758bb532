#include "service/tokenizer_registry.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

TokenizerRegistry::TokenizerRegistry(TokenizerRegistryLimits limits, TokenizerLoader loader)
    : limits_(limits), loader_(std::move(loader)) {}

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
    const std::string& name, const std::vector<TokenId>& eos_override, bool preloaded) {
  if (!name.empty() && !IsValidName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid tokenizer name '", name,
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
  // The vocabulary's token trie, built now rather than by the first Compile.
  if (absl::Status prepared = PrepareTokenizer(tokenizer); !prepared.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot index tokenizer: ", prepared.message()));
  }
  const size_t special_count = CountSpecial(*tokenizer);

  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& id = tokenizer->id();
  if (!name.empty()) {
    auto bound = id_by_name_.find(name);
    if (bound != id_by_name_.end() && bound->second != id) {
      return absl::AlreadyExistsError(absl::StrCat(
          "tokenizer name '", name, "' is already bound to tokenizer ", bound->second));
    }
  }
  if (auto existing = by_id_.find(id); existing != by_id_.end()) {
    const std::vector<TokenId>& existing_eos = existing->second.tokenizer->eos_ids();
    if (existing_eos != tokenizer->eos_ids()) {
      return absl::AlreadyExistsError(absl::StrCat("tokenizer ", id,
                                                   " is already registered with eos ids [",
                                                   absl::StrJoin(existing_eos, ","), "], not [",
                                                   absl::StrJoin(tokenizer->eos_ids(), ","), "]"));
    }
    if (!name.empty()) id_by_name_.emplace(name, id);
    return RegisterOutcome{existing->second, /*already_registered=*/true};
  }
  if (by_id_.size() >= limits_.max_tokenizers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tokenizer limit of ", limits_.max_tokenizers, " reached"));
  }
  RegisteredTokenizer entry{tokenizer, special_count, preloaded};
  by_id_.emplace(id, entry);
  if (!name.empty()) id_by_name_.emplace(name, id);
  return RegisterOutcome{std::move(entry), /*already_registered=*/false};
}

absl::StatusOr<RegisterOutcome> TokenizerRegistry::Preload(const std::string& name,
                                                           const std::string& dir) {
  absl::StatusOr<std::string> json = ReadFile(dir + "/tokenizer.json");
  if (!json.ok()) return json.status();
  // tokenizer_config.json is optional: it only names eos_token.
  absl::StatusOr<std::string> config = ReadFile(dir + "/tokenizer_config.json");
  if (!config.ok() && !absl::IsNotFound(config.status())) return config.status();
  absl::StatusOr<RegisterOutcome> outcome =
      Register(*json, config.ok() ? *config : std::string(), name, {}, /*preloaded=*/true);
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
  return it->second;
}

absl::StatusOr<RegisteredTokenizer> TokenizerRegistry::FindByName(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto bound = id_by_name_.find(name);
  if (bound == id_by_name_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no tokenizer named '", std::string(name), "' on this server"));
  }
  return by_id_.at(bound->second);
}

std::vector<RegisteredTokenizer> TokenizerRegistry::List() const {
  std::vector<RegisteredTokenizer> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries.reserve(by_id_.size());
    for (const auto& [id, entry] : by_id_) entries.push_back(entry);
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
