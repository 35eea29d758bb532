// The ECMA-262 front end: errors (with offsets) for refused and malformed
// patterns, ECMA-specific sets (\s, ., \d, \w), escapes, Annex B literals,
// \p classes against utf8proc on every code point, and symbolic counts.
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/utf8.h"

#include <random>
#include <string>
#include <vector>

#include "compiler/regex/lazy_dfa.h"
#include "compiler/regex/unicode_classes.h"
#include "gtest/gtest.h"
#include "utf8proc.h"

namespace maskd::regex {
namespace {

bool IsSurrogate(uint32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

// A compiled pattern with a DFA, for membership checks.
class Compiled {
 public:
  explicit Compiled(std::string_view pattern, MatchMode mode = MatchMode::kFullMatch) {
    absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool_, mode);
    EXPECT_TRUE(e.ok()) << pattern << ": " << e.status();
    dfa_ = std::make_unique<LazyDfa>(&pool_);
    start_ = dfa_->Start(e.value_or(ExprSet::kNothing)).value();
  }
  bool Matches(std::string_view s) const { return dfa_->IsAccepting(dfa_->Walk(start_, s)); }
  bool MatchesCodepoint(uint32_t cp) const { return Matches(Utf8(cp)); }
  const LazyDfa& dfa() const { return *dfa_; }
  StateId start() const { return start_; }

 private:
  ExprSet pool_;
  std::unique_ptr<LazyDfa> dfa_;
  StateId start_ = LazyDfa::kDead;
};

absl::Status ParseError(std::string_view pattern) {
  ExprSet pool;
  return ParseEcmaRegex(pattern, &pool).status();
}

TEST(EcmaRegexTest, RefusedConstructsNameThemselvesAndTheirOffset) {
  struct Case {
    const char* pattern;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"ab(?=c)", "look-ahead (?= is not supported (at offset 2)"},
           {"(?!c)", "negative look-ahead (?! is not supported (at offset 0)"},
           {"x(?<=c)", "look-behind (?<= is not supported (at offset 1)"},
           {"x(?<!c)", "negative look-behind (?<! is not supported (at offset 1)"},
           {"(a)\\1", "back-reference \\1 is not supported (at offset 3)"},
           {"(?<n>a)\\k<n>", "named back-reference \\k is not supported (at offset 7)"},
           {"a\\b", "word boundary \\b is not supported (at offset 1)"},
           {"\\B", "non-word-boundary \\B is not supported (at offset 0)"},
           {"\\p{Script=Greek}", "Unicode script property \\p{Script=Greek} is not supported"},
           {"[\\p{sc=Latn}]", "\\p{sc=Latn} is not supported"},
           {"\\p{Emoji}", "Unicode property \\p{Emoji} is not supported"},
           {"(?i:a)", "group modifier (?"},
           {"\\01", "octal escape"},
       }) {
    absl::Status s = ParseError(c.pattern);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.pattern;
    EXPECT_NE(s.message().find(c.message), std::string_view::npos)
        << c.pattern << " -> " << s.message();
  }
}

