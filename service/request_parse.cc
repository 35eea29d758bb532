#include "service/request_parse.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/unknown_field_set.h"
#include "grpcpp/support/slice.h"
#include "service/bounded_text.h"

namespace maskd {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// Deepest message nesting walked (the request protos nest a few levels).
constexpr int kMaxDepth = 32;

// The first string field under `type` (encoded in `bytes`) whose value is not
// valid UTF-8, as "path: invalid UTF-8 at byte N of its M"; nullopt when
// there is none or the bytes do not decode at all.
std::optional<std::string> FindInvalidUtf8(const Descriptor& type, std::string_view bytes,
                                           const std::string& prefix, int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  UnknownFieldSet fields;
  if (!fields.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return std::nullopt;
  absl::flat_hash_map<int, int> seen;  // field number -> occurrences so far
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& field = fields.field(i);
    const int index = seen[field.number()]++;
    if (field.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    const FieldDescriptor* descriptor = type.FindFieldByNumber(field.number());
    if (descriptor == nullptr) continue;
    std::string path = prefix.empty() ? descriptor->name() : prefix + "." + descriptor->name();
    if (descriptor->is_repeated()) absl::StrAppend(&path, "[", index, "]");
    const std::string& value = field.length_delimited();
    if (descriptor->type() == FieldDescriptor::TYPE_STRING) {
      if (std::optional<size_t> bad = FirstInvalidUtf8(value)) {
        return absl::StrCat(path, " holds invalid UTF-8 at byte ", *bad, " of its ", value.size(),
                            " (protobuf string fields must be UTF-8; send bytes as valid text)");
      }
    } else if (descriptor->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (std::optional<std::string> found =
              FindInvalidUtf8(*descriptor->message_type(), value, path, depth + 1)) {
        return found;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

absl::Status ParseRequest(std::string_view bytes, google::protobuf::Message* message) {
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::OkStatus();
  }
  const std::string type = message->GetDescriptor()->name();
  if (std::optional<std::string> utf8 = FindInvalidUtf8(*message->GetDescriptor(), bytes, "", 0)) {
    return absl::InvalidArgumentError(absl::StrCat("the ", type, " could not be parsed: ", *utf8));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("the ", type, " (", bytes.size(), " bytes) is not a valid protobuf encoding"));
}

absl::Status ParseRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* message) {
  grpc::Slice slice;
  if (!buffer.DumpToSingleSlice(&slice).ok()) {
    return absl::InvalidArgumentError("the request could not be read");
  }
  return ParseRequest(std::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size()),
                      message);
}

void SerializeResponse(const google::protobuf::Message& message, grpc::ByteBuffer* buffer) {
  // Straight into one slice: a response may hold megabytes of masks.
  const size_t size = message.ByteSizeLong();
  grpc::Slice slice(size);
  message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  *buffer = grpc::ByteBuffer(&slice, 1);
}

}  // namespace maskd
