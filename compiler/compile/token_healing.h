// Token healing at open (Guidance's algorithm): the prompt's last tokens may
// end where a longer token would have covered them ("https:" before "//",
// " {" before "\""), which the model then cannot produce. maskd removes the
// longest tail of the prompt's tokens whose bytes are a proper prefix of some
// single token, the worker drops those tokens, and the output must start with
// the removed bytes and then follow the spec (CompileOptions::required_prefix).
#ifndef MASKD_COMPILER_COMPILE_TOKEN_HEALING_H_
#define MASKD_COMPILER_COMPILE_TOKEN_HEALING_H_

#include <memory>
#include <span>
#include <string>

#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

struct Healing {
  uint32_t tokens_to_drop = 0;  // from the end of the prompt
  std::string removed_bytes;    // their bytes, which the output must start with
};

// The longest k <= tail.size() such that the last k tokens' bytes are a
// proper prefix of some non-special token's bytes; k = 0 when none is.
// Special tokens in the tail are never removed (nor anything before them).
// Reads the whole vocabulary (about a millisecond for 128k tokens): the
// reference.
Healing HealPromptTail(const Tokenizer& tokenizer, std::span<const TokenId> tail);

// The same answer from the tokenizer's vocabulary sorted by bytes, built once
// per tokenizer and kept while it lives (microseconds per call after that):
// what the service calls for every open with a prompt tail.
Healing HealPromptTail(const std::shared_ptr<const Tokenizer>& tokenizer,
                       std::span<const TokenId> tail);

// Builds that sorted vocabulary for `tokenizer` now (about 120 ms for Llama
// 3's 128k tokens), so the first open that heals does not pay for it on a
// request thread: the service calls it when it loads a tokenizer.
void PrepareTokenHealing(const std::shared_ptr<const Tokenizer>& tokenizer);
// Whether it is built (and kept) for `tokenizer`.
bool TokenHealingPrepared(const std::shared_ptr<const Tokenizer>& tokenizer);

}  // namespace maskd

#endif  // MASKD_COMPILER_COMPILE_TOKEN_HEALING_H_
