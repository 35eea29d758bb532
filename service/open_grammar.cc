// CompileHandler's part in Session open ops (compile_handler.h): which
// grammar an open starts from, healed when it carries the prompt's tail.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/compile_handler.h"

namespace maskd {
namespace {

absl::Status Prefixed(const absl::Status& status, const std::string& prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

absl::Status HandleNotFound(const std::string& handle) {
  return absl::NotFoundError(
      absl::StrCat("grammar handle \"", handle.substr(0, 80),
                   "\" is not in this replica's cache (compiled on another replica, evicted, or "
                   "never compiled); open with an inline `compile` request instead"));
}

}  // namespace

bool CompileHandler::OpenMayCompile(const v1::OpenSequence& open) {
  return open.grammar_case() == v1::OpenSequence::kCompile || open.prompt_tail_tokens_size() > 0;
}

std::shared_ptr<CompileWait> CompileHandler::OpenGrammarAsync(const v1::OpenSequence& open,
                                                              const std::string& tenant,
                                                              absl::Time deadline,
                                                              OpenCallback done) const {
  if (open.prompt_tail_tokens_size() > kMaxPromptTailTokens) {
    std::move(done)(absl::InvalidArgumentError(
        absl::StrCat("open.prompt_tail_tokens has ", open.prompt_tail_tokens_size(),
                     " tokens, more than the ", kMaxPromptTailTokens,
                     " read (healing removes at most a token's length of bytes: send the last "
                     "few tokens)")));
    return nullptr;
  }
  const bool heal = open.prompt_tail_tokens_size() > 0;
  const bool budget = open.has_max_reasoning_tokens();
  std::shared_ptr<const CompileJob> base;  // what the open's grammar is compiled from
  std::shared_ptr<const CompiledGrammar> cached;
  std::string prefix;  // of this open's compile errors
  switch (open.grammar_case()) {
    case v1::OpenSequence::kHandle:
      cached = store_->Find(open.handle());
      if (cached == nullptr) {
        std::move(done)(HandleNotFound(open.handle()));
        return nullptr;
      }
      if (heal || budget) {
        base = recipes_.Find(open.handle());
        if (base == nullptr) {
          std::move(done)(absl::NotFoundError(absl::StrCat(
              "grammar handle \"", open.handle().substr(0, 80),
              "\" is cached on this replica but what it was compiled from is no longer kept, "
              "which ",
              heal ? "open.prompt_tail_tokens" : "open.max_reasoning_tokens",
              " needs; open with an inline `compile` request instead")));
          return nullptr;
        }
      }
      prefix = "open.handle (healed): ";
      break;
    case v1::OpenSequence::kCompile: {
      absl::StatusOr<CompileJob> job = TranslateCompileRequest(open.compile(), limits_);
      if (!job.ok()) {
        std::move(done)(Prefixed(job.status(), "open.compile: "));
        return nullptr;
      }
      base = std::make_shared<const CompileJob>(*std::move(job));
      prefix = "open.compile: ";
      break;
    }
    case v1::OpenSequence::GRAMMAR_NOT_SET:
      std::move(done)(absl::InvalidArgumentError("open sets neither handle nor compile"));
      return nullptr;
  }

  OpenedGrammar opened;
  if (budget) opened.reasoning_end_marker = base->options.reasoning_end_marker;
  std::shared_ptr<const Tokenizer> tokenizer;
  if (base != nullptr && (heal || cached == nullptr)) {
    absl::StatusOr<RegisteredTokenizer> found = tokenizers_->FindById(base->tokenizer_id);
    if (!found.ok()) {
      std::move(done)(Prefixed(found.status(), prefix));
      return nullptr;
    }
    tokenizer = found->tokenizer;
  }
  std::shared_ptr<CompileJob> job;  // what to compile, if anything
  if (heal) {
    const std::span<const TokenId> tail(open.prompt_tail_tokens().data(),
                                        static_cast<size_t>(open.prompt_tail_tokens_size()));
    opened.healing = HealPromptTail(tokenizer, tail);
    if (opened.healing->tokens_to_drop > 0) {
      job = std::make_shared<CompileJob>(HealedCompileJob(*base, opened.healing->removed_bytes));
      opened.healed_handle = job->handle;
    }
  }
  if (budget) {
    opened.required_prefix_bytes =
        (job != nullptr ? job->options : base->options).required_prefix.size();
  }
  if (job == nullptr && cached != nullptr) {
    opened.grammar = std::move(cached);
    opened.handle = open.handle();
    std::move(done)(std::move(opened));
    return nullptr;
  }
  if (job == nullptr) job = std::make_shared<CompileJob>(*base);
  opened.handle = job->handle;
  return CompileJobAsync(std::move(job), std::move(tokenizer), tenant, deadline,
                         [opened = std::move(opened), prefix, done = std::move(done)](
                             absl::StatusOr<CompileOutcome> outcome, bool /*spec_error*/) mutable {
                           if (!outcome.ok()) {
                             std::move(done)(Prefixed(outcome.status(), prefix));
                             return;
                           }
                           opened.grammar = outcome->handle.grammar;
                           std::move(done)(std::move(opened));
                         });
}

absl::StatusOr<OpenedGrammar> CompileHandler::OpenGrammar(const v1::OpenSequence& open,
                                                          absl::Time deadline) const {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::StatusOr<OpenedGrammar>> result;
  std::shared_ptr<CompileWait> wait =
      OpenGrammarAsync(open, "", deadline, [&](absl::StatusOr<OpenedGrammar> opened) {
        std::lock_guard<std::mutex> lock(mu);
        result = std::move(opened);
        cv.notify_all();
      });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return result.has_value(); });
  return *std::move(result);
}

}  // namespace maskd
