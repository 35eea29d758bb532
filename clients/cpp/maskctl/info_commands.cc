// maskctl health and maskctl tokenizers: what the server is and has.
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/maskctl/commands.h"
#include "clients/cpp/maskctl/common.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"

namespace maskd::maskctl {
namespace {

const char* KindName(v1::TokenizerKind kind) {
  switch (kind) {
    case v1::TOKENIZER_KIND_BYTE_LEVEL_BPE:
      return "byte_level_bpe";
    case v1::TOKENIZER_KIND_SENTENCEPIECE_BPE:
      return "sentencepiece_bpe";
    default:
      return "unspecified";
  }
}

}  // namespace

int RunHealth(const Args& args) {
  constexpr char kName[] = "health";
  if (!args.empty()) return Fail(kName, kExitUsage, "takes no arguments");
  absl::StatusOr<client::HealthState> state =
      ClientFromFlags()->CheckHealth(absl::GetFlag(FLAGS_service));
  if (!state.ok()) return FailWithStatus(kName, state.status(), kExitServerError);
  std::cout << client::HealthStateName(*state) << "\n";
  return *state == client::HealthState::kServing ? kExitOk : kExitRejected;
}

int RunTokenizers(const Args& args) {
  constexpr char kName[] = "tokenizers";
  if (!args.empty()) return Fail(kName, kExitUsage, "takes no arguments");
  absl::StatusOr<std::vector<v1::TokenizerInfo>> all = ClientFromFlags()->ListTokenizers();
  if (!all.ok()) return FailWithStatus(kName, all.status(), kExitServerError);
  std::cout << absl::StrFormat("%-12s %-32s %-17s %8s %8s %-16s %s\n", "NAME", "ID", "KIND",
                               "VOCAB", "SPECIAL", "EOS", "PRELOADED");
  for (const v1::TokenizerInfo& info : *all) {
    std::cout << absl::StrFormat(
        "%-12s %-32s %-17s %8d %8d %-16s %s\n", info.name(), info.tokenizer_id(),
        KindName(info.kind()), info.vocab_size(), info.special_token_count(),
        absl::StrJoin(info.eos_token_ids(), ","), info.preloaded() ? "yes" : "no");
  }
  return kExitOk;
}

}  // namespace maskd::maskctl
