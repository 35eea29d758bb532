// A tokenizer over a given list of byte strings, for engine tests on small
// vocabularies. Encode is greedy longest match (tests only need Decode(Encode(s))
// == s); ids listed in `special` are special, the last id is EOS.
#ifndef MASKD_TESTS_SUPPORT_SMALL_VOCAB_TOKENIZER_H_
#define MASKD_TESTS_SUPPORT_SMALL_VOCAB_TOKENIZER_H_

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "compiler/tokenizer/tokenizer.h"

namespace maskd::testing {

class SmallVocabTokenizer final : public Tokenizer {
 public:
  // Token i has bytes vocab[i]; one more id (EOS, special) is appended.
  explicit SmallVocabTokenizer(std::vector<std::string> vocab, std::string id = "fake")
      : vocab_(std::move(vocab)), id_(std::move(id)) {
    eos_ = {static_cast<TokenId>(vocab_.size())};
    vocab_.push_back("<eos>");
    special_.assign(vocab_.size(), false);
    special_.back() = true;
  }
  void MarkSpecial(TokenId id) { special_[id] = true; }

  const std::string& id() const override { return id_; }
  const std::string& name() const override { return id_; }
  TokenizerKind kind() const override { return TokenizerKind::kByteLevelBpe; }
  size_t vocab_size() const override { return vocab_.size(); }
  std::string_view token_bytes(TokenId id) const override { return vocab_[id]; }
  bool is_special(TokenId id) const override { return special_[id]; }
  const std::vector<TokenId>& eos_ids() const override { return eos_; }
  std::vector<TokenId> Encode(std::string_view text) const override {
    std::vector<TokenId> out;
    while (!text.empty()) {
      size_t best_len = 0;
      TokenId best = 0;
      for (TokenId t = 0; t < vocab_.size(); ++t) {
        if (special_[t] || vocab_[t].empty() || vocab_[t].size() <= best_len) continue;
        if (text.substr(0, vocab_[t].size()) == vocab_[t]) best = t, best_len = vocab_[t].size();
      }
      if (best_len == 0) return out;  // not encodable: tests give encodable text
      out.push_back(best);
      text.remove_prefix(best_len);
    }
    return out;
  }
  std::string Decode(std::span<const TokenId> ids) const override {
    std::string out;
    for (TokenId t : ids) out += vocab_[t];
    return out;
  }

 private:
  std::vector<std::string> vocab_;
  std::vector<bool> special_;
  std::vector<TokenId> eos_;
  std::string id_;
};

}  // namespace maskd::testing

#endif  // MASKD_TESTS_SUPPORT_SMALL_VOCAB_TOKENIZER_H_
