// Memory for the tokenizer's large tables in 2 MiB pages.
//
// A server's first tokenizer load runs on fresh memory, and on the VMs maskd
// runs on each first touch of a 4 KiB page costs 10-25 us (a 9 MB tokenizer
// touched ~18,000 of them: about half of its load time). Large blocks are
// mapped on their own, aligned to 2 MiB, with MADV_HUGEPAGE, so a fault
// brings in 512 pages at once. The kernel may still hand out small pages (THP
// off, no free huge page): the advice is only about speed.
#ifndef MASKD_COMPILER_TOKENIZER_HUGE_PAGES_H_
#define MASKD_COMPILER_TOKENIZER_HUGE_PAGES_H_

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <string>

namespace maskd::tokenizer_internal {

// Blocks of at least this many bytes get their own huge-page mapping;
// smaller ones come from operator new.
inline constexpr size_t kHugePageThreshold = size_t{1} << 20;

// Zeroed memory for `bytes` (>= kHugePageThreshold) bytes; nullptr when the
// mapping fails. Release it with FreeHugePages(pointer, bytes).
void* MapHugePages(size_t bytes);
void FreeHugePages(void* pointer, size_t bytes);

// A stateless allocator for containers that grow large (hash maps of the
// vocabulary and merges, per-token arrays): huge pages for blocks of at least
// kHugePageThreshold bytes, operator new below.
template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageThreshold) return std::allocator<T>().allocate(n);
    void* block = MapHugePages(bytes);
    if (block == nullptr) throw std::bad_alloc();
    return static_cast<T*>(block);
  }

  void deallocate(T* pointer, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageThreshold) {
      std::allocator<T>().deallocate(pointer, n);
    } else {
      FreeHugePages(pointer, bytes);
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

using HugePageString = std::basic_string<char, std::char_traits<char>, HugePageAllocator<char>>;

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_HUGE_PAGES_H_
