// What a client must remember to rebuild its sequences on another replica:
// each open sequence's spec (an inline compile request) and open options,
// and the tokens the server accepted for it, kept up to date from each
// request and its response.
#ifndef MASKD_CLIENTS_CPP_SEQUENCE_LEDGER_H_
#define MASKD_CLIENTS_CPP_SEQUENCE_LEDGER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "clients/cpp/mask.h"
#include "clients/cpp/spec_book.h"
#include "maskd/v1/session.pb.h"

namespace maskd::client {

class SequenceLedger {
 public:
  struct Entry {
    // Null when the sequence was opened by a handle the client's SpecBook
    // does not know: it cannot be reopened elsewhere.
    std::shared_ptr<const v1::CompileRequest> compile;
    std::string handle;  // set when opened by handle
    v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO;
    uint32_t max_rollback_tokens = 0;
    // Healing and budget, as opened (a reopen heals the same way).
    std::vector<TokenId> prompt_tail_tokens;
    std::optional<uint32_t> max_reasoning_tokens;
    std::vector<TokenId> tokens;  // accepted so far, in order
  };

  // `book` may be null (then only inline opens can be restored).
  explicit SequenceLedger(std::shared_ptr<const SpecBook> book) : book_(std::move(book)) {}

  // Records the effect of `request`'s ops as `response` reports them
  // (results in op order, as the stream checked).
  void Apply(const v1::StepRequest& request, const v1::StepResponse& response);
  // Forgets a sequence (it was lost in a failover).
  void Forget(uint64_t sequence_id) { entries_.erase(sequence_id); }

  const std::map<uint64_t, Entry>& entries() const { return entries_; }

  // The requests that rebuild every sequence on a fresh stream: first the
  // opens (inline compiles), then the accepted tokens (masks omitted), each
  // request at most `max_ops` ops and each op at most `max_tokens` tokens.
  // Sequences that cannot be reopened are left out and named in `*lost`
  // with why.
  std::vector<v1::StepRequest> RestoreRequests(size_t max_ops, size_t max_tokens,
                                               std::map<uint64_t, absl::Status>* lost) const;

 private:
  std::shared_ptr<const SpecBook> book_;
  std::map<uint64_t, Entry> entries_;  // ordered: restores are deterministic
};

}  // namespace maskd::client

#endif  // MASKD_CLIENTS_CPP_SEQUENCE_LEDGER_H_
