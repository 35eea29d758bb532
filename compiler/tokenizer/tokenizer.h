// A HuggingFace tokenizer.json loaded into the two things maskd needs:
// every token id's exact byte string (for masks), and an encoder that gives
// the same ids as HuggingFace `encode(text, add_special_tokens=False)` (for
// jump-forward tokens and for benchmarks that teacher-force real token ids).
//
// Supported models: byte-level BPE (GPT-2 byte map: Llama 3, Qwen, gpt-oss)
// and SentencePiece-style BPE (`▁` for space, `<0xNN>` byte fallback: Llama 2,
// Mistral). Anything else is refused with a precise error.
#ifndef MASKD_COMPILER_TOKENIZER_TOKENIZER_H_
#define MASKD_COMPILER_TOKENIZER_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd {

using TokenId = uint32_t;

enum class TokenizerKind {
  kByteLevelBpe,      // GPT-2 byte-to-unicode map on every token.
  kSentencePieceBpe,  // `▁` stands for space, `<0xNN>` tokens are raw bytes.
};

struct TokenizerOptions {
  // Human-readable name reported by the service (e.g. "llama3"). Empty: derived
  // from the file's directory name by FromDirectory, otherwise "unnamed".
  std::string name;
  // Overrides the end-of-sequence ids read from the files when non-empty.
  std::vector<TokenId> eos_override;
};

class Tokenizer {
 public:
  // Parses tokenizer.json (and, when given, tokenizer_config.json, which names
  // eos_token). Errors are InvalidArgument naming the problem (a JSON path such
  // as "model.vocab" and what is wrong with it).
  static absl::StatusOr<std::shared_ptr<const Tokenizer>> FromJson(
      std::string_view tokenizer_json, std::string_view tokenizer_config_json,
      const TokenizerOptions& options = {});
  // Reads DIR/tokenizer.json and, if present, DIR/tokenizer_config.json.
  // NotFound when DIR/tokenizer.json cannot be read; otherwise as FromJson.
  static absl::StatusOr<std::shared_ptr<const Tokenizer>> FromDirectory(
      const std::string& dir, const TokenizerOptions& options = {});

  virtual ~Tokenizer() = default;

  // Content hash of the tokenizer.json bytes (lowercase hex SHA-256, first 32
  // hex digits): the tokenizer id on the wire, equal on every replica.
  virtual const std::string& id() const = 0;
  virtual const std::string& name() const = 0;
  virtual TokenizerKind kind() const = 0;

  // Number of token ids (max id + 1, added tokens included). Ids that no
  // token has (holes) have empty bytes and are special.
  virtual size_t vocab_size() const = 0;
  // The exact bytes the token stands for in the output. Special tokens give
  // their literal content (e.g. "<|eot_id|>") but are never allowed by masks.
  virtual std::string_view token_bytes(TokenId id) const = 0;
  // Added tokens marked special, and ids with no token: never allowed by masks
  // (EOS is handled apart by the matcher).
  virtual bool is_special(TokenId id) const = 0;
  virtual const std::vector<TokenId>& eos_ids() const = 0;

  // HuggingFace encode(text, add_special_tokens=False): added tokens found in
  // the text become their ids, the rest is normalized, pre-tokenized and BPE
  // merged. Invalid UTF-8 is first replaced by U+FFFD (WHATWG decoding), as a
  // JavaScript or Python string of the same bytes would hold.
  virtual std::vector<TokenId> Encode(std::string_view text) const = 0;
  // Concatenated token bytes.
  virtual std::string Decode(std::span<const TokenId> ids) const = 0;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_TOKENIZER_TOKENIZER_H_
