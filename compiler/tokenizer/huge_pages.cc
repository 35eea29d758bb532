#include "compiler/tokenizer/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace maskd::tokenizer_internal {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

void* MapHugePages(size_t bytes) {
  // Over-map by one huge page and trim, so the block starts on a 2 MiB
  // boundary: only aligned 2 MiB ranges can be huge pages.
  const size_t size = RoundUp(bytes, kHugePage);
  const size_t reserve = size + kHugePage;
  void* raw = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = RoundUp(start, kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = aligned + size;
  if (start + reserve > end) munmap(reinterpret_cast<void*>(end), start + reserve - end);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, size, MADV_HUGEPAGE);
  return block;
}

void FreeHugePages(void* pointer, size_t bytes) {
  if (pointer != nullptr) munmap(pointer, RoundUp(bytes, kHugePage));
}

}  // namespace maskd::tokenizer_internal
