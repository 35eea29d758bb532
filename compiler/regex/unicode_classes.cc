#include "compiler/regex/unicode_classes.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "utf8proc.h"

namespace maskd::regex {
namespace {

constexpr int kNumCategories = 30;  // UTF8PROC_CATEGORY_CN (0) .. CO (29).

// Ranges of every general category, computed once (one pass over all code
// points; thread-safe static initialization).
const std::array<std::vector<CodepointRange>, kNumCategories>& CategoryTable() {
  static const auto* table = [] {
    auto* t = new std::array<std::vector<CodepointRange>, kNumCategories>();
    int prev = -1;
    for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      int cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
      if (cat == prev) {
        (*t)[cat].back().hi = cp;
      } else {
        (*t)[cat].push_back({cp, cp});
        prev = cat;
      }
    }
    return t;
  }();
  return *table;
}

struct CategoryName {
  std::string_view short_name;
  std::string_view long_name;
  std::string_view alias;  // A third spelling, or "".
  std::vector<int> categories;
};

const std::vector<CategoryName>& CategoryNames() {
  static const auto* names = new std::vector<CategoryName>{
      {"L",
       "Letter",
       "",
       {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT, UTF8PROC_CATEGORY_LM,
        UTF8PROC_CATEGORY_LO}},
      {"LC",
       "Cased_Letter",
       "",
       {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT}},
      {"Lu", "Uppercase_Letter", "", {UTF8PROC_CATEGORY_LU}},
      {"Ll", "Lowercase_Letter", "", {UTF8PROC_CATEGORY_LL}},
      {"Lt", "Titlecase_Letter", "", {UTF8PROC_CATEGORY_LT}},
      {"Lm", "Modifier_Letter", "", {UTF8PROC_CATEGORY_LM}},
      {"Lo", "Other_Letter", "", {UTF8PROC_CATEGORY_LO}},
      {"M",
       "Mark",
       "Combining_Mark",
       {UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_MC, UTF8PROC_CATEGORY_ME}},
      {"Mn", "Nonspacing_Mark", "", {UTF8PROC_CATEGORY_MN}},
      {"Mc", "Spacing_Mark", "", {UTF8PROC_CATEGORY_MC}},
      {"Me", "Enclosing_Mark", "", {UTF8PROC_CATEGORY_ME}},
      {"N", "Number", "", {UTF8PROC_CATEGORY_ND, UTF8PROC_CATEGORY_NL, UTF8PROC_CATEGORY_NO}},
      {"Nd", "Decimal_Number", "digit", {UTF8PROC_CATEGORY_ND}},
      {"Nl", "Letter_Number", "", {UTF8PROC_CATEGORY_NL}},
      {"No", "Other_Number", "", {UTF8PROC_CATEGORY_NO}},
      {"P",
       "Punctuation",
       "punct",
       {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
        UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO}},
      {"Pc", "Connector_Punctuation", "", {UTF8PROC_CATEGORY_PC}},
      {"Pd", "Dash_Punctuation", "", {UTF8PROC_CATEGORY_PD}},
      {"Ps", "Open_Punctuation", "", {UTF8PROC_CATEGORY_PS}},
      {"Pe", "Close_Punctuation", "", {UTF8PROC_CATEGORY_PE}},
      {"Pi", "Initial_Punctuation", "", {UTF8PROC_CATEGORY_PI}},
      {"Pf", "Final_Punctuation", "", {UTF8PROC_CATEGORY_PF}},
      {"Po", "Other_Punctuation", "", {UTF8PROC_CATEGORY_PO}},
      {"S",
       "Symbol",
       "",
       {UTF8PROC_CATEGORY_SM, UTF8PROC_CATEGORY_SC, UTF8PROC_CATEGORY_SK, UTF8PROC_CATEGORY_SO}},
      {"Sm", "Math_Symbol", "", {UTF8PROC_CATEGORY_SM}},
      {"Sc", "Currency_Symbol", "", {UTF8PROC_CATEGORY_SC}},
      {"Sk", "Modifier_Symbol", "", {UTF8PROC_CATEGORY_SK}},
      {"So", "Other_Symbol", "", {UTF8PROC_CATEGORY_SO}},
      {"Z", "Separator", "", {UTF8PROC_CATEGORY_ZS, UTF8PROC_CATEGORY_ZL, UTF8PROC_CATEGORY_ZP}},
      {"Zs", "Space_Separator", "", {UTF8PROC_CATEGORY_ZS}},
      {"Zl", "Line_Separator", "", {UTF8PROC_CATEGORY_ZL}},
      {"Zp", "Paragraph_Separator", "", {UTF8PROC_CATEGORY_ZP}},
      {"C",
       "Other",
       "",
       {UTF8PROC_CATEGORY_CC, UTF8PROC_CATEGORY_CF, UTF8PROC_CATEGORY_CS, UTF8PROC_CATEGORY_CO,
        UTF8PROC_CATEGORY_CN}},
      {"Cc", "Control", "cntrl", {UTF8PROC_CATEGORY_CC}},
      {"Cf", "Format", "", {UTF8PROC_CATEGORY_CF}},
      {"Cs", "Surrogate", "", {UTF8PROC_CATEGORY_CS}},
      {"Co", "Private_Use", "", {UTF8PROC_CATEGORY_CO}},
      {"Cn", "Unassigned", "", {UTF8PROC_CATEGORY_CN}},
  };
  return *names;
}

const CategoryName* FindCategory(std::string_view name) {
  for (const CategoryName& c : CategoryNames()) {
    if (name == c.short_name || name == c.long_name || (!c.alias.empty() && name == c.alias)) {
      return &c;
    }
  }
  return nullptr;
}

std::vector<CodepointRange> CategoryRanges(const CategoryName& c) {
  std::vector<CodepointRange> out;
  for (int cat : c.categories) {
    const auto& r = CategoryTable()[cat];
    out.insert(out.end(), r.begin(), r.end());
  }
  return NormalizeCodepointRanges(std::move(out));
}

}  // namespace

absl::StatusOr<std::vector<CodepointRange>> UnicodePropertyRanges(std::string_view name) {
  size_t eq = name.find('=');
  if (eq != std::string_view::npos) {
    std::string_view key = name.substr(0, eq), value = name.substr(eq + 1);
    if (key == "General_Category" || key == "gc") {
      if (const CategoryName* c = FindCategory(value)) return CategoryRanges(*c);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown general category '", std::string(value), "'"));
    }
    if (key == "Script" || key == "sc" || key == "Script_Extensions" || key == "scx") {
      return absl::InvalidArgumentError(
          absl::StrCat("Unicode script property \\p{", std::string(name), "} is not supported"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown Unicode property '", std::string(key), "'"));
  }
  if (const CategoryName* c = FindCategory(name)) return CategoryRanges(*c);
  if (name == "Any") return NormalizeCodepointRanges({{0, 0x10FFFF}});
  if (name == "ASCII") return std::vector<CodepointRange>{{0, 0x7F}};
  if (name == "Assigned") {
    return ComplementCodepointRanges(CategoryRanges(*FindCategory("Cn")));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Unicode property \\p{", std::string(name), "} is not supported"));
}

}  // namespace maskd::regex
