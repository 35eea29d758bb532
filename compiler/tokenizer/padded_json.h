// A JSON document in memory followed by the zero padding simdjson's
// On-Demand parser requires (SIMDJSON_PADDING readable bytes past the end).
//
// Large documents (tokenizer.json is 9-28 MB) live in huge pages
// (huge_pages.h): a 9 MB buffer in 4 KiB pages costs 2,200 page faults.
#ifndef MASKD_COMPILER_TOKENIZER_PADDED_JSON_H_
#define MASKD_COMPILER_TOKENIZER_PADDED_JSON_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace maskd::tokenizer_internal {

class PaddedJson {
 public:
  // Copies `text`.
  static PaddedJson Copy(std::string_view text);
  // Reads the whole file. NotFound "cannot open PATH: missing file" when it
  // cannot be opened, DataLoss "error reading PATH" when reading fails.
  static absl::StatusOr<PaddedJson> ReadFile(const std::string& path);

  PaddedJson(PaddedJson&& other) noexcept;
  PaddedJson& operator=(PaddedJson&& other) noexcept;
  PaddedJson(const PaddedJson&) = delete;
  PaddedJson& operator=(const PaddedJson&) = delete;
  ~PaddedJson();

  std::string_view text() const { return {data_, size_}; }
  // Readable bytes from text().data(): text().size() plus the padding.
  size_t capacity() const { return capacity_; }

 private:
  // Room for `size` bytes plus padding, zero-filled.
  explicit PaddedJson(size_t size);

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool mapped_ = false;  // From MapHugePages, not new[].
};

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_PADDED_JSON_H_
