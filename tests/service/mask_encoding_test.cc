// EncodeMask/DecodeMask: every encoding round-trips to the same bitmask, AUTO
// picks the smallest payload, and payload sizes are what goes on the wire.
#include "service/mask_encoding.h"

#include <bit>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace maskd {
namespace {

std::vector<uint32_t> RandomMask(uint32_t vocab_size, double density, std::mt19937& rng) {
  std::vector<uint32_t> words((vocab_size + 31) / 32, 0);
  std::bernoulli_distribution allowed(density);
  for (uint32_t id = 0; id < vocab_size; ++id) {
    if (allowed(rng)) words[id / 32] |= uint32_t{1} << (id % 32);
  }
  return words;
}

uint32_t PopCount(const std::vector<uint32_t>& words) {
  uint32_t count = 0;
  for (uint32_t w : words) count += std::popcount(w);
  return count;
}

TEST(MaskEncodingTest, EveryEncodingRoundTrips) {
  std::mt19937 rng(7);
  for (uint32_t vocab : {1u, 31u, 32u, 33u, 200u, 20000u, 128256u}) {
    for (double density : {0.0, 0.001, 0.5, 0.999, 1.0}) {
      const std::vector<uint32_t> words = RandomMask(vocab, density, rng);
      for (v1::MaskEncoding encoding :
           {v1::MASK_ENCODING_AUTO, v1::MASK_ENCODING_BITMASK, v1::MASK_ENCODING_ALLOW_LIST,
            v1::MASK_ENCODING_DENY_LIST}) {
        v1::Mask mask;
        const EncodedMaskInfo info = EncodeMask(words, vocab, encoding, &mask);
        EXPECT_EQ(DecodeMask(mask), words) << "vocab " << vocab << " density " << density;
        EXPECT_EQ(mask.allowed_count(), PopCount(words));
        EXPECT_EQ(info.allowed_count, PopCount(words));
        EXPECT_EQ(mask.vocab_size(), vocab);
        if (encoding != v1::MASK_ENCODING_AUTO) {
          EXPECT_EQ(info.encoding, encoding);
        }
      }
    }
  }
}

TEST(MaskEncodingTest, PayloadBytesAreTheWireBytesAndAutoPicksTheSmallest) {
  std::mt19937 rng(11);
  const uint32_t vocab = 128256;
  for (double density : {0.0001, 0.02, 0.5, 0.98, 0.9999}) {
    const std::vector<uint32_t> words = RandomMask(vocab, density, rng);
    size_t sizes[4] = {};
    const v1::MaskEncoding fixed[] = {v1::MASK_ENCODING_BITMASK, v1::MASK_ENCODING_ALLOW_LIST,
                                      v1::MASK_ENCODING_DENY_LIST};
    for (int i = 0; i < 3; ++i) {
      v1::Mask mask;
      const EncodedMaskInfo info = EncodeMask(words, vocab, fixed[i], &mask);
      sizes[i] = info.payload_bytes;
      // The payload is the packed field's data: the message adds only a few
      // bytes of tags and lengths.
      EXPECT_LE(info.payload_bytes, mask.ByteSizeLong());
      EXPECT_GE(info.payload_bytes + 16, mask.ByteSizeLong()) << "encoding " << fixed[i];
    }
    v1::Mask mask;
    const EncodedMaskInfo info = EncodeMask(words, vocab, v1::MASK_ENCODING_AUTO, &mask);
    EXPECT_EQ(info.payload_bytes, std::min({sizes[0], sizes[1], sizes[2]}));
  }
  // The typical cases of DESIGN.md: a handful allowed -> allow list; almost
  // everything -> deny list; both far below the 16 KiB bitmask.
  std::vector<uint32_t> few((vocab + 31) / 32, 0);
  few[0] = 0b1011;
  v1::Mask mask;
  EXPECT_EQ(EncodeMask(few, vocab, v1::MASK_ENCODING_AUTO, &mask).encoding,
            v1::MASK_ENCODING_ALLOW_LIST);
  EXPECT_EQ(mask.allow_list().token_ids_size(), 3);
  std::vector<uint32_t> most = few;
  for (uint32_t& w : most) w = ~w;
  if (vocab % 32 != 0) most.back() &= (uint32_t{1} << (vocab % 32)) - 1;
  v1::Mask deny;
  EXPECT_EQ(EncodeMask(most, vocab, v1::MASK_ENCODING_AUTO, &deny).encoding,
            v1::MASK_ENCODING_DENY_LIST);
  EXPECT_EQ(deny.deny_list().token_ids_size(), 3);
}

// Both ways of counting set bits agree with bit-by-bit counting, over odd
// and even lengths and every density (this machine has POPCNT, so the
// portable path runs only here).
TEST(MaskEncodingTest, PortableBitCountMatchesPopcount) {
  std::mt19937 rng(17);
  for (size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 4009u}) {
    for (uint32_t density : {0u, 1u, 16u, 31u, 32u}) {
      std::vector<uint32_t> words(n);
      size_t expected = 0;
      for (uint32_t& w : words) {
        for (int b = 0; b < 32; ++b) {
          if (rng() % 32 < density) w |= uint32_t{1} << b;
        }
        for (int b = 0; b < 32; ++b) expected += (w >> b) & 1;
      }
      EXPECT_EQ(mask_encoding_internal::CountSetBitsPortable(words.data(), n), expected)
          << n << " words, density " << density;
      EXPECT_EQ(mask_encoding_internal::CountSetBits(words.data(), n), expected)
          << n << " words, density " << density;
    }
  }
}

}  // namespace
}  // namespace maskd
