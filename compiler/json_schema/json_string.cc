#include "compiler/json_schema/json_string.h"

#include <algorithm>
#include <array>
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

// The UTF-8 decoder's states: 0 between code points; 1, 2, 5 need that many
// continuation bytes (80-BF) more; 3 (after E0) needs A0-BF then one more;
// 4 (after ED) 80-9F then one more; 6 (after F0) 90-BF then two more; 7
// (after F4) 80-8F then two more. A byte that cannot continue a code point
// leaves the bytes before it raw and is read again from state 0.
int Utf8Next(int state, uint8_t b) {
  const bool cont = b >= 0x80 && b <= 0xBF;
  switch (state) {
    case 1:
      if (cont) return 0;
      break;
    case 2:
      if (cont) return 1;
      break;
    case 3:
      if (b >= 0xA0 && b <= 0xBF) return 1;
      break;
    case 4:
      if (b >= 0x80 && b <= 0x9F) return 1;
      break;
    case 5:
      if (cont) return 2;
      break;
    case 6:
      if (b >= 0x90 && b <= 0xBF) return 2;
      break;
    case 7:
      if (b >= 0x80 && b <= 0x8F) return 2;
      break;
    default:
      break;
  }
  if (b >= 0xC2 && b <= 0xDF) return 1;
  if (b == 0xE0) return 3;
  if (b == 0xED) return 4;
  if (b >= 0xE1 && b <= 0xEF) return 2;
  if (b == 0xF0) return 6;
  if (b >= 0xF1 && b <= 0xF3) return 5;
  if (b == 0xF4) return 7;
  return 0;
}

constexpr uint64_t kIdentity = 0x8040201008040201ull;
constexpr uint64_t kAllStates = ~uint64_t{0};

uint64_t ComposeRelations(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  for (int from = 0; from < 8; ++from) {
    const uint64_t mids = (a >> (8 * from)) & 0xFF;
    uint64_t row = 0;
    for (int mid = 0; mid < 8; ++mid) {
      if (mids & (uint64_t{1} << mid)) row |= (b >> (8 * mid)) & 0xFF;
    }
    out |= row << (8 * from);
  }
  return out;
}

// Reflexive-transitive closure.
uint64_t StarRelation(uint64_t r) {
  uint64_t acc = kIdentity | r;
  for (;;) {
    const uint64_t next = acc | ComposeRelations(acc, acc);
    if (next == acc) return acc;
    acc = next;
  }
}

// A leading byte's code points: its bytes, how many continuation bytes
// follow, and the first continuation's range (the rest are 80-BF).
struct LeadProfile {
  uint8_t lo, hi;
  int continuations;
  uint8_t first_lo, first_hi;
};
constexpr LeadProfile kLeadProfiles[] = {{0xC2, 0xDF, 1, 0x80, 0xBF}, {0xE0, 0xE0, 2, 0xA0, 0xBF},
                                         {0xE1, 0xEC, 2, 0x80, 0xBF}, {0xED, 0xED, 2, 0x80, 0x9F},
                                         {0xEE, 0xEF, 2, 0x80, 0xBF}, {0xF0, 0xF0, 3, 0x90, 0xBF},
                                         {0xF1, 0xF3, 3, 0x80, 0xBF}, {0xF4, 0xF4, 3, 0x80, 0x8F}};

// The code points whose UTF-8 bytes are lead, then one of each of `conts`,
// appended in increasing order, adjacent ranges merged. Bytes are enumerated
// only up to the last continuation set that is not all of 80-BF: a quoted
// AnyCodepoint has 3 x 64 x 64 four-byte prefixes, one range.
void AddCodepoints(uint8_t lead, std::span<const regex::ByteSet> conts,
                   std::vector<regex::CodepointRange>& out) {
  const int k = static_cast<int>(conts.size());
  const uint32_t lead_bits = lead & (k == 1 ? 0x1F : k == 2 ? 0x0F : 0x07);
  const regex::ByteSet full = regex::ByteSet::Range(0x80, 0xBF);
  int enumerated = k;  // conts[enumerated..] are all full
  while (enumerated > 0 && conts[enumerated - 1] == full) --enumerated;
  auto push = [&](uint32_t lo, uint32_t hi) {
    if (!out.empty() && out.back().hi + 1 == lo) {
      out.back().hi = hi;
    } else {
      out.push_back({lo, hi});
    }
  };
  auto walk = [&](auto& self, uint32_t bits, int i) -> void {
    if (i == enumerated) {
      const int shift = 6 * (k - i);
      push(bits << shift, ((bits + 1) << shift) - 1);
      return;
    }
    for (int c = 0x80; c <= 0xBF; ++c) {
      if (conts[i].Contains(static_cast<uint8_t>(c))) self(self, (bits << 6) | (c & 0x3F), i + 1);
    }
  };
  walk(walk, lead_bits, 0);
}

