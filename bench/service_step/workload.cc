#include "bench/service_step/workload.h"

#include <chrono>

#include "clients/cpp/spec.h"
#include "compiler/compile/compile.h"
#include "harness/maskbench_data.h"

namespace maskd::service_bench {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

}  // namespace

absl::StatusOr<Workload> BuildWorkload(const client::MaskdClient& client,
                                       const std::string& tokenizer_id,
                                       std::shared_ptr<const Tokenizer> tokenizer,
                                       const std::string& maskbench_path, size_t sample) {
  absl::StatusOr<std::vector<maskbench::SchemaCase>> cases =
      maskbench::LoadMaskBench(maskbench_path);
  if (!cases.ok()) return cases.status();
  Workload workload;
  for (size_t index : maskbench::DeterministicSample(cases->size(), sample)) {
    const maskbench::SchemaCase& schema = (*cases)[index];
    std::vector<std::vector<TokenId>> valid;
    for (const maskbench::Instance& instance : schema.tests) {
      if (instance.valid) valid.push_back(tokenizer->Encode(instance.text));
    }
    if (valid.empty()) continue;
    absl::StatusOr<client::CompileResult> remote =
        client.Compile(tokenizer_id, client::JsonSchemaSpec(schema.schema));
    if (!remote.ok()) continue;
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema.schema;
    absl::StatusOr<std::shared_ptr<const CompiledGrammar>> local =
        CompileGrammar(spec, CompileOptions(), tokenizer);
    if (!local.ok()) continue;
    // Valid instances the engine accepts to the end (MaskBench's rare
    // validation errors would end a sequence early on both sides alike).
    for (std::vector<TokenId>& tokens : valid) {
      std::unique_ptr<Matcher> matcher = Matcher::Create(*local);
      bool accepted = true;
      for (TokenId token : tokens) accepted = accepted && matcher->AcceptToken(token);
      if (!accepted || tokens.empty()) continue;
      workload.tokens += tokens.size();
      workload.instances.push_back({workload.handles.size(), std::move(tokens)});
    }
    workload.handles.push_back(remote->handle);
    workload.grammars.push_back(*std::move(local));
  }
  if (workload.instances.empty()) {
    return absl::FailedPreconditionError("no MaskBench instance is usable (nothing compiled?)");
  }
  return workload;
}

EngineBaseline MeasureEngine(const Workload& workload, int passes) {
  EngineBaseline baseline;
  for (int pass = 0; pass < passes; ++pass) {
    const bool record = pass + 1 == passes;
    for (const Instance& instance : workload.instances) {
      const std::shared_ptr<const CompiledGrammar>& grammar = workload.grammars[instance.schema];
      std::vector<uint32_t> words((grammar->tokenizer().vocab_size() + 31) / 32);
      std::unique_ptr<Matcher> mask_only = Matcher::Create(grammar);
      std::unique_ptr<Matcher> full = Matcher::Create(grammar);
      for (TokenId token : instance.tokens) {
        Clock::time_point start = Clock::now();
        mask_only->FillMask(words);
        mask_only->AcceptToken(token);
        if (record) baseline.mask_and_accept_ns.Add(NanosSince(start));

        start = Clock::now();
        full->FillMask(words);
        full->AcceptToken(token);
        if (full->CanStop()) full->MustStop();
        const JumpForward jump = full->ComputeJumpForward();
        if (record) baseline.full_step_ns.Add(NanosSince(start));
        (void)jump;
      }
    }
  }
  return baseline;
}

}  // namespace maskd::service_bench
