// A set of bytes as a 256-bit bitmap: the alphabet unit of the regex engine
// (every terminal is a regex over bytes; code points are expanded to UTF-8).
#ifndef MASKD_COMPILER_REGEX_BYTE_SET_H_
#define MASKD_COMPILER_REGEX_BYTE_SET_H_

#include <array>
#include <bit>
#include <cstdint>

namespace maskd::regex {

class ByteSet {
 public:
  constexpr ByteSet() = default;

  static constexpr ByteSet All() {
    ByteSet s;
    for (auto& w : s.words_) w = ~uint64_t{0};
    return s;
  }
  static constexpr ByteSet Single(uint8_t b) {
    ByteSet s;
    s.Add(b);
    return s;
  }
  // The bytes lo..hi inclusive (empty when lo > hi).
  static constexpr ByteSet Range(uint8_t lo, uint8_t hi) {
    ByteSet s;
    for (int b = lo; b <= hi; ++b) s.Add(static_cast<uint8_t>(b));
    return s;
  }

  constexpr void Add(uint8_t b) { words_[b >> 6] |= uint64_t{1} << (b & 63); }
  constexpr void Remove(uint8_t b) { words_[b >> 6] &= ~(uint64_t{1} << (b & 63)); }
  constexpr bool Contains(uint8_t b) const { return (words_[b >> 6] >> (b & 63)) & 1; }
  constexpr bool Empty() const { return (words_[0] | words_[1] | words_[2] | words_[3]) == 0; }
  constexpr bool IsAll() const {
    return (words_[0] & words_[1] & words_[2] & words_[3]) == ~uint64_t{0};
  }
  constexpr int Count() const {
    return std::popcount(words_[0]) + std::popcount(words_[1]) + std::popcount(words_[2]) +
           std::popcount(words_[3]);
  }

  constexpr ByteSet operator|(const ByteSet& o) const {
    ByteSet r;
    for (int i = 0; i < 4; ++i) r.words_[i] = words_[i] | o.words_[i];
    return r;
  }
  constexpr ByteSet operator&(const ByteSet& o) const {
    ByteSet r;
    for (int i = 0; i < 4; ++i) r.words_[i] = words_[i] & o.words_[i];
    return r;
  }
  constexpr ByteSet operator~() const {
    ByteSet r;
    for (int i = 0; i < 4; ++i) r.words_[i] = ~words_[i];
    return r;
  }
  constexpr ByteSet& operator|=(const ByteSet& o) { return *this = *this | o; }
  constexpr ByteSet& operator&=(const ByteSet& o) { return *this = *this & o; }
  friend constexpr bool operator==(const ByteSet&, const ByteSet&) = default;

  const std::array<uint64_t, 4>& words() const { return words_; }

  template <typename H>
  friend H AbslHashValue(H h, const ByteSet& s) {
    return H::combine(std::move(h), s.words_);
  }

 private:
  std::array<uint64_t, 4> words_{};
};

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_BYTE_SET_H_
