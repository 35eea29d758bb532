// JsonQuote against a brute-force oracle: every decoded string up to 3 code
// points over a small alphabet (ASCII, a quote, DEL, 2-, 3- and 4-byte code
// points), every spelling of each (each code point from U+007F up as is or
// as a \u escape, mixed freely), for languages built the ways the front end
// builds them (literals, classes, patterns, lengths, And/Not). A spelling is
// in the quoted language iff its decoded string is in the decoded one, and
// every prefix of a spelling is live iff some member's spelling starts with it.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "compiler/json_schema/json_string.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "compiler/regex/utf8.h"
#include "gtest/gtest.h"

namespace maskd::json_schema {
namespace {

using regex::ExprId;
using regex::ExprSet;

const std::vector<uint32_t> kAlphabet = {'a', '"', 0x7F, 0xE9, 0x800, 0x4E2D, 0x1F600};

std::string Escape(uint32_t cp) {
  char buf[16];
  if (cp < 0x10000) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
  } else {
    const uint32_t u = cp - 0x10000;
    std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF));
  }
  return buf;
}

// The one spelling of a code point below U+007F.
std::string Plain(uint32_t cp) { return cp == '"' ? "\\\"" : std::string(1, char(cp)); }

std::string Utf8(const std::vector<uint32_t>& s) {
  std::string out;
  for (uint32_t cp : s) out += regex::Utf8(cp);
  return out;
}

