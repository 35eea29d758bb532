// The sequences of one Session stream and what one StepRequest does to them.
// Transport-free (no gRPC streaming here), so tests drive it directly and the
// reactor only moves messages.
//
// A step's ops are checked in request order on the calling thread (duplicate
// ids, unknown ids, limits), then run in parallel on the step pool, one task
// per op, each touching only its own sequence; results land in the order of
// the ops. One op's failure is that op's error: the others go on.
//
// With a mask dictionary (StepRequest.session_options of the stream's first
// request), the parallel part computes each mask and its hash; then, in op
// order on the calling thread, each mask is looked up in the dictionary (a
// repeat becomes a dictionary_ref) or assigned a slot, so slots are
// deterministic; the masks sent in full are then encoded in parallel again.
#ifndef MASKD_SERVICE_SESSION_STREAM_H_
#define MASKD_SERVICE_SESSION_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "compiler/matcher/matcher.h"
#include "maskd/v1/session.pb.h"
#include "service/compile_handler.h"
#include "service/grammar_store.h"
#include "service/mask_dictionary.h"
#include "service/mask_encoding.h"
#include "service/memory_budget.h"
#include "service/memory_release.h"
#include "service/service_metrics.h"
#include "service/tenant_quotas.h"
#include "service/thread_pool.h"
#include "service/token_auth.h"

namespace maskd {

struct SessionLimits {
  // Open sequences one stream may hold.
  size_t max_sequences_per_stream = 4096;
  // Ops one StepRequest may carry.
  size_t max_ops_per_request = 1024;
  // Largest OpenSequence.max_rollback_tokens accepted.
  uint32_t max_rollback_tokens = 1024;
  // Most mask dictionary slots granted to a stream
  // (SessionOptions.mask_dictionary_slots is capped to it); 0: none.
  uint32_t max_mask_dictionary_slots = 1024;
  // Masks whose payload is at most this many bytes are never stored in a
  // mask dictionary (a reference would save little); session.proto says 64.
  size_t dictionary_min_payload_bytes = 64;
  // Requests with at most this many ops and no open run on the gRPC thread
  // that read them, not handed to the step pool (saves two thread wake-ups,
  // most of a small step's cost); 0: always on the pool.
  size_t max_inline_step_ops = 1;
  // Largest StepResponse sent (the server's --max_message_bytes); masks that
  // would pass it are left out of the response, each op failing with
  // RESOURCE_EXHAUSTED instead of the whole stream. 0: no limit.
  size_t max_response_bytes = 0;
  // Most tokens (tokens + draft_tokens) one AdvanceSequence may carry
  // (--max_tokens_per_op); 0: no limit.
  size_t max_tokens_per_op = 0;
  // Most lexemes one sequence's parser may hold (--max_parser_depth,
  // MatcherOptions::max_parser_depth); 0: no limit.
  size_t max_parser_depth = 0;
};

// Grammars of a request's inline-compile opens, compiled before the step
// runs (SessionStream::InlineCompiles), by op index; nullopt for other ops.
using PrecompiledGrammars = std::vector<std::optional<absl::StatusOr<OpenedGrammar>>>;

// What every stream of a server shares. All pointers outlive the streams.
struct SessionEnv {
  const CompileHandler* compiler = nullptr;
  GrammarStore* store = nullptr;
  ThreadPool* pool = nullptr;
  ServiceMetrics* metrics = nullptr;
  // Told when a stream ends (its sequences freed); may be null.
  MemoryReleaser* releaser = nullptr;
  // The process-wide memory budget sequences, dictionaries and the stream's
  // buffers draw on; may be null (nothing charged).
  MemoryBudget* budget = nullptr;
  // Per-tenant stream and sequence quotas; null: none.
  TenantQuotas* quotas = nullptr;
  SessionLimits limits;
};

class SessionStream {
 public:
  // The stream's sequences count against `tenant`'s quota (env.quotas).
  explicit SessionStream(const SessionEnv& env, std::string tenant = std::string(kDefaultTenant))
      : env_(env), tenant_(std::move(tenant)) {}
  // Closes the sequences still open (giving them back to the tenant's quota).
  ~SessionStream();

  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // Applies `request` and fills `response` (one result per op, in order).
  // `deadline` bounds inline compiles (the stream's deadline, if any). Not
  // thread-safe: a stream handles one request at a time. A non-OK status
  // means the stream must end with it instead of answering (a request that
  // changes the stream's session_options; no op was applied).
  //
  // `precompiled` (may be null) holds the grammars of the request's inline
  // compiles, awaited by the caller without holding a step thread; an
  // inline compile not in it is compiled here, on the calling thread.
  absl::Status Step(const v1::StepRequest& request, absl::Time deadline, v1::StepResponse* response,
                    const PrecompiledGrammars* precompiled = nullptr);

