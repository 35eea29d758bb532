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

// What each encoding of one mask would cost, without building any.
struct MaskAnalysis {
  uint32_t allowed_count = 0;
  size_t bitmask_bytes = 0;
  size_t allow_bytes = 0;  // varint bytes of the allowed ids
  size_t deny_bytes = 0;   // varint bytes of the disallowed ids

  // The encoding `wanted` stands for: AUTO picks the smallest payload
  // (bitmask on ties, then allow list).
  v1::MaskEncoding Choose(v1::MaskEncoding wanted) const;
  size_t PayloadBytes(v1::MaskEncoding chosen) const;
};

// `words` holds (vocab_size + 31) / 32 words, bit i of words[i / 32] = token
// i, no bits at or above vocab_size.
MaskAnalysis AnalyzeMask(std::span<const uint32_t> words, uint32_t vocab_size);

// Sets `mask` (vocab_size, allowed_count, the chosen encoding) from `words`
// as above. `wanted` AUTO picks the smallest payload (bitmask on ties, then
// allow list).
EncodedMaskInfo EncodeMask(std::span<const uint32_t> words, uint32_t vocab_size,
                           v1::MaskEncoding wanted, v1::Mask* mask);
// The same with the analysis already done.
EncodedMaskInfo EncodeMask(std::span<const uint32_t> words, uint32_t vocab_size,
                           const MaskAnalysis& analysis, v1::MaskEncoding wanted, v1::Mask* mask);

// The bitmask a Mask stands for, whatever its encoding (for tests and
// clients): (vocab_size + 31) / 32 words. A dictionary_ref decodes to no bits
// set (the dictionary is the stream's, not the message's).
std::vector<uint32_t> DecodeMask(const v1::Mask& mask);

namespace mask_encoding_internal {
// Set bits of words[0, n): by POPCNT where the CPU has it, else by the
// portable bit trick; and the portable path alone (for tests: a machine
// with POPCNT never takes it otherwise).
size_t CountSetBits(const uint32_t* words, size_t n);
size_t CountSetBitsPortable(const uint32_t* words, size_t n);
}  // namespace mask_encoding_internal

}  // namespace maskd

#endif  // MASKD_SERVICE_MASK_ENCODING_H_
