// Ready-made structural tags for tool calling: from a list of tools (name +
// JSON Schema of the parameters), the structural tag that lets a model of
// one family write free text and tool calls in its own syntax, each call's
// arguments valid against its tool's schema.
#ifndef MASKD_COMPILER_STRUCTURAL_TAG_TOOL_CALLS_H_
#define MASKD_COMPILER_STRUCTURAL_TAG_TOOL_CALLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace maskd {

enum class ToolCallFormat {
  // Llama 3.x JSON tool calls: the whole output is one JSON object
  // {"name": NAME, "parameters": ARGS} (Meta's JSON-based tool calling; the
  // tokenizer shipped here has no <|python_tag|>).
  kLlama3Json,
  // Qwen3 (Hermes style): free text with
  // <tool_call>\n{"name": NAME, "arguments": ARGS}\n</tool_call> calls.
  kQwen3,
  // gpt-oss harmony, after the prompt's <|start|>assistant: tool calls
  // (<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>
  // ARGS<|call|>, or with " to=functions.NAME" in the role header before
  // <|channel|>), each optionally after an analysis message
  // (<|channel|>analysis<|message|>TEXT<|end|><|start|>assistant), several
  // separated by <|start|>assistant unless single_call; or, unless a call is
  // required, a final answer <|channel|>final<|message|>TEXT (optionally after
  // an analysis message). The special tokens are token terminals when
  // compiled for a tokenizer that has them (gpt-oss).
  kHarmony,
  // Llama 3.1+ with <|python_tag|>: <|python_tag|>{"name": NAME,
  // "parameters": ARGS}, or (unless a call is required) plain text. One call.
  kLlama3PythonTag,
};

struct ToolSpec {
  std::string name;
  std::string parameters_schema;  // JSON Schema text; "" means any JSON object
};

struct ToolCallOptions {
  bool require_call = false;  // at least one call
  bool single_call = false;   // the output ends after the first call
};

// The structural tag JSON text (structural_tag.h) for `tools` in `format`.
// InvalidArgument for no tools, an empty or repeated name, a schema that is
// not JSON.
absl::StatusOr<std::string> ToolCallStructuralTag(const std::vector<ToolSpec>& tools,
                                                  ToolCallFormat format,
                                                  const ToolCallOptions& options);

}  // namespace maskd

#endif  // MASKD_COMPILER_STRUCTURAL_TAG_TOOL_CALLS_H_
