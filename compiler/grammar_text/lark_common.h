// Lark's `common` library (lark/grammars/common.lark), the terminals
// `%import common.X` may name. Written without look-behind or lazy
// quantifiers, which change nothing for a lexeme matched whole.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_LARK_COMMON_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_LARK_COMMON_H_

#include <string_view>

namespace maskd::grammar_text {

inline constexpr std::string_view kLarkCommon = R"lark(
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+"|"-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e"|"E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+"|"-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+"|"-"] NUMBER
ESCAPED_STRING: /"([^"\\\n]|\\[^\n])*"/
LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_"|LETTER) ("_"|LETTER|DIGIT)*
WS_INLINE: (" "|/\t/)+
WS: /[ \t\f\r\n]/+
CR: /\r/
LF: /\n/
NEWLINE: (CR? LF)+
SH_COMMENT: /#[^\n]*/
CPP_COMMENT: /\/\/[^\n]*/
C_COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: /--[^\n]*/
)lark";

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_LARK_COMMON_H_
