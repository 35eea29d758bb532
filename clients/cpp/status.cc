#include "clients/cpp/status.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace maskd::client {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::Status ErrorToStatus(const v1::Error& error) {
  // Code 0 on an Error would be a server bug; never turn it into success.
  const absl::StatusCode code =
      error.code() == 0 ? absl::StatusCode::kUnknown : static_cast<absl::StatusCode>(error.code());
  absl::Status status(code, error.message());
  if (error.has_location()) {
    status.SetPayload(kSourceLocationPayload, absl::Cord(error.location().SerializeAsString()));
  }
  return status;
}

std::optional<v1::SourceLocation> SourceLocationOf(const absl::Status& status) {
  auto payload = status.GetPayload(kSourceLocationPayload);
  if (!payload) return std::nullopt;
  v1::SourceLocation location;
  if (!location.ParseFromString(std::string(*payload))) return std::nullopt;
  return location;
}

std::string DescribeLocation(const v1::SourceLocation& location) {
  switch (location.where_case()) {
    case v1::SourceLocation::kJsonPointer:
      // The root pointer is the empty string; show it as "/" would be wrong
      // (that names the key ""), so say what it is.
      return location.json_pointer().empty() ? "the schema root" : location.json_pointer();
    case v1::SourceLocation::kText:
      return absl::StrCat("line ", location.text().line(), ", column ", location.text().column(),
                          " (byte ", location.text().byte_offset(), ")");
    case v1::SourceLocation::WHERE_NOT_SET:
      break;
  }
  return "";
}

}  // namespace maskd::client
