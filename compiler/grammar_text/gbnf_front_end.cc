#include "compiler/grammar_text/gbnf_front_end.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/ir_writer.h"
#include "compiler/grammar_text/lexeme_merge.h"
#include "compiler/grammar_text/text_cursor.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/grammar_text/token_reference.h"
#include "compiler/regex/expr_set.h"

namespace maskd::grammar_text {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  GbnfParser(std::string_view text, GbnfFlavor flavor, const GrammarTextOptions& options,
             GrammarIr& ir)
      : cur_{text, 0},
        flavor_(flavor),
        max_nesting_(options.max_nesting),
        tokenizer_(options.tokenizer),
        writer_(ir, text, options.max_symbols) {}

  absl::Status Parse(std::string_view start_name, bool start_given) {
    SkipSpace(true);
    while (!cur_.at_end()) {
      if (absl::Status s = ParseRule(); !s.ok()) return s;
      SkipSpace(true);
    }
    return writer_.Finish(start_name, start_given);
  }

 private:
  absl::Status Error(size_t offset, std::string_view what,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    return TextError(code, cur_.text, offset, what);
  }

  // Blanks and `#` comments; newlines only inside a group or after `::=`/`|`
  // (a newline ends a rule at the top level, as in llama.cpp).
  void SkipSpace(bool newlines) {
    while (!cur_.at_end()) {
      const char c = cur_.peek();
      if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
        ++cur_.pos;
      } else if (c == '#') {
        while (!cur_.at_end() && cur_.peek() != '\n') ++cur_.pos;
      } else {
        break;
      }
    }
  }

  std::string_view ParseName() {
    const size_t begin = cur_.pos;
    while (IsNameChar(cur_.peek())) ++cur_.pos;
    return cur_.text.substr(begin, cur_.pos - begin);
  }

  absl::Status ParseRule() {
    const size_t name_at = cur_.pos;
    const std::string_view name = ParseName();
    if (name.empty()) return Error(name_at, "expected a rule name");
    SkipSpace(false);
    if (!cur_.consume("::=")) {
      return Error(cur_.pos,
                   absl::StrCat("expected '::=' after rule name '", std::string(name), "'"));
    }
    SkipSpace(true);
    absl::StatusOr<NonterminalId> lhs = writer_.Define(name, name_at);
    if (!lhs.ok()) return lhs.status();
    absl::StatusOr<Alternatives> body = ParseAlternates(false);
    if (!body.ok()) return body.status();
    if (absl::Status s = writer_.AddRules(*lhs, *body, name_at); !s.ok()) return s;
    SkipSpace(false);
    if (!cur_.at_end() && cur_.peek() != '\n' && cur_.peek() != '\r') {
      if (flavor_ == GbnfFlavor::kXGrammar && cur_.starts_with("(=")) {
        return Error(cur_.pos, "lookahead assertions '(= ...)' are not supported",
                     absl::StatusCode::kUnimplemented);
      }
      return Error(cur_.pos,
                   absl::StrCat("unexpected '", std::string(1, cur_.peek()), "' in rule '",
                                std::string(name), "' (expected end of line)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Alternatives> ParseAlternates(bool nested) {
    Alternatives alts;
    for (;;) {
      absl::StatusOr<SymbolSeq> seq = ParseSequence(nested);
      if (!seq.ok()) return seq.status();
      alts.push_back(*std::move(seq));
      if (cur_.peek() != '|') break;
      ++cur_.pos;
      SkipSpace(true);
    }
    return alts;
  }

  // One character of a string or class: an escape or a UTF-8 code point.
  absl::StatusOr<uint32_t> ParseChar() {
    const size_t at = cur_.pos;
    if (cur_.peek() == '\\') {
      ++cur_.pos;
      const char e = cur_.peek();
      ++cur_.pos;
      std::optional<uint32_t> cp;
      switch (e) {
        case 'x':
          cp = ReadHex(cur_, 2);
          break;
        case 'u':
          cp = ReadHex(cur_, 4);
          break;
        case 'U':
          cp = ReadHex(cur_, 8);
          break;
        case 't':
          return uint32_t{'\t'};
        case 'r':
          return uint32_t{'\r'};
        case 'n':
          return uint32_t{'\n'};
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
          return static_cast<uint32_t>(static_cast<unsigned char>(e));
        default:
          return Error(at, absl::StrCat("unknown escape '\\", std::string(1, e), "'"));
      }
      if (!cp.has_value()) return Error(at, "malformed hex escape");
      if (*cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) {
        return Error(at, "escape names no Unicode scalar value");
      }
      return *cp;
    }
    std::optional<uint32_t> cp = DecodeUtf8(cur_);
    if (!cp.has_value()) return Error(at, "invalid UTF-8 in the grammar text");
    return *cp;
  }

  Symbol CodepointLexeme(const std::vector<regex::CodepointRange>& ranges, std::string_view name) {
    GrammarIr& ir = writer_.ir();
    return Symbol::Lexeme(ir.builder.AddLexeme(name, ir.pool->Codepoints(ranges)));
  }

  absl::StatusOr<SymbolSeq> ParseLiteral() {
    const size_t at = cur_.pos;
    ++cur_.pos;  // the opening quote
    SymbolSeq seq;
    while (cur_.peek() != '"') {
      if (cur_.at_end() || cur_.peek() == '\n') return Error(at, "unterminated string literal");
      const size_t char_at = cur_.pos;
      absl::StatusOr<uint32_t> cp = ParseChar();
      if (!cp.ok()) return cp.status();
      seq.push_back(CodepointLexeme({{*cp, *cp}}, cur_.text.substr(char_at, cur_.pos - char_at)));
    }
    ++cur_.pos;
    return seq;
  }

  absl::StatusOr<Symbol> ParseClass() {
    const size_t at = cur_.pos;
    ++cur_.pos;  // '['
    const bool negated = cur_.peek() == '^';
    if (negated) ++cur_.pos;
    std::vector<regex::CodepointRange> ranges;
    while (cur_.peek() != ']') {
      if (cur_.at_end()) return Error(at, "unterminated character class");
      absl::StatusOr<uint32_t> lo = ParseChar();
      if (!lo.ok()) return lo.status();
      uint32_t hi = *lo;
      if (cur_.peek() == '-' && cur_.peek(1) != ']' && !cur_.at_end()) {
        const size_t range_at = cur_.pos;
        ++cur_.pos;
        absl::StatusOr<uint32_t> end = ParseChar();
        if (!end.ok()) return end.status();
        if (*end < *lo) return Error(range_at, "character range is out of order");
        hi = *end;
      }
      ranges.push_back({*lo, hi});
    }
    ++cur_.pos;
    ranges = regex::NormalizeCodepointRanges(std::move(ranges));
    if (negated) {
      std::vector<regex::CodepointRange> complement;
      uint32_t next = 0;
      for (const regex::CodepointRange& r : ranges) {
        if (r.lo > next) complement.push_back({next, r.lo - 1});
        next = r.hi + 1;
      }
      if (next <= 0x10FFFF) complement.push_back({next, 0x10FFFF});
      ranges = regex::NormalizeCodepointRanges(std::move(complement));
    }
    if (ranges.empty()) return Error(at, "character class matches no character");
    return CodepointLexeme(ranges, cur_.text.substr(at, cur_.pos - at));
  }

  absl::StatusOr<uint32_t> ParseCount() {
    const size_t at = cur_.pos;
    std::optional<uint32_t> v = ReadRepeatCount(cur_);
    if (!v.has_value()) {
      return Error(at, absl::StrCat("repetition count over the limit of ", kMaxRepeatCount),
                   absl::StatusCode::kResourceExhausted);
    }
    return *v;
  }

  // `{m}`, `{m,}`, `{m,n}`, `{,n}` at cursor: (min, max).
  absl::StatusOr<std::pair<uint32_t, uint32_t>> ParseBraces() {
    const size_t at = cur_.pos;
    ++cur_.pos;
    SkipSpace(true);
    const bool has_min = cur_.peek() >= '0' && cur_.peek() <= '9';
    absl::StatusOr<uint32_t> min = ParseCount();
    if (!min.ok()) return min.status();
    SkipSpace(true);
    uint32_t max = *min;
    if (cur_.peek() == ',') {
      ++cur_.pos;
      SkipSpace(true);
      if (cur_.peek() >= '0' && cur_.peek() <= '9') {
        absl::StatusOr<uint32_t> m = ParseCount();
        if (!m.ok()) return m.status();
        max = *m;
      } else {
        max = kUnboundedRepeat;
      }
      SkipSpace(true);
    } else if (!has_min) {
      return Error(at, "expected a count in '{...}'");
    }
    if (!cur_.consume("}")) return Error(at, "unterminated repetition '{...}'");
    return std::make_pair(*min, max);
  }

  absl::StatusOr<SymbolSeq> ParseSequence(bool nested) {
    SymbolSeq seq;
    for (;;) {
      const size_t at = cur_.pos;
      const char c = cur_.peek();
      SymbolSeq element;
      if (c == '"') {
        absl::StatusOr<SymbolSeq> lit = ParseLiteral();
        if (!lit.ok()) return lit.status();
        element = *std::move(lit);
      } else if (c == '[') {
        absl::StatusOr<Symbol> cls = ParseClass();
        if (!cls.ok()) return cls.status();
        element.push_back(*cls);
      } else if (c == '.') {
        ++cur_.pos;
        GrammarIr& ir = writer_.ir();
        element.push_back(Symbol::Lexeme(ir.builder.AddLexeme(".", ir.pool->AnyCodepoint())));
      } else if (IsNameChar(c)) {
        const std::string_view name = ParseName();
        element.push_back(Symbol::Nonterminal(writer_.Use(name, at)));
      } else if (c == '(') {
        if (flavor_ == GbnfFlavor::kXGrammar && cur_.starts_with("(=")) {
          return Error(at, "lookahead assertions '(= ...)' are not supported",
                       absl::StatusCode::kUnimplemented);
        }
        if (nesting_ >= max_nesting_) {
          return Error(at, absl::StrCat("groups nested more than ", max_nesting_,
                                        " deep (max_recursion_depth)"));
        }
        ++cur_.pos;
        SkipSpace(true);
        ++nesting_;
        absl::StatusOr<Alternatives> alts = ParseAlternates(true);
        --nesting_;
        if (!alts.ok()) return alts.status();
        if (!cur_.consume(")")) return Error(at, "unbalanced '(': expected ')'");
        absl::StatusOr<Symbol> group = writer_.Group(*alts, at);
        if (!group.ok()) return group.status();
        element.push_back(*group);
      } else if (c == '<' || (c == '!' && cur_.peek(1) == '<')) {
        if (flavor_ == GbnfFlavor::kXGrammar) {
          size_t end = cur_.text.find('>', at);
          const std::string_view token =
              cur_.text.substr(at, end == std::string_view::npos ? 1 : end - at + 1);
          return Error(at,
                       absl::StrCat("token terminals such as '", std::string(token),
                                    "' are llama.cpp GBNF, not XGrammar EBNF"),
                       absl::StatusCode::kUnimplemented);
        }
        size_t end = at;
        absl::StatusOr<TokenReference> ref =
            ReadTokenReference(cur_.text, at, TokenSyntax::kGbnf, tokenizer_, &end);
        if (!ref.ok()) return ref.status();
        cur_.pos = end;
        element.push_back(Symbol::Lexeme(AddTokenLexeme(writer_.ir(), *ref, cur_.text, at)));
      } else {
        break;
      }
      SkipSpace(nested);
      // Postfix operators apply to the whole element (a whole string literal).
      while (cur_.peek() == '*' || cur_.peek() == '+' || cur_.peek() == '?' || cur_.peek() == '{') {
        const size_t op_at = cur_.pos;
        uint32_t min = 0;
        uint32_t max = kUnboundedRepeat;
        if (cur_.peek() == '{') {
          absl::StatusOr<std::pair<uint32_t, uint32_t>> braces = ParseBraces();
          if (!braces.ok()) return braces.status();
          std::tie(min, max) = *braces;
        } else {
          if (cur_.peek() == '+') min = 1;
          if (cur_.peek() == '?') max = 1;
          ++cur_.pos;
        }
        absl::StatusOr<Symbol> x = writer_.Group({element}, op_at);
        if (!x.ok()) return x.status();
        absl::StatusOr<SymbolSeq> repeated = writer_.Repeat(*x, min, max, op_at);
        if (!repeated.ok()) return repeated.status();
        element = *std::move(repeated);
        SkipSpace(nested);
      }
      seq.insert(seq.end(), element.begin(), element.end());
    }
    return seq;
  }

  TextCursor cur_;
  GbnfFlavor flavor_;
  const int max_nesting_;
  int nesting_ = 0;  // groups open at the parse position
  const Tokenizer* tokenizer_;
  IrWriter writer_;
};

}  // namespace

absl::StatusOr<GrammarIr> BuildGbnfIr(std::string_view text, GbnfFlavor flavor,
                                      const GrammarTextOptions& options) {
  GrammarIr ir;
  GbnfParser parser(text, flavor, options, ir);
  const bool given = !options.start_rule.empty();
  if (absl::Status s = parser.Parse(given ? options.start_rule : "root", given); !s.ok()) {
    return s;
  }
  MergeRegularRules(ir);
  ir.context_free_lexing = true;  // code points, and what lexeme_merge proved
  return ir;
}

}  // namespace maskd::grammar_text
