// A Tokenizer whose every property comes from its constructor, and a loader
// that builds one from tiny "files", so registry logic can be tested without
// multi-megabyte tokenizer.json fixtures.
//
// Fake tokenizer.json format: "vocab=N" (anything else but "bad..." gives
// vocab 4). Content starting with "bad" fails to load with a message naming
// "model.vocab".
#ifndef MASKD_TESTS_SUPPORT_STUB_TOKENIZER_H_
#define MASKD_TESTS_SUPPORT_STUB_TOKENIZER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::testing {

class StubTokenizer : public Tokenizer {
 public:
  StubTokenizer(std::string id, std::string name, size_t vocab_size, std::vector<TokenId> eos)
      : id_(std::move(id)), name_(std::move(name)), vocab_size_(vocab_size), eos_(std::move(eos)) {}

  const std::string& id() const override { return id_; }
  const std::string& name() const override { return name_; }
  TokenizerKind kind() const override { return TokenizerKind::kByteLevelBpe; }
  size_t vocab_size() const override { return vocab_size_; }
  std::string_view token_bytes(TokenId) const override { return "x"; }
  // The last id is special, like an added <|end|> token.
  bool is_special(TokenId id) const override { return id + 1 == vocab_size_; }
  const std::vector<TokenId>& eos_ids() const override { return eos_; }
  std::vector<TokenId> Encode(std::string_view) const override { return {}; }
  std::string Decode(std::span<const TokenId>) const override { return ""; }

 private:
  std::string id_;
  std::string name_;
  size_t vocab_size_;
  std::vector<TokenId> eos_;
};

inline absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadStubTokenizer(
    std::string_view json, std::string_view /*config*/, const TokenizerOptions& options) {
  if (json.substr(0, 3) == "bad") {
    return absl::InvalidArgumentError("model.vocab: missing");
  }
  size_t vocab = 4;
  if (json.substr(0, 6) == "vocab=") vocab = std::stoul(std::string(json.substr(6)));
  // Content hash stand-in: equal content, equal id.
  const std::string id = std::to_string(std::hash<std::string_view>{}(json));
  std::vector<TokenId> eos =
      options.eos_override.empty() ? std::vector<TokenId>{0} : options.eos_override;
  return std::make_shared<StubTokenizer>(id, options.name.empty() ? "unnamed" : options.name, vocab,
                                         std::move(eos));
}

}  // namespace maskd::testing

#endif  // MASKD_TESTS_SUPPORT_STUB_TOKENIZER_H_