ExprId HexDigits(ExprSet& pool, uint32_t lo, uint32_t hi) {
  regex::ByteSet set;
  for (uint32_t d = lo; d <= hi; ++d)
    set.Add(static_cast<uint8_t>(d < 10 ? '0' + d : 'a' + d - 10));
  return pool.Bytes(set);
}

// The n-digit lowercase hex spellings of lo..hi.
ExprId HexRange(ExprSet& pool, uint32_t lo, uint32_t hi, int n) {
  if (n == 0) return ExprSet::kEpsilon;
  const uint32_t unit = uint32_t{1} << (4 * (n - 1));
  uint32_t lo_d = lo / unit, hi_d = hi / unit;
  if (lo_d == hi_d) {
    return pool.Concat(HexDigits(pool, lo_d, lo_d), HexRange(pool, lo % unit, hi % unit, n - 1));
  }
  std::vector<ExprId> alts;
  if (lo % unit != 0) {
    alts.push_back(
        pool.Concat(HexDigits(pool, lo_d, lo_d), HexRange(pool, lo % unit, unit - 1, n - 1)));
    ++lo_d;
  }
  if (hi % unit != unit - 1) {
    alts.push_back(pool.Concat(HexDigits(pool, hi_d, hi_d), HexRange(pool, 0, hi % unit, n - 1)));
    --hi_d;
  }
  if (lo_d <= hi_d) {
    // Spelled out, not x{n-1}: ExprSet::ProveWithin reads a repetition as
    // any number of copies, and it must prove escapes whole code points
    // (Lowering::ProveLengthCounter, regex/horizon.h).
    std::vector<ExprId> digits = {HexDigits(pool, lo_d, hi_d)};
    for (int i = 1; i < n; ++i) digits.push_back(HexDigits(pool, 0, 15));
    alts.push_back(pool.Concat(digits));
  }
  return pool.Or(alts);
}

ExprId EscapeOfUnits(ExprSet& pool, uint32_t lo, uint32_t hi) {
  return pool.Concat(pool.Literal("\\u"), HexRange(pool, lo, hi, 4));
}

}  // namespace

ExprId JsonEscapes(ExprSet& pool, std::span<const regex::CodepointRange> ranges) {
  std::vector<ExprId> alts;
  for (const regex::CodepointRange& r : ranges) {
    const uint32_t bmp_hi = std::min<uint32_t>(r.hi, 0xFFFF);
    if (r.lo <= bmp_hi) alts.push_back(EscapeOfUnits(pool, r.lo, bmp_hi));
    if (r.hi < 0x10000) continue;
    // Astral: high surrogate D800 + (u >> 10), low DC00 + (u & 3FF).
    const uint32_t u_lo = std::max<uint32_t>(r.lo, 0x10000) - 0x10000, u_hi = r.hi - 0x10000;
    const uint32_t h_lo = u_lo >> 10, h_hi = u_hi >> 10;
    auto pair = [&](uint32_t h0, uint32_t h1, uint32_t l0, uint32_t l1) {
      alts.push_back(pool.Concat(EscapeOfUnits(pool, 0xD800 + h0, 0xD800 + h1),
                                 EscapeOfUnits(pool, 0xDC00 + l0, 0xDC00 + l1)));
    };
    if (h_lo == h_hi) {
      pair(h_lo, h_lo, u_lo & 0x3FF, u_hi & 0x3FF);
      continue;
    }
    uint32_t first = h_lo, last = h_hi;
    if ((u_lo & 0x3FF) != 0) pair(h_lo, h_lo, u_lo & 0x3FF, 0x3FF), ++first;
    if ((u_hi & 0x3FF) != 0x3FF) pair(h_hi, h_hi, 0, u_hi & 0x3FF), --last;
    if (first <= last) pair(first, last, 0, 0x3FF);
  }
  return pool.Or(alts);
}

