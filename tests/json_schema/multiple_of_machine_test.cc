// Brute-force checks of MultipleOfMachine against exact decimal arithmetic:
// every string over a small alphabet of number bytes up to 5 bytes, plus
// generated spellings (fixed, trailing zeros, every exponent form, signs,
// -0), is accepted by the multiples machine iff it is a number spelling
// (numeric_regex.h's, mantissa fraction at most 20 significant digits) whose
// value is a multiple, and by the complement machine iff it is a spelling
// whose value is not. Every state reached is checked live (ByteMachine's
// contract) by a search for an accepting state.
#include "compiler/json_schema/multiple_of_machine.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/json_schema/numeric_regex.h"
#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace maskd::json_schema {
namespace {

Decimal DecimalOf(const std::string& s) { return *Decimal::FromString(s); }

// x is a multiple of d iff x * 10^k / (d * 10^k) is an integer, k making
// both integers; in 128 bits, reduced as it is built.
bool IsMultiple(const Decimal& x, const Decimal& d) {
  if (x.is_zero()) return true;
  const int64_t k = std::max<int64_t>({0, -x.exponent(), -d.exponent()});
  unsigned __int128 divisor = 0;
  for (char c : d.digits()) divisor = divisor * 10 + static_cast<unsigned>(c - '0');
  for (int64_t e = 0; e < d.exponent() + k; ++e) divisor *= 10;
  unsigned __int128 rest = 0;
  for (char c : x.digits()) rest = (rest * 10 + static_cast<unsigned>(c - '0')) % divisor;
  for (int64_t e = 0; e < x.exponent() + k; ++e) rest = rest * 10 % divisor;
  return rest == 0;
}

// The spellings the machines read: fixed notation, normalized exponent
// forms with at most 20 significant mantissa fraction digits, zero
// mantissas.
bool IsSpelling(const std::string& s) {
  static const RE2 fixed(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?)");
  static const RE2 zero(R"(-?0(\.0+)?[eE][+-]?[0-9]+)");
  static const RE2 scientific(R"(-?[1-9](?:\.([0-9]+))?[eE][+-]?[0-9]+)");
  if (RE2::FullMatch(s, fixed) || RE2::FullMatch(s, zero)) return true;
  std::string fraction;
  if (!RE2::FullMatch(s, scientific, &fraction)) return false;
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return fraction.size() <= 20;
}

bool Runs(const regex::ByteMachine& m, const std::string& s, std::vector<uint64_t>* states) {
  uint64_t state = m.Start();
  for (char c : s) {
    std::optional<uint64_t> next = m.Step(state, static_cast<uint8_t>(c));
    if (!next) return false;
    state = *next;
    states->push_back(state);
  }
  return m.Accepting(state);
}

// Breadth-first over the machine's states (one byte per class) for an
// accepting one.
bool ReachesAcceptance(const regex::ByteMachine& m, uint64_t from) {
  std::vector<uint8_t> reps;
  for (const regex::ByteSet& set : m.ByteClasses()) {
    for (int b = 0; b < 256; ++b) {
      if (set.Contains(static_cast<uint8_t>(b))) {
        reps.push_back(static_cast<uint8_t>(b));
        break;
      }
    }
  }
  absl::flat_hash_set<uint64_t> seen = {from};
  std::deque<uint64_t> queue = {from};
  while (!queue.empty() && seen.size() < 2000000) {
    const uint64_t s = queue.front();
    queue.pop_front();
    if (m.Accepting(s)) return true;
    for (uint8_t b : reps) {
      std::optional<uint64_t> next = m.Step(s, b);
      if (next && seen.insert(*next).second) queue.push_back(*next);
    }
  }
  return false;
}

std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  // Every string of up to 5 bytes over a small alphabet.
  const std::string alphabet = "0136-.e+";
  std::vector<std::string> level = {""};
  for (int len = 1; len <= 5; ++len) {
    std::vector<std::string> next;
    for (const std::string& p : level) {
      for (char c : alphabet) next.push_back(p + c);
    }
    out.insert(out.end(), next.begin(), next.end());
    level = std::move(next);
  }
  // Generated spellings: integers, decimals with trailing zeros, exponent
  // forms of each (signed, leading zeros, E), around interesting values.
  for (int i = -400; i <= 400; ++i) {
    const std::string sign = i < 0 ? "-" : "";
    const int a = i < 0 ? -i : i;
    out.push_back(absl::StrCat(i));
    out.push_back(absl::StrCat(sign, a / 100, ".", absl::Dec(a % 100, absl::kZeroPad2)));
    out.push_back(absl::StrCat(sign, a / 100, ".", absl::Dec(a % 100, absl::kZeroPad2), "000"));
    out.push_back(absl::StrCat(sign, a / 10, ".", a % 10));
    if (a > 0) {
      const std::string digits = absl::StrCat(a);
      const std::string mantissa =
          digits.size() == 1 ? digits : digits.substr(0, 1) + "." + digits.substr(1);
      for (const char* e : {"e0", "e+00", "e1", "e-1", "e-2", "e-3", "E2", "e+3", "e-05", "e16",
                            "e+17", "e+22", "e-20", "e-21", "e40"}) {
        out.push_back(sign + mantissa + e);
        out.push_back(sign + mantissa + (digits.size() == 1 ? ".0" : "0") + e);
      }
    }
  }
  for (const char* s : {"-0", "-0.0", "0e0", "-0e-5", "0.000e+1", "0.0000000000000000000000000001",
                        "1.00000000000000000003e+20", "1.000000000000000000003e+21",
                        "3.0000000000000000000000e2", "1.5e+16", "3e+16", "7e-20", "7e-21",
                        "1.35e1", "2.7e+01", "1.000000000000000000000000000e1", "0.3e1"}) {
    out.push_back(s);
  }
  return out;
}

