// maskctl check HANDLE TEXT: teacher-forces TEXT through a session on the
// server and says whether it matches, and if not, where it leaves the
// grammar (byte offset and token index).
//
// Two sequences run side by side: one advances the text's canonical tokens
// (what a model would emit: the token that fails is the token index), the
// other feeds the same bytes one single-byte token at a time as drafts,
// which the server accepts while allowed, so drafts_accepted is the exact
// byte offset of the first byte no continuation allows.
#include <iostream>
#include <iterator>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/maskctl/commands.h"
#include "clients/cpp/maskctl/common.h"
#include "clients/cpp/maskctl/exit_codes.h"
#include "clients/cpp/maskctl/flags.h"
#include "clients/cpp/maskctl/local_tokenizer.h"

namespace maskd::maskctl {
namespace {

constexpr char kName[] = "check";
constexpr uint64_t kTokenSequence = 1;
constexpr uint64_t kByteSequence = 2;

// The text's bytes as single-byte token ids; empty when some byte has no
// such token (the byte-exact offset is then unavailable).
std::vector<TokenId> ByteTokens(const Tokenizer& tokenizer, std::string_view text) {
  const std::array<std::optional<TokenId>, 256> table = SingleByteTokens(tokenizer);
  std::vector<TokenId> ids;
  for (char c : text) {
    const std::optional<TokenId>& id = table[static_cast<unsigned char>(c)];
    if (!id) return {};
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace

int RunCheck(const Args& args) {
  if (args.size() != 2) return Fail(kName, kExitUsage, "takes HANDLE and TEXT");
  const std::string& handle = args[0];
  std::string text = args[1];
  if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), {});

  std::unique_ptr<client::MaskdClient> client = ClientFromFlags();
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer(absl::GetFlag(FLAGS_tokenizer));
  if (!info.ok()) return FailWithStatus(kName, info.status(), kExitServerError);
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer =
      LoadServerTokenizer(*info, absl::GetFlag(FLAGS_tokenizer_dir));
  if (!tokenizer.ok()) return Fail(kName, kExitUsage, tokenizer.status().message());
  const std::vector<TokenId> tokens = (*tokenizer)->Encode(text);
  const std::vector<TokenId> byte_tokens = ByteTokens(**tokenizer, text);
  std::cout << "tokenizer: " << info->name() << " (" << info->tokenizer_id()
            << "), tokenized locally: maskd has no tokenize RPC\n"
            << "tokens: " << tokens.size() << "\n";

  client::SessionOptions session_options;
  session_options.stream_deadline = absl::GetFlag(FLAGS_deadline);
  std::unique_ptr<client::Session> session = client->StartSession(session_options);
  session->Open(kTokenSequence, handle);
  if (!byte_tokens.empty()) session->Open(kByteSequence, handle);
  absl::StatusOr<std::vector<client::SequenceResult>> opened = session->Step();
  if (!opened.ok()) return FailWithStatus(kName, opened.status(), kExitServerError);
  // An open fails only for the handle (unknown here, or not compiled for
  // this tokenizer): a server-side condition, not a verdict on the text.
  if (!(*opened)[0].ok()) return FailWithStatus(kName, (*opened)[0].status(), kExitServerError);

  session->Advance(kTokenSequence, tokens);
  if (!byte_tokens.empty()) {
    client::AdvanceOptions drafts;
    drafts.draft_tokens = byte_tokens;
    drafts.omit_mask = true;
    session->Advance(kByteSequence, {}, drafts);
  }
  absl::StatusOr<std::vector<client::SequenceResult>> advanced = session->Step();
  if (!advanced.ok()) return FailWithStatus(kName, advanced.status(), kExitServerError);
  const client::SequenceResult& result = (*advanced)[0];
  session->Finish().IgnoreError();

  if (result.ok()) {
    if (result.may_stop()) {
      std::cout << "verdict: match (the output may end here"
                << (result.must_stop() ? " and must" : "") << ")\n";
      return kExitOk;
    }
    std::cout << "verdict: incomplete (every token allowed, but the grammar cannot end here)\n";
    if (!result.jump_forward_bytes().empty()) {
      std::cout << "forced continuation: \"" << Printable(result.jump_forward_bytes()) << "\"\n";
    }
    return kExitRejected;
  }
  const absl::Status status = result.status();
  const uint32_t index = result.tokens_accepted();
  if (status.code() != absl::StatusCode::kInvalidArgument || index >= tokens.size()) {
    return FailWithStatus(kName, status, kExitServerError);
  }
  const size_t token_start =
      (*tokenizer)->Decode(std::span<const TokenId>(tokens.data(), index)).size();
  const size_t token_end = token_start + (*tokenizer)->token_bytes(tokens[index]).size();
  size_t byte = token_start;
  if (!byte_tokens.empty() && (*advanced)[1].ok()) {
    // Exactness makes the first refused byte fall inside the refused token;
    // anything else would be a server bug, so keep the token-level answer.
    const size_t exact = (*advanced)[1].drafts_accepted();
    if (exact >= token_start && exact < token_end) byte = exact;
  }
  std::cout << "verdict: leaves the grammar at byte " << byte << " (token " << index << " of "
            << tokens.size() << ", id " << tokens[index] << " \""
            << Printable((*tokenizer)->token_bytes(tokens[index])) << "\")\n"
            << "accepted: \"" << Printable(std::string_view(text).substr(0, byte)) << "\"\n"
            << "server: " << status.message() << "\n";
  return kExitRejected;
}

}  // namespace maskd::maskctl
