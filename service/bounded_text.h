// User input echoed in error messages, made safe for the wire: valid UTF-8
// (a proto3 string that is not fails to serialize, and the client then sees
// INTERNAL with no message) and bounded (a 500 KB property name echoed whole
// overflowed gRPC's metadata limit: "metadata size exceeds limit").
#ifndef MASKD_SERVICE_BOUNDED_TEXT_H_
#define MASKD_SERVICE_BOUNDED_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

namespace maskd {

// Longest error message maskd sends (bytes, before the suffix that says how
// long the whole message was).
inline constexpr size_t kMaxErrorMessageBytes = 1024;

// Offset of the first byte of `text` that is not part of a well-formed UTF-8
// character (RFC 3629: no overlongs, no surrogates, at most U+10FFFF), or
// nullopt when all of it is valid.
std::optional<size_t> FirstInvalidUtf8(absl::string_view text);

// `text` with each byte that is not part of valid UTF-8 written as \xNN, cut
// at a character boundary to at most `max_bytes` bytes plus
// " ... [N bytes in all]" when longer.
std::string BoundedText(absl::string_view text, size_t max_bytes = kMaxErrorMessageBytes);

}  // namespace maskd

#endif  // MASKD_SERVICE_BOUNDED_TEXT_H_
