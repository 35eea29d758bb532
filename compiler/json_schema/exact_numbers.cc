#include "compiler/json_schema/exact_numbers.h"

#include <cstdint>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace maskd::json_schema {
namespace {

// "\u0000" (a code point no schema keyword value needs) and 24 random hex
// digits drawn once per process: a schema cannot know them in advance, so no
// string it holds decodes to a sentinel.
const std::string& Sentinel() {
  static const std::string* sentinel = [] {
    std::random_device device;
    std::string s(1, '\0');
    absl::StrAppend(&s, "maskd-number-");
    for (int i = 0; i < 3; ++i) {
      absl::StrAppend(&s, absl::Hex(static_cast<uint32_t>(device()), absl::kZeroPad8));
    }
    absl::StrAppend(&s, ":");
    return new std::string(std::move(s));
  }();
  return *sentinel;
}

// Debian's abseil has its own string_view.
absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Whether the DOM's reading of `literal` (valid JSON number syntax) is the
// value it spells.
bool DomHoldsExactly(std::string_view literal, const Decimal& exact) {
  if (literal.find_first_of(".eE") == std::string_view::npos) {
    int64_t i;
    uint64_t u;
    return absl::SimpleAtoi(Absl(literal), &i) || absl::SimpleAtoi(Absl(literal), &u);
  }
  double d;
  if (!absl::SimpleAtod(Absl(literal), &d)) return false;
  absl::StatusOr<Decimal> held = Decimal::FromDouble(d);
  return held.ok() && *held == exact;
}

}  // namespace

std::string ExactNumbers::Protect(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;  // text[copied, i) is still to be appended to `out`
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++i;
      continue;
    }
    if (!(c == '-' || (c >= '0' && c <= '9'))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && IsNumberChar(text[end])) ++end;
    const std::string_view literal = text.substr(i, end - i);
    // The common case, an integer of at most 18 digits, fits an int64.
    if (literal.size() <= 18 && literal.find_first_of(".eE") == std::string_view::npos) {
      i = end;
      continue;
    }
    absl::StatusOr<Decimal> exact = Decimal::FromString(literal);
    if (exact.ok() && !DomHoldsExactly(literal, *exact)) {
      out.append(text.data() + copied, i - copied);
      // The sentinel's NUL as a JSON escape.
      absl::StrAppend(&out, "\"\\u0000", Sentinel().substr(1), values_.size(), "\"");
      values_.push_back(*exact);
      copied = end;
    }
    i = end;
  }
  out.append(text.data() + copied, text.size() - copied);
  return out;
}

std::optional<Decimal> ExactNumbers::Lookup(std::string_view decoded) const {
  const std::string& sentinel = Sentinel();
  if (values_.empty() || decoded.substr(0, sentinel.size()) != sentinel) return std::nullopt;
  size_t index;
  if (!absl::SimpleAtoi(Absl(decoded.substr(sentinel.size())), &index) || index >= values_.size()) {
    return std::nullopt;
  }
  return values_[index];
}

}  // namespace maskd::json_schema
