#include "compiler/tokenizer/normalizer.h"

#include <cstdlib>
#include <string_view>

#include "absl/strings/str_replace.h"
#include "utf8proc.h"

namespace maskd::tokenizer_internal {
namespace {

// Unicode normalization through utf8proc; ASCII text is already normalized
// in every form, which spares the copy for most inputs.
std::string UnicodeNormalize(std::string text, int options) {
  bool ascii = true;
  for (char c : text) ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii) return text;
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &out,
                   static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (length < 0) return text;  // Unreachable for valid UTF-8; keep the text.
  std::string normalized(reinterpret_cast<const char*>(out), static_cast<size_t>(length));
  std::free(out);
  return normalized;
}

// JavaScript's String.prototype.toLowerCase per code point (simple case
// mapping; the only context-sensitive rule, final sigma, is ignored).
std::string Lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  utf8proc_ssize_t pos = 0;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  while (pos < static_cast<utf8proc_ssize_t>(text.size())) {
    utf8proc_int32_t cp;
    const utf8proc_ssize_t n =
        utf8proc_iterate(bytes + pos, static_cast<utf8proc_ssize_t>(text.size()) - pos, &cp);
    if (n <= 0) break;
    pos += n;
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t w = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(w));
  }
  return out;
}

}  // namespace

std::string Normalizer::Normalize(std::string text) const {
  for (const NormalizerStep& step : steps_) {
    switch (step.kind) {
      case NormalizerStep::Kind::kNfc:
        text = UnicodeNormalize(std::move(text), UTF8PROC_COMPOSE);
        break;
      case NormalizerStep::Kind::kNfd:
        text = UnicodeNormalize(std::move(text), UTF8PROC_DECOMPOSE);
        break;
      case NormalizerStep::Kind::kNfkc:
        text = UnicodeNormalize(std::move(text), UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
        break;
      case NormalizerStep::Kind::kNfkd:
        text = UnicodeNormalize(std::move(text), UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
        break;
      case NormalizerStep::Kind::kPrepend:
        // HuggingFace prepends only to non-empty text.
        if (!text.empty()) text.insert(0, step.pattern);
        break;
      case NormalizerStep::Kind::kReplace:
        if (!step.pattern.empty()) text = absl::StrReplaceAll(text, {{step.pattern, step.content}});
        break;
      case NormalizerStep::Kind::kLowercase:
        text = Lowercase(text);
        break;
    }
  }
  return text;
}

}  // namespace maskd::tokenizer_internal
