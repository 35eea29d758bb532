// Grammar texts (llama.cpp GBNF, XGrammar-style EBNF, llguidance-style Lark)
// to grammar IR. This is the one entry point the compiler (and later the
// structural-tag builder) calls: text + dialect + options -> GrammarIr or a
// Status whose message says "line L:C: ..." with an excerpt and whose
// "maskd/line-column" payload carries the position (text_error.h).
//
// What the dialects mean here, exactly:
//  - GBNF and EBNF are character-level grammars: every terminal is one code
//    point, so the lexer's longest-match rule never changes the language
//    (gbnf_front_end.h).
//  - Lark is lexeme-level as llguidance defines it: UPPERCASE terminals,
//    strings and /regexes/ in rules are lexemes matched greedily
//    (lark_front_end.h).
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_GRAMMAR_TEXT_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_GRAMMAR_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::grammar_text {

enum class Dialect {
  kGbnf,          // llama.cpp
  kXGrammarEbnf,  // XGrammar's EBNF
  kLark,          // llguidance's Lark
};

// How a Lark `%json {schema}` is read: the JSON Schema front end's own
// options, so an embedded schema gets the compile's deadline, cancellation,
// nesting limit, property order and format policy like a schema spec does.
struct JsonEmbedOptions {
  json_schema::ParseOptions parse = [] {
    json_schema::ParseOptions strict;
    strict.strict_keywords = true;
    return strict;
  }();
  json_schema::LowerOptions lower;
};

struct GrammarTextOptions {
  // Empty: the dialect's default ("root" for GBNF and EBNF, "start" for Lark).
  std::string start_rule;
  // Grammar size limit: symbols in all rule bodies after expanding counted
  // repetitions (ResourceExhausted past it).
  size_t max_symbols = 1'000'000;
  // Deepest nesting of groups (`( )`, Lark's `[ ]`) and of the groups of a
  // Lark /regex/: CompileOptions::max_recursion_depth. Deeper is
  // InvalidArgument naming the limit, at the group that passes it (the
  // parsers recurse per level).
  int max_nesting = 128;
  JsonEmbedOptions json;
  // The compile's tokenizer: token references by text (`<|call|>`) are
  // looked up in it and ids checked against it. Null: only `<[id]>`
  // references, checked when the grammar is compiled for a tokenizer.
  const Tokenizer* tokenizer = nullptr;
};

absl::StatusOr<GrammarIr> BuildGrammarTextIr(std::string_view text, Dialect dialect,
                                             const GrammarTextOptions& options);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_GRAMMAR_TEXT_H_
