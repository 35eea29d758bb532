// The normalizers HuggingFace tokenizer.json files use for BPE models, as a
// flat list of steps applied in order to each text section between added
// tokens (a "Sequence" normalizer is flattened at load time).
#ifndef MASKD_COMPILER_TOKENIZER_NORMALIZER_H_
#define MASKD_COMPILER_TOKENIZER_NORMALIZER_H_

#include <string>
#include <vector>

namespace maskd::tokenizer_internal {

struct NormalizerStep {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kPrepend, kReplace, kLowercase };
  Kind kind;
  // kPrepend: the prefix. kReplace: the literal to find.
  std::string pattern;
  // kReplace: what each occurrence becomes.
  std::string content;
};

class Normalizer {
 public:
  Normalizer() = default;
  explicit Normalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {}

  bool empty() const { return steps_.empty(); }
  // `text` is valid UTF-8 and not empty.
  std::string Normalize(std::string text) const;

 private:
  std::vector<NormalizerStep> steps_;
};

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_NORMALIZER_H_
