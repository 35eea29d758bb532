// libFuzzer target: bytes -> ParseEcmaRegex (both match modes). When the
// pattern stays inside the syntax ECMA-262 and RE2 read the same way and
// both accept it, full-match verdicts on short strings are cross-checked
// against RE2.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/regex/ecma_regex.h"
#include "compiler/regex/expr_set.h"
#include "re2/re2.h"

namespace {

// Patterns whose meaning is the same in ECMA-262 and RE2: literals and `.`
// over a tiny alphabet, classes without escapes or empty forms, groups,
// alternation, anchors, and quantifiers whose braces are well-formed
// (Annex B reads a stray `{` as a literal where RE2 may not; `\s`, `[]`,
// `(?<` differ between the two, and RE2 reads `[:` as a POSIX class).
bool SharedSyntax(std::string_view p) {
  static const RE2 kAllowedChars("[abc01.|()*+?\\[\\]^$:{},-]*");
  static const RE2 kBadForms("\\[\\]|\\[\\^\\]|\\(\\?[^:]|\\[:");
  if (!RE2::FullMatch(p, kAllowedChars) || RE2::PartialMatch(p, kBadForms)) return false;
  // Every brace is part of `X{m}`, `X{m,}` or `X{m,n}` with small counts
  // written without leading zeros (ECMA-262 reads `{01}` as {1}; RE2 reads
  // it as literal text).
  static const RE2 kQuantifier("\\{(0|[1-9][0-9]?)(,(0|[1-9][0-9]?)?)?\\}");
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '}') return false;  // Only reached when not consumed below.
    if (p[i] != '{') continue;
    if (i == 0 || std::string_view("abc01.)]").find(p[i - 1]) == std::string_view::npos) {
      return false;
    }
    size_t end = p.find('}', i);
    if (end == std::string_view::npos) return false;
    if (!RE2::FullMatch(p.substr(i, end - i + 1), kQuantifier)) return false;
    i = end;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskd::regex;
  if (size > 16 * 1024) return 0;
  const std::string_view pattern(reinterpret_cast<const char*>(data), size);
  {
    ExprSet pool;
    absl::StatusOr<ExprId> search = ParseEcmaRegex(pattern, &pool, MatchMode::kSearch);
    if (!search.ok() && search.status().message().empty()) std::abort();
  }
  ExprSet pool;
  absl::StatusOr<ExprId> full = ParseEcmaRegex(pattern, &pool, MatchMode::kFullMatch);
  if (!full.ok()) {
    if (full.status().message().empty()) std::abort();
    return 0;
  }
  if (!SharedSyntax(pattern)) return 0;
  RE2::Options re2_options;
  re2_options.set_log_errors(false);
  const RE2 re2(pattern, re2_options);
  if (!re2.ok()) return 0;
  // Every string up to length 3 over a small alphabet, then a few longer
  // ones drawn from the input bytes.
  static const char* const kAlphabet[] = {"a", "b", "0", ",", "\xc3\xa9"};
  std::vector<std::string> strings = {""};
  for (size_t begin = 0, len = 0; len < 3; ++len) {
    const size_t end = strings.size();
    for (size_t i = begin; i < end; ++i) {
      for (const char* c : kAlphabet) strings.push_back(strings[i] + c);
    }
    begin = end;
  }
  for (size_t k = 0; k < 8 && size > 0; ++k) {
    std::string s;
    for (size_t i = 0; i < 4 + k; ++i) s += kAlphabet[data[(k * 7 + i) % size] % 5];
    strings.push_back(s);
  }
  for (const std::string& s : strings) {
    if (pool.Matches(*full, s) != RE2::FullMatch(s, re2)) std::abort();
  }
  return 0;
}
