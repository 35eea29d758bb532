// What a buffer costs on the heap, for the memory budget's per-sequence
// charge (Matcher::MemoryBytes): glibc malloc puts an 8-byte header before
// each block, rounds it up to 16 bytes and hands out at least 32, so a
// sequence made of many small vectors holds noticeably more than the sum of
// their capacities (session_memory_test measures the charge against
// mallinfo2).
#ifndef MASKD_COMPILER_GRAMMAR_HEAP_BYTES_H_
#define MASKD_COMPILER_GRAMMAR_HEAP_BYTES_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace maskd {

// The heap taken by one allocation of `bytes` (0 for none).
inline size_t MallocBlockBytes(size_t bytes) {
  if (bytes == 0) return 0;
  return std::max<size_t>(32, (bytes + 8 + 15) & ~size_t{15});
}

// The heap a vector's buffer takes (not what its elements own).
template <typename T>
size_t VectorHeapBytes(const std::vector<T>& v) {
  return MallocBlockBytes(v.capacity() * sizeof(T));
}

}  // namespace maskd

#endif  // MASKD_COMPILER_GRAMMAR_HEAP_BYTES_H_
