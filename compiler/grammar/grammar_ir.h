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
};

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_GRAMMAR_IR_H_
