// What a front end hands to the automata stage: the grammar IR and the regex
// pool its lexemes point into. Every front end builds this and nothing else; the
// matcher never sees a front end.
#ifndef MASKD_COMPILER_GRAMMAR_GRAMMAR_IR_H_
#define MASKD_COMPILER_GRAMMAR_GRAMMAR_IR_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/grammar/grammar.h"
#include "compiler/regex/expr_set.h"

namespace maskd {

struct GrammarIr {
  std::unique_ptr<regex::ExprSet> pool = std::make_unique<regex::ExprSet>();
  GrammarBuilder builder;
  // Keywords a permissive front end skipped ("keyword at /pointer").
  std::vector<std::string> ignored_keywords;
  // Things a front end accepted but the author likely did not mean (a rule
  // the start rule cannot reach), for CompileStats::warnings.
  std::vector<std::string> warnings;
  // Set by a front end that proves longest-match lexing reads every
  // sentence as the grammar does, whatever lexemes the parser allows: for
  // every lexemes A and B, no string of B followed by a byte that may follow
  // B is a prefix of a string of A (GBNF: code-point lexemes, prefix-free as
  // UTF-8, and the rules grammar_text/lexeme_merge.h proves so). Then an
  // isolated view of a parse lexes its bytes as the whole parse does, which
  // item masks rely on (matcher/item_masks.h). A stage that adds lexemes
  // clears it.
  bool context_free_lexing = false;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_GRAMMAR_IR_H_