  // The ops of `request` that open with an inline compile or heal (their
  // indices), for the caller to compile before Step
  // (CompileHandler::OpenGrammarAsync); none when the request has more ops
  // than the server takes (they all fail without a compile).
  std::vector<int> InlineCompiles(const v1::StepRequest& request) const;

  size_t open_sequences() const { return sequences_.size(); }
  // Whether `request` is small enough to run on the thread that received it
  // (SessionLimits::max_inline_step_ops): no open (an inline compile may take
  // seconds) and few ops.
  bool RunsInline(const v1::StepRequest& request) const;
  // Slots granted to the mask dictionary (0 before the first step or when
  // off) and how many hold a mask.
  uint32_t dictionary_slots() const { return dictionary_ ? dictionary_->slots() : 0; }
  uint32_t dictionary_used() const { return dictionary_ ? dictionary_->used() : 0; }

 private:
  struct Sequence {
    std::shared_ptr<const CompiledGrammar> grammar;  // for its tokenizer
    std::string handle;                              // its cache key
    std::unique_ptr<Matcher> matcher;
    v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO;
    uint32_t vocab_size = 0;
    // What it holds of the memory budget (given back when it goes).
    MemoryBudget* budget = nullptr;
    size_t charged = 0;
    ~Sequence() {
      if (budget != nullptr) budget->Release(MemoryKind::kSequences, charged);
    }
  };
  struct Work;

  void Open(const v1::OpenSequence& open, absl::Time deadline,
            const PrecompiledGrammars* precompiled, Work& work);
  // Leaves out the masks past max_response_bytes (see SessionLimits).
  void FitResponse(std::vector<Work>& works, v1::StepResponse* response);
  void Advance(const v1::AdvanceSequence& advance, Sequence& sequence, Work& work);
  // Charges what `sequence`'s matcher grew by since it was last charged; a
  // refusal fails `work` (RESOURCE_EXHAUSTED) and returns false.
  bool ChargeGrowth(Sequence& sequence, Work& work);
  // The stream's own buffers, charged after each step.
  void ChargeBuffers();
  // Charges a store of a `words`-word mask into the dictionary; false (do
  // not store) when the budget refuses.
  bool ChargeDictionaryStore(size_t words);
  // Fills the mask (or, with a dictionary, computes it into work.words for
  // AssignDictionary), stop status and jump-forward of `work.result`.
  void Describe(Sequence& sequence, Work& work);
  // Dictionary lookups and stores for the masks of `works`, in order; then
  // encodes the masks sent in full.
  void AssignDictionary(std::vector<Work>& works);

  SessionEnv env_;
  const std::string tenant_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Sequence>> sequences_;
  bool configured_ = false;  // the first request's session_options were read
  uint32_t requested_dictionary_slots_ = 0;
  std::unique_ptr<MaskDictionary> dictionary_;  // null: no dictionary
  // Per-op mask buffers of a step with a dictionary, reused across steps.
  std::vector<std::vector<uint32_t>> buffers_;
  // Budget held for the stream's buffers and its dictionary's masks.
  size_t charged_buffers_ = 0;
  size_t charged_dictionary_ = 0;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_STREAM_H_