// Post-order with an explicit stack: a pattern literal of n characters is a
// Concat chain n deep, and one C++ frame per link overflowed a compile
// thread's stack at ~40,000.
ExprId JsonQuoter::Quote(ExprId root) {
  std::vector<std::pair<ExprId, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    const auto [e, children_done] = stack.back();
    stack.pop_back();
    if (memo_.contains(e)) {
      if (children_done) in_progress_.erase(e);
      continue;
    }
    if (!children_done) {
      if (!in_progress_.insert(e).second) {
        // A straddle's residual reached back to e (only a derivative that
        // rotates a repetition does): quote e without the escapes across its
        // Concat, its children first (a nested walk: rare, and shallow).
        cut_.insert(e);
        ++unaligned_;
        const std::vector<ExprId> args(pool_.Args(e).begin(), pool_.Args(e).end());
        for (ExprId a : args) Quote(a);
        memo_.emplace(e, QuoteNode(e));
        continue;
      }
      stack.push_back({e, true});
      for (ExprId a : Children(e)) {
        if (!memo_.contains(a)) stack.push_back({a, false});
      }
      continue;
    }
    in_progress_.erase(e);
    memo_.emplace(e, QuoteNode(e));
  }
  return memo_.at(root);
}

uint64_t JsonQuoter::Utf8Relation(ExprId root) {
  // Post-order, as Quote (literal chains are deep).
  std::vector<std::pair<ExprId, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    const auto [e, children_done] = stack.back();
    stack.pop_back();
    if (relations_.contains(e)) continue;
    if (!children_done) {
      stack.push_back({e, true});
      for (ExprId a : pool_.Args(e)) stack.push_back({a, false});
      continue;
    }
    uint64_t r = 0;
    switch (pool_.kind(e)) {
      case ExprKind::kNothing:
        break;
      case ExprKind::kEpsilon:
        r = kIdentity;
        break;
      case ExprKind::kByteSet: {
        // Each byte's relation, once per process.
        static const std::array<uint64_t, 256> kByteRelations = [] {
          std::array<uint64_t, 256> out{};
          for (int b = 0; b < 256; ++b) {
            for (int from = 0; from < 8; ++from) {
              out[b] |= uint64_t{1} << (8 * from + Utf8Next(from, static_cast<uint8_t>(b)));
            }
          }
          return out;
        }();
        const regex::ByteSet set = pool_.GetByteSet(e);
        for (int b = 0; b < 256; ++b) {
          if (set.Contains(static_cast<uint8_t>(b))) r |= kByteRelations[b];
        }
        break;
      }
      case ExprKind::kConcat:
        r = ComposeRelations(relations_.at(pool_.Args(e)[0]), relations_.at(pool_.Args(e)[1]));
        break;
      case ExprKind::kOr:
        for (ExprId a : pool_.Args(e)) r |= relations_.at(a);
        break;
      case ExprKind::kAnd:
        r = kAllStates;
        for (ExprId a : pool_.Args(e)) r &= relations_.at(a);
        break;
      case ExprKind::kRepeat: {
        const uint64_t body = relations_.at(pool_.Args(e)[0]);
        const uint64_t star = StarRelation(body);
        r = pool_.RepeatMin(e) == 0 ? star : ComposeRelations(body, star);
        if (pool_.RepeatMax(e) == 0) r = kIdentity;
        break;
      }
      case ExprKind::kNot:
      case ExprKind::kMachine:
        r = kAllStates;
        break;
    }
    relations_.emplace(e, r);
  }
  return relations_.at(root);
}

