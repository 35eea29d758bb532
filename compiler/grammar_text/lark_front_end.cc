#include "compiler/grammar_text/lark_front_end.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/ir_import.h"
#include "compiler/grammar_text/ir_writer.h"
#include "compiler/grammar_text/lark_common.h"
#include "compiler/grammar_text/lark_lazy.h"
#include "compiler/grammar_text/lark_options.h"
#include "compiler/grammar_text/text_cursor.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/grammar_text/token_reference.h"
#include "compiler/json_schema/lower.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/utf8.h"

namespace maskd::grammar_text {
namespace {

// --- Syntax tree of a definition body ---

struct Expr {
  enum Kind { kAlt, kSeq, kRepeat, kName, kString, kRegex, kRange, kJson, kToken };
  Kind kind = kSeq;
  size_t at = 0;
  std::vector<Expr> kids;
  std::string text;   // name, string value, regex pattern or JSON schema
  std::string flags;  // string / regex flags
  uint32_t min = 0, max = 0;
  uint32_t lo = 0, hi = 0;  // kRange code points
  int depth = 0;            // kName: groups open around it in its body
  TokenReference token;     // kToken
};

Expr MakeExpr(Expr::Kind kind, size_t at) {
  Expr e;
  e.kind = kind;
  e.at = at;
  return e;
}

// llguidance's lexeme options on a rule (`name[lazy, suffix="S"]: ...`):
// the body becomes one lazy lexeme (lark_lazy.h), followed by the suffix.
struct RuleOptions {
  bool lazy = false;
  std::optional<Expr> suffix;  // a string, /regex/ or TERMINAL
  bool any() const { return lazy || suffix.has_value(); }
};

struct Definition {
  std::string name;
  bool terminal = false;
  size_t at = 0;
  std::string_view text;  // the text `at` and the body's offsets point into
  Expr body;
  RuleOptions options;
};

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Terminal names are uppercase: the first letter after any '_' decides.
bool IsTerminalName(std::string_view name) {
  for (char c : name) {
    if (c == '_') continue;
    return c >= 'A' && c <= 'Z';
  }
  return true;
}

class LarkParser {
 public:
  LarkParser(std::string_view text, int max_nesting, const Tokenizer* tokenizer = nullptr)
      : cur_{text, 0}, max_nesting_(max_nesting), tokenizer_(tokenizer) {}

  std::vector<Definition> definitions;
  std::vector<Expr> ignores;
  // (name in common, name here, offset of the import)
  struct Import {
    std::string name, alias;
    size_t at;
  };
  std::vector<Import> imports;
  LlguidanceOptions llguidance;

  absl::Status Parse() {
    for (;;) {
      SkipBlankLines();
      if (cur_.at_end()) return absl::OkStatus();
      if (absl::Status s = ParseStatement(); !s.ok()) return s;
      SkipInline();
      if (!cur_.at_end() && cur_.peek() != '\n' && cur_.peek() != '\r') {
        return Error(cur_.pos, absl::StrCat("unexpected '", std::string(1, cur_.peek()),
                                            "' (expected end of line)"));
      }
    }
  }

 private:
  absl::Status Error(size_t at, std::string_view what,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    return TextError(code, cur_.text, at, what);
  }

  void SkipComment() {
    if (cur_.starts_with("//")) {
      while (!cur_.at_end() && cur_.peek() != '\n') ++cur_.pos;
    }
  }
  void SkipInline() {
    for (;;) {
      while (cur_.peek() == ' ' || cur_.peek() == '\t') ++cur_.pos;
      if (!cur_.starts_with("//")) return;
      SkipComment();
    }
  }
  void SkipBlankLines() {
    for (;;) {
      SkipInline();
      if (cur_.peek() == '\n' || cur_.peek() == '\r') {
        ++cur_.pos;
      } else {
        return;
      }
    }
  }
  // Inside brackets newlines are blanks; outside, a newline continues the
  // definition only when the next line starts with '|'.
  void SkipSpace(int depth) {
    for (;;) {
      SkipInline();
      if (cur_.peek() != '\n' && cur_.peek() != '\r') return;
      if (depth > 0) {
        ++cur_.pos;
        continue;
      }
      TextCursor probe = cur_;
      while (probe.peek() == '\n' || probe.peek() == '\r' || probe.peek() == ' ' ||
             probe.peek() == '\t') {
        ++probe.pos;
      }
      if (probe.peek() != '|') return;
      cur_ = probe;
      return;
    }
  }

  std::string_view ParseName() {
    const size_t begin = cur_.pos;
    if (!IsNameStart(cur_.peek())) return {};
    while (IsNameChar(cur_.peek())) ++cur_.pos;
    return cur_.text.substr(begin, cur_.pos - begin);
  }

