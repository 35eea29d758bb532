// Token references in grammar texts: `<[id]>`, `<token-text>` and, in GBNF,
// their negation `!<...>` (llama.cpp grammars/README.md); in Lark, also id
// ranges and lists `<[128000-128010,128020]>`, their negation `<[^...]>` and
// the wildcard `<[*]>` (llguidance). A reference by
// text names the token whose text is exactly the whole `<...>` (brackets
// included, as both dialects define it) and is looked up in the compile's
// tokenizer: the text must encode as exactly one token.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_TOKEN_REFERENCE_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_TOKEN_REFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::grammar_text {

enum class TokenSyntax {
  kGbnf,  // `<[id]>`, `<text>`, `!<[id]>`, `!<text>`
  kLark,  // `<[id]>`, `<[a-b,c]>`, `<[^a-b,c]>` (all but), `<[*]>` (all), `<text>`
};

struct TokenReference {
  std::string spelling;  // as written, e.g. "!<[1000]>"
  std::vector<uint32_t> ids;
  bool negated = false;
};

// Reads the reference starting at text[at] ('<' or, in GBNF, '!'), setting
// *end past it. Errors are TextErrors at the reference (line:column):
// InvalidArgument for a malformed reference, an id outside the vocabulary,
// a text that is not exactly one token of `tokenizer` or names the
// end-of-sequence token, or a reference by text with no tokenizer.
absl::StatusOr<TokenReference> ReadTokenReference(std::string_view text, size_t at,
                                                  TokenSyntax syntax, const Tokenizer* tokenizer,
                                                  size_t* end);

// The token terminal for `ref` in `ir`, named by its spelling and position.
LexemeId AddTokenLexeme(GrammarIr& ir, const TokenReference& ref, std::string_view text, size_t at);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_TOKEN_REFERENCE_H_
