// Puts a packed token bitmask on the wire as the smallest of the three
// encodings of session.proto (bitmask, allow list, deny list) or as the one
// the client asked for.
#ifndef MASKD_SERVICE_MASK_ENCODING_H_
#define MASKD_SERVICE_MASK_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "maskd/v1/session.pb.h"

namespace maskd {

// What EncodeMask chose and what it costs on the wire.
struct EncodedMaskInfo {
  v1::MaskEncoding encoding = v1::MASK_ENCODING_BITMASK;
  // Bytes of the encoding's payload (packed words or varint ids).
  size_t payload_bytes = 0;
  uint32_t allowed_count = 0;
};

// `words` holds (vocab_size + 31) / 32 words, bit i of words[i / 32] = token
// i, no bits at or above vocab_size. `wanted` AUTO picks the smallest payload
// (bitmask on ties, then allow list).
EncodedMaskInfo EncodeMask(std::span<const uint32_t> words, uint32_t vocab_size,
                           v1::MaskEncoding wanted, v1::Mask* mask);

// The bitmask a Mask stands for, whatever its encoding (for tests and
// clients): (vocab_size + 31) / 32 words.
std::vector<uint32_t> DecodeMask(const v1::Mask& mask);

}  // namespace maskd

#endif  // MASKD_SERVICE_MASK_ENCODING_H_
