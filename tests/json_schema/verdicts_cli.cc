// Verdicts of the reference validator and of the engine, for the Python tests
// that compare them with python3-jsonschema (python_crosscheck.py). Reads
// lines "SCHEMA<TAB>INSTANCE" (instance text as json.dumps(ensure_ascii=False)
// writes it) from stdin and writes one line per input line:
//   REFERENCE ENGINE
// (--any_order: the engine reads objects with PROPERTY_ORDER_ANY_ORDER.)
// REFERENCE: 1/0 from the reference validator on the schema as written (no
// combinator rewriting), "E" when the schema does not parse. ENGINE: 1/0 from
// the compiled grammar fed the instance byte by byte (each byte checked
// against its mask, EOS against CanStop; "X" when they disagree), or
// "E:CODE" when the compile fails.
// Flags: --property_order=any compiles with PropertyOrder::kAnyOrder (the
// language is then JSON Schema's, keys in any order); --why adds, after a
// tab, the first line of the compile error to E:CODE lines.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "compiler/compile/compile.h"
#include "compiler/json_schema/parse_schema.h"
#include "compiler/matcher/matcher.h"
#include "tests/json_schema/reference_validator.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

std::string EngineVerdict(const std::shared_ptr<const CompiledGrammar>& g, const std::string& doc) {
  auto m = Matcher::Create(g);
  std::vector<uint32_t> mask((g->tokenizer().vocab_size() + 31) / 32);
  for (unsigned char c : doc) {
    m->FillMask(mask);
    const bool in_mask = (mask[c / 32] >> (c % 32)) & 1;
    const bool accepted = m->AcceptToken(c);
    if (in_mask != accepted) return "X";
    if (!accepted) return "0";
  }
  m->FillMask(mask);
  const TokenId eos = g->tokenizer().eos_ids()[0];
  if ((((mask[eos / 32] >> (eos % 32)) & 1) != 0) != m->CanStop()) return "X";
  return m->CanStop() ? "1" : "0";
}

int Run(int argc, char** argv) {
  bool any_order = false, why = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--property_order=any" || arg == "--any_order") {
      any_order = true;
    } else if (arg == "--why") {
      why = true;
    } else if (arg != "--property_order=schema") {
      std::cerr << "verdicts_cli: flags are --property_order=schema|any (--any_order) and --why\n";
      return 2;
    }
  }
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  auto tokenizer = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
  std::map<std::string, absl::StatusOr<json_schema::Schema>> references;
  std::map<std::string, absl::StatusOr<std::shared_ptr<const CompiledGrammar>>> grammars;
  json_schema::ParseOptions as_written;
  as_written.rewrite_combinators = false;
  // Unknown keywords are ignored, as validators do (the dialect cases use
  // keywords of other drafts on purpose).
  CompileOptions options;
  options.strict = false;
  if (any_order) options.property_order = PropertyOrder::kAnyOrder;
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      std::cerr << "verdicts_cli: expected SCHEMA<TAB>INSTANCE\n";
      return 2;
    }
    const std::string schema = line.substr(0, tab), instance = line.substr(tab + 1);
    auto ref = references.find(schema);
    if (ref == references.end()) {
      ref = references.emplace(schema, json_schema::ParseSchema(schema, as_written)).first;
    }
    auto grammar = grammars.find(schema);
    if (grammar == grammars.end()) {
      GrammarSpec spec;
      spec.kind = SpecKind::kJsonSchema;
      spec.text = schema;
      grammar = grammars.emplace(schema, CompileGrammar(spec, options, tokenizer)).first;
    }
    std::string out;
    absl::StatusOr<json_schema::JsonValue> value = json_schema::ParseJsonValue(instance);
    if (!ref->second.ok() || !value.ok()) {
      out = "E";
    } else {
      out = json_schema::ReferenceValidate(*ref->second, ref->second->root, *value) ? "1" : "0";
    }
    out += " ";
    if (grammar->second.ok()) {
      out += EngineVerdict(*grammar->second, instance);
    } else {
      const absl::Status& s = grammar->second.status();
      out += "E:" + absl::StatusCodeToString(s.code());
      if (why) {
        std::string message(s.message().substr(0, s.message().find('\n')));
        absl::StrReplaceAll({{"\t", " "}}, &message);
        out += "\t" + message;
      }
    }
    std::cout << out << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) { return maskd::Run(argc, argv); }
