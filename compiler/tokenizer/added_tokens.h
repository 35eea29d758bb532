// Added tokens (special or not) are cut out of the text before anything else
// runs: leftmost-longest match of their exact contents, as the JavaScript
// reference's DictionarySplitter and HuggingFace's aho-corasick both do.
#ifndef MASKD_COMPILER_TOKENIZER_ADDED_TOKENS_H_
#define MASKD_COMPILER_TOKENIZER_ADDED_TOKENS_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/tokenizer/tokenizer.h"

namespace maskd::tokenizer_internal {

struct AddedToken {
  TokenId id;
  std::string content;
  bool special = false;
  bool lstrip = false;  // Whitespace before it is dropped.
  bool rstrip = false;  // Whitespace after it is dropped.
};

// A section of the input: either an added token or text to tokenize.
struct Section {
  std::string_view text;
  std::optional<TokenId> added;
};

class AddedTokenSplitter {
 public:
  AddedTokenSplitter() = default;
  explicit AddedTokenSplitter(const std::vector<AddedToken>& tokens);

  // Cuts `text` (valid UTF-8) into sections, applying lstrip/rstrip.
  std::vector<Section> Split(std::string_view text) const;

 private:
  struct Match {
    size_t length;
    size_t token;  // Index into tokens_.
  };
  std::optional<Match> LongestAt(std::string_view text, size_t pos) const;

  struct TokenInfo {
    TokenId id;
    bool lstrip;
    bool rstrip;
  };
  std::vector<TokenInfo> tokens_;
  // Byte trie: (node << 8 | byte) -> child node; node 0 is the root.
  absl::flat_hash_map<uint64_t, uint32_t> children_;
  // Node -> index into tokens_ + 1 of the token ending there, or 0.
  std::vector<uint32_t> terminal_;
  std::bitset<256> first_bytes_;
};

// JavaScript's String.prototype.trimStart/trimEnd on UTF-8.
std::string_view TrimJsSpaceStart(std::string_view text);
std::string_view TrimJsSpaceEnd(std::string_view text);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_ADDED_TOKENS_H_
