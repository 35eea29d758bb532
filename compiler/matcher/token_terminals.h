// The matcher's token pass: token terminals (grammar.h TokenTerminal) are
// matched by whole tokens beside the byte-level trie walk, never by bytes,
// and text lexemes never by a special token (the trie holds no special
// token). This class holds, per token terminal of one compiled grammar, the
// tokens it allows in this tokenizer, and proves at compile time that a token
// can never be taken both as a token terminal and as text at the same point
// (which a single (parser, lexer) state could not follow).
#ifndef MASKD_COMPILER_MATCHER_TOKEN_TERMINALS_H_
#define MASKD_COMPILER_MATCHER_TOKEN_TERMINALS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar.h"
#include "compiler/grammar/lexeme_set.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

class TokenTerminals {
 public:
  TokenTerminals() = default;

  // Errors: InvalidArgument for an id outside the vocabulary or an
  // end-of-sequence id named by a terminal (the grammar's end governs EOS);
  // Unimplemented when a terminal that may match an ordinary (non-special)
  // token can be allowed where text can also go on, naming the terminal.
  static absl::StatusOr<TokenTerminals> Build(const Grammar& grammar, const Tokenizer& tokenizer);

  bool empty() const { return terminals_.empty(); }
  // Every token terminal, as a lexeme set.
  const LexemeSet& lexemes() const { return lexemes_; }

  // ORs into `words` the tokens of every token terminal in `allowed`.
  void AddAllowed(const LexemeSet& allowed, std::span<uint32_t> words) const;
  // Some token terminal in `allowed` allows some token.
  bool AnyAllowed(const LexemeSet& allowed) const;
  // The token terminals in `allowed` that `token` matches, into *matching
  // (cleared first); false when none.
  bool Matching(const LexemeSet& allowed, TokenId token, LexemeSet* matching) const;

  size_t ByteSizeEstimate() const;

 private:
  struct Terminal {
    LexemeId lexeme;
    const TokenTerminal* token;   // owned by the grammar
    std::vector<TokenId> ids;     // allowed ids when not negated
    std::vector<uint32_t> words;  // allowed ids as a mask when negated
  };
  std::vector<Terminal> terminals_;
  LexemeSet lexemes_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_TOKEN_TERMINALS_H_
