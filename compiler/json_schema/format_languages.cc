#include "compiler/json_schema/format_languages.h"

#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "compiler/json_schema/json_string.h"

namespace maskd::json_schema {
namespace {

struct CodepointSpan {
  uint32_t first, last;
};

// Non-ASCII code points of U-labels (see scripts/gen_idn_code_points.py for
// which, and why they make every label of them IDNA2008-valid and NFC).
constexpr CodepointSpan kIdnCodePoints[] = {
#include "compiler/json_schema/idn_code_points.inc"
};

std::string CodepointEscape(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\\u{%X}", cp);
  return buf;
}

// kIdnCodePoints as the inside of an ECMA-262 class.
const std::string& IdnClassBody() {
  static const std::string* body = [] {
    auto* s = new std::string;
    for (const CodepointSpan& r : kIdnCodePoints) {
      absl::StrAppend(s, CodepointEscape(r.first));
      if (r.last != r.first) absl::StrAppend(s, "-", CodepointEscape(r.last));
    }
    return s;
  }();
  return *body;
}

// RFC 3987 ucschar and iprivate (class bodies).
constexpr char kUcschar[] =
    "\\u{A0}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFEF}\\u{10000}-\\u{1FFFD}"
    "\\u{20000}-\\u{2FFFD}\\u{30000}-\\u{3FFFD}\\u{40000}-\\u{4FFFD}\\u{50000}-\\u{5FFFD}"
    "\\u{60000}-\\u{6FFFD}\\u{70000}-\\u{7FFFD}\\u{80000}-\\u{8FFFD}\\u{90000}-\\u{9FFFD}"
    "\\u{A0000}-\\u{AFFFD}\\u{B0000}-\\u{BFFFD}\\u{C0000}-\\u{CFFFD}\\u{D0000}-\\u{DFFFD}"
    "\\u{E1000}-\\u{EFFFD}";
constexpr char kIprivate[] = "\\u{E000}-\\u{F8FF}\\u{F0000}-\\u{FFFFD}\\u{100000}-\\u{10FFFD}";

// RFC 6570 section 2: literals and expressions (levels 1-4, and the
// operators reserved for extensions, which the ABNF admits).
std::string UriTemplate() {
  const std::string pct = "%[0-9A-Fa-f]{2}";
  const std::string literal =
      std::string("(?:[\\x21\\x23\\x24\\x26\\x28-\\x3B\\x3D\\x3F-\\x5B\\x5D") +
      "\\x5F\\x61-\\x7A\\x7E" + kUcschar + kIprivate + "]|" + pct + ")";
  const std::string varchar = "(?:[A-Za-z0-9_]|" + pct + ")";
  const std::string varname = varchar + "(?:\\.?" + varchar + ")*";
  const std::string varspec = varname + "(?::[1-9][0-9]{0,3}|\\*)?";
  const std::string expression = "\\{[+#./;?&=,!@|]?" + varspec + "(?:," + varspec + ")*\\}";
  return "(?:" + literal + "|" + expression + ")*";
}

// Domain names of IDNA2008 labels (RFC 5890, as python3-idna's encode checks
// them), made exact and regular:
// - a label is an NR-LDH label (ASCII letters of either case, digits,
//   hyphens) or a U-label: lowercase ASCII letters, digits, hyphens and
//   kIdnCodePoints, with at least one of the latter;
// - no label starts or ends with a hyphen or has hyphens in positions 3
//   and 4 (RFC 5891 section 4.2.3.1; so no "xn--" A-labels either);
// - labels hold 1-63 code points (RFC 1034), counted as written. IDNA
//   counts the octets of the A-label form, which punycode makes longer for
//   U-labels, and limits the whole name to 253 octets: neither is modelled.
//   (A bound on the whole name beside the label bound makes the lexer DFA
//   count both at once: 63 x 253 positions times the partial UTF-8 states,
//   past its 100,000-state budget on ordinary outputs.)
// `separators` is a class body: IDNA's lookup also splits at U+3002, U+FF0E
// and U+FF61; mail domains only at '.'. Returns the patterns of the domain,
// to put after `prefix` (and before nothing else).
struct DomainPatterns {
  std::string shape, label_lengths, hyphens;
};
DomainPatterns Domain(const std::string& separators, bool trailing_separator) {
  const std::string sep = "[" + separators + "]";
  const std::string not_sep = "[^" + separators + "]";
  const std::string trailing = trailing_separator ? sep + "?" : "";
  const std::string u = "[" + IdnClassBody() + "]";
  const std::string ascii_label = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
  const std::string u_label = "(?:[a-z0-9][a-z0-9-]*)?" + u + "(?:[a-z0-9-" + IdnClassBody() +
                              "]*[a-z0-9" + IdnClassBody() + "])?";
  const std::string label = "(?:" + ascii_label + "|" + u_label + ")";
  DomainPatterns p;
  p.shape = label + "(?:" + sep + label + ")*" + trailing;
  p.label_lengths = not_sep + "{1,63}(?:" + sep + not_sep + "{1,63})*" + trailing;
  const std::string hyphens34 = "(?:" + not_sep + "{0,3}|" + not_sep + "{2}(?:[^" + separators +
                                "-]" + not_sep + "|-[^" + separators + "-])" + not_sep + "*)";
  p.hyphens = hyphens34 + "(?:" + sep + hyphens34 + ")*" + trailing;
  return p;
}

// RFC 6531 Mailbox: a Dot-string local part whose atext takes any non-ASCII
// code point (UTF8-non-ascii), or a Quoted-string (qtextSMTP likewise);
// then a Domain of LDH labels and U-labels (Domain above, '.' only), or an
// IPv4 or IPv6 address literal. General address literals (an IANA tag) are
// not generated.
FormatPatterns IdnEmail() {
  const std::string atext = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u{80}-\\u{10FFFF}]";
  const std::string dot_string = atext + "+(?:\\." + atext + "+)*";
  const std::string quoted =
      "\"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E\\u{80}-\\u{10FFFF}]|\\\\[\\x20-\\x7E])*\"";
  const std::string local = "(?:" + dot_string + "|" + quoted + ")@";
  const std::string literal = "\\[(?:" + FormatPattern("ipv4")->pattern +
                              "|IPv6:" + FormatPattern("ipv6")->pattern + ")\\]";
  const DomainPatterns d = Domain(".", false);
  FormatPatterns out;
  for (const std::string* part : {&d.shape, &d.label_lengths, &d.hyphens}) {
    out.all_of.push_back(local + "(?:" + *part + "|" + literal + ")");
  }
  return out;
}

}  // namespace

std::optional<FormatPatterns> ExtendedFormatPatterns(std::string_view format) {
  if (format == "uri-template") return FormatPatterns{{UriTemplate()}};
  if (format == "idn-hostname") {
    const DomainPatterns d = Domain(".\\u{3002}\\u{FF0E}\\u{FF61}", true);
    return FormatPatterns{{d.shape, d.label_lengths, d.hyphens}};
  }
  if (format == "idn-email") return IdnEmail();
  if (format == "byte") {
    // RFC 4648 section 4 base64 with its padding: whole quanta, then one
    // final quantum of 2 or 3 characters padded with "==" or "=". The pad
    // bits may be non-zero (section 3.5 lets decoders accept that; Python's
    // base64.b64decode(validate=True) does).
    return FormatPatterns{{"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"}};
  }
  return std::nullopt;
}

}  // namespace maskd::json_schema