TEST(EcmaRegexTest, MalformedPatternsReportOffsets) {
  struct Case {
    const char* pattern;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"a(b", "missing ')' for the group opened at offset 1"},
           {"ab)", "unmatched ')' at offset 2"},
           {"x[ab", "missing ']' for the class opened at offset 1"},
           {"*a", "nothing to repeat at offset 0"},
           {"a**", "nothing to repeat at offset 2"},
           {"a|+", "nothing to repeat at offset 2"},
           {"^*", "nothing to repeat at offset 1"},
           {"a{3,2}", "numbers out of order in {} quantifier at offset 1"},
           {"[z-a]", "range out of order in character class at offset 1"},
           {"ab\\", "'\\' at end of pattern at offset 2"},
           {"\\x4g", "malformed \\x escape at offset 0"},
           {"\\u12", "malformed \\u escape at offset 0"},
           {"\\u{110000}", "malformed \\u{...} escape at offset 0"},
           {"\\p{Foo}", "\\p{Foo} is not supported (at offset 0)"},
           {"\\pL", "expected '{' after \\p at offset 2"},
           {"\\q", "unknown escape \\q at offset 0"},
           {"\\c1", "invalid control escape \\c at offset 0"},
           {"(?<1a>x)", "invalid group name at offset 3"},
           {"a{1000001}", "repetition count above 1000000 at offset 1"},
           {"\xFF", "invalid UTF-8 in pattern at byte offset 0"},
           {"\xC3\xA9\xC3", "invalid UTF-8 in pattern at byte offset 2"},
           {"\xC3\xA9(",
            "missing ')' for the group opened at offset 1"},  // Offsets in code points.
       }) {
    absl::Status s = ParseError(c.pattern);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.pattern;
    EXPECT_NE(s.message().find(c.message), std::string_view::npos)
        << c.pattern << " -> " << s.message();
  }
}

TEST(EcmaRegexTest, EcmaWhitespaceSet) {
  std::vector<uint32_t> expected = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0xA0,
                                    0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
                                    0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029,
                                    0x202F, 0x205F, 0x3000, 0xFEFF};
  Compiled s("\\s"), not_s("\\S"), in_class("[\\s]"), neg_class("[^\\s]");
  for (uint32_t cp = 0; cp < 0x10000; ++cp) {
    if (IsSurrogate(cp)) continue;
    bool want = std::find(expected.begin(), expected.end(), cp) != expected.end();
    ASSERT_EQ(s.MatchesCodepoint(cp), want) << std::hex << cp;
    ASSERT_EQ(not_s.MatchesCodepoint(cp), !want) << std::hex << cp;
    ASSERT_EQ(in_class.MatchesCodepoint(cp), want) << std::hex << cp;
    ASSERT_EQ(neg_class.MatchesCodepoint(cp), !want) << std::hex << cp;
  }
}

