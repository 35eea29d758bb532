// Pre-tokenization: splitting a normalized text section into the pieces BPE
// merges within. tokenizer.json patterns are Python/Rust regexes that the
// JavaScript reference runs as ECMAScript regexes with the `u` flag; we run
// them with PCRE2 (UTF + UCP + JIT) after rewriting the constructs whose
// meaning differs (`\s`, `\d`, `\w`, `.`, `(?i:...)`) into JavaScript's.
#ifndef MASKD_COMPILER_TOKENIZER_PRE_TOKENIZER_H_
#define MASKD_COMPILER_TOKENIZER_PRE_TOKENIZER_H_

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd::tokenizer_internal {

// Rewrites a tokenizer.json regex into a PCRE2 pattern that matches what the
// JavaScript reference's RegExp(pattern, "gu") matches.
std::string TranslateJsPattern(std::string_view pattern);

struct PreTokenizerStep {
  enum class Kind {
    kSplit,        // Split on `pattern`.
    kPrefixSpace,  // ByteLevel add_prefix_space: " " before pieces lacking it.
    kMetaspace,    // Spaces become `pattern` (e.g. "▁"), prepended per `prepend`.
  };
  // Metaspace prepend_scheme: when the replacement goes before a section.
  enum class Prepend { kAlways, kFirst, kNever };
  enum class Behavior { kIsolated, kRemoved, kInvert };
  Kind kind = Kind::kSplit;
  std::string pattern;   // JavaScript-flavoured regex (kSplit).
  bool literal = false;  // `pattern` is a plain string, not a regex.
  Behavior behavior = Behavior::kIsolated;
  Prepend prepend = Prepend::kAlways;  // kMetaspace.
  bool split = false;                  // kMetaspace: cut before each replacement character.
};

class PreTokenizer {
 public:
  // InvalidArgument when a pattern does not compile.
  static absl::StatusOr<PreTokenizer> Create(std::vector<PreTokenizerStep> steps);

  PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // Splits `text` (valid UTF-8) into pieces, appended to `pieces`. Pieces
  // point into `text` or into `storage` (for pieces a step had to rewrite).
  // `at_start`: the text begins the input (Metaspace prepend_scheme "first").
  void Split(std::string_view text, bool at_start, std::vector<std::string_view>& pieces,
             std::deque<std::string>& storage) const;

 private:
  struct CompiledStep;
  std::vector<CompiledStep> steps_;
};

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_PRE_TOKENIZER_H_
