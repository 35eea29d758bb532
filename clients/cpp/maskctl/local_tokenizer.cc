#include "clients/cpp/maskctl/local_tokenizer.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace maskd::maskctl {
namespace {

std::string TokenizerCacheRoot() {
  if (const char* dir = std::getenv("MASKD_TOKENIZER_DIR"); dir != nullptr && dir[0] != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] != '\0') {
    return absl::StrCat(xdg, "/maskd/tokenizers");
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "", "/.cache/maskd/tokenizers");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadServerTokenizer(
    const v1::TokenizerInfo& server, const std::string& dir) {
  const std::string path = dir.empty() ? TokenizerCacheRoot() + "/" + server.name() : dir;
  TokenizerOptions options;
  options.name = server.name();
  options.eos_override.assign(server.eos_token_ids().begin(), server.eos_token_ids().end());
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer =
      Tokenizer::FromDirectory(path, options);
  if (!tokenizer.ok()) {
    return absl::Status(
        tokenizer.status().code(),
        absl::StrCat("loading the local copy of tokenizer '", server.name(), "' from ", path, ": ",
                     tokenizer.status().message(), " (pass --tokenizer_dir)"));
  }
  if ((*tokenizer)->id() != server.tokenizer_id()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, "/tokenizer.json has id ", (*tokenizer)->id(), " but the server's tokenizer '",
        server.name(), "' has id ", server.tokenizer_id(), "; pass --tokenizer_dir with its copy"));
  }
  return tokenizer;
}

std::array<std::optional<TokenId>, 256> SingleByteTokens(const Tokenizer& tokenizer) {
  std::array<std::optional<TokenId>, 256> table;
  for (TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.is_special(id)) continue;
    const std::string_view bytes = tokenizer.token_bytes(id);
    if (bytes.size() != 1) continue;
    std::optional<TokenId>& slot = table[static_cast<unsigned char>(bytes[0])];
    if (!slot) slot = id;
  }
  return table;
}

}  // namespace maskd::maskctl
