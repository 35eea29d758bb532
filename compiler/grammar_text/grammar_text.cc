#include "compiler/grammar_text/grammar_text.h"

#include "compiler/grammar_text/gbnf_front_end.h"
#include "compiler/grammar_text/lark_front_end.h"

namespace maskd::grammar_text {

absl::StatusOr<GrammarIr> BuildGrammarTextIr(std::string_view text, Dialect dialect,
                                             const GrammarTextOptions& options) {
  switch (dialect) {
    case Dialect::kGbnf:
      return BuildGbnfIr(text, GbnfFlavor::kLlamaCpp, options);
    case Dialect::kXGrammarEbnf:
      return BuildGbnfIr(text, GbnfFlavor::kXGrammar, options);
    case Dialect::kLark:
      return BuildLarkIr(text, options);
  }
  return absl::InvalidArgumentError("unknown grammar dialect");
}

}  // namespace maskd::grammar_text
