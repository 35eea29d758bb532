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

// gpt-oss harmony after the prompt's `<|start|>assistant`: messages, each
// opened by `<|start|>assistant` but the first. A call names its recipient
// in the channel (`<|channel|>commentary to=functions.NAME <|constrain|>json
// <|message|>ARGS<|call|>`) or in the role header (` to=functions.NAME
// <|channel|>commentary <|constrain|>json<|message|>ARGS<|call|>`), and may
// come after one analysis message (`<|channel|>analysis<|message|>TEXT
// <|end|>`); calls follow one another unless single_call. Without a required
// call the output may instead be a final answer (`<|channel|>final
// <|message|>TEXT`, after an analysis message or not). The special tokens
// become token terminals when compiled for the gpt-oss tokenizer.
std::string HarmonyTag(const std::vector<ToolSpec>& tools, const std::vector<std::string>& schemas,
                       const ToolCallOptions& options) {
  const std::string analysis = Const("<|channel|>analysis<|message|>");
  const std::string any_text = R"({"type":"any_text"})";
  auto header = [&](size_t i, bool in_role) {
    const std::string to = absl::StrCat("to=functions.", tools[i].name);
    return in_role ? absl::StrCat(" ", to, "<|channel|>commentary <|constrain|>json<|message|>")
                   : absl::StrCat("<|channel|>commentary ", to, " <|constrain|>json<|message|>");
  };
  // Every call without its <|call|>: a header and the tool's arguments.
  std::string calls;
  std::string tags;
  for (size_t i = 0; i < tools.size(); ++i) {
    for (bool in_role : {false, true}) {
      if (!calls.empty()) calls += ",";
      calls += absl::StrCat(R"({"type":"sequence","elements":[)", Const(header(i, in_role)), ",",
                            Schema(schemas[i]), "]}");
      tags += absl::StrCat(R"({"type":"tag","begin":)", Quoted(header(i, in_role)),
                           R"(,"content":)", Schema(schemas[i]), R"(,"end":"<|call|>"},)");
    }
  }
  // An analysis message, then any call.
  tags += absl::StrCat(R"({"type":"tag","begin":"<|channel|>analysis<|message|>",)",
                       R"("content":{"type":"sequence","elements":[)", any_text, ",",
                       Const("<|end|><|start|>assistant"), R"(,{"type":"or","elements":[)", calls,
                       R"(]}]},"end":"<|call|>"})");
  std::string branches = absl::StrCat(
      R"({"type":"tags_with_separator","separator":"<|start|>assistant","at_least_one":true,)",
      R"("stop_after_first":)", options.single_call ? "true" : "false", R"(,"tags":[)", tags, "]}");
  if (!options.require_call) {
    const std::string final_answer = Const("<|channel|>final<|message|>");
    branches +=
        absl::StrCat(R"(,{"type":"sequence","elements":[)", final_answer, ",", any_text, "]}");
    branches += absl::StrCat(R"(,{"type":"sequence","elements":[)", analysis, ",", any_text, ",",
                             Const("<|end|><|start|>assistant<|channel|>final<|message|>"), ",",
                             any_text, "]}");
  }
  return absl::StrCat(
      R"({"type":"structural_tag","special_tokens":["<|channel|>","<|start|>","<|end|>",)",
      R"("<|constrain|>","<|message|>","<|call|>"],"format":{"type":"or","elements":[)", branches,
      "]}}");
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
    case ToolCallFormat::kHarmony:
      return HarmonyTag(tools, schemas, options);
  }
  return absl::InvalidArgumentError("tool_calls: unknown format");
}

}  // namespace maskd