ExprId JsonQuoter::AnyEncoding() {
  if (any_encoding_ != ExprSet::kNothing) return any_encoding_;
  std::vector<ExprId> tokens;
  regex::ByteSet plain;
  for (int b = 0; b < 256; ++b) {
    std::string escape = EscapeOf(static_cast<uint8_t>(b));
    if (escape.empty()) {
      plain.Add(static_cast<uint8_t>(b));
    } else {
      tokens.push_back(pool_.Literal(escape));
    }
  }
  tokens.push_back(pool_.Bytes(plain));
  const regex::CodepointRange escaped[] = {{0x7F, 0xD7FF}, {0xE000, 0x10FFFF}};
  tokens.push_back(JsonEscapes(pool_, escaped));
  any_encoding_ = pool_.Star(pool_.Or(tokens));
  return any_encoding_;
}

const JsonQuoter::Straddle* JsonQuoter::PlanConcat(ExprId e) {
  if (auto it = plans_.find(e); it != plans_.end()) return &it->second;
  const ExprId x = pool_.Args(e)[0], y = pool_.Args(e)[1];
  if (EndsOnBoundary(x) || (pool_.FirstBytes(y) & regex::ByteSet::Range(0x80, 0xBF)).Empty()) {
    return nullptr;
  }
  Straddle plan;
  if (pool_.kind(x) == ExprKind::kOr) {
    plan.distribute = true;
    std::vector<ExprId> arms(pool_.Args(x).begin(), pool_.Args(x).end());
    for (ExprId a : arms) plan.arms.push_back(pool_.Concat(a, y));
  } else if (pool_.kind(x) == ExprKind::kByteSet) {
    const regex::ByteSet leads = pool_.GetByteSet(x);
    // Residual after the code point -> the code points leading to it.
    absl::flat_hash_map<ExprId, std::vector<regex::CodepointRange>> by_residual;
    std::vector<ExprId> order;
    for (const LeadProfile& p : kLeadProfiles) {
      std::vector<uint8_t> profile_leads;
      for (int b = p.lo; b <= p.hi; ++b) {
        if (leads.Contains(static_cast<uint8_t>(b)))
          profile_leads.push_back(static_cast<uint8_t>(b));
      }
      if (profile_leads.empty()) continue;
      // Depth-first over the continuations, grouping bytes by derivative.
      std::vector<regex::ByteSet> path;
      auto walk = [&](auto& self, ExprId z, int depth) -> void {
        const regex::ByteSet allowed = (depth == 0 ? regex::ByteSet::Range(p.first_lo, p.first_hi)
                                                   : regex::ByteSet::Range(0x80, 0xBF)) &
                                       pool_.FirstBytes(z);
        std::vector<std::pair<ExprId, regex::ByteSet>> groups;
        for (int c = 0x80; c <= 0xBF; ++c) {
          if (!allowed.Contains(static_cast<uint8_t>(c))) continue;
          const ExprId d = pool_.Derivative(z, static_cast<uint8_t>(c));
          if (d == ExprSet::kNothing) continue;
          auto g =
              std::find_if(groups.begin(), groups.end(), [&](auto& q) { return q.first == d; });
          if (g == groups.end()) {
            groups.push_back({d, regex::ByteSet::Single(static_cast<uint8_t>(c))});
          } else {
            g->second.Add(static_cast<uint8_t>(c));
          }
        }
        for (const auto& [d, set] : groups) {
          path.push_back(set);
          if (depth + 1 == p.continuations) {
            auto [it, fresh] = by_residual.try_emplace(d);
            if (fresh) order.push_back(d);
            for (uint8_t lead : profile_leads) AddCodepoints(lead, path, it->second);
          } else {
            self(self, d, depth + 1);
          }
          path.pop_back();
        }
      };
      walk(walk, y, 0);
    }
    for (ExprId residual : order) {
      plan.escapes.push_back(
          {JsonEscapes(pool_, regex::NormalizeCodepointRanges(by_residual.at(residual))),
           residual});
    }
  } else {
    plan.unaligned = true;
  }
  return &plans_.emplace(e, std::move(plan)).first->second;
}

