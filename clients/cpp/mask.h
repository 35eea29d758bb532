// Token masks as the server sends them (maskd.v1.Mask: a packed bitmask, an
// allow list or a deny list, whichever the server picked) decoded into the one
// form inference engines apply: a packed bitmask, bit (i % 32) of word i / 32
// set iff token i is allowed.
#ifndef MASKD_CLIENTS_CPP_MASK_H_
#define MASKD_CLIENTS_CPP_MASK_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "maskd/v1/session.pb.h"

namespace maskd::client {

using TokenId = uint32_t;

// A decoded mask. Immutable after Decode; safe to share across threads.
class TokenMask {
 public:
  // Checks the mask against its own contract (vocab_size > 0, a bitmask of
  // exactly ceil(vocab_size / 32) words with no bits past vocab_size, lists
  // strictly ascending and below vocab_size, allowed_count matching) so a
  // corrupt mask is an error naming the offending field, never a wrong bit.
  // A dictionary_ref is InvalidArgument here: SequenceResult resolves it.
  static absl::StatusOr<TokenMask> Decode(const v1::Mask& mask);

  uint32_t vocab_size() const { return vocab_size_; }
  // ceil(vocab_size / 32) words.
  std::span<const uint32_t> words() const { return words_; }
  bool Allows(TokenId token) const {
    return token < vocab_size_ && ((words_[token / 32] >> (token % 32)) & 1u) != 0;
  }
  uint32_t allowed_count() const { return allowed_count_; }
  // The allowed ids, ascending.
  std::vector<TokenId> AllowedTokens() const;

 private:
  TokenMask(uint32_t vocab_size, std::vector<uint32_t> words, uint32_t allowed_count)
      : vocab_size_(vocab_size), words_(std::move(words)), allowed_count_(allowed_count) {}

  uint32_t vocab_size_;
  std::vector<uint32_t> words_;
  uint32_t allowed_count_;
};

// Tests one token straight on the wire form, without decoding the whole mask
// (binary search in the lists). Assumes a well-formed mask; false when no
// encoding is set or the mask is a dictionary_ref (SequenceResult::Allows
// resolves those).
bool MaskAllows(const v1::Mask& mask, TokenId token);

// Bytes the mask takes in its serialized message (what it costs on the wire,
// framing of the enclosing field excluded).
size_t MaskWireBytes(const v1::Mask& mask);

// "bitmask", "allow_list", "deny_list", "dictionary_ref" or "none".
const char* MaskEncodingName(const v1::Mask& mask);

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_MASK_H_
