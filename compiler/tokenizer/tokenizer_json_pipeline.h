// The text pipeline's sections of tokenizer.json: `normalizer` and
// `pre_tokenizer` become the steps the encoder runs before BPE, and they and
// `decoder` decide whether the vocabulary is byte-level. Refusals name the
// JSON path of the unsupported part.
#ifndef MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_PIPELINE_H_
#define MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_PIPELINE_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compiler/tokenizer/normalizer.h"
#include "compiler/tokenizer/pre_tokenizer.h"
#include "simdjson.h"

namespace maskd::tokenizer_internal {

// Appends the steps of the normalizer `value` (null: none) found at `path`.
absl::Status ParseNormalizer(const simdjson::dom::element& value, absl::string_view path,
                             std::vector<NormalizerStep>& steps);

// Appends the steps of the pre-tokenizer `value` (null: none) found at
// `path`; sets `byte_level` when it contains a ByteLevel pre-tokenizer.
absl::Status ParsePreTokenizer(const simdjson::dom::element& value, absl::string_view path,
                               std::vector<PreTokenizerStep>& steps, bool& byte_level);

// The decoder says byte-level too when the pre-tokenizer does not.
bool DecoderIsByteLevel(const simdjson::dom::object& root);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_PIPELINE_H_