std::vector<ExprId> JsonQuoter::Children(ExprId e) {
  if (e == pool_.AnyCodepoint()) return {pool_.Codepoints(0, 0x7F)};  // QuoteNode
  // Copies: quoting adds nodes, which may move the pool's args.
  std::vector<ExprId> out(pool_.Args(e).begin(), pool_.Args(e).end());
  switch (pool_.kind(e)) {
    case ExprKind::kNot:
      break;
    case ExprKind::kConcat:
      if (cut_.contains(e)) break;
      if (const Straddle* plan = PlanConcat(e)) {
        if (plan->distribute) return plan->arms;
        for (const auto& [escape, residual] : plan->escapes) out.push_back(residual);
      }
      break;
    default:
      break;
  }
  return out;
}

ExprId JsonQuoter::QuoteNode(ExprId e) {
  if (e == ExprSet::kAnyByteString) return AnyEncoding();
  if (e == pool_.AnyCodepoint()) {
    // Every string and length counter has it: built directly, not by the
    // derivatives of its trie (a third of a small schema's compile). Bytes
    // from 0x80 up have no escape of their own, so the raw code points from
    // U+0080 up are the decoded trie itself.
    const regex::CodepointRange escaped[] = {{0x80, 0xD7FF}, {0xE000, 0x10FFFF}};
    return pool_.Or(std::vector<ExprId>{memo_.at(pool_.Codepoints(0, 0x7F)),
                                        pool_.Codepoints(0x80, 0x10FFFF),
                                        JsonEscapes(pool_, escaped)});
  }
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
      // DEL is the one code point below U+0080 that ensure_ascii escapes.
      if (set.Contains(0x7F)) alternatives.push_back(pool_.Literal("\\u007f"));
      alternatives.push_back(pool_.Bytes(plain));
      return pool_.Or(alternatives);
    }
    case ExprKind::kConcat: {
      const ExprId x = pool_.Args(e)[0], y = pool_.Args(e)[1];
      const Straddle* plan = cut_.contains(e) ? nullptr : PlanConcat(e);
      if (plan != nullptr && plan->distribute) {
        std::vector<ExprId> arms;
        for (ExprId a : plan->arms) arms.push_back(memo_.at(a));
        return pool_.Or(arms);
      }
      std::vector<ExprId> alternatives = {pool_.Concat(memo_.at(x), memo_.at(y))};
      if (plan != nullptr) {
        if (plan->unaligned) ++unaligned_;
        for (const auto& [escape, residual] : plan->escapes) {
          alternatives.push_back(pool_.Concat(escape, memo_.at(residual)));
        }
      }
      return pool_.Or(alternatives);
    }
    case ExprKind::kOr: {
      std::vector<ExprId> parts(pool_.Args(e).begin(), pool_.Args(e).end());
      for (ExprId& p : parts) p = memo_.at(p);
      return pool_.Or(parts);
    }
    case ExprKind::kAnd: {
      // A complement beside a language that is not one needs no universe of
      // its own: every quoted language is within AnyEncoding(). (Declared
      // keys excluded from the other keys: one And argument fewer to derive
      // at every lexer state.)
      std::vector<ExprId> parts(pool_.Args(e).begin(), pool_.Args(e).end());
      const bool positive = std::any_of(parts.begin(), parts.end(),
                                        [&](ExprId p) { return pool_.kind(p) != ExprKind::kNot; });
      for (ExprId& p : parts) {
        p = positive && pool_.kind(p) == ExprKind::kNot ? pool_.Not(memo_.at(pool_.Args(p)[0]))
                                                        : memo_.at(p);
      }
      return pool_.And(parts);
    }
    case ExprKind::kNot:
      // Complement within the encodings of all byte strings.
      return pool_.And(AnyEncoding(), pool_.Not(memo_.at(pool_.Args(e)[0])));
    case ExprKind::kRepeat: {
      const ExprId body = pool_.Args(e)[0];
      // Code points across two repetitions of the body would need their
      // escapes between the copies; no front end builds such a body.
      if (pool_.RepeatMax(e) > 1 && !EndsOnBoundary(body) &&
          !(pool_.FirstBytes(body) & regex::ByteSet::Range(0x80, 0xBF)).Empty()) {
        ++unaligned_;
      }
      return pool_.Repeat(memo_.at(body), pool_.RepeatMin(e), pool_.RepeatMax(e));
    }
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
