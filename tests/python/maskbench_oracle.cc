// The C++ engine's answers for the Python client's MaskBench tests, which have
// no tokenizer of their own and must agree with the engine:
//   --cases FILE: one JSON line per sampled schema: its name and schema text,
//     whether it compiled (strict, default options, like the server's
//     defaults) and, per instance, its Llama-3 token ids, how many of them the
//     engine accepts token by token, and whether it may stop after all of them.
//   --vocab FILE: one line per token id: the token's bytes in hex, "-" for a
//     special token (never allowed except EOS), then "eos" on EOS ids.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "harness/maskbench_data.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, tokenizer, "", "tokenizer folder (tokenizer.json)");
ABSL_FLAG(std::string, data, "", "MaskBench .jsonl(.gz)");
ABSL_FLAG(size_t, sample, 50, "deterministic sample of N schemas (DeterministicSample)");
ABSL_FLAG(std::string, cases, "", "write the per-schema verdicts here");
ABSL_FLAG(std::string, vocab, "", "write the vocabulary's bytes here");

namespace maskd {
namespace {

nlohmann::json ForceInstance(const std::shared_ptr<const CompiledGrammar>& grammar,
                             const std::vector<TokenId>& ids) {
  std::unique_ptr<Matcher> matcher = Matcher::Create(grammar);
  size_t accepted = 0;
  while (accepted < ids.size() && matcher->AcceptToken(ids[accepted])) ++accepted;
  nlohmann::json out;
  out["ids"] = ids;
  out["accepted"] = accepted;
  out["complete"] = accepted == ids.size() && matcher->CanStop();
  return out;
}

int WriteCases(const Tokenizer& tokenizer, std::shared_ptr<const Tokenizer> shared) {
  auto cases = maskbench::LoadMaskBench(absl::GetFlag(FLAGS_data));
  if (!cases.ok()) {
    std::fprintf(stderr, "maskbench_oracle: %s\n", cases.status().ToString().c_str());
    return 2;
  }
  std::ofstream out(absl::GetFlag(FLAGS_cases));
  for (size_t index : maskbench::DeterministicSample(cases->size(), absl::GetFlag(FLAGS_sample))) {
    const maskbench::SchemaCase& c = (*cases)[index];
    nlohmann::json line;
    line["name"] = c.name;
    line["schema"] = c.schema;
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = c.schema;
    const auto start = std::chrono::steady_clock::now();
    auto grammar = CompileGrammar(spec, CompileOptions{}, shared);
    line["compile_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    line["compiled"] = grammar.ok();
    line["compile_error"] = grammar.ok() ? "" : std::string(grammar.status().message());
    line["tests"] = nlohmann::json::array();
    for (const maskbench::Instance& instance : c.tests) {
      nlohmann::json test = grammar.ok() ? ForceInstance(*grammar, tokenizer.Encode(instance.text))
                                         : nlohmann::json{{"ids", tokenizer.Encode(instance.text)}};
      test["valid"] = instance.valid;
      line["tests"].push_back(std::move(test));
    }
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return out.good() ? 0 : 2;
}

int WriteVocab(const Tokenizer& tokenizer) {
  std::ofstream out(absl::GetFlag(FLAGS_vocab));
  const std::vector<TokenId>& eos = tokenizer.eos_ids();
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const auto token = static_cast<TokenId>(id);
    if (tokenizer.is_special(token)) {
      out << "-";
    } else {
      for (unsigned char b : tokenizer.token_bytes(token)) out << kHex[b >> 4] << kHex[b & 15];
    }
    if (std::find(eos.begin(), eos.end(), token) != eos.end()) out << " eos";
    out << "\n";
  }
  return out.good() ? 0 : 2;
}

}  // namespace
}  // namespace maskd

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Writes the C++ engine's MaskBench verdicts and vocabulary bytes.");
  absl::ParseCommandLine(argc, argv);
  auto tokenizer = maskd::Tokenizer::FromDirectory(absl::GetFlag(FLAGS_tokenizer));
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "maskbench_oracle: %s\n", tokenizer.status().ToString().c_str());
    return 2;
  }
  int rc = 0;
  if (!absl::GetFlag(FLAGS_cases).empty()) rc = maskd::WriteCases(**tokenizer, *tokenizer);
  if (rc == 0 && !absl::GetFlag(FLAGS_vocab).empty()) rc = maskd::WriteVocab(**tokenizer);
  return rc;
}