  absl::Status ParseStatement() {
    const size_t at = cur_.pos;
    if (cur_.peek() == '%') {
      ++cur_.pos;
      const std::string_view directive = ParseName();
      SkipInline();
      if (directive == "ignore") {
        absl::StatusOr<Expr> e = ParseAlternatives(0);
        if (!e.ok()) return e.status();
        ignores.push_back(*std::move(e));
        return absl::OkStatus();
      }
      if (directive == "import") return ParseImport(at);
      if (directive == "llguidance") {
        absl::StatusOr<std::string> json = ParseBracedJson();
        if (!json.ok()) return json.status();
        return MergeLlguidanceOptions(*json, cur_.text, at, &llguidance);
      }
      return Error(at, absl::StrCat("directive '%", std::string(directive), "' is not supported"),
                   absl::StatusCode::kUnimplemented);
    }
    if (cur_.peek() == '?' || cur_.peek() == '!') ++cur_.pos;  // inline / keep: same language
    const size_t name_at = cur_.pos;
    const std::string_view name = ParseName();
    if (name.empty()) return Error(at, "expected a rule or terminal definition");
    if (cur_.peek() == '.') {
      return Error(cur_.pos, absl::StrCat("priority on '", std::string(name), "' is not supported"),
                   absl::StatusCode::kUnimplemented);
    }
    RuleOptions options;
    if (cur_.peek() == '[') {
      absl::StatusOr<RuleOptions> parsed = ParseRuleOptions(name, IsTerminalName(name));
      if (!parsed.ok()) return parsed.status();
      options = *std::move(parsed);
    }
    SkipInline();
    if (!cur_.consume(":")) {
      return Error(cur_.pos, absl::StrCat("expected ':' after '", std::string(name), "'"));
    }
    SkipSpace(0);
    absl::StatusOr<Expr> body = ParseAlternatives(0);
    if (!body.ok()) return body.status();
    definitions.push_back({std::string(name), IsTerminalName(name), name_at, cur_.text,
                           *std::move(body), std::move(options)});
    return absl::OkStatus();
  }

  // `[key, key=value, ...]` after a rule's name. `lazy` and `suffix` are
  // honoured; every other llguidance option is refused by its name: a token
  // count (max_tokens) is no byte-level language, `stop` hides its match by
  // taking tokens back (a mask cannot), a sampling setting (temperature) or
  // a capture is not a language maskd answers for.
  absl::StatusOr<RuleOptions> ParseRuleOptions(std::string_view rule, bool terminal) {
    const size_t open = cur_.pos;
    ++cur_.pos;
    RuleOptions options;
    for (;;) {
      SkipSpace(1);
      const size_t key_at = cur_.pos;
      const std::string key(ParseName());
      if (key.empty()) return Error(key_at, "expected a rule option name");
      if (terminal) {
        return Error(key_at,
                     absl::StrCat("option '", key, "' on terminal '", std::string(rule),
                                  "' is not supported (llguidance's lexeme options go on "
                                  "lowercase rules)"),
                     absl::StatusCode::kUnimplemented);
      }
      SkipSpace(1);
      if (key == "lazy") {
        options.lazy = true;
      } else if (key == "suffix") {
        if (!cur_.consume("=")) return Error(cur_.pos, "expected '=' after 'suffix'");
        SkipSpace(1);
        absl::StatusOr<Expr> value = ParseAtom(1);
        if (!value.ok()) return value.status();
        if (value->kind != Expr::kString && value->kind != Expr::kRegex &&
            value->kind != Expr::kName) {
          return Error(value->at, "suffix must be a string, a /regex/ or a TERMINAL");
        }
        // An empty suffix is no suffix (llguidance: only a non-empty one
        // makes the rule lazy).
        if (value->kind != Expr::kString || !value->text.empty()) options.suffix = *value;
      } else {
        std::string why = "is not a rule option";
        if (key == "max_tokens") {
          why = "is not supported (a token count is not a byte-level language)";
        } else if (key == "stop") {
          why =
              "is not supported (llguidance hides the stop text by taking its tokens back, "
              "which a mask cannot do; suffix=\"...\" keeps it and is exact)";
        } else if (key == "temperature") {
          why = "is not supported (a sampling setting, not a language)";
        } else if (key == "capture" || key == "stop_capture") {
          why = "is not supported (maskd returns no captures)";
        }
        return Error(key_at, absl::StrCat("option '", key, "' on '", std::string(rule), "' ", why),
                     absl::StatusCode::kUnimplemented);
      }
      SkipSpace(1);
      if (cur_.consume("]")) return options;
      if (!cur_.consume(",")) {
        return Error(cur_.pos,
                     absl::StrCat("expected ',' or ']' in the options of '", std::string(rule),
                                  "' (opened at ", PositionOf(cur_.text, open).line, ":",
                                  PositionOf(cur_.text, open).column, ")"));
      }
    }
  }

  absl::Status ParseImport(size_t at) {
    const size_t module_at = cur_.pos;
    const std::string_view module = ParseName();
    if (module != "common") {
      return Error(
          module_at,
          absl::StrCat("%import of '", std::string(module), "' is not supported (only 'common')"),
          absl::StatusCode::kUnimplemented);
    }
    SkipInline();
    if (cur_.consume(".")) {
      const size_t name_at = cur_.pos;
      std::string name(ParseName());
      if (name.empty()) return Error(name_at, "expected a name after 'common.'");
      std::string alias = name;
      SkipInline();
      if (cur_.consume("->")) {
        SkipInline();
        alias = std::string(ParseName());
        if (alias.empty()) return Error(cur_.pos, "expected a name after '->'");
      }
      imports.push_back({std::move(name), std::move(alias), name_at});
      return absl::OkStatus();
    }
    if (!cur_.consume("(")) return Error(cur_.pos, "expected '.' or '(' after '%import common'");
    for (;;) {
      SkipSpace(1);
      const size_t name_at = cur_.pos;
      std::string name(ParseName());
      if (name.empty()) return Error(name_at, "expected a name in '%import common (...)'");
      imports.push_back({name, name, name_at});
      SkipSpace(1);
      if (cur_.consume(")")) return absl::OkStatus();
      if (!cur_.consume(",")) return Error(cur_.pos, "expected ',' or ')'");
    }
    (void)at;
  }

