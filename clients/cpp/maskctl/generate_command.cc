// maskctl generate SPEC_FILE --random --seed N: constrained random sampling
// through the server. Each step takes the jump-forward tokens when the
// grammar forces bytes, otherwise one token drawn uniformly among those the
// mask allows (EOS included when the output may end); it stops at EOS, at
// MUST_STOP, or at --max_tokens. With --prompt_tail / --prompt_tail_tokens
// the open heals the prompt's end (OpenOptions::prompt_tail_tokens).
#include <iostream>
#include <random>

#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/maskctl/commands.h"
#include "clients/cpp/maskctl/common.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"
#include "clients/cpp/maskctl/local_tokenizer.h"
#include "clients/cpp/maskctl/spec_file.h"

namespace maskd::maskctl {
namespace {

constexpr char kName[] = "generate";
constexpr uint64_t kSequence = 1;

// The prompt tail for token healing from --prompt_tail (text, encoded with
// the local tokenizer) or --prompt_tail_tokens (ids); empty for neither.
absl::StatusOr<std::vector<TokenId>> PromptTail(const Tokenizer& tokenizer) {
  const std::string text = absl::GetFlag(FLAGS_prompt_tail);
  const std::string ids = absl::GetFlag(FLAGS_prompt_tail_tokens);
  if (!text.empty() && !ids.empty()) {
    return absl::InvalidArgumentError("give --prompt_tail or --prompt_tail_tokens, not both");
  }
  if (!text.empty()) return tokenizer.Encode(text);
  std::vector<TokenId> out;
  if (ids.empty()) return out;
  for (absl::string_view part : absl::StrSplit(ids, ',')) {
    uint32_t id = 0;
    if (!absl::SimpleAtoi(part, &id) || id >= tokenizer.vocab_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--prompt_tail_tokens: '", part, "' is not a token id of tokenizer ", tokenizer.name()));
    }
    out.push_back(id);
  }
  return out;
}

}  // namespace

int RunGenerate(const Args& args) {
  if (!absl::GetFlag(FLAGS_random)) {
    return Fail(kName, kExitUsage,
                "needs --random (maskctl has no model: it samples uniformly among allowed tokens)");
  }
  if (args.size() > 1) return Fail(kName, kExitUsage, "takes one SPEC_FILE");
  const int32_t max_tokens = absl::GetFlag(FLAGS_max_tokens);
  if (max_tokens < 1) return Fail(kName, kExitUsage, "--max_tokens must be at least 1");
  absl::StatusOr<v1::ConstraintSpec> spec = ReadSpecFile(
      args.empty() ? "" : args[0], absl::GetFlag(FLAGS_kind), absl::GetFlag(FLAGS_start_rule));
  if (!spec.ok()) return Fail(kName, kExitUsage, spec.status().message());
  absl::StatusOr<v1::CompileOptions> options = CompileOptionsFromFlags(CompileOptionFlagValues());
  if (!options.ok()) return Fail(kName, kExitUsage, options.status().message());

  std::unique_ptr<client::MaskdClient> client = ClientFromFlags();
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer(absl::GetFlag(FLAGS_tokenizer));
  if (!info.ok()) return FailWithStatus(kName, info.status(), kExitServerError);
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer =
      LoadServerTokenizer(*info, absl::GetFlag(FLAGS_tokenizer_dir));
  if (!tokenizer.ok()) return Fail(kName, kExitUsage, tokenizer.status().message());
  absl::StatusOr<std::vector<TokenId>> tail = PromptTail(**tokenizer);
  if (!tail.ok()) return Fail(kName, kExitUsage, tail.status().message());
  absl::StatusOr<client::CompileResult> compiled =
      client->Compile(info->tokenizer_id(), *std::move(spec), *std::move(options));
  if (!compiled.ok()) return FailWithStatus(kName, compiled.status(), kExitRejected);

  client::SessionOptions session_options;
  session_options.stream_deadline = absl::GetFlag(FLAGS_deadline);
  std::unique_ptr<client::Session> session = client->StartSession(session_options);
  client::OpenOptions open_options;
  open_options.prompt_tail_tokens = *tail;
  session->Open(kSequence, compiled->handle, open_options);
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  const auto& eos = info->eos_token_ids();

  std::vector<TokenId> output;
  size_t forced = 0;
  std::string stop_reason;
  int exit_code = kExitOk;
  while (true) {
    absl::StatusOr<std::vector<client::SequenceResult>> step = session->Step();
    if (!step.ok()) return FailWithStatus(kName, step.status(), kExitServerError);
    const client::SequenceResult& result = (*step)[0];
    if (!result.ok()) return FailWithStatus(kName, result.status(), kExitServerError);
    if (result.has_healing()) {
      std::cerr << "maskctl generate: healing: drop " << result.prompt_tokens_to_drop()
                << " prompt tokens; the output starts with "
                << absl::CHexEscape(result.healed_bytes()) << "\n";
    }

    std::vector<TokenId> next(result.jump_forward_tokens().begin(),
                              result.jump_forward_tokens().end());
    if (next.empty()) {
      if (result.must_stop()) {
        stop_reason = "the grammar must stop";
        break;
      }
      absl::StatusOr<client::TokenMask> mask = result.DecodeMask();
      if (!mask.ok()) return FailWithStatus(kName, mask.status(), kExitServerError);
      const std::vector<TokenId> allowed = mask->AllowedTokens();
      if (allowed.empty()) {
        return Fail(kName, kExitRejected, "the mask allows no token (the grammar is a dead end)");
      }
      const TokenId pick =
          allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
      if (std::find(eos.begin(), eos.end(), pick) != eos.end()) {
        stop_reason = "EOS sampled";
        break;
      }
      next = {pick};
    }
    if (output.size() + next.size() > static_cast<size_t>(max_tokens)) {
      stop_reason = absl::StrCat("--max_tokens=", max_tokens, " reached");
      if (!result.may_stop()) {
        stop_reason += " before the output could end";
        exit_code = kExitTokenLimit;
      }
      break;
    }
    if (!result.jump_forward_tokens().empty()) forced += next.size();
    output.insert(output.end(), next.begin(), next.end());
    session->Advance(kSequence, next);
  }
  session->Finish().IgnoreError();
  std::cout << (*tokenizer)->Decode(output) << "\n";
  std::cerr << "maskctl generate: " << output.size() << " tokens (" << forced
            << " forced by jump-forward), seed " << absl::GetFlag(FLAGS_seed) << ", " << stop_reason
            << "\n";
  return exit_code;
}

}  // namespace maskd::maskctl
