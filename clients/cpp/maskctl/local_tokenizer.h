// maskd has no tokenize RPC, so `check` and `generate` load the server's
// tokenizer locally (the engine's own loader, so ids and bytes are the
// server's) and refuse to go on unless its content hash is the server's id.
#ifndef MASKD_CLIENTS_CPP_MASKCTL_LOCAL_TOKENIZER_H_
#define MASKD_CLIENTS_CPP_MASKCTL_LOCAL_TOKENIZER_H_

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/tokenizer/tokenizer.h"
#include "maskd/v1/tokenizer.pb.h"

namespace maskd::maskctl {

// Loads `dir`/tokenizer.json, or when `dir` is empty the tokenizer cache's
// folder named like the server's tokenizer. FailedPrecondition when the
// local file is not the server's (different content hash).
absl::StatusOr<std::shared_ptr<const Tokenizer>> LoadServerTokenizer(
    const v1::TokenizerInfo& server, const std::string& dir);

// The non-special token whose bytes are exactly each byte value, where one
// exists (byte-level BPE has all 256; SentencePiece has <0xNN> tokens).
std::array<std::optional<TokenId>, 256> SingleByteTokens(const Tokenizer& tokenizer);

}  // namespace maskd::maskctl

#endif  // MASKD_CLIENTS_CPP_MASKCTL_LOCAL_TOKENIZER_H_
