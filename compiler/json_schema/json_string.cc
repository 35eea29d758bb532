#include "compiler/json_schema/json_string.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/json_schema/format_languages.h"

namespace maskd::json_schema {
namespace {

using regex::ExprId;
using regex::ExprKind;
using regex::ExprSet;

// The canonical escape of a byte that needs one, or "" for bytes written as is.
std::string EscapeOf(uint8_t b) {
  switch (b) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      if (b < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", b);
        return buf;
      }
      return "";
  }
}

}  // namespace

// Post-order with an explicit stack: a pattern literal of n characters is a
// Concat chain n deep, and one C++ frame per link overflowed a compile
// thread's stack at ~40,000.
ExprId JsonQuoter::Quote(ExprId root) {
  std::vector<std::pair<ExprId, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    const auto [e, children_done] = stack.back();
    stack.pop_back();
    if (memo_.contains(e)) continue;
    if (!children_done) {
      stack.push_back({e, true});
      for (ExprId a : Children(e)) stack.push_back({a, false});
      continue;
    }
    memo_.emplace(e, QuoteNode(e));
  }
  return memo_.at(root);
}

std::vector<ExprId> JsonQuoter::Children(ExprId e) const {
  // A copy: quoting adds nodes, which may move the pool's args.
  std::vector<ExprId> out(pool_.Args(e).begin(), pool_.Args(e).end());
  if (pool_.kind(e) == ExprKind::kNot) out.push_back(ExprSet::kAnyByteString);
  return out;
}

ExprId JsonQuoter::QuoteNode(ExprId e) {
  switch (pool_.kind(e)) {
    case ExprKind::kNothing:
    case ExprKind::kEpsilon:
      return e;
    case ExprKind::kByteSet: {
      // A copy: adding expressions below may move the pool's byte sets.
      const regex::ByteSet set = pool_.GetByteSet(e);
      regex::ByteSet plain;
      std::vector<ExprId> alternatives;
      for (int b = 0; b < 256; ++b) {
        if (!set.Contains(static_cast<uint8_t>(b))) continue;
        std::string escape = EscapeOf(static_cast<uint8_t>(b));
        if (escape.empty()) {
          plain.Add(static_cast<uint8_t>(b));
        } else {
          alternatives.push_back(pool_.Literal(escape));
        }
      }
      alternatives.push_back(pool_.Bytes(plain));
      return pool_.Or(alternatives);
    }
    case ExprKind::kConcat:
    case ExprKind::kOr:
    case ExprKind::kAnd: {
      std::vector<ExprId> parts(pool_.Args(e).begin(), pool_.Args(e).end());
      for (ExprId& p : parts) p = memo_.at(p);
      if (pool_.kind(e) == ExprKind::kConcat) return pool_.Concat(parts);
      return pool_.kind(e) == ExprKind::kOr ? pool_.Or(parts) : pool_.And(parts);
    }
    case ExprKind::kNot:
      // Complement within the encodings of all byte strings.
      return pool_.And(memo_.at(ExprSet::kAnyByteString), pool_.Not(memo_.at(pool_.Args(e)[0])));
    case ExprKind::kRepeat:
      return pool_.Repeat(memo_.at(pool_.Args(e)[0]), pool_.RepeatMin(e), pool_.RepeatMax(e));
    case ExprKind::kMachine:
      // Machines read raw bytes; no string language is built from one (they
      // spell numbers), so there is nothing exact to quote.
      return ExprSet::kNothing;
  }
  return ExprSet::kNothing;
}

ExprId JsonQuote(ExprSet& pool, ExprId decoded) { return JsonQuoter(pool).Quote(decoded); }

std::string JsonQuoteLiteral(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    std::string escape = EscapeOf(static_cast<uint8_t>(c));
    if (escape.empty()) {
      out.push_back(c);
    } else {
      out += escape;
    }
  }
  out.push_back('"');
  return out;
}

bool IsAssertedFormat(std::string_view format) {
  static constexpr std::string_view kAsserted[] = {
      "date-time",    "date",          "time",
      "duration",     "email",         "idn-email",
      "hostname",     "idn-hostname",  "ipv4",
      "ipv6",         "uri",           "uri-reference",
      "iri",          "iri-reference", "uuid",
      "uri-template", "json-pointer",  "relative-json-pointer",
      "regex",        "color",         "host-name",
      "ip-address"};
  for (std::string_view f : kAsserted) {
    if (f == format) return true;
  }
  return false;
}

