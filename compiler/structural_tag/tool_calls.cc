#include "compiler/structural_tag/tool_calls.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/json_schema/json_value.h"

namespace maskd {
namespace {

using json_schema::JsonValue;

std::string Quoted(const std::string& s) {
  std::string out;
  json_schema::AppendJsonString(s, &out);
  return out;
}

// {"type":"const_string","value":S}
std::string Const(const std::string& s) {
  return absl::StrCat(R"({"type":"const_string","value":)", Quoted(s), "}");
}

std::string Schema(const std::string& schema_json) {
  return absl::StrCat(R"({"type":"json_schema","json_schema":)", schema_json, "}");
}

}  // namespace

absl::StatusOr<std::string> ToolCallStructuralTag(const std::vector<ToolSpec>& tools,
                                                  ToolCallFormat format,
                                                  const ToolCallOptions& options) {
  if (tools.empty()) return absl::InvalidArgumentError("tool_calls: no tools");
  std::set<std::string> names;
  std::vector<std::string> schemas;
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolSpec& tool = tools[i];
    if (tool.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("tool_calls: tools[", i, "] has no name"));
    }
    if (!names.insert(tool.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool_calls: tools[", i, "] repeats the name ", Quoted(tool.name)));
    }
    const std::string schema =
        tool.parameters_schema.empty() ? R"({"type":"object"})" : tool.parameters_schema;
    // Re-serialized: the embedding below must not be broken by bad JSON.
    absl::StatusOr<JsonValue> parsed = json_schema::ParseJsonValue(schema);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool_calls: tools[", i, "] (", tool.name,
                       ") parameters: ", std::string(parsed.status().message())));
    }
    schemas.push_back(parsed->ToJson());
  }
  const std::string flags =
      absl::StrCat(R"("at_least_one":)", options.require_call ? "true" : "false",
                   R"(,"stop_after_first":)", options.single_call ? "true" : "false");
  switch (format) {
    case ToolCallFormat::kLlama3Json: {
      // One call, the whole output: {"name": "NAME", "parameters": ARGS}.
      std::string branches;
      for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) branches += ",";
        branches += absl::StrCat(
            R"({"type":"sequence","elements":[)",
            Const(absl::StrCat(R"({"name": )", Quoted(tools[i].name), R"(, "parameters": )")), ",",
            Schema(schemas[i]), ",", Const("}"), "]}");
      }
      return absl::StrCat(R"({"type":"structural_tag","format":{"type":"or","elements":[)",
                          branches, "]}}");
    }
    case ToolCallFormat::kQwen3: {
      std::string tags;
      for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) tags += ",";
        tags += absl::StrCat(R"({"type":"tag","begin":)",
                             Quoted(absl::StrCat("<tool_call>\n{\"name\": ", Quoted(tools[i].name),
                                                 ", \"arguments\": ")),
                             R"(,"content":)", Schema(schemas[i]), R"(,"end":)",
                             Quoted("}\n</tool_call>"), "}");
      }
      return absl::StrCat(
          R"({"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<tool_call>"],"tags":[)",
          tags, "],", flags, "}}");
    }
    case ToolCallFormat::kLlama3PythonTag: {
      std::string branches;
      for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) branches += ",";
        branches += absl::StrCat(R"({"type":"sequence","elements":[)",
                                 Const(absl::StrCat(R"(<|python_tag|>{"name": )",
                                                    Quoted(tools[i].name), R"(, "parameters": )")),
                                 ",", Schema(schemas[i]), ",", Const("}"), "]}");
      }
      if (!options.require_call) branches += R"(,{"type":"any_text"})";
      return absl::StrCat(R"({"type":"structural_tag","special_tokens":["<|python_tag|>"],)",
                          R"("format":{"type":"or","elements":[)", branches, "]}}");
    }
    case ToolCallFormat::kHarmony: {
      // One assistant message after <|start|>assistant: a call on the
      // commentary channel, or (unless a call is required) a final answer.
      // The special tokens in these strings become token terminals when
      // compiled for the gpt-oss tokenizer (structural_tag.h).
      std::string branches;
      for (size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) branches += ",";
        branches +=
            absl::StrCat(R"({"type":"sequence","elements":[)",
                         Const(absl::StrCat("<|channel|>commentary to=functions.", tools[i].name,
                                            " <|constrain|>json<|message|>")),
                         ",", Schema(schemas[i]), ",", Const("<|call|>"), "]}");
      }
      if (!options.require_call) {
        branches += absl::StrCat(R"(,{"type":"sequence","elements":[)",
                                 Const("<|channel|>final<|message|>"), R"(,{"type":"any_text"}]})");
      }
      return absl::StrCat(
          R"({"type":"structural_tag","special_tokens":["<|channel|>","<|constrain|>",)",
          R"("<|message|>","<|call|>"],"format":{"type":"or","elements":[)", branches, "]}}");
    }
  }
  return absl::InvalidArgumentError("tool_calls: unknown format");
}

}  // namespace maskd
