// tokenizer.json is 99% model.vocab and model.merges (Llama 3: 128k entries
// and 280k merges in 9 MB). The loader reads those two with simdjson's
// On-Demand API straight from the text, and the rest (a few dozen KiB) with
// the DOM API from a skeleton: the document with those two values replaced by
// {} and []. A DOM tape for the whole file costs ~6,000 fresh pages, which
// dominated a server's first load.
#ifndef MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_SPLIT_H_
#define MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_SPLIT_H_

#include <string>
#include <string_view>

#include "compiler/tokenizer/padded_json.h"
#include "simdjson.h"

namespace maskd::tokenizer_internal {

struct TokenizerJsonParts {
  // The document with `vocab` replaced by {} and `merges` by [].
  std::string skeleton;
  // The text of the first model.vocab member when it is an object, of the
  // first model.merges member when it is an array; empty otherwise (then the
  // member, if any, is in the skeleton as written).
  std::string_view vocab;
  std::string_view merges;
};

// Splits `json` (a UTF-8 document), walking only the top-level and model
// members; `parser` is left holding buffers sized for `json`. A document
// On-Demand cannot walk that far (malformed, top level or model not an
// object) comes back whole as the skeleton, so that the DOM parse reports
// its problem exactly as for any other document.
TokenizerJsonParts SplitTokenizerJson(simdjson::ondemand::parser& parser, const PaddedJson& json);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_SPLIT_H_
