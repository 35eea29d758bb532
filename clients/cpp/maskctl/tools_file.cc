// maskctl tools: reading a tools file into a tool_calls spec. The JSON is
// read with the engine's JSON reader (maskctl already links the engine's
// tokenizer; this adds its JSON value parser, not the front ends' logic).
#include "absl/strings/str_cat.h"
#include "clients/cpp/maskctl/spec_file.h"
#include "clients/cpp/spec.h"
#include "compiler/json_schema/json_value.h"

namespace maskd::maskctl {
namespace {

using json_schema::JsonValue;

const JsonValue* Member(const JsonValue& object, std::string_view key) {
  if (object.kind() != JsonValue::Kind::kObject) return nullptr;
  for (const auto& [k, v] : object.members()) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<v1::ConstraintSpec> ReadToolsFile(const std::string& path, const std::string& format,
                                                 bool require_call, bool single_call) {
  v1::ToolCallFormat wire_format;
  if (format == "llama3_json") {
    wire_format = v1::TOOL_CALL_FORMAT_LLAMA3_JSON;
  } else if (format == "qwen3") {
    wire_format = v1::TOOL_CALL_FORMAT_QWEN3;
  } else if (format == "harmony") {
    wire_format = v1::TOOL_CALL_FORMAT_HARMONY;
  } else if (format == "llama3_python_tag") {
    wire_format = v1::TOOL_CALL_FORMAT_LLAMA3_PYTHON_TAG;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown --format '", format, "' (llama3_json, llama3_python_tag, qwen3 or harmony)"));
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<JsonValue> doc = json_schema::ParseJsonValue(*text);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not JSON: ", std::string(doc.status().message())));
  }
  if (doc->kind() != JsonValue::Kind::kArray) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected an array of tools"));
  }
  std::vector<client::ToolDef> tools;
  for (size_t i = 0; i < doc->items().size(); ++i) {
    const JsonValue* tool = &doc->items()[i];
    if (const JsonValue* function = Member(*tool, "function")) tool = function;
    const JsonValue* name = Member(*tool, "name");
    if (name == nullptr || name->kind() != JsonValue::Kind::kString) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tool ", i, " has no string \"name\""));
    }
    const JsonValue* parameters = Member(*tool, "parameters");
    tools.push_back({name->string(), parameters == nullptr ? "" : parameters->ToJson()});
  }
  return client::ToolCallsSpec(wire_format, tools, require_call, single_call);
}

}  // namespace maskd::maskctl
