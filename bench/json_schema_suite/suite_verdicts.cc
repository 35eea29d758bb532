// The engine's verdicts for run_suite.py (the JSON-Schema-Test-Suite runner).
// Reads lines "SCHEMA<TAB>INSTANCE" from stdin, compiles each distinct schema
// once with the default CompileOptions (strict, as a user gets them) changed
// only by the flags below, feeds the instance byte by byte over a 256-token
// byte vocabulary and writes one line per input line:
//   1 | 0            the grammar accepts / rejects the instance; every byte
//                    was checked against its mask and EOS against CanStop
//   X                a mask disagreed with AcceptToken or CanStop
//   E:CODE<TAB>MSG   the compile failed (MSG: the error's first line)
// --remotes DIR serves DIR's *.json files as CompileOptions::schema_resources
// under --remotes_uri (the suite's remotes/ as http://localhost:1234/).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_replace.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "tests/support/small_vocab_tokenizer.h"

ABSL_FLAG(std::string, property_order, "schema", "schema or any");
ABSL_FLAG(std::string, default_dialect, "",
          "CompileOptions::default_dialect: the $schema URI for schemas without one");
ABSL_FLAG(std::string, remotes, "",
          "a directory whose *.json files are schema resources (CompileOptions::schema_resources)");
ABSL_FLAG(std::string, remotes_uri, "http://localhost:1234/",
          "the URI of --remotes: DIR/a/b.json is resource URI + a/b.json");
ABSL_FLAG(bool, strict, true, "CompileOptions::strict (unknown keywords are errors)");

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

// Every *.json under `dir` (recursively) as a resource named `uri` + its
// path relative to `dir`.
std::vector<SchemaResource> ResourcesIn(const std::string& dir, const std::string& uri) {
  std::vector<SchemaResource> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back(
        {uri + std::filesystem::relative(entry.path(), dir).generic_string(), text.str()});
  }
  return out;
}

int Run() {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  auto tokenizer = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
  CompileOptions options;
  options.strict = absl::GetFlag(FLAGS_strict);
  options.default_dialect = absl::GetFlag(FLAGS_default_dialect);
  if (const std::string dir = absl::GetFlag(FLAGS_remotes); !dir.empty()) {
    options.schema_resources = ResourcesIn(dir, absl::GetFlag(FLAGS_remotes_uri));
  }
  const std::string order = absl::GetFlag(FLAGS_property_order);
  if (order == "any") {
    options.property_order = PropertyOrder::kAnyOrder;
  } else if (order != "schema") {
    std::cerr << "suite_verdicts: --property_order is schema or any\n";
    return 2;
  }
  std::map<std::string, absl::StatusOr<std::shared_ptr<const CompiledGrammar>>> grammars;
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      std::cerr << "suite_verdicts: expected SCHEMA<TAB>INSTANCE\n";
      return 2;
    }
    const std::string schema = line.substr(0, tab), instance = line.substr(tab + 1);
    auto grammar = grammars.find(schema);
    if (grammar == grammars.end()) {
      GrammarSpec spec;
      spec.kind = SpecKind::kJsonSchema;
      spec.text = schema;
      grammar = grammars.emplace(schema, CompileGrammar(spec, options, tokenizer)).first;
    }
    if (grammar->second.ok()) {
      std::cout << EngineVerdict(*grammar->second, instance) << "\n";
    } else {
      const absl::Status& s = grammar->second.status();
      std::string message(s.message().substr(0, s.message().find('\n')));
      absl::StrReplaceAll({{"\t", " "}}, &message);
      std::cout << "E:" << absl::StatusCodeToString(s.code()) << "\t" << message << "\n";
    }
  }
  return 0;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return maskd::Run();
}
