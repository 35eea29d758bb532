// Where in a spec an error is, carried by the absl::Status itself as payloads
// set where the error is made, so that no reader has to search the message
// text. The service copies them into CompileResponse.error.location
// (service/spec_error.cc); the compile cache keeps payloads with the error.
//
//   maskd/json-pointer  the JSON pointer of the schema part at fault, as the
//                       message writes it ("/" for the whole schema)
//   maskd/byte-offset   an offset into a regex pattern, decimal
//   maskd/line-column   "LINE:COLUMN" into a grammar, both from 1
//
// Attaching a location again replaces the earlier one: an error wrapped by an
// outer part of the spec names the outer part.
#ifndef MASKD_COMPILER_ERRORS_SPEC_LOCATION_H_
#define MASKD_COMPILER_ERRORS_SPEC_LOCATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace maskd {

inline constexpr char kJsonPointerPayload[] = "maskd/json-pointer";
inline constexpr char kByteOffsetPayload[] = "maskd/byte-offset";
inline constexpr char kLineColumnPayload[] = "maskd/line-column";

// `status` with the JSON pointer attached (an OK status stays as it is).
inline absl::Status WithJsonPointer(absl::Status status, std::string_view pointer) {
  if (!status.ok()) status.SetPayload(kJsonPointerPayload, absl::Cord(std::string(pointer)));
  return status;
}

inline absl::Status WithByteOffset(absl::Status status, uint64_t offset) {
  if (!status.ok()) status.SetPayload(kByteOffsetPayload, absl::Cord(absl::StrCat(offset)));
  return status;
}

inline absl::Status WithLineColumn(absl::Status status, uint32_t line, uint32_t column) {
  if (!status.ok()) {
    status.SetPayload(kLineColumnPayload, absl::Cord(absl::StrCat(line, ":", column)));
  }
  return status;
}

inline std::optional<std::string> JsonPointerOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kJsonPointerPayload);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

inline std::optional<uint64_t> ByteOffsetOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kByteOffsetPayload);
  uint64_t offset = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &offset)) {
    return std::nullopt;
  }
  return offset;
}

// (line, column), both from 1.
inline std::optional<std::pair<uint32_t, uint32_t>> LineColumnOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kLineColumnPayload);
  if (!payload.has_value()) return std::nullopt;
  const std::string text(*payload);
  const size_t colon = text.find(':');
  uint32_t line = 0, column = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(text.substr(0, colon), &line) ||
      !absl::SimpleAtoi(text.substr(colon + 1), &column)) {
    return std::nullopt;
  }
  return std::make_pair(line, column);
}

}  // namespace maskd

#endif  // MASKD_COMPILER_ERRORS_SPEC_LOCATION_H_