  // A balanced {...} JSON value (strings may hold braces).
  absl::StatusOr<std::string> ParseBracedJson() {
    const size_t at = cur_.pos;
    if (cur_.peek() != '{') return Error(at, "expected '{'");
    int depth = 0;
    bool in_string = false;
    for (; !cur_.at_end(); ++cur_.pos) {
      const char c = cur_.peek();
      if (in_string) {
        if (c == '\\') {
          ++cur_.pos;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') in_string = true;
      if (c == '{') ++depth;
      if (c == '}' && --depth == 0) {
        ++cur_.pos;
        return std::string(cur_.text.substr(at, cur_.pos - at));
      }
    }
    return Error(at, "unbalanced '{' in JSON");
  }

  absl::StatusOr<Expr> ParseAlternatives(int depth) {
    Expr alt = MakeExpr(Expr::kAlt, cur_.pos);
    for (;;) {
      absl::StatusOr<Expr> seq = ParseSequence(depth);
      if (!seq.ok()) return seq.status();
      alt.kids.push_back(*std::move(seq));
      SkipSpace(depth);
      if (cur_.peek() != '|') break;
      ++cur_.pos;
      SkipSpace(depth);
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  absl::StatusOr<Expr> ParseSequence(int depth) {
    Expr seq = MakeExpr(Expr::kSeq, cur_.pos);
    for (;;) {
      SkipSpace(depth);
      const char c = cur_.peek();
      if (c == '-' && cur_.peek(1) == '>') {  // alias: names a tree node only
        cur_.pos += 2;
        SkipInline();
        if (ParseName().empty()) return Error(cur_.pos, "expected a name after '->'");
        continue;
      }
      if (c == '\0' || c == '|' || c == ')' || c == ']' || c == '\n' || c == '\r') break;
      absl::StatusOr<Expr> item = ParseItem(depth);
      if (!item.ok()) return item.status();
      seq.kids.push_back(*std::move(item));
    }
    if (seq.kids.size() == 1) return std::move(seq.kids[0]);
    return seq;
  }

  absl::StatusOr<uint32_t> ParseNumber() {
    const size_t at = cur_.pos;
    if (cur_.peek() < '0' || cur_.peek() > '9') return Error(at, "expected a number");
    std::optional<uint32_t> v = ReadRepeatCount(cur_);
    if (!v.has_value()) {
      return Error(at, absl::StrCat("repetition count over the limit of ", kMaxRepeatCount),
                   absl::StatusCode::kResourceExhausted);
    }
    return *v;
  }

  absl::StatusOr<Expr> ParseItem(int depth) {
    absl::StatusOr<Expr> atom = ParseAtom(depth);
    if (!atom.ok()) return atom.status();
    // Each operator wraps the item once more: past the first, each counts
    // against max_recursion_depth like a group (a megabyte of `?` would
    // otherwise nest a tree, and the recursions over it, a million deep).
    for (int ops = 0;; ++ops) {
      SkipInline();
      const char c = cur_.peek();
      const size_t at = cur_.pos;
      if ((c == '?' || c == '*' || c == '+' || c == '~') && depth + ops > max_nesting_) {
        return Error(at, absl::StrCat("groups and repetition operators nested more than ",
                                      max_nesting_, " deep (max_recursion_depth)"));
      }
      Expr rep = MakeExpr(Expr::kRepeat, at);
      if (c == '?' || c == '*' || c == '+') {
        ++cur_.pos;
        rep.min = c == '+' ? 1 : 0;
        rep.max = c == '?' ? 1 : kUnboundedRepeat;
      } else if (c == '~') {
        ++cur_.pos;
        SkipInline();
        absl::StatusOr<uint32_t> lo = ParseNumber();
        if (!lo.ok()) return lo.status();
        rep.min = rep.max = *lo;
        SkipInline();
        if (cur_.consume("..")) {
          SkipInline();
          absl::StatusOr<uint32_t> hi = ParseNumber();
          if (!hi.ok()) return hi.status();
          rep.max = *hi;
        }
      } else {
        return atom;
      }
      rep.kids.push_back(*std::move(atom));
      atom = std::move(rep);
    }
  }

  absl::StatusOr<std::string> ParseStringBody(size_t at) {
    ++cur_.pos;  // opening quote
    std::string out;
    for (;;) {
      if (cur_.at_end() || cur_.peek() == '\n') return Error(at, "unterminated string");
      const char c = cur_.peek();
      if (c == '"') {
        ++cur_.pos;
        return out;
      }
      uint32_t cp;
      if (c == '\\') {
        const size_t esc_at = cur_.pos;
        const char e = cur_.peek(1);
        cur_.pos += 2;
        std::optional<uint32_t> hex;
        switch (e) {
          case 'n':
            cp = '\n';
            break;
          case 't':
            cp = '\t';
            break;
          case 'r':
            cp = '\r';
            break;
          case 'f':
            cp = '\f';
            break;
          case '0':
            cp = 0;
            break;
          case '\\':
          case '"':
          case '\'':
          case '/':
            cp = static_cast<unsigned char>(e);
            break;
          case 'x':
            hex = ReadHex(cur_, 2);
            break;
          case 'u':
            hex = ReadHex(cur_, 4);
            break;
          case 'U':
            hex = ReadHex(cur_, 8);
            break;
          default:
            return Error(esc_at, absl::StrCat("unknown escape '\\", std::string(1, e), "'"));
        }
        if (e == 'x' || e == 'u' || e == 'U') {
          if (!hex.has_value() || *hex > 0x10FFFF || (*hex >= 0xD800 && *hex <= 0xDFFF)) {
            return Error(esc_at, "malformed hex escape");
          }
          cp = *hex;
        }
      } else {
        const size_t cp_at = cur_.pos;
        std::optional<uint32_t> d = DecodeUtf8(cur_);
        if (!d.has_value()) return Error(cp_at, "invalid UTF-8 in the grammar text");
        cp = *d;
      }
      out += regex::Utf8(cp);
    }
  }

  static std::optional<uint32_t> SingleCodepoint(std::string_view s) {
    TextCursor c{s, 0};
    std::optional<uint32_t> cp = DecodeUtf8(c);
    if (!cp.has_value() || !c.at_end()) return std::nullopt;
    return cp;
  }

  absl::StatusOr<Expr> ParseAtom(int depth) {
    const size_t at = cur_.pos;
    const char c = cur_.peek();
    if (c == '(' || c == '[') {
      if (depth >= max_nesting_) {
        return Error(at, absl::StrCat("groups nested more than ", max_nesting_,
                                      " deep (max_recursion_depth)"));
      }
      ++cur_.pos;
      SkipSpace(depth + 1);
      absl::StatusOr<Expr> inner = ParseAlternatives(depth + 1);
      if (!inner.ok()) return inner.status();
      SkipSpace(depth + 1);
      const char close = c == '(' ? ')' : ']';
      if (cur_.peek() != close) {
        return Error(at, absl::StrCat("unbalanced '", std::string(1, c), "': expected '",
                                      std::string(1, close), "'"));
      }
      ++cur_.pos;
      if (c == '(') return inner;
      Expr opt = MakeExpr(Expr::kRepeat, at);
      opt.min = 0;
      opt.max = 1;
      opt.kids.push_back(*std::move(inner));
      return opt;
    }
    if (c == '"') {
      absl::StatusOr<std::string> s = ParseStringBody(at);
      if (!s.ok()) return s.status();
      if (cur_.starts_with("..")) {
        cur_.pos += 2;
        const size_t hi_at = cur_.pos;
        if (cur_.peek() != '"') return Error(hi_at, "expected a string after '..'");
        absl::StatusOr<std::string> hi = ParseStringBody(hi_at);
        if (!hi.ok()) return hi.status();
        std::optional<uint32_t> lo_cp = SingleCodepoint(*s);
        std::optional<uint32_t> hi_cp = SingleCodepoint(*hi);
        if (!lo_cp.has_value() || !hi_cp.has_value() || *lo_cp > *hi_cp) {
          return Error(at, "a range \"a\"..\"z\" needs two single characters in order");
        }
        Expr range = MakeExpr(Expr::kRange, at);
        range.lo = *lo_cp;
        range.hi = *hi_cp;
        return range;
      }
      Expr str = MakeExpr(Expr::kString, at);
      str.text = *std::move(s);
      if (cur_.peek() == 'i' && !IsNameChar(cur_.peek(1))) {
        ++cur_.pos;
        str.flags.push_back('i');
      }
      return str;
    }
    if (c == '/') {
      ++cur_.pos;
      std::string pattern;
      bool in_class = false;
      for (;;) {
        if (cur_.at_end() || cur_.peek() == '\n') return Error(at, "unterminated /regex/");
        const char r = cur_.peek();
        if (r == '\\' && cur_.pos + 1 < cur_.text.size()) {
          // `\/` is a slash; other escapes are the regex's own.
          if (cur_.peek(1) != '/') pattern.push_back('\\');
          pattern.push_back(cur_.peek(1));
          cur_.pos += 2;
          continue;
        }
        if (r == '[') in_class = true;
        if (r == ']') in_class = false;
        if (r == '/' && !in_class) break;
        pattern.push_back(r);
        ++cur_.pos;
      }
      ++cur_.pos;
      Expr re = MakeExpr(Expr::kRegex, at);
      re.text = std::move(pattern);
      while (cur_.peek() >= 'a' && cur_.peek() <= 'z') {
        if (cur_.peek() != 'i') {
          return Error(cur_.pos,
                       absl::StrCat("regex flag '", std::string(1, cur_.peek()),
                                    "' is not supported (only 'i')"),
                       absl::StatusCode::kUnimplemented);
        }
        re.flags.push_back(cur_.peek());
        ++cur_.pos;
      }
      return re;
    }
    if (c == '%') {
      ++cur_.pos;
      const std::string_view what = ParseName();
      if (what != "json") {
        return Error(at, absl::StrCat("'%", std::string(what), "' is not supported inside a rule"),
                     absl::StatusCode::kUnimplemented);
      }
      SkipInline();
      absl::StatusOr<std::string> json = ParseBracedJson();
      if (!json.ok()) return json.status();
      Expr e = MakeExpr(Expr::kJson, at);
      e.text = *std::move(json);
      return e;
    }
    if (c == '<') {
      size_t end = at;
      absl::StatusOr<TokenReference> ref =
          ReadTokenReference(cur_.text, at, TokenSyntax::kLark, tokenizer_, &end);
      if (!ref.ok()) return ref.status();
      cur_.pos = end;
      Expr e = MakeExpr(Expr::kToken, at);
      e.token = *std::move(ref);
      return e;
    }
    if (IsNameStart(c)) {
      Expr name = MakeExpr(Expr::kName, at);
      name.text = std::string(ParseName());
      name.depth = depth;
      return name;
    }
    return Error(at, absl::StrCat("unexpected '", std::string(1, c), "'"));
  }

  TextCursor cur_;
  const int max_nesting_;
  const Tokenizer* tokenizer_;
};

// --- Lowering ---

// The first 32 bytes of `pattern` (never cutting a UTF-8 character), then
// "..." when there is more.
std::string PatternStart(std::string_view pattern) {
  constexpr size_t kShown = 32;
  if (pattern.size() <= kShown + 3) return std::string(pattern);
  size_t end = kShown;
  while (end > 0 && (static_cast<unsigned char>(pattern[end]) & 0xC0) == 0x80) --end;
  return std::string(pattern.substr(0, end)) + "...";
}

class LarkLowering {
 public:
  LarkLowering(std::string_view text, const GrammarTextOptions& options, GrammarIr& ir)
      : text_(text), options_(options), ir_(ir), writer_(ir, text, options.max_symbols) {}

  absl::Status Lower(LarkParser& parsed) {
    for (Definition& d : parsed.definitions) {
      if (d.terminal) {
        if (terminals_.contains(d.name)) {
          return TextError(absl::StatusCode::kInvalidArgument, text_, d.at,
                           absl::StrCat("terminal '", d.name, "' is defined twice"));
        }
        terminals_.emplace(d.name, &d);
      }
    }
    if (absl::Status s = AddImports(parsed); !s.ok()) return s;
    if (!parsed.ignores.empty()) {
      std::vector<regex::ExprId> parts;
      for (const Expr& e : parsed.ignores) {
        absl::StatusOr<regex::ExprId> re = TerminalRegex(e, text_);
        if (!re.ok()) return re.status();
        parts.push_back(*re);
      }
      const regex::ExprId ignore = ir_.pool->NonEmpty(ir_.pool->Or(parts));
      ignore_ = ir_.builder.FreshNonterminal("%ignore");
      ir_.builder.AddRule(*ignore_, {});
      const Symbol once = Symbol::Lexeme(ir_.builder.AddLexeme("%ignore", ignore));
      if (parsed.llguidance.skip_once) {
        ir_.builder.AddRule(*ignore_, {once});  // one match is the whole skipped span
      } else {
        ir_.builder.AddRule(*ignore_, {Symbol::Nonterminal(*ignore_), once});
      }
    }
    for (const Definition& d : parsed.definitions) {
      if (d.terminal) continue;
      absl::StatusOr<NonterminalId> lhs = writer_.Define(d.name, d.at);
      if (!lhs.ok()) return lhs.status();
      if (d.options.any()) {
        absl::StatusOr<Symbol> lexeme = LazyRule(d);
        if (!lexeme.ok()) return lexeme.status();
        if (absl::Status s = writer_.AddRules(*lhs, {{*lexeme}}, d.at); !s.ok()) return s;
        continue;
      }
      absl::StatusOr<Alternatives> alts = RuleAlternatives(d.body);
      if (!alts.ok()) return alts.status();
      if (absl::Status s = writer_.AddRules(*lhs, *alts, d.at); !s.ok()) return s;
    }
    const bool given = !options_.start_rule.empty();
    const std::string start = given ? options_.start_rule : "start";
    if (absl::Status s = writer_.Finish(start, given); !s.ok()) return s;
    if (absl::Status s = CheckLazyLexemes(ir_, lazy_, text_); !s.ok()) return s;
    if (ignore_.has_value()) {
      // Ignored text may also end the output.
      const NonterminalId top = ir_.builder.FreshNonterminal("start+%ignore");
      ir_.builder.AddRule(
          top, {Symbol::Nonterminal(ir_.builder.start()), Symbol::Nonterminal(*ignore_)});
      ir_.builder.SetStart(top);
    }
    return absl::OkStatus();
  }

 private:
  absl::Status AddImports(const LarkParser& parsed) {
    if (parsed.imports.empty()) return absl::OkStatus();
    common_ = std::make_unique<LarkParser>(kLarkCommon, options_.max_nesting);
    if (absl::Status s = common_->Parse(); !s.ok()) return s;
    absl::flat_hash_map<std::string, Definition*> common_defs;
    for (Definition& d : common_->definitions) common_defs.emplace(d.name, &d);
    for (const LarkParser::Import& imp : parsed.imports) {
      auto it = common_defs.find(imp.name);
      if (it == common_defs.end()) {
        return TextError(absl::StatusCode::kUnimplemented, text_, imp.at,
                         absl::StrCat("'common.", imp.name, "' is not in the common library"));
      }
      if (!IsTerminalName(imp.alias)) {
        return TextError(
            absl::StatusCode::kInvalidArgument, text_, imp.at,
            absl::StrCat("an imported terminal needs an UPPERCASE name, not '", imp.alias, "'"));
      }
      // Dependencies of an imported terminal (INT for NUMBER...) come along
      // under their own names unless the grammar defines them.
      for (Definition& d : common_->definitions) terminals_.try_emplace(d.name, &d);
      if (imp.alias != imp.name) {
        aliases_.emplace_back(*it->second);
        aliases_.back().name = imp.alias;
      }
      terminals_[imp.alias] = imp.alias != imp.name ? &aliases_.back() : it->second;
    }
    return absl::OkStatus();
  }

  // The terminal `name`, referred to at `at`, its body inlined `level`
  // levels deep: a reference counts as one level more than the groups open
  // around it, so a chain of references nests like groups and is bounded by
  // max_recursion_depth (each link recurses here once: 10,000 links would
  // overflow the stack).
  absl::StatusOr<regex::ExprId> TerminalByName(std::string_view name, size_t at,
                                               std::string_view text, int level) {
    auto too_deep = [&] {
      return TextError(absl::StatusCode::kInvalidArgument, text, at,
                       absl::StrCat("terminal '", std::string(name),
                                    "': terminal references and groups nested more than ",
                                    options_.max_nesting, " deep (max_recursion_depth)"));
    };
    if (level > options_.max_nesting) return too_deep();
    if (auto it = terminal_regex_.find(std::string(name)); it != terminal_regex_.end()) {
      const int height = terminal_height_[it->first];
      if (level + height > options_.max_nesting) return too_deep();
      NoteReferenceHeight(level + height);
      return it->second;
    }
    auto def = terminals_.find(std::string(name));
    if (def == terminals_.end()) {
      return TextError(absl::StatusCode::kInvalidArgument, text, at,
                       absl::StrCat("undefined terminal '", std::string(name), "'"));
    }
    if (!in_progress_.insert(std::string(name)).second) {
      return TextError(absl::StatusCode::kInvalidArgument, text, at,
                       absl::StrCat("terminal '", std::string(name),
                                    "' refers to itself (terminals are "
                                    "regular; use a rule)"));
    }
    // The deepest level its own references reach, relative to `level`.
    heights_.push_back(level);
    absl::StatusOr<regex::ExprId> re = TerminalRegex(def->second->body, def->second->text, level);
    const int deepest = heights_.back();
    heights_.pop_back();
    in_progress_.erase(std::string(name));
    if (!re.ok()) return re.status();
    terminal_regex_.emplace(std::string(name), *re);
    terminal_height_[std::string(name)] = deepest - level;
    NoteReferenceHeight(deepest);
    return *re;
  }

  // A reference inside the terminal being inlined reaches `level`.
  void NoteReferenceHeight(int level) {
    if (!heights_.empty()) heights_.back() = std::max(heights_.back(), level);
  }

  // ASCII letters of `e` matched in either case.
  regex::ExprId FoldCase(regex::ExprId e) {
    regex::ExprSet& pool = *ir_.pool;
    if (pool.kind(e) == regex::ExprKind::kByteSet) {
      regex::ByteSet set = pool.GetByteSet(e);
      for (int c = 'a'; c <= 'z'; ++c) {
        if (set.Contains(static_cast<uint8_t>(c)) || set.Contains(static_cast<uint8_t>(c - 32))) {
          set.Add(static_cast<uint8_t>(c));
          set.Add(static_cast<uint8_t>(c - 32));
        }
      }
      return pool.Bytes(set);
    }
    // The children are copied first: folding adds nodes to the pool, which
    // may move the storage pool.Args(e) points into.
    const auto kids = pool.Args(e);
    const std::vector<regex::ExprId> children(kids.begin(), kids.end());
    std::vector<regex::ExprId> args;
    for (regex::ExprId a : children) args.push_back(FoldCase(a));
    switch (pool.kind(e)) {
      case regex::ExprKind::kConcat:
        return pool.Concat(args);
      case regex::ExprKind::kOr:
        return pool.Or(args);
      case regex::ExprKind::kRepeat:
        return pool.Repeat(args[0], pool.RepeatMin(e), pool.RepeatMax(e));
      default:
        return e;
    }
  }

  absl::StatusOr<regex::ExprId> CaseInsensitive(regex::ExprId e, const Expr& at,
                                                std::string_view text) {
    const std::string_view source = at.text;
    for (char c : source) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        return TextError(absl::StatusCode::kUnimplemented, text, at.at,
                         "the 'i' flag on non-ASCII text is not supported (ASCII case folding "
                         "only)");
      }
    }
    if (ir_.pool->HasBoolean(e)) {
      return TextError(absl::StatusCode::kUnimplemented, text, at.at,
                       "the 'i' flag on this regex is not supported");
    }
    return FoldCase(e);
  }

  // A terminal expression (or one written in a rule) as a regex; `level`:
  // how deep in terminal references its body is (TerminalByName).
  absl::StatusOr<regex::ExprId> TerminalRegex(const Expr& e, std::string_view text, int level = 0) {
    regex::ExprSet& pool = *ir_.pool;
    switch (e.kind) {
      case Expr::kAlt:
      case Expr::kSeq: {
        std::vector<regex::ExprId> parts;
        for (const Expr& k : e.kids) {
          absl::StatusOr<regex::ExprId> p = TerminalRegex(k, text, level);
          if (!p.ok()) return p.status();
          parts.push_back(*p);
        }
        if (e.kind == Expr::kAlt) return pool.Or(parts);
        return pool.Concat(parts);
      }
      case Expr::kRepeat: {
        if (e.max != kUnboundedRepeat && e.min > e.max) {
          return TextError(absl::StatusCode::kInvalidArgument, text, e.at,
                           "repetition has min > max");
        }
        absl::StatusOr<regex::ExprId> x = TerminalRegex(e.kids[0], text, level);
        if (!x.ok()) return x.status();
        return pool.Repeat(*x, e.min,
                           e.max == kUnboundedRepeat ? regex::ExprSet::kUnbounded : e.max);
      }
      case Expr::kName:
        if (!IsTerminalName(e.text)) {
          return TextError(absl::StatusCode::kInvalidArgument, text, e.at,
                           absl::StrCat("a terminal cannot refer to rule '", e.text,
                                        "' (terminals are regular)"));
        }
        return TerminalByName(e.text, e.at, text, level + e.depth + 1);
      case Expr::kString: {
        const regex::ExprId lit = pool.Literal(e.text);
        if (e.flags.empty()) return lit;
        return CaseInsensitive(lit, e, text);
      }
      case Expr::kRange:
        return pool.Codepoints(e.lo, e.hi);
      case Expr::kRegex: {
        absl::StatusOr<regex::ExprId> re = regex::ParseEcmaRegex(
            e.text, &pool, regex::MatchMode::kFullMatch, options_.max_nesting);
        if (!re.ok()) {
          // The pattern is where line:column points; only its start is
          // echoed, so a long one cannot push the reason out of a bounded
          // message.
          return TextError(
              re.status().code(), text, e.at,
              absl::StrCat("in /", PatternStart(e.text), "/: ", re.status().message()));
        }
        if (e.flags.empty()) return *re;
        return CaseInsensitive(*re, e, text);
      }
      case Expr::kJson:
        return TextError(absl::StatusCode::kInvalidArgument, text, e.at,
                         "%json is a rule, not a terminal: use it in a lowercase rule");
      case Expr::kToken:
        return TextError(absl::StatusCode::kInvalidArgument, text, e.at,
                         absl::StrCat("the token reference '", e.token.spelling,
                                      "' cannot be used inside a terminal (terminals are text); "
                                      "use it in a lowercase rule"));
    }
    return absl::InternalError("unknown Lark expression");
  }

  // A lexeme for `regex` in a rule (the empty string, when the regex matches
  // it, as an epsilon alternative), with ignored text allowed before it.
  absl::StatusOr<Symbol> LexemeSymbol(regex::ExprId re, std::string_view name, size_t at) {
    regex::ExprSet& pool = *ir_.pool;
    const regex::ExprId non_empty = pool.NonEmpty(re);
    absl::StatusOr<bool> empty = pool.IsEmpty(non_empty);
    if (!empty.ok()) {
      return TextError(empty.status().code(), text_, at,
                       absl::StrCat("'", std::string(name), "': ", empty.status().message()));
    }
    Alternatives alts;
    if (!*empty) {
      const Symbol lexeme = Symbol::Lexeme(ir_.builder.AddLexeme(name, non_empty));
      if (ignore_.has_value()) {
        alts.push_back({Symbol::Nonterminal(*ignore_), lexeme});
      } else {
        alts.push_back({lexeme});
      }
    }
    if (pool.Nullable(re)) alts.push_back({});
    if (alts.empty()) {
      return TextError(absl::StatusCode::kInvalidArgument, text_, at,
                       absl::StrCat("'", std::string(name), "' matches nothing"));
    }
    return writer_.Group(alts, at);
  }

  // A rule with lexeme options: its body (terminals only) and suffix as one
  // lazy lexeme.
  absl::StatusOr<Symbol> LazyRule(const Definition& d) {
    absl::StatusOr<regex::ExprId> body = TerminalRegex(d.body, d.text);
    if (!body.ok()) return body.status();
    regex::ExprId re = *body;
    if (d.options.suffix.has_value()) {
      absl::StatusOr<regex::ExprId> suffix = TerminalRegex(*d.options.suffix, d.text);
      if (!suffix.ok()) return suffix.status();
      re = ir_.pool->Concat(re, *suffix);
    }
    const regex::ExprId lazy = LazyLanguage(*ir_.pool, re);
    lazy_.push_back({ir_.pool->NonEmpty(lazy), d.name, d.at});
    return LexemeSymbol(lazy, d.name, d.at);
  }

  absl::StatusOr<Alternatives> RuleAlternatives(const Expr& e) {
    if (e.kind == Expr::kAlt) {
      Alternatives out;
      for (const Expr& k : e.kids) {
        absl::StatusOr<SymbolSeq> seq = RuleSequence(k);
        if (!seq.ok()) return seq.status();
        out.push_back(*std::move(seq));
      }
      return out;
    }
    absl::StatusOr<SymbolSeq> seq = RuleSequence(e);
    if (!seq.ok()) return seq.status();
    return Alternatives{*std::move(seq)};
  }

  absl::StatusOr<SymbolSeq> RuleSequence(const Expr& e) {
    if (e.kind != Expr::kSeq) return RuleItem(e);
    SymbolSeq out;
    for (const Expr& k : e.kids) {
      absl::StatusOr<SymbolSeq> part = RuleItem(k);
      if (!part.ok()) return part.status();
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }

  absl::StatusOr<SymbolSeq> RuleItem(const Expr& e) {
    switch (e.kind) {
      case Expr::kAlt:
      case Expr::kSeq: {
        absl::StatusOr<Alternatives> alts = RuleAlternatives(e);
        if (!alts.ok()) return alts.status();
        absl::StatusOr<Symbol> g = writer_.Group(*alts, e.at);
        if (!g.ok()) return g.status();
        return SymbolSeq{*g};
      }
      case Expr::kRepeat: {
        absl::StatusOr<SymbolSeq> x = RuleItem(e.kids[0]);
        if (!x.ok()) return x.status();
        absl::StatusOr<Symbol> g = writer_.Group({*x}, e.at);
        if (!g.ok()) return g.status();
        return writer_.Repeat(*g, e.min, e.max, e.at);
      }
      case Expr::kName: {
        if (!IsTerminalName(e.text)) {
          return SymbolSeq{Symbol::Nonterminal(writer_.Use(e.text, e.at))};
        }
        absl::StatusOr<regex::ExprId> re = TerminalByName(e.text, e.at, text_, 0);
        if (!re.ok()) return re.status();
        absl::StatusOr<Symbol> s = LexemeSymbol(*re, e.text, e.at);
        if (!s.ok()) return s.status();
        return SymbolSeq{*s};
      }
      case Expr::kString:
      case Expr::kRegex:
      case Expr::kRange: {
        absl::StatusOr<regex::ExprId> re = TerminalRegex(e, text_);
        if (!re.ok()) return re.status();
        const std::string name = e.kind == Expr::kString ? absl::StrCat("\"", e.text, "\"")
                                                         : absl::StrCat("/", e.text, "/");
        absl::StatusOr<Symbol> s = LexemeSymbol(*re, name, e.at);
        if (!s.ok()) return s.status();
        return SymbolSeq{*s};
      }
      case Expr::kJson:
        return JsonSymbol(e);
      case Expr::kToken: {
        const Symbol token = Symbol::Lexeme(AddTokenLexeme(ir_, e.token, text_, e.at));
        if (!ignore_.has_value()) return SymbolSeq{token};
        return SymbolSeq{Symbol::Nonterminal(*ignore_), token};
      }
    }
    return absl::InternalError("unknown Lark expression");
  }

  absl::StatusOr<SymbolSeq> JsonSymbol(const Expr& e) {
    absl::StatusOr<json_schema::Schema> schema =
        json_schema::ParseSchema(e.text, options_.json.parse);
    if (!schema.ok()) {
      return TextError(schema.status().code(), text_, e.at,
                       absl::StrCat("in %json: ", schema.status().message()));
    }
    absl::StatusOr<GrammarIr> json = json_schema::LowerSchema(*schema, options_.json.lower);
    if (!json.ok()) {
      return TextError(json.status().code(), text_, e.at,
                       absl::StrCat("in %json: ", json.status().message()));
    }
    const NonterminalId start = ImportIr(*json, absl::StrCat("json", ++json_count_, "."), ir_);
    if (!ignore_.has_value()) return SymbolSeq{Symbol::Nonterminal(start)};
    return SymbolSeq{Symbol::Nonterminal(*ignore_), Symbol::Nonterminal(start)};
  }

  std::string_view text_;
  const GrammarTextOptions& options_;
  GrammarIr& ir_;
  IrWriter writer_;
  std::unique_ptr<LarkParser> common_;
  std::deque<Definition> aliases_;
  absl::flat_hash_map<std::string, const Definition*> terminals_;
  absl::flat_hash_map<std::string, regex::ExprId> terminal_regex_;
  absl::flat_hash_set<std::string> in_progress_;
  // Per inlined terminal: the deepest level its references reach, beyond
  // its own (so a cached terminal used deeper is still bounded).
  absl::flat_hash_map<std::string, int> terminal_height_;
  std::vector<int> heights_;  // TerminalByName's frames: deepest level so far
  std::optional<NonterminalId> ignore_;
  std::vector<LazyLexeme> lazy_;
  int json_count_ = 0;
};

}  // namespace

absl::StatusOr<GrammarIr> BuildLarkIr(std::string_view text, const GrammarTextOptions& options) {
  LarkParser parser(text, options.max_nesting, options.tokenizer);
  if (absl::Status s = parser.Parse(); !s.ok()) return s;
  GrammarIr ir;
  LarkLowering lowering(text, options, ir);
  if (absl::Status s = lowering.Lower(parser); !s.ok()) return s;
  return ir;
}

}  // namespace maskd::grammar_text
