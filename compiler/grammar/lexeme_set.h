// A dense bitset over the lexeme ids of one grammar: the parser's answer to
// "which lexemes may come next", and the lexer's input for which lexemes to
// run. Dense because grammars have at most a few thousand lexemes and the hot
// operations (Contains, union, equality) are then a few word operations.
#ifndef MASKD_COMPILER_GRAMMAR_LEXEME_SET_H_
#define MASKD_COMPILER_GRAMMAR_LEXEME_SET_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/grammar/heap_bytes.h"

namespace maskd {

// Index of a lexeme (terminal) in a built Grammar, dense from 0.
using LexemeId = uint32_t;

class LexemeSet {
 public:
  LexemeSet() = default;
  // An empty set able to hold ids [0, universe_size).
  explicit LexemeSet(size_t universe_size)
      : universe_size_(universe_size), words_((universe_size + 63) / 64, 0) {}

  size_t universe_size() const { return universe_size_; }

  bool Contains(LexemeId id) const {
    return id < universe_size_ && ((words_[id >> 6] >> (id & 63)) & 1) != 0;
  }
  // `id` must be below universe_size().
  void Insert(LexemeId id) { words_[id >> 6] |= uint64_t{1} << (id & 63); }
  void Erase(LexemeId id) { words_[id >> 6] &= ~(uint64_t{1} << (id & 63)); }
  void Clear() {
    for (uint64_t& w : words_) w = 0;
  }
  // Both sets must have the same universe.
  void UnionWith(const LexemeSet& other) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  }
  void IntersectWith(const LexemeSet& other) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
  }
  bool Intersects(const LexemeSet& other) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      if ((words_[i] & other.words_[i]) != 0) return true;
    }
    return false;
  }

  bool Empty() const {
    for (uint64_t w : words_) {
      if (w != 0) return false;
    }
    return true;
  }
  size_t Count() const {
    size_t n = 0;
    for (uint64_t w : words_) n += static_cast<size_t>(std::popcount(w));
    return n;
  }

  // Calls f(LexemeId) for every member in increasing order.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      uint64_t w = words_[i];
      while (w != 0) {
        f(static_cast<LexemeId>(i * 64 + static_cast<size_t>(std::countr_zero(w))));
        w &= w - 1;
      }
    }
  }
  std::vector<LexemeId> ToVector() const {
    std::vector<LexemeId> out;
    ForEach([&](LexemeId id) { out.push_back(id); });
    return out;
  }

  const std::vector<uint64_t>& words() const { return words_; }
  // The heap its words take (heap_bytes.h).
  size_t HeapBytes() const { return VectorHeapBytes(words_); }

  friend bool operator==(const LexemeSet& a, const LexemeSet& b) {
    return a.universe_size_ == b.universe_size_ && a.words_ == b.words_;
  }
  template <typename H>
  friend H AbslHashValue(H h, const LexemeSet& s) {
    return H::combine(std::move(h), s.universe_size_, s.words_);
  }

 private:
  size_t universe_size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_LEXEME_SET_H_
