#include "clients/cpp/spec.h"

namespace maskd::client {

v1::ConstraintSpec JsonSchemaSpec(std::string schema_json) {
  v1::ConstraintSpec spec;
  spec.set_json_schema(std::move(schema_json));
  return spec;
}

v1::ConstraintSpec RegexSpec(std::string pattern) {
  v1::ConstraintSpec spec;
  spec.set_regex(std::move(pattern));
  return spec;
}

v1::ConstraintSpec GrammarSpec(v1::GrammarDialect dialect, std::string text,
                               std::string start_rule) {
  v1::ConstraintSpec spec;
  v1::GrammarSpec* grammar = spec.mutable_grammar();
  grammar->set_dialect(dialect);
  grammar->set_text(std::move(text));
  grammar->set_start_rule(std::move(start_rule));
  return spec;
}

v1::ConstraintSpec ChoicesSpec(std::vector<std::string> choices) {
  v1::ConstraintSpec spec;
  for (std::string& choice : choices) spec.mutable_choices()->add_choices(std::move(choice));
  return spec;
}

v1::ConstraintSpec BuiltinJsonSpec() {
  v1::ConstraintSpec spec;
  spec.mutable_builtin_json();
  return spec;
}

v1::ConstraintSpec StructuralTagSpec(std::string structural_tag_json) {
  v1::ConstraintSpec spec;
  spec.set_structural_tag(std::move(structural_tag_json));
  return spec;
}

v1::ConstraintSpec ToolCallsSpec(v1::ToolCallFormat format, const std::vector<ToolDef>& tools,
                                 bool require_call, bool single_call) {
  v1::ConstraintSpec spec;
  v1::ToolCallsSpec* calls = spec.mutable_tool_calls();
  calls->set_format(format);
  for (const ToolDef& tool : tools) {
    v1::Tool* t = calls->add_tools();
    t->set_name(tool.name);
    t->set_parameters_json_schema(tool.parameters_json_schema);
  }
  calls->set_require_call(require_call);
  calls->set_single_call(single_call);
  return spec;
}

const char* SpecKindName(const v1::ConstraintSpec& spec) {
  switch (spec.kind_case()) {
    case v1::ConstraintSpec::kJsonSchema:
      return "json_schema";
    case v1::ConstraintSpec::kRegex:
      return "regex";
    case v1::ConstraintSpec::kGrammar:
      return "ebnf";
    case v1::ConstraintSpec::kChoices:
      return "choices";
    case v1::ConstraintSpec::kBuiltinJson:
      return "builtin_json";
    case v1::ConstraintSpec::kStructuralTag:
    case v1::ConstraintSpec::kToolCalls:
      return "structural_tag";
    case v1::ConstraintSpec::KIND_NOT_SET:
      break;
  }
  return "none";
}

}  // namespace maskd::client
