// The structural-tag front end: XGrammar's structural tag JSON -> grammar IR.
//
// Two spellings are accepted:
//  - legacy: {"structures":[{"begin","schema","end"}...],"triggers":[...]},
//    which means a triggered_tags format whose tags have JSON Schema contents;
//  - {"format": FORMAT} (optionally with "type":"structural_tag"), FORMAT one of
//      {"type":"const_string","value":S}
//      {"type":"json_schema","json_schema":SCHEMA}
//      {"type":"regex","pattern":P}                  (ECMA-262, matched whole)
//      {"type":"sequence","elements":[FORMAT...]}
//      {"type":"or","elements":[FORMAT...]}
//      {"type":"tag","begin":S,"content":FORMAT,"end":S or [S...]}
//      {"type":"triggered_tags","triggers":[S...],"tags":[TAG...],
//       "at_least_one":B,"stop_after_first":B}
//      {"type":"tags_with_separator","tags":[TAG...],"separator":S,
//       "at_least_one":B,"stop_after_first":B}
//      {"type":"any_text"}
//      {"type":"grammar","grammar":EBNF}          (XGrammar's EBNF, root rule "root")
//
// What the language is, exactly:
//  - any_text is any byte string; where a literal follows it (a tag's end, the
//    next const_string of a sequence) it is any byte string up to the FIRST
//    occurrence of that literal, which then ends it. any_text anywhere else
//    (before a non-literal) is refused with Unimplemented: the lexer could not
//    tell where it ends.
//  - triggered_tags: free text (any bytes) in which no trigger occurs; at each
//    first occurrence of a trigger the text must go on as one of the tags whose
//    begin starts with that trigger; after the tag's end, free text again.
//    at_least_one: at least one tag; stop_after_first: the output ends right
//    after the first tag's end (free text only before it).
//    Anywhere but at the end of the output (in a sequence, an or, a tag's
//    content) triggered_tags must be followed by a literal (the next
//    const_string, the tag's end): where the part may end (not before its
//    first tag with at_least_one) its free text runs up to the first
//    occurrence of a trigger (a tag follows) or of that literal (the part
//    ends there). Before a non-literal it is refused with Unimplemented, as
//    any_text is (unless at_least_one and stop_after_first: no free text
//    after the tag).
//  - tags_with_separator: zero or more tags (one or more with at_least_one, at
//    most one with stop_after_first) with the separator between them and
//    nothing else.
// Errors carry a JSON pointer into the structural tag document (for a schema
// error, the pointer runs on into the schema).
#ifndef MASKD_COMPILER_STRUCTURAL_TAG_STRUCTURAL_TAG_H_
#define MASKD_COMPILER_STRUCTURAL_TAG_STRUCTURAL_TAG_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd {

struct StructuralTagOptions {
  // How the embedded JSON Schemas are read and lowered.
  json_schema::ParseOptions parse;
  json_schema::LowerOptions lower;
  // The compile's tokenizer: literal text (const_string, a tag's begin and
  // end) holding a special token's text gets that token as a token terminal.
  // Null: literals are text only.
  const Tokenizer* tokenizer = nullptr;
};

absl::StatusOr<GrammarIr> BuildStructuralTagGrammar(std::string_view text,
                                                    const StructuralTagOptions& options);

}  // namespace maskd

#endif  // MASKD_COMPILER_STRUCTURAL_TAG_STRUCTURAL_TAG_H_