bool IsConstrainingFormat(std::string_view format) {
  return IsAssertedFormat(format) || FormatPattern(format).ok();
}

absl::StatusOr<FormatLanguage> FormatPattern(std::string_view format) {
  // RFC 3339 full-date with real month lengths and Gregorian leap years (the
  // year's last two digits divisible by 4 but not 00, or a century divisible
  // by 400). Leap seconds (:60) only at 23:59:60 UTC.
  static constexpr char kLeapYear[] =
      "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";
  const std::string date =
      std::string(
          "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
          "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|") +
      kLeapYear + "-02-29)";
  static constexpr char kOffset[] = "(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
  const std::string time =
      std::string("(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?") + kOffset +
      "|23:59:60(?:\\.[0-9]+)?(?:[zZ]|[+-]00:00))";
  static constexpr char kOctet[] = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
  static constexpr char kLabel[] = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
  const std::string ipv4 = std::string(kOctet) + "(?:\\." + kOctet + "){3}";
  const std::string h16 = "[0-9A-Fa-f]{1,4}";
  const std::string ls32 = "(?:" + h16 + ":" + h16 + "|" + ipv4 + ")";
  const std::string ipv6 = "(?:(?:" + h16 + ":){6}" + ls32 + "|::(?:" + h16 + ":){5}" + ls32 +
                           "|(?:" + h16 + ")?::(?:" + h16 + ":){4}" + ls32 + "|(?:(?:" + h16 +
                           ":){0,1}" + h16 + ")?::(?:" + h16 + ":){3}" + ls32 + "|(?:(?:" + h16 +
                           ":){0,2}" + h16 + ")?::(?:" + h16 + ":){2}" + ls32 + "|(?:(?:" + h16 +
                           ":){0,3}" + h16 + ")?::" + h16 + ":" + ls32 + "|(?:(?:" + h16 +
                           ":){0,4}" + h16 + ")?::" + ls32 + "|(?:(?:" + h16 + ":){0,5}" + h16 +
                           ")?::" + h16 + "|(?:(?:" + h16 + ":){0,6}" + h16 + ")?::)";
  // RFC 3986, Appendix A; with `iri`, RFC 3987's extension of it (ucschar in
  // the unreserved set, iprivate in the query).
  struct UriLanguages {
    std::string absolute, reference;
  };
  auto uri_languages = [&](bool iri) {
    const std::string plain_unreserved = "A-Za-z0-9._~\\-";  // `-` escaped: classes append more
    const std::string ucschar =
        "\\u{A0}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFEF}\\u{10000}-\\u{1FFFD}"
        "\\u{20000}-\\u{2FFFD}\\u{30000}-\\u{3FFFD}\\u{40000}-\\u{4FFFD}\\u{50000}-\\u{5FFFD}"
        "\\u{60000}-\\u{6FFFD}\\u{70000}-\\u{7FFFD}\\u{80000}-\\u{8FFFD}\\u{90000}-\\u{9FFFD}"
        "\\u{A0000}-\\u{AFFFD}\\u{B0000}-\\u{BFFFD}\\u{C0000}-\\u{CFFFD}\\u{D0000}-\\u{DFFFD}"
        "\\u{E1000}-\\u{EFFFD}";
    const std::string iprivate = "\\u{E000}-\\u{F8FF}\\u{F0000}-\\u{FFFFD}\\u{100000}-\\u{10FFFD}";
    const std::string unreserved = iri ? plain_unreserved + ucschar : plain_unreserved;
    const std::string sub_delims = "!$&'()*+,;=";
    const std::string pct = "%[0-9A-Fa-f]{2}";
    const std::string pchar = "(?:[" + unreserved + sub_delims + ":@]|" + pct + ")";
    const std::string segment = pchar + "*";
    const std::string segment_nz = pchar + "+";
    const std::string segment_nz_nc = "(?:[" + unreserved + sub_delims + "@]|" + pct + ")+";
    const std::string userinfo = "(?:[" + unreserved + sub_delims + ":]|" + pct + ")*";
    const std::string ip_literal =
        "\\[(?:" + ipv6 + "|v[0-9A-Fa-f]+\\.[" + plain_unreserved + sub_delims + ":]+)\\]";
    const std::string reg_name = "(?:[" + unreserved + sub_delims + "]|" + pct + ")*";
    const std::string authority =
        "(?:" + userinfo + "@)?(?:" + ip_literal + "|" + ipv4 + "|" + reg_name + ")(?::[0-9]*)?";
    const std::string path_abempty = "(?:/" + segment + ")*";
    const std::string path_absolute = "/(?:" + segment_nz + "(?:/" + segment + ")*)?";
    const std::string path_rootless = segment_nz + "(?:/" + segment + ")*";
    const std::string path_noscheme = segment_nz_nc + "(?:/" + segment + ")*";
    const std::string query = "(?:" + pchar + "|[/?" + (iri ? iprivate : std::string()) + "])*";
    const std::string fragment = "(?:" + pchar + "|[/?])*";
    const std::string tail = "(?:\\?" + query + ")?(?:#" + fragment + ")?";
    UriLanguages out;
    out.absolute = "[A-Za-z][A-Za-z0-9+.-]*:(?://" + authority + path_abempty + "|" +
                   path_absolute + "|" + path_rootless + "|)" + tail;
    const std::string relative_ref = "(?://" + authority + path_abempty + "|" + path_absolute +
                                     "|" + path_noscheme + "|)" + tail;
    out.reference = "(?:" + out.absolute + "|" + relative_ref + ")";
    return out;
  };
  // RFC 6901 JSON pointers.
  const std::string json_pointer = "(?:/(?:[^~/]|~[01])*)*";

  if (format == "date-time") return FormatLanguage{date + "[tT]" + time, std::nullopt, {}};
  if (format == "date") return FormatLanguage{date, std::nullopt, {}};
  if (format == "time") return FormatLanguage{time, std::nullopt, {}};
  if (format == "duration") {
    // ISO 8601 durations as RFC 3339 Appendix A defines them.
    const std::string t = "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)";
    return FormatLanguage{"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:" +
                              t + ")?|" + t + "|[0-9]+W)",
                          std::nullopt,
                          {}};
  }
  // "ip-address" and "host-name" are the draft-3 names.
  if (format == "ipv4" || format == "ip-address") return FormatLanguage{ipv4, std::nullopt, {}};
  if (format == "ipv6") return FormatLanguage{ipv6, std::nullopt, {}};
  if (format == "uuid") {
    return FormatLanguage{
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        std::nullopt,
        {}};
  }
  if (format == "hostname" || format == "host-name") {
    // RFC 1123 labels of at most 63 characters, at most 253 in all.
    return FormatLanguage{std::string(kLabel) + "(?:\\." + kLabel + ")*", 253, {}};
  }
  if (format == "email") {
    // RFC 5321 Mailbox, restricted to a dot-atom local part and a domain
    // name (quoted local parts and address literals are not generated).
    return FormatLanguage{
        std::string("[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@") +
            kLabel + "(?:\\." + kLabel + ")*",
        std::nullopt,
        {}};
  }
  if (format == "uri") return FormatLanguage{uri_languages(false).absolute, std::nullopt, {}};
  if (format == "uri-reference") {
    return FormatLanguage{uri_languages(false).reference, std::nullopt, {}};
  }
  if (format == "iri") return FormatLanguage{uri_languages(true).absolute, std::nullopt, {}};
  if (format == "iri-reference") {
    return FormatLanguage{uri_languages(true).reference, std::nullopt, {}};
  }
  if (format == "json-pointer") return FormatLanguage{json_pointer, std::nullopt, {}};
  if (format == "relative-json-pointer") {
    // RFC draft-handrews-relative-json-pointer: a non-negative integer, then
    // "#" or a JSON pointer.
    return FormatLanguage{"(?:0|[1-9][0-9]*)(?:#|" + json_pointer + ")", std::nullopt, {}};
  }
  if (std::optional<FormatPatterns> more = ExtendedFormatPatterns(format)) {
    FormatLanguage out{more->all_of[0], std::nullopt, {}};
    out.also.assign(more->all_of.begin() + 1, more->all_of.end());
    return out;
  }
  if (IsAssertedFormat(format)) {
    return absl::UnimplementedError("format \"" + std::string(format) + "\" is not supported");
  }
  return absl::NotFoundError("unknown format \"" + std::string(format) + "\"");
}

}  // namespace maskd::json_schema
