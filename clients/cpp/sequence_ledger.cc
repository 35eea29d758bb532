#include "clients/cpp/sequence_ledger.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace maskd::client {

void SequenceLedger::Apply(const v1::StepRequest& request, const v1::StepResponse& response) {
  for (int i = 0; i < request.ops_size() && i < response.results_size(); ++i) {
    const v1::SequenceOp& op = request.ops(i);
    const v1::SequenceResult& result = response.results(i);
    const uint64_t id = op.sequence_id();
    switch (op.op_case()) {
      case v1::SequenceOp::kOpen: {
        if (result.has_error()) break;  // a failed open leaves the sequence as it was
        Entry entry;
        const v1::OpenSequence& open = op.open();
        if (open.has_compile()) {
          entry.compile = std::make_shared<const v1::CompileRequest>(open.compile());
        } else {
          entry.handle = open.handle();
          if (book_ != nullptr) entry.compile = book_->Find(open.handle());
        }
        entry.encoding = open.mask_encoding();
        entry.max_rollback_tokens = open.max_rollback_tokens();
        entry.prompt_tail_tokens.assign(open.prompt_tail_tokens().begin(),
                                        open.prompt_tail_tokens().end());
        if (open.has_max_reasoning_tokens())
          entry.max_reasoning_tokens = open.max_reasoning_tokens();
        entries_[id] = std::move(entry);
        break;
      }
      case v1::SequenceOp::kAdvance: {
        auto it = entries_.find(id);
        if (it == entries_.end()) break;
        std::vector<TokenId>& tokens = it->second.tokens;
        const v1::AdvanceSequence& advance = op.advance();
        // A rollback the server refuses (more than accepted or than it keeps
        // snapshots for) fails the op with the sequence unchanged.
        const uint32_t rollback = advance.rollback_tokens();
        if (rollback > 0 &&
            (rollback > tokens.size() || rollback > it->second.max_rollback_tokens)) {
          break;
        }
        tokens.resize(tokens.size() - rollback);
        const int accepted = std::min<int>(result.tokens_accepted(), advance.tokens_size());
        tokens.insert(tokens.end(), advance.tokens().begin(), advance.tokens().begin() + accepted);
        const int drafts = std::min<int>(result.drafts_accepted(), advance.draft_tokens_size());
        tokens.insert(tokens.end(), advance.draft_tokens().begin(),
                      advance.draft_tokens().begin() + drafts);
        break;
      }
      case v1::SequenceOp::kClose:
        entries_.erase(id);  // closed, or not open: gone either way
        break;
      case v1::SequenceOp::OP_NOT_SET:
        break;
    }
  }
}

std::vector<v1::StepRequest> SequenceLedger::RestoreRequests(
    size_t max_ops, size_t max_tokens, std::map<uint64_t, absl::Status>* lost) const {
  max_ops = std::max<size_t>(max_ops, 1);
  max_tokens = std::max<size_t>(max_tokens, 1);
  std::vector<v1::StepRequest> requests;
  auto op_slot = [&](std::vector<v1::StepRequest>& into, size_t first) -> v1::SequenceOp* {
    if (into.size() == first || static_cast<size_t>(into.back().ops_size()) >= max_ops) {
      into.emplace_back();
    }
    return into.back().add_ops();
  };
  // Opens.
  std::vector<const std::pair<const uint64_t, Entry>*> restorable;
  for (const auto& entry : entries_) {
    if (entry.second.compile == nullptr) {
      (*lost)[entry.first] = absl::FailedPreconditionError(absl::StrCat(
          "failover: sequence ", entry.first, " was opened by handle '", entry.second.handle,
          "', which this client did not compile, so it cannot be reopened on another replica "
          "(open with an inline spec, or compile through the same client)"));
      continue;
    }
    restorable.push_back(&entry);
    v1::SequenceOp* op = op_slot(requests, 0);
    op->set_sequence_id(entry.first);
    v1::OpenSequence* open = op->mutable_open();
    *open->mutable_compile() = *entry.second.compile;
    open->set_mask_encoding(entry.second.encoding);
    open->set_max_rollback_tokens(entry.second.max_rollback_tokens);
    open->mutable_prompt_tail_tokens()->Add(entry.second.prompt_tail_tokens.begin(),
                                            entry.second.prompt_tail_tokens.end());
    if (entry.second.max_reasoning_tokens.has_value()) {
      open->set_max_reasoning_tokens(*entry.second.max_reasoning_tokens);
    }
  }
  // Token replays: a sequence may take one op per request, so a long history
  // takes several rounds.
  for (size_t offset = 0;; offset += max_tokens) {
    const size_t first = requests.size();
    for (const auto* entry : restorable) {
      const std::vector<TokenId>& tokens = entry->second.tokens;
      if (offset >= tokens.size()) continue;
      v1::SequenceOp* op = op_slot(requests, first);
      op->set_sequence_id(entry->first);
      v1::AdvanceSequence* advance = op->mutable_advance();
      const size_t end = std::min(tokens.size(), offset + max_tokens);
      advance->mutable_tokens()->Add(tokens.begin() + offset, tokens.begin() + end);
      advance->set_omit_mask(true);
    }
    if (requests.size() == first) break;
  }
  return requests;
}

}  // namespace maskd::client
