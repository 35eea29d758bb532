// Cross-checks the ECMA front end + lazy DFA against RE2 on random patterns
// over a dialect subset where ECMA-262 and RE2 agree (no \s, no \b, no
// look-around), with small multi-byte alphabets: full-match and search
// semantics, on random strings and on strings our DFA generates as matches.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "compiler/regex/lazy_dfa.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace maskd::regex {
namespace {

// Letters of the test alphabet: ASCII, a digit, 2-, 3- and 4-byte UTF-8.
const std::vector<std::string>& Alphabet() {
  static const auto* a = new std::vector<std::string>{
      "a", "b", "c", "1", "_", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
  return *a;
}

class PatternGenerator {
 public:
  explicit PatternGenerator(uint32_t seed) : rng_(seed) {}

  std::string Pattern() { return Alternation(0); }

 private:
  int Uniform(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  const std::string& Letter() { return Alphabet()[Uniform(static_cast<int>(Alphabet().size()))]; }

  std::string Alternation(int depth) {
    std::string out = Sequence(depth);
    while (Uniform(5) == 0) out += "|" + Sequence(depth);
    return out;
  }
  std::string Sequence(int depth) {
    std::string out;
    int n = Uniform(4);
    for (int i = 0; i < n; ++i) out += Term(depth);
    return out;
  }
  std::string Term(int depth) {
    int r = Uniform(20);
    if (r == 0) return "^";
    if (r == 1) return "$";
    return Atom(depth) + Quantifier();
  }
  std::string Quantifier() {
    std::string q;
    switch (Uniform(12)) {
      case 0:
        q = "*";
        break;
      case 1:
        q = "+";
        break;
      case 2:
        q = "?";
        break;
      case 3:
        q = "{" + std::to_string(Uniform(3)) + "}";
        break;
      case 4:
        q = "{" + std::to_string(Uniform(3)) + ",}";
        break;
      case 5: {
        int lo = Uniform(3);
        q = "{" + std::to_string(lo) + "," + std::to_string(lo + Uniform(3)) + "}";
        break;
      }
      default:
        return "";
    }
    if (Uniform(4) == 0) q += "?";  // Lazy form: same language.
    return q;
  }
  std::string Atom(int depth) {
    int r = Uniform(depth >= 3 ? 9 : 12);
    switch (r) {
      case 0:
        return ".";
      case 1:
        return "\\d";
      case 2:
        return "\\w";
      case 3:
        return "\\W";
      case 4:
        return Class();
      case 5:
        return "\\.";
      case 9:
        return "(" + Alternation(depth + 1) + ")";
      case 10:
        return "(?:" + Alternation(depth + 1) + ")";
      case 11:
        return "(" + Alternation(depth + 1) + ")";
      default:
        return Letter();
    }
  }
  std::string Class() {
    std::string out = Uniform(3) == 0 ? "[^" : "[";
    int n = 1 + Uniform(3);
    for (int i = 0; i < n; ++i) {
      switch (Uniform(5)) {
        case 0:
          out += "a-c";
          break;
        case 1:
          out += "\\d";
          break;
        case 2:
          out += "\xC3\xA0-\xE4\xB8\xAD";  // U+00E0..U+4E2D: 2- and 3-byte.
          break;
        default:
          out += Letter();
      }
    }
    return out + "]";
  }

  std::mt19937 rng_;
};

std::string RandomString(std::mt19937& rng) {
  int len = std::uniform_int_distribution<int>(0, 7)(rng);
  std::string s;
  for (int i = 0; i < len; ++i) {
    int k = std::uniform_int_distribution<int>(0, static_cast<int>(Alphabet().size()))(rng);
    s += k == static_cast<int>(Alphabet().size()) ? std::string(".") : Alphabet()[k];
  }
  return s;
}

// A random string the DFA accepts from `start` (random walk that never steps
// into a dead state), or nullopt when none is found quickly.
std::optional<std::string> SampleMatch(const LazyDfa& dfa, StateId start, std::mt19937& rng) {
  std::string s;
  StateId st = start;
  for (int steps = 0; steps < 40; ++steps) {
    if (dfa.IsAccepting(st) && std::uniform_int_distribution<int>(0, 2)(rng) == 0) return s;
    ByteSet first = dfa.FirstBytes(st);
    if (first.Empty()) return dfa.IsAccepting(st) ? std::optional<std::string>(s) : std::nullopt;
    std::vector<uint8_t> options;
    for (int b = 0; b < 256; ++b) {
      if (first.Contains(static_cast<uint8_t>(b))) options.push_back(static_cast<uint8_t>(b));
    }
    // Prefer bytes of the test alphabet, so strings stay readable and short.
    uint8_t b = options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
    s += static_cast<char>(b);
    st = dfa.Step(st, b);
    EXPECT_FALSE(dfa.IsDead(st));
  }
  return dfa.IsAccepting(st) ? std::optional<std::string>(s) : std::nullopt;
}

void CheckPattern(const std::string& pattern, std::mt19937& rng) {
  RE2::Options options;
  options.set_log_errors(false);
  RE2 re(pattern, options);
  ASSERT_TRUE(re.ok()) << pattern << ": " << re.error();
  for (MatchMode mode : {MatchMode::kFullMatch, MatchMode::kSearch}) {
    const bool search = mode == MatchMode::kSearch;
    ExprSet pool;
    absl::StatusOr<ExprId> e = ParseEcmaRegex(pattern, &pool, mode);
    ASSERT_TRUE(e.ok()) << pattern << ": " << e.status();
    LazyDfa dfa(&pool);
    absl::StatusOr<StateId> start = dfa.Start(*e);
    ASSERT_TRUE(start.ok()) << start.status();
    auto ours = [&](const std::string& s) { return dfa.IsAccepting(dfa.Walk(*start, s)); };
    auto re2 = [&](const std::string& s) {
      return search ? RE2::PartialMatch(s, re) : RE2::FullMatch(s, re);
    };
    for (int i = 0; i < 120; ++i) {
      std::string s = RandomString(rng);
      ASSERT_EQ(ours(s), re2(s)) << "pattern /" << pattern << "/ " << (search ? "search" : "full")
                                 << " on \"" << s << "\"";
    }
    // The DFA's own samples: RE2 must accept them; and RE2 must reject the
    // language exactly when the DFA says the start is dead.
    for (int i = 0; i < 20; ++i) {
      std::optional<std::string> s = SampleMatch(dfa, *start, rng);
      if (!s.has_value()) continue;
      ASSERT_TRUE(re2(*s)) << "pattern /" << pattern << "/ " << (search ? "search" : "full")
                           << " DFA sample \"" << *s << "\"";
    }
    ASSERT_TRUE(dfa.status().ok()) << dfa.status();
  }
}

TEST(EcmaRe2OracleTest, RandomPatternsAgreeWithRe2) {
  std::mt19937 rng(12345);
  for (uint32_t seed = 0; seed < 400; ++seed) {
    PatternGenerator gen(seed);
    std::string pattern = gen.Pattern();
    SCOPED_TRACE(pattern);
    CheckPattern(pattern, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(EcmaRe2OracleTest, HandPickedPatternsAgreeWithRe2) {
  std::mt19937 rng(7);
  for (const char* p : {"^a|b$",
                        "(^a)",
                        "(^a|b)c",
                        "a(b$|c)",
                        "(^|x)a($|y)",
                        "^$",
                        "(^)*a",
                        "(a|^)+b",
                        "(a$)?",
                        "x*^a",
                        "a$b*",
                        "[^a]*",
                        ".{2,3}",
                        "\\w+\\W",
                        "(?:ab|a)(bc|c)",
                        "a{0}",
                        "(a|b){3}c",
                        "a{2,5}",
                        "(ab){1,3}c",
                        "x{0,3}",
                        "[ab]{2,}?b{1,4}",
                        "(a{2,3}|b)c{1,2}",
                        "a{2,4}$|^b{2,3}",
                        "^(ab)*$",
                        "\xE4\xB8\xAD+\\d?",
                        "[\xC3\xA0-\xE4\xB8\xAD]{2}",
                        "((^a)|b)*",
                        "(^a|b$){2,3}"}) {
    SCOPED_TRACE(p);
    CheckPattern(p, rng);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace maskd::regex