void ExpectExact(const std::string& divisor, const std::vector<std::string>& candidates) {
  const Decimal d = DecimalOf(divisor);
  for (bool multiples : {true, false}) {
    absl::StatusOr<std::shared_ptr<const regex::ByteMachine>> m = MultipleOfMachine(d, multiples);
    ASSERT_TRUE(m.ok()) << divisor << ": " << m.status();
    absl::flat_hash_set<uint64_t> reached;
    int accepted = 0;
    for (const std::string& s : candidates) {
      std::vector<uint64_t> states;
      const bool got = Runs(**m, s, &states);
      reached.insert(states.begin(), states.end());
      bool expected = IsSpelling(s);
      if (expected) expected = IsMultiple(DecimalOf(s), d) == multiples;
      ASSERT_EQ(got, expected) << s << (multiples ? " multipleOf " : " not multipleOf ") << divisor;
      accepted += got;
    }
    EXPECT_GT(accepted, 50) << divisor;
    // Liveness of the start and of a spread of the states reached.
    std::vector<uint64_t> states(reached.begin(), reached.end());
    std::sort(states.begin(), states.end());
    ASSERT_TRUE(ReachesAcceptance(**m, (*m)->Start())) << divisor;
    const size_t stride = std::max<size_t>(1, states.size() / 150);
    for (size_t i = 0; i < states.size(); i += stride) {
      ASSERT_TRUE(ReachesAcceptance(**m, states[i]))
          << "dead state " << states[i] << (multiples ? " multipleOf " : " not multipleOf ")
          << divisor;
    }
  }
}

TEST(MultipleOfMachineTest, ExactForAnyDivisor) {
  const std::vector<std::string> candidates = Candidates();
  for (const char* d :
       {"3",    "7",     "11",     "12", "1.5",   "13.5",  "0.3", "2.5",  "0.01", "1",
        "6.75", "2.125", "0.0003", "40", "7e-20", "1e-20", "96",  "0.07", "1e3",  "625"}) {
    ExpectExact(d, candidates);
  }
}

TEST(MultipleOfMachineTest, RefusesHugeDivisorsByName) {
  for (const char* d : {"2503", "1e6", "3e-21", "1.0001", "99991"}) {
    absl::StatusOr<std::shared_ptr<const regex::ByteMachine>> m =
        MultipleOfMachine(DecimalOf(d), true);
    ASSERT_FALSE(m.ok()) << d;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << d;
    EXPECT_NE(std::string(m.status().message()).find("multipleOf"), std::string::npos);
  }
  EXPECT_TRUE(MultipleOfMachine(DecimalOf("997"), true).ok());
  EXPECT_TRUE(MultipleOfMachine(DecimalOf("9.99"), false).ok());
  EXPECT_EQ(MultipleOfMachine(DecimalOf("0"), true).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// In a regex pool: And with a range regex matches exactly the multiples in
// range, its emptiness is decided within the default budget (a flat
// MinLength sent this search past it for 13.5 below 100), the machine's
// states fingerprint alike in two pools, and Not takes the others.
TEST(MultipleOfMachineTest, CombinesWithRangesInARegexPool) {
  const std::vector<std::string> candidates = Candidates();
  for (const char* d : {"13.5", "7", "0.3"}) {
    regex::ExprSet pool, other;
    absl::StatusOr<std::string> range =
        NumberRangeRegex(std::nullopt, NumericBound{DecimalOf("100"), false});
    ASSERT_TRUE(range.ok());
    absl::StatusOr<regex::ExprId> numbers =
        regex::ParseEcmaRegex(*range, &pool, regex::MatchMode::kFullMatch);
    ASSERT_TRUE(numbers.ok());
    auto machine = *MultipleOfMachine(DecimalOf(d), true);
    const regex::ExprId m = pool.MachineStart(machine);
    EXPECT_EQ(pool.GetFingerprint(m), other.GetFingerprint(other.MachineStart(machine)));
    EXPECT_FALSE(pool.HasBoolean(m));
    const regex::ExprId both = pool.And(*numbers, m);
    const regex::ExprId others = pool.And(*numbers, pool.Not(m));
    absl::StatusOr<bool> empty = pool.IsEmpty(both);
    ASSERT_TRUE(empty.ok()) << d << ": " << empty.status();
    EXPECT_FALSE(*empty) << d;
    for (const std::string& s : candidates) {
      const bool spelled = IsSpelling(s) && pool.Matches(*numbers, s);
      const bool multiple = spelled && IsMultiple(DecimalOf(s), DecimalOf(d));
      ASSERT_EQ(pool.Matches(both, s), multiple) << s << " multipleOf " << d;
      ASSERT_EQ(pool.Matches(others, s), pool.Matches(*numbers, s) && !multiple) << s;
    }
    EXPECT_NE(pool.ToString(m).find("multipleOf"), std::string::npos);
  }
}

}  // namespace
}  // namespace maskd::json_schema
