#include "compiler/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <iterator>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "compiler/tokenizer/string_view_compat.h"
#include "compiler/tokenizer/utf8.h"

namespace maskd::tokenizer_internal {
namespace {

// ECMAScript WhiteSpace + LineTerminator, the set JavaScript's `\s` matches
// (PCRE2's differs: it adds U+0085 and lacks U+FEFF).
constexpr std::string_view kJsSpace =
    "\\t\\n\\x0B\\f\\r\\x20\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

// PCRE2 with UCP is case-insensitive over Unicode case folding (so `(?i:'s)`
// would also take U+017F); the JavaScript reference swaps this exact group
// for an ASCII-only spelling first, and so do we.
constexpr std::string_view kCaseInsensitiveContractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
constexpr std::string_view kAsciiContractions =
    "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))";

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
using MatchData = std::unique_ptr<pcre2_match_data, MatchDataDeleter>;

#include "compiler/tokenizer/unicode_categories.inc"

// The body of a character class (no brackets) equal to `\p{name}` as the
// JavaScript reference's Unicode tables define it; nullopt for names not in
// the generated table (those are left to PCRE2).
std::optional<std::string> CategoryClassBody(std::string_view name) {
  for (const UnicodeCategory& category : kUnicodeCategories) {
    if (name != category.name) continue;
    std::string body;
    for (size_t i = 0; i < category.count; ++i) {
      const auto [first, last] = category.ranges[i];
      absl::StrAppendFormat(&body, "\\x{%X}", static_cast<uint32_t>(first));
      if (last != first) absl::StrAppendFormat(&body, "-\\x{%X}", static_cast<uint32_t>(last));
    }
    return body;
  }
  return std::nullopt;
}

std::string QuoteLiteral(std::string_view text) {
  // \Q...\E quotes everything except a literal "\E", which we split around.
  return absl::StrCat("\\Q", absl::StrReplaceAll(AbslView(text), {{"\\E", "\\E\\\\E\\Q"}}), "\\E");
}

}  // namespace

std::string TranslateJsPattern(std::string_view pattern) {
  std::string source(pattern);
  // Escapes Python accepts but JavaScript's `u` mode refuses are dropped by
  // the reference before compiling; they mean the bare character anyway.
  source = absl::StrReplaceAll(source, {{"\\#", "#"}, {"\\&", "&"}, {"\\~", "~"}});
  source = absl::StrReplaceAll(
      source, {{AbslView(kCaseInsensitiveContractions), AbslView(kAsciiContractions)}});

  std::string out;
  out.reserve(source.size() * 2);
  bool in_class = false;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '\\' && i + 1 < source.size()) {
      const char next = source[++i];
      switch (next) {
        case 's':
          absl::StrAppend(&out, in_class ? "" : "[", AbslView(kJsSpace), in_class ? "" : "]");
          break;
        case 'S':
          // Inside a class a negated set cannot be spelled out; PCRE2's \S is
          // the closest (the classes differ only in U+0085 and U+FEFF).
          absl::StrAppend(&out, in_class ? "\\S" : absl::StrCat("[^", AbslView(kJsSpace), "]"));
          break;
        case 'd':  // ASCII in JavaScript, Unicode Nd in PCRE2 with UCP.
          out += in_class ? "0-9" : "[0-9]";
          break;
        case 'D':
          out += in_class ? "\\D" : "[^0-9]";
          break;
        case 'w':
          out += in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]";
          break;
        case 'W':
          out += in_class ? "\\W" : "[^A-Za-z0-9_]";
          break;
        case 'p':
        case 'P': {
          // \p{X}: spelled out from the generated tables (PCRE2's own may
          // be an older Unicode version than the reference's).
          const size_t close = source.find('}', i);
          if (i + 1 < source.size() && source[i + 1] == '{' && close != std::string::npos) {
            const std::string_view name = std::string_view(source).substr(i + 2, close - i - 2);
            const std::optional<std::string> body = CategoryClassBody(name);
            if (body.has_value() && (next == 'p' || !in_class)) {
              const char* open = in_class ? "" : (next == 'p' ? "[" : "[^");
              absl::StrAppend(&out, open, *body, in_class ? "" : "]");
              i = close;
              break;
            }
          }
          out.push_back('\\');
          out.push_back(next);
          break;
        }
        default:
          out.push_back('\\');
          out.push_back(next);
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
    } else if (c == ']' && in_class) {
      in_class = false;
    } else if (c == '.' && !in_class) {
      // JavaScript's `.` stops at every line terminator.
      out += "[^\\n\\r\\x{2028}\\x{2029}]";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

struct PreTokenizer::CompiledStep {
  PreTokenizerStep::Kind kind;
  PreTokenizerStep::Behavior behavior;
  std::unique_ptr<pcre2_code, CodeDeleter> code;
  // kMetaspace.
  std::string replacement;
  PreTokenizerStep::Prepend prepend;
  bool split;
};

PreTokenizer::PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

absl::StatusOr<PreTokenizer> PreTokenizer::Create(std::vector<PreTokenizerStep> steps) {
  PreTokenizer result;
  for (const PreTokenizerStep& step : steps) {
    CompiledStep compiled{step.kind,    step.behavior, nullptr,
                          step.pattern, step.prepend,  step.split};
    if (step.kind == PreTokenizerStep::Kind::kSplit) {
      const std::string source =
          step.literal ? QuoteLiteral(step.pattern) : TranslateJsPattern(step.pattern);
      int error_code = 0;
      PCRE2_SIZE error_offset = 0;
      pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                       PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
      if (code == nullptr) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error_code, message, sizeof(message));
        return absl::InvalidArgumentError(
            absl::StrCat("pre_tokenizer: Split pattern \"", step.pattern,
                         "\" does not compile: ", reinterpret_cast<const char*>(message),
                         " (at offset ", error_offset, " of the translated pattern)"));
      }
      // JIT is an optimisation only: pcre2_match falls back to the
      // interpreter when it is unavailable.
      pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
      compiled.code.reset(code);
    }
    result.steps_.push_back(std::move(compiled));
  }
  return result;
}