TEST(EcmaRegexTest, DotDigitWordSets) {
  Compiled dot("."), d("\\d"), w("\\w"), big_w("\\W");
  for (uint32_t cp : {0x0Au, 0x0Du, 0x2028u, 0x2029u}) EXPECT_FALSE(dot.MatchesCodepoint(cp));
  for (uint32_t cp : {0x00u, 0x09u, 0x0Bu, 0x85u, 0xE9u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    EXPECT_TRUE(dot.MatchesCodepoint(cp)) << std::hex << cp;
  }
  EXPECT_FALSE(dot.Matches("ab"));
  EXPECT_FALSE(dot.Matches("\xED\xA0\x80"));  // An encoded surrogate is not UTF-8.
  for (uint32_t cp = 0; cp < 0x3000; ++cp) {
    if (IsSurrogate(cp)) continue;
    bool digit = cp >= '0' && cp <= '9';
    bool word = digit || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    ASSERT_EQ(d.MatchesCodepoint(cp), digit) << cp;  // No Unicode digits (e.g. U+0663).
    ASSERT_EQ(w.MatchesCodepoint(cp), word) << cp;
    ASSERT_EQ(big_w.MatchesCodepoint(cp), !word) << cp;
  }
}

TEST(EcmaRegexTest, Escapes) {
  EXPECT_TRUE(Compiled("\\n\\t\\r\\f\\v\\0").Matches(std::string("\n\t\r\f\v\0", 6)));
  EXPECT_TRUE(Compiled("\\x41\\u00e9\\u{1F600}").Matches("A\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_TRUE(Compiled("\\uD83D\\uDE00").Matches("\xF0\x9F\x98\x80"));  // Surrogate pair.
  EXPECT_TRUE(Compiled("[\\uD83D\\uDE00-\\uD83D\\uDE4F]").Matches("\xF0\x9F\x98\x8A"));
  EXPECT_FALSE(Compiled("\\uD83D").Matches("\xED\xA0\xBD"));  // A lone surrogate: nothing.
  EXPECT_TRUE(Compiled("\\cJ\\cm").Matches("\n\r"));
  EXPECT_TRUE(
      Compiled("\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\\\/\\-").Matches(".*+?()[]{}|^$\\/-"));
  EXPECT_TRUE(Compiled("[\\b]").Matches("\b"));
  EXPECT_TRUE(Compiled("[\\-a]+").Matches("-a-"));
  EXPECT_TRUE(Compiled("[a-]+").Matches("-a-"));
  EXPECT_TRUE(Compiled("[\\d-z]+").Matches("1-z"));  // Annex B: '-' after a class escape.
  EXPECT_FALSE(Compiled("[\\d-z]").Matches("a"));
}

TEST(EcmaRegexTest, AnnexBLiteralsAndEmptyClasses) {
  EXPECT_TRUE(Compiled("a{").Matches("a{"));
  EXPECT_TRUE(Compiled("{}").Matches("{}"));
  EXPECT_TRUE(Compiled("x{1,2").Matches("x{1,2"));
  EXPECT_TRUE(Compiled("a{,3}").Matches("a{,3}"));
  EXPECT_TRUE(Compiled("]}").Matches("]}"));
  Compiled none("[]"), any("[^]");
  EXPECT_TRUE(none.dfa().IsDead(none.start()));
  EXPECT_TRUE(any.Matches("\n"));
  EXPECT_TRUE(any.Matches("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(any.Matches(""));
}

TEST(EcmaRegexTest, GroupsQuantifiersAndSearch) {
  EXPECT_TRUE(Compiled("(?<year>\\d{4})-(?:\\d\\d)").Matches("2024-05"));
  EXPECT_TRUE(Compiled("a+?b??c*?d{2,}?").Matches("aacddd"));
  EXPECT_TRUE(Compiled("a|").Matches(""));
  EXPECT_TRUE(Compiled("()").Matches(""));
  Compiled search("abc", MatchMode::kSearch);
  EXPECT_TRUE(search.Matches("xxabcyy"));
  EXPECT_FALSE(search.Matches("ab c"));
  EXPECT_FALSE(
      search.Matches("\xFF"
                     "abc"));  // Search stays within valid UTF-8.
  Compiled anchored("^a|b$", MatchMode::kSearch);
  EXPECT_TRUE(anchored.Matches("axx"));
  EXPECT_TRUE(anchored.Matches("xxb"));
  EXPECT_FALSE(anchored.Matches("xax"));
  EXPECT_FALSE(anchored.Matches("xbx"));
  Compiled group_anchor("x(^a)", MatchMode::kSearch);
  EXPECT_TRUE(group_anchor.dfa().IsDead(group_anchor.start()));
  Compiled empty_search("", MatchMode::kSearch);
  EXPECT_TRUE(empty_search.Matches("anything"));
  Compiled ends("^$", MatchMode::kSearch);
  EXPECT_TRUE(ends.Matches(""));
  EXPECT_FALSE(ends.Matches("a"));
  // Large anchored repetitions are refused rather than unrolled.
  EXPECT_EQ(ParseError("x(^a){20}").message(),
            "regex: a repeated group containing ^ or $ with a count above 16 is not supported "
            "(at offset 5)");
  // Counts are decimal digits, leading zeros allowed (RE2 would read `{01}`
  // as text).
  EXPECT_TRUE(Compiled(".{01}").Matches("a"));
  EXPECT_FALSE(Compiled(".{01}").Matches("aa"));
  EXPECT_TRUE(Compiled("a{0,02}").Matches("aa"));
  EXPECT_TRUE(Compiled("(^a|b){3}").Matches("abb"));
  EXPECT_FALSE(Compiled("(^a|b){3}").Matches("bab"));
}

// Anchors are translated by splitting sequences on empty matches; with
// NonEmpty pushed into the structure, anchored patterns come out free of
// And/Not (no emptiness checks per lexer state, shareable mask walks).
TEST(EcmaRegexTest, AnchoredPatternsNeedNoBooleanOperators) {
  for (const char* pattern : {"^(?:\\S+\\s+){0,99}\\S+$", "^$|(^(?:\\S+\\s+){0,99}\\S+$)",
                              "^[a-z]+$", "^a?b?$", "^(a|b*)c?$", "x?^y?"}) {
    ExprSet pool;
    absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool, MatchMode::kSearch);
    ASSERT_TRUE(e.ok()) << pattern << ": " << e.status();
    EXPECT_FALSE(pool.HasBoolean(*e)) << pattern << ": " << pool.ToString(*e);
  }
  Compiled words("^$|(^(?:\\S+\\s+){0,2}\\S+$)", MatchMode::kSearch);
  EXPECT_TRUE(words.Matches(""));
  EXPECT_TRUE(words.Matches("a b c"));
  EXPECT_FALSE(words.Matches("a b c d"));
  EXPECT_FALSE(words.Matches(" a"));
  EXPECT_FALSE(words.Matches("a "));
}

TEST(EcmaRegexTest, LargeCountsStaySymbolic) {
  ExprSet pool;
  ExprId e = ParseEcmaRegex("[a-z]{1,100000}-x{30000}", &pool, MatchMode::kFullMatch).value();
  EXPECT_LT(pool.size(), 50u);  // No unrolling at parse time.
  EXPECT_TRUE(pool.Matches(e, std::string(300, 'q') + "-" + std::string(30000, 'x')));
  EXPECT_FALSE(pool.Matches(e, std::string(300, 'q') + "-" + std::string(29999, 'x')));
  EXPECT_FALSE(pool.Matches(e, std::string(100001, 'q') + "-" + std::string(30000, 'x')));
  ExprSet pool2;
  EXPECT_TRUE(ParseEcmaRegex("a{1000000}", &pool2).ok());
  EXPECT_LT(pool2.size(), 50u);
}

// Random junk over the syntax characters: every pattern either compiles to
// a usable DFA or is refused with InvalidArgument; nothing crashes (this
// runs under ASan/UBSan too).
TEST(EcmaRegexTest, RandomJunkPatternsCompileOrFailCleanly) {
  const std::string chars = "()[]{}|^$\\*+?.,-:=!<>ab019dDwsSpPuxck";
  std::mt19937 rng(2024);
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string p;
    int len = std::uniform_int_distribution<int>(1, 12)(rng);
    for (int k = 0; k < len; ++k) {
      p += chars[std::uniform_int_distribution<size_t>(0, chars.size() - 1)(rng)];
    }
    for (MatchMode mode : {MatchMode::kSearch, MatchMode::kFullMatch}) {
      ExprSet pool;
      absl::StatusOr<ExprId> e = ParseEcmaRegex(p, &pool, mode);
      if (!e.ok()) {
        ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << p;
        ASSERT_NE(e.status().message().find("offset"), std::string_view::npos) << p;
        continue;
      }
      ++ok;
      LazyDfa dfa(&pool);
      absl::StatusOr<StateId> s = dfa.Start(*e);
      ASSERT_TRUE(s.ok()) << p << ": " << s.status();
      dfa.Walk(*s, "ab{}0-x");
      dfa.FirstBytes(*s);
      ASSERT_TRUE(dfa.status().ok()) << p;
    }
  }
  EXPECT_GT(ok, 300);  // The generator must also produce valid patterns.
}

// Searching, the text around the pattern absorbs surplus repetitions at its
// edges, so the DFA does not count them.
TEST(EcmaRegexTest, SearchDoesNotCountEdgeRepetitions) {
  for (const char* p : {"\\d{1,200}", "a{1,200}b", "[a-z]{1,200}$", "x(ab|c{2,100})"}) {
    SCOPED_TRACE(p);
    Compiled c(p, MatchMode::kSearch);
    StateId s = c.start();
    for (char ch : std::string(400, 'a') + std::string(400, '7')) s = c.dfa().Step(s, ch);
    EXPECT_LT(c.dfa().num_states(), 12u);
  }
  Compiled c("a{3,5}b", MatchMode::kSearch);
  EXPECT_TRUE(c.Matches("xaaaaaaab"));
  EXPECT_FALSE(c.Matches("xaab"));
  Compiled tail("^ba{3,5}", MatchMode::kSearch);
  EXPECT_TRUE(tail.Matches("baaaaaaa"));
  EXPECT_FALSE(tail.Matches("baa"));
  Compiled anchored("^ba{3,5}$", MatchMode::kSearch);  // $: nothing to absorb.
  EXPECT_FALSE(anchored.Matches("baaaaaa"));
}

// Every code point's category from utf8proc against \p{..} and \P{..}.
TEST(EcmaRegexTest, UnicodeCategoriesMatchUtf8proc) {
  struct Case {
    const char* name;
    std::vector<int> categories;
  };
  for (const Case& c : std::vector<Case>{
           {"L",
            {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT, UTF8PROC_CATEGORY_LM,
             UTF8PROC_CATEGORY_LO}},
           {"Lu", {UTF8PROC_CATEGORY_LU}},
           {"General_Category=Lowercase_Letter", {UTF8PROC_CATEGORY_LL}},
           {"gc=N", {UTF8PROC_CATEGORY_ND, UTF8PROC_CATEGORY_NL, UTF8PROC_CATEGORY_NO}},
           {"Nd", {UTF8PROC_CATEGORY_ND}},
           {"P",
            {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
             UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO}},
           {"Zs", {UTF8PROC_CATEGORY_ZS}},
           {"Mn", {UTF8PROC_CATEGORY_MN}},
           {"So", {UTF8PROC_CATEGORY_SO}},
           {"Cn", {UTF8PROC_CATEGORY_CN}},
       }) {
    SCOPED_TRACE(c.name);
    Compiled pos(std::string("\\p{") + c.name + "}");
    Compiled neg(std::string("\\P{") + c.name + "}");
    Compiled cls(std::string("[x\\p{") + c.name + "}]");
    for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (IsSurrogate(cp)) continue;
      int cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
      bool want = std::find(c.categories.begin(), c.categories.end(), cat) != c.categories.end();
      ASSERT_EQ(pos.MatchesCodepoint(cp), want) << std::hex << cp;
      ASSERT_EQ(neg.MatchesCodepoint(cp), !want) << std::hex << cp;
      ASSERT_EQ(cls.MatchesCodepoint(cp), want || cp == 'x') << std::hex << cp;
    }
  }
}

TEST(EcmaRegexTest, BinaryProperties) {
  Compiled any("\\p{Any}"), ascii("\\p{ASCII}"), assigned("\\p{Assigned}");
  for (uint32_t cp : {0x0u, 0x7Fu, 0x80u, 0x378u, 0xFFFFu, 0x10FFFFu}) {
    EXPECT_TRUE(any.MatchesCodepoint(cp));
    EXPECT_EQ(ascii.MatchesCodepoint(cp), cp < 0x80);
    EXPECT_EQ(assigned.MatchesCodepoint(cp),
              utf8proc_category(static_cast<utf8proc_int32_t>(cp)) != UTF8PROC_CATEGORY_CN);
  }
  EXPECT_EQ(UnicodePropertyRanges("Letter").value(), UnicodePropertyRanges("L").value());
  EXPECT_EQ(UnicodePropertyRanges("gc=digit").value(), UnicodePropertyRanges("Nd").value());
}

}  // namespace
}  // namespace maskd::regex
