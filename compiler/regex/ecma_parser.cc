#include "compiler/regex/ecma_parser.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"
#include "compiler/regex/unicode_classes.h"
#include "compiler/regex/utf8.h"

namespace maskd::regex {
namespace {

constexpr uint32_t kInf = ExprSet::kUnbounded;
// Counts above this are refused: the repetition itself is symbolic, but a
// lexer walking through millions of counter states is not a sane schema.
constexpr uint32_t kMaxRepeatCount = 1000000;
constexpr uint32_t kNoChar = 0xFFFFFFFFu;

using Ranges = std::vector<CodepointRange>;

Ranges DigitRanges() { return {{'0', '9'}}; }
Ranges WordRanges() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
// ECMA-262 WhiteSpace and LineTerminator (what \s matches).
Ranges SpaceRanges() {
  return {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
// `.`: any code point but the line terminators.
Ranges DotRanges() {
  return ComplementCodepointRanges(
      NormalizeCodepointRanges({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));
}

bool IsHex(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
uint32_t HexValue(uint32_t c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }
bool IsAsciiAlnum(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
// Decodes UTF-8 strictly (no overlongs, no surrogates).
absl::StatusOr<std::vector<uint32_t>> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    uint8_t b = static_cast<uint8_t>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      uint8_t c = static_cast<uint8_t>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMinForLen[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!ok) {
      return WithByteOffset(absl::InvalidArgumentError(
                                absl::StrCat("regex: invalid UTF-8 in pattern at byte offset ", i)),
                            i);
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

#define MASKD_ASSIGN_OR_RETURN(lhs, expr)       \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

class Parser {
 public:
  Parser(std::vector<uint32_t> cps, int max_nesting)
      : cps_(std::move(cps)), max_nesting_(max_nesting) {}

  absl::StatusOr<int> Parse() {
    MASKD_ASSIGN_OR_RETURN(root, ParseDisjunction(0));
    if (pos_ < cps_.size()) return Error("unmatched ')'", pos_);
    return root;
  }
  std::vector<AstNode>& nodes() { return nodes_; }

 private:
  bool AtEnd(size_t k = 0) const { return pos_ + k >= cps_.size(); }
  uint32_t Peek(size_t k = 0) const { return AtEnd(k) ? kNoChar : cps_[pos_ + k]; }

  absl::Status Error(std::string_view what, size_t at) const {
    return WithByteOffset(
        absl::InvalidArgumentError(absl::StrCat("regex: ", std::string(what), " at offset ", at)),
        at);
  }
  absl::Status Unsupported(std::string_view what, size_t at) const {
    return WithByteOffset(
        absl::InvalidArgumentError(
            absl::StrCat("regex: ", std::string(what), " is not supported (at offset ", at, ")")),
        at);
  }

  int Add(AstNode n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  int AddSet(Ranges r) {
    return Add(AstNode{AstNode::kSet, NormalizeCodepointRanges(std::move(r))});
  }
  int AddList(AstNode::Kind kind, std::vector<int> children) {
    if (children.empty()) return Add(AstNode{AstNode::kEmpty});
    if (children.size() == 1) return children[0];
    AstNode n{kind};
    for (int c : children) n.has_anchor = n.has_anchor || nodes_[c].has_anchor;
    n.children = std::move(children);
    return Add(std::move(n));
  }

  absl::StatusOr<int> ParseDisjunction(int depth) {
    if (depth > max_nesting_) {
      return Error(absl::StrCat("groups nested too deeply (more than ", max_nesting_,
                                " levels, max_recursion_depth)"),
                   pos_);
    }
    std::vector<int> alts;
    MASKD_ASSIGN_OR_RETURN(first, ParseAlternative(depth));
    alts.push_back(first);
    while (Peek() == '|') {
      ++pos_;
      MASKD_ASSIGN_OR_RETURN(alt, ParseAlternative(depth));
      alts.push_back(alt);
    }
    return AddList(AstNode::kAlt, std::move(alts));
  }

  absl::StatusOr<int> ParseAlternative(int depth) {
    std::vector<int> terms;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      MASKD_ASSIGN_OR_RETURN(term, ParseTerm(depth));
      terms.push_back(term);
    }
    return AddList(AstNode::kConcat, std::move(terms));
  }

  absl::StatusOr<int> ParseTerm(int depth) {
    const size_t start = pos_;
    const uint32_t c = Peek();
    if (c == '^' || c == '$') {
      ++pos_;
      if (StartsQuantifier()) return Error("nothing to repeat", pos_);
      AstNode n{c == '^' ? AstNode::kStart : AstNode::kEnd};
      n.has_anchor = true;
      return Add(std::move(n));
    }
    if (c == '\\' && (Peek(1) == 'b' || Peek(1) == 'B')) {
      return Unsupported(Peek(1) == 'b' ? "word boundary \\b" : "non-word-boundary \\B", start);
    }
    if (c == '(' && Peek(1) == '?') {
      if (Peek(2) == '=') return Unsupported("look-ahead (?=", start);
      if (Peek(2) == '!') return Unsupported("negative look-ahead (?!", start);
      if (Peek(2) == '<' && Peek(3) == '=') return Unsupported("look-behind (?<=", start);
      if (Peek(2) == '<' && Peek(3) == '!') return Unsupported("negative look-behind (?<!", start);
    }
    MASKD_ASSIGN_OR_RETURN(atom, ParseAtom(depth));
    return ParseQuantifier(atom);
  }

  // Reads {n}, {n,} or {n,m} at pos_ without consuming it; false if the
  // brace starts no quantifier (then it is a literal, per Annex B).
  bool PeekBraces(uint32_t* min, uint32_t* max, size_t* len) const {
    size_t i = pos_;
    if (i >= cps_.size() || cps_[i] != '{') return false;
    ++i;
    auto number = [&](uint32_t* out) {
      size_t begin = i;
      uint64_t v = 0;
      while (i < cps_.size() && cps_[i] >= '0' && cps_[i] <= '9') {
        v = std::min<uint64_t>(v * 10 + (cps_[i] - '0'), uint64_t{kInf} - 1);
        ++i;
      }
      *out = static_cast<uint32_t>(v);
      return i > begin;
    };
    if (!number(min)) return false;
    *max = *min;
    if (i < cps_.size() && cps_[i] == ',') {
      ++i;
      if (!number(max)) *max = kInf;
    }
    if (i >= cps_.size() || cps_[i] != '}') return false;
    *len = i + 1 - pos_;
    return true;
  }
  bool StartsQuantifier() const {
    uint32_t c = Peek(), min, max;
    size_t len;
    return c == '*' || c == '+' || c == '?' || PeekBraces(&min, &max, &len);
  }

  absl::StatusOr<int> ParseQuantifier(int atom) {
    const size_t start = pos_;
    uint32_t min, max;
    size_t len;
    switch (Peek()) {
      case '*':
        min = 0, max = kInf, len = 1;
        break;
      case '+':
        min = 1, max = kInf, len = 1;
        break;
      case '?':
        min = 0, max = 1, len = 1;
        break;
      default:
        if (!PeekBraces(&min, &max, &len)) return atom;
    }
    pos_ += len;
    if (max != kInf && min > max) return Error("numbers out of order in {} quantifier", start);
    if (min > kMaxRepeatCount || (max != kInf && max > kMaxRepeatCount)) {
      return Error(absl::StrCat("repetition count above ", kMaxRepeatCount), start);
    }
    if (Peek() == '?') ++pos_;  // Lazy: same language.
    if (StartsQuantifier()) return Error("nothing to repeat", pos_);
    AstNode n{AstNode::kRepeat};
    n.children = {atom};
    n.min = min;
    n.max = max;
    n.has_anchor = nodes_[atom].has_anchor;
    n.offset = start;
    return Add(std::move(n));
  }

  absl::StatusOr<int> ParseAtom(int depth) {
    const size_t start = pos_;
    const uint32_t c = Peek();
    switch (c) {
      case '.':
        ++pos_;
        return AddSet(DotRanges());
      case '(':
        return ParseGroup(depth);
      case '[':
        return ParseClass();
      case '\\':
        return ParseAtomEscape();
      case '*':
      case '+':
      case '?':
        return Error("nothing to repeat", start);
      case '{':
        if (StartsQuantifier()) return Error("nothing to repeat", start);
        break;
      default:
        break;
    }
    ++pos_;
    return AddSet({{c, c}});
  }

  absl::StatusOr<int> ParseGroup(int depth) {
    const size_t start = pos_;
    ++pos_;  // '('
    if (Peek() == '?') {
      if (Peek(1) == ':') {
        pos_ += 2;
      } else if (Peek(1) == '<') {
        pos_ += 2;
        size_t name_start = pos_;
        while (!AtEnd() && Peek() != '>') {
          uint32_t ch = Peek();
          bool ok = ch == '_' || ch == '$' || ch >= 0x80 || IsAsciiAlnum(ch);
          if (!ok || (pos_ == name_start && ch >= '0' && ch <= '9')) {
            return Error("invalid group name", pos_);
          }
          ++pos_;
        }
        if (AtEnd() || pos_ == name_start) return Error("invalid group name", name_start);
        ++pos_;  // '>'
      } else {
        return Unsupported("group modifier (?", start);
      }
    }
    MASKD_ASSIGN_OR_RETURN(inner, ParseDisjunction(depth + 1));
    if (Peek() != ')') return Error("missing ')' for the group opened", start);
    ++pos_;
    return inner;
  }

  // After a backslash outside a class.
  absl::StatusOr<int> ParseAtomEscape() {
    const size_t start = pos_;
    ++pos_;  // '\\'
    if (AtEnd()) return Error("'\\' at end of pattern", start);
    const uint32_t c = Peek();
    if (c >= '1' && c <= '9') return Unsupported("back-reference \\" + Utf8(c), start);
    if (c == 'k') return Unsupported("named back-reference \\k", start);
    MASKD_ASSIGN_OR_RETURN(set, ParseClassEscapeOrChar(start, /*in_class=*/false));
    return AddSet(std::move(set));
  }

  // At the character after a backslash: a class escape (\d, \p{..}, ...) or
  // a character escape; returns its code points.
  absl::StatusOr<Ranges> ParseClassEscapeOrChar(size_t start, bool in_class) {
    const uint32_t c = Peek();
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S': {
        ++pos_;
        Ranges r = c == 'd' || c == 'D'   ? DigitRanges()
                   : c == 'w' || c == 'W' ? WordRanges()
                                          : SpaceRanges();
        r = NormalizeCodepointRanges(std::move(r));
        if (c == 'D' || c == 'W' || c == 'S') r = ComplementCodepointRanges(r);
        return r;
      }
      case 'p':
      case 'P': {
        ++pos_;
        if (Peek() != '{') return Error("expected '{' after \\p", pos_);
        size_t name_start = ++pos_;
        std::string name;
        while (!AtEnd() && Peek() != '}') name += Utf8(cps_[pos_++]);
        if (AtEnd()) return Error("missing '}' in \\p{...}", name_start);
        ++pos_;
        absl::StatusOr<Ranges> r = UnicodePropertyRanges(name);
        if (!r.ok()) {
          return WithByteOffset(absl::InvalidArgumentError(absl::StrCat(
                                    "regex: ", r.status().message(), " (at offset ", start, ")")),
                                start);
        }
        return c == 'P' ? ComplementCodepointRanges(*r) : *std::move(r);
      }
      default:
        break;
    }
    MASKD_ASSIGN_OR_RETURN(cp, ParseCharEscape(start, in_class));
    return Ranges{{cp, cp}};
  }

  // At the character after a backslash; a single code point (possibly a lone
  // surrogate, which later matches nothing).
  absl::StatusOr<uint32_t> ParseCharEscape(size_t start, bool in_class) {
    const uint32_t c = Peek();
    ++pos_;
    switch (c) {
      case 'n':
        return uint32_t{'\n'};
      case 't':
        return uint32_t{'\t'};
      case 'r':
        return uint32_t{'\r'};
      case 'f':
        return uint32_t{'\f'};
      case 'v':
        return uint32_t{'\v'};
      case '0':
        if (Peek() >= '0' && Peek() <= '9') return Unsupported("octal escape", start);
        return uint32_t{0};
      case 'c': {
        uint32_t l = Peek();
        if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z'))) {
          return Error("invalid control escape \\c", start);
        }
        ++pos_;
        return l % 32;
      }
      case 'x': {
        if (!IsHex(Peek()) || !IsHex(Peek(1))) return Error("malformed \\x escape", start);
        uint32_t v = HexValue(Peek()) * 16 + HexValue(Peek(1));
        pos_ += 2;
        return v;
      }
      case 'u':
        return ParseUnicodeEscape(start);
      default:
        break;
    }
    if (in_class && c == 'b') return uint32_t{8};
    if (in_class && (c == 'B' || (c >= '1' && c <= '9'))) {
      return Error(absl::StrCat("invalid escape \\", Utf8(c), " in character class"), start);
    }
    if (c == kNoChar) return Error("'\\' at end of pattern", start);
    if (IsAsciiAlnum(c)) return Error(absl::StrCat("unknown escape \\", Utf8(c)), start);
    return c;  // Identity escape of a syntax or other non-alphanumeric char.
  }

  // After "\u": XXXX (joining a surrogate pair written as two escapes) or {X...}.
  absl::StatusOr<uint32_t> ParseUnicodeEscape(size_t start) {
    if (Peek() == '{') {
      ++pos_;
      uint64_t v = 0;
      size_t digits = 0;
      while (IsHex(Peek())) {
        v = std::min<uint64_t>(v * 16 + HexValue(Peek()), 0x110000);
        ++pos_;
        ++digits;
      }
      if (digits == 0 || Peek() != '}' || v > 0x10FFFF) {
        return Error("malformed \\u{...} escape", start);
      }
      ++pos_;
      return static_cast<uint32_t>(v);
    }
    auto hex4 = [&](size_t at, uint32_t* out) {
      for (size_t k = 0; k < 4; ++k) {
        if (at + k >= cps_.size() || !IsHex(cps_[at + k])) return false;
      }
      *out = 0;
      for (size_t k = 0; k < 4; ++k) *out = *out * 16 + HexValue(cps_[at + k]);
      return true;
    };
    uint32_t v;
    if (!hex4(pos_, &v)) return Error("malformed \\u escape", start);
    pos_ += 4;
    uint32_t low;
    if (v >= 0xD800 && v <= 0xDBFF && Peek() == '\\' && Peek(1) == 'u' && hex4(pos_ + 2, &low) &&
        low >= 0xDC00 && low <= 0xDFFF) {
      pos_ += 6;
      return 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
    }
    return v;
  }

  absl::StatusOr<int> ParseClass() {
    const size_t start = pos_;
    ++pos_;  // '['
    bool negate = false;
    if (Peek() == '^') {
      negate = true;
      ++pos_;
    }
    Ranges set;
    while (Peek() != ']') {
      if (AtEnd()) return Error("missing ']' for the class opened", start);
      const size_t atom_start = pos_;
      MASKD_ASSIGN_OR_RETURN(lo, ParseClassAtom());
      if (Peek() == '-' && !AtEnd(1) && Peek(1) != ']') {
        ++pos_;
        MASKD_ASSIGN_OR_RETURN(hi, ParseClassAtom());
        bool lo_single = lo.size() == 1 && lo[0].lo == lo[0].hi;
        bool hi_single = hi.size() == 1 && hi[0].lo == hi[0].hi;
        if (lo_single && hi_single) {
          if (lo[0].lo > hi[0].lo)
            return Error("range out of order in character class", atom_start);
          set.push_back({lo[0].lo, hi[0].lo});
        } else {  // Annex B: [\d-z] is \d, '-' and 'z'.
          set.insert(set.end(), lo.begin(), lo.end());
          set.push_back({'-', '-'});
          set.insert(set.end(), hi.begin(), hi.end());
        }
      } else {
        set.insert(set.end(), lo.begin(), lo.end());
      }
    }
    ++pos_;  // ']'
    set = NormalizeCodepointRanges(std::move(set));
    if (negate) set = ComplementCodepointRanges(set);
    return AddSet(std::move(set));
  }

  // A class atom: one code point as a one-element range {c, c} (surrogates
  // kept here so ranges like [\uD800-\uDFFF] parse) or a class escape's set.
  absl::StatusOr<Ranges> ParseClassAtom() {
    const size_t start = pos_;
    if (Peek() != '\\') {
      uint32_t c = Peek();
      ++pos_;
      return Ranges{{c, c}};
    }
    ++pos_;
    if (AtEnd()) return Error("'\\' at end of pattern", start);
    if (Peek() == '-') {
      ++pos_;
      return Ranges{{'-', '-'}};
    }
    uint32_t c = Peek();
    if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S' || c == 'p' ||
        c == 'P') {
      return ParseClassEscapeOrChar(start, /*in_class=*/true);
    }
    MASKD_ASSIGN_OR_RETURN(cp, ParseCharEscape(start, /*in_class=*/true));
    return Ranges{{cp, cp}};
  }

  std::vector<uint32_t> cps_;
  const int max_nesting_;
  size_t pos_ = 0;
  std::vector<AstNode> nodes_;
};

}  // namespace

absl::StatusOr<EcmaAst> ParseEcmaAst(std::string_view pattern, int max_nesting) {
  MASKD_ASSIGN_OR_RETURN(cps, DecodeUtf8(pattern));
  Parser parser(std::move(cps), max_nesting);
  MASKD_ASSIGN_OR_RETURN(root, parser.Parse());
  return EcmaAst{std::move(parser.nodes()), root};
}

}  // namespace maskd::regex