void PreTokenizer::Split(std::string_view text, bool at_start,
                         std::vector<std::string_view>& pieces,
                         std::deque<std::string>& storage) const {
  std::vector<std::string_view> current = {text};
  std::vector<std::string_view> next;
  MatchData match_data;
  for (const CompiledStep& step : steps_) {
    next.clear();
    if (step.kind == PreTokenizerStep::Kind::kPrefixSpace) {
      for (std::string_view piece : current) {
        if (!piece.empty() && piece.front() != ' ') {
          storage.push_back(absl::StrCat(" ", AbslView(piece)));
          next.push_back(storage.back());
        } else {
          next.push_back(piece);
        }
      }
      current.swap(next);
      continue;
    }
    if (step.kind == PreTokenizerStep::Kind::kMetaspace) {
      // HuggingFace's Metaspace: spaces become the replacement, which is
      // prepended per the scheme ("first": only to the text that starts the
      // input), then optionally cut before each replacement.
      const std::string_view rep = step.replacement;
      for (std::string_view piece : current) {
        std::string replaced = absl::StrReplaceAll(AbslView(piece), {{" ", AbslView(rep)}});
        const bool prepend = step.prepend == PreTokenizerStep::Prepend::kAlways ||
                             (step.prepend == PreTokenizerStep::Prepend::kFirst && at_start);
        if (prepend && !replaced.starts_with(rep)) replaced.insert(0, rep);
        storage.push_back(std::move(replaced));
        const std::string_view whole = storage.back();
        if (!step.split || rep.empty()) {
          next.push_back(whole);
          continue;
        }
        size_t begin = 0;
        for (size_t pos = whole.find(rep, 1); pos != std::string_view::npos;
             pos = whole.find(rep, pos + rep.size())) {
          if (pos > begin) next.push_back(whole.substr(begin, pos - begin));
          begin = pos;
        }
        if (begin < whole.size()) next.push_back(whole.substr(begin));
      }
      current.swap(next);
      continue;
    }
    if (match_data == nullptr) {
      match_data.reset(pcre2_match_data_create_from_pattern(step.code.get(), nullptr));
    }
    const bool keep_gaps = step.behavior != PreTokenizerStep::Behavior::kInvert;
    const bool keep_matches = step.behavior != PreTokenizerStep::Behavior::kRemoved;
    for (std::string_view piece : current) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t start = 0;
      size_t previous_end = 0;
      while (start <= piece.size()) {
        const int rc = pcre2_match(step.code.get(), subject, piece.size(), start,
                                   PCRE2_NO_UTF_CHECK, match_data.get(), nullptr);
        if (rc < 0) break;  // No (further) match; resource errors end the split too.
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data.get());
        const size_t match_start = ovector[0];
        const size_t match_end = ovector[1];
        if (keep_gaps && match_start > previous_end) {
          next.push_back(piece.substr(previous_end, match_start - previous_end));
        }
        if (keep_matches && match_end > match_start) {
          next.push_back(piece.substr(match_start, match_end - match_start));
        }
        previous_end = match_end;
        if (match_end > match_start) {
          start = match_end;
        } else {
          // An empty match: step over one code point, as JavaScript's
          // matchAll does in `u` mode.
          size_t pos = match_end;
          if (pos >= piece.size() || !NextCodePoint(piece, pos).has_value()) pos = match_end + 1;
          start = pos;
        }
      }
      if (keep_gaps && previous_end < piece.size()) next.push_back(piece.substr(previous_end));
    }
    current.swap(next);
  }
  for (std::string_view piece : current) {
    if (!piece.empty()) pieces.push_back(piece);
  }
}

}  // namespace maskd::tokenizer_internal