// Every json.dumps-style spelling of s (2^k for k code points >= U+007F).
std::vector<std::string> Spellings(const std::vector<uint32_t>& s) {
  std::vector<std::string> out = {""};
  for (uint32_t cp : s) {
    std::vector<std::string> next;
    for (const std::string& p : out) {
      if (cp < 0x7F) {
        next.push_back(p + Plain(cp));
      } else {
        next.push_back(p + regex::Utf8(cp));
        next.push_back(p + Escape(cp));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::vector<std::vector<uint32_t>> Universe() {
  std::vector<std::vector<uint32_t>> out = {{}};
  for (size_t begin = 0, len = 0; len < 3; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i) {
      for (uint32_t cp : kAlphabet) {
        std::vector<uint32_t> s = out[i];
        s.push_back(cp);
        out.push_back(s);
      }
    }
    begin = end;
  }
  return out;
}

struct Language {
  std::string what;
  ExprId decoded;
};

std::vector<Language> Languages(ExprSet& pool) {
  std::vector<Language> out;
  auto pattern = [&](const std::string& p) {
    auto re = regex::ParseEcmaRegex(p, &pool, regex::MatchMode::kFullMatch);
    EXPECT_TRUE(re.ok()) << p << ": " << re.status();
    out.push_back({"pattern " + p, re.ok() ? *re : ExprSet::kNothing});
  };
  for (const std::string lit : {"", "a", "\xc3\xa9", "a\xc3\xa9", "\xe4\xb8\xad\xf0\x9f\x98\x80",
                                "\x7f\"", "\xe0\xa0\x80\xc3\xa9\xc3\xa9"}) {
    out.push_back({"literal " + lit, pool.Literal(lit)});
  }
  pattern(".*");
  pattern(".{2}");
  pattern("[\\u00e9\\u4e2d]+");
  pattern("[^a]*");
  pattern("a?\\u00e9?(\\u{1F600}|\\u0800)");
  pattern("[\\u0080-\\u07ff][\\u0800-\\uffff]?");
  pattern("(\\u00e9\\u4e2d|\\u{1F600})*");
  pattern("[\\u{10000}-\\u{10FFFF}]a?");
  const ExprId any = pool.AnyCodepoint();
  out.push_back({"maxLength 2", pool.Repeat(any, 0, 2)});
  out.push_back({"minLength 2", pool.Concat(pool.Repeat(any, 2, 2), pool.AnyUtf8String())});
  auto search = regex::ParseEcmaRegex("\\u00e9", &pool, regex::MatchMode::kSearch);
  EXPECT_TRUE(search.ok());
  out.push_back({"not contains e-acute", pool.Not(*search)});
  out.push_back(
      {"utf8 and not contains e-acute", pool.And(pool.AnyUtf8String(), pool.Not(*search))});
  out.push_back({"not enum", pool.Not(pool.Or(pool.Literal("\xc3\xa9"), pool.Literal("a\x7f")))});
  out.push_back(
      {"maxLength 1 and not a", pool.And(pool.Repeat(any, 0, 1), pool.Not(pool.Literal("a")))});
  out.push_back({"any bytes", ExprSet::kAnyByteString});
  return out;
}

TEST(JsonQuoteTest, EverySpellingOfEveryMemberAndNothingElse) {
  ExprSet pool;
  JsonQuoter quoter(pool);
  const std::vector<std::vector<uint32_t>> universe = Universe();
  for (const Language& lang : Languages(pool)) {
    const ExprId quoted = quoter.Quote(lang.decoded);
    std::set<std::string> member_prefixes;
    std::vector<std::string> all;
    for (const std::vector<uint32_t>& s : universe) {
      const bool member = pool.Matches(lang.decoded, Utf8(s));
      for (const std::string& spelling : Spellings(s)) {
        EXPECT_EQ(pool.Matches(quoted, spelling), member)
            << lang.what << ": spelling \"" << spelling << "\"";
        all.push_back(spelling);
        if (!member) continue;
        for (size_t n = 0; n <= spelling.size(); ++n) member_prefixes.insert(spelling.substr(0, n));
      }
    }
    // The mask oracle: after every prefix of every spelling (mid-escape
    // ones included), the quoted language is live iff a member's spelling
    // starts with the prefix. Over the alphabet only: the languages hold
    // longer strings and other code points too, so intersect first.
    std::vector<ExprId> spelled;
    for (const std::vector<uint32_t>& s : universe) {
      if (pool.Matches(lang.decoded, Utf8(s))) {
        for (const std::string& w : Spellings(s)) spelled.push_back(pool.Literal(w));
      }
    }
    // quoted ∩ (spellings over the alphabet) = the members' spellings.
    std::vector<ExprId> universe_spellings;
    for (const std::string& w : all) universe_spellings.push_back(pool.Literal(w));
    const ExprId bounded = pool.And(quoted, pool.Or(universe_spellings));
    for (const std::string& w : all) {
      ExprId d = bounded;
      for (size_t n = 0; n <= w.size(); ++n) {
        auto empty = pool.IsEmpty(d);
        ASSERT_TRUE(empty.ok());
        EXPECT_EQ(!*empty, member_prefixes.contains(w.substr(0, n)))
            << lang.what << ": prefix \"" << w.substr(0, n) << "\"";
        if (n < w.size()) d = pool.Derivative(d, static_cast<uint8_t>(w[n]));
      }
    }
    EXPECT_EQ(pool.IsEmpty(pool.And(bounded, pool.Not(pool.Or(spelled)))).value_or(false), true)
        << lang.what;
  }
  EXPECT_EQ(quoter.Unaligned(), 0u);
}

// Only json.dumps's spellings: no uppercase hex, no escaped ASCII, no lone
// or reversed surrogates, no \/.
TEST(JsonQuoteTest, OtherSpellingsStayOut) {
  ExprSet pool;
  JsonQuoter quoter(pool);
  const ExprId any = quoter.Quote(pool.AnyUtf8String());
  for (const std::string bad : {"\\u00E9", "\\u0061", "\\ud83d", "\\ude00\\ud83d", "\\/", "\\u00e",
                                "\\U00e9", "\\ud83d\\u00e9", "\\u0022"}) {
    EXPECT_FALSE(pool.Matches(any, bad)) << bad;
  }
  for (const std::string good : {"\\u00e9", "\\ud83d\\ude00", "\\u007f", "\x7f", "\\u001f", "\\n",
                                 "\\\"", "\xf0\x9f\x98\x80\\u00e9\xc3\xa9"}) {
    EXPECT_TRUE(pool.Matches(any, good)) << good;
  }
  // maxLength counts code points: an astral code point is one however spelled.
  const ExprId one = quoter.Quote(pool.Repeat(pool.AnyCodepoint(), 1, 1));
  EXPECT_TRUE(pool.Matches(one, "\\ud83d\\ude00"));
  EXPECT_FALSE(pool.Matches(one, "\\u00e9\\u00e9"));
}

TEST(JsonEscapesTest, RangesAcrossHexDigitsAndSurrogates) {
  ExprSet pool;
  const regex::CodepointRange ranges[] = {{0x9F, 0x1A1}, {0xFFFE, 0x10401}, {0x10FFFF, 0x10FFFF}};
  const ExprId e = JsonEscapes(pool, ranges);
  for (uint32_t cp = 0x80; cp <= 0x10FFFF; cp += (cp < 0x11000 ? 1 : 97)) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const bool in =
        (cp >= 0x9F && cp <= 0x1A1) || (cp >= 0xFFFE && cp <= 0x10401) || cp == 0x10FFFF;
    EXPECT_EQ(pool.Matches(e, Escape(cp)), in) << std::hex << cp;
  }
  EXPECT_TRUE(pool.Matches(e, Escape(0x10FFFF)));
}

}  // namespace
}  // namespace maskd::json_schema
