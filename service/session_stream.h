// The sequences of one Session stream and what one StepRequest does to them.
// Transport-free (no gRPC streaming here), so tests drive it directly and the
// reactor only moves messages.
//
// A step's ops are checked in request order on the calling thread (duplicate
// ids, unknown ids, limits), then run in parallel on the step pool, one task
// per op, each touching only its own sequence; results land in the order of
// the ops. One op's failure is that op's error: the others go on.
#ifndef MASKD_SERVICE_SESSION_STREAM_H_
#define MASKD_SERVICE_SESSION_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "compiler/matcher/matcher.h"
#include "maskd/v1/session.pb.h"
#include "service/compile_handler.h"
#include "service/grammar_store.h"
#include "service/service_metrics.h"
#include "service/thread_pool.h"

namespace maskd {

struct SessionLimits {
  // Open sequences one stream may hold.
  size_t max_sequences_per_stream = 4096;
  // Ops one StepRequest may carry.
  size_t max_ops_per_request = 1024;
  // Largest OpenSequence.max_rollback_tokens accepted.
  uint32_t max_rollback_tokens = 1024;
};

// What every stream of a server shares. All pointers outlive the streams.
struct SessionEnv {
  const CompileHandler* compiler = nullptr;
  GrammarStore* store = nullptr;
  ThreadPool* pool = nullptr;
  ServiceMetrics* metrics = nullptr;
  SessionLimits limits;
};

class SessionStream {
 public:
  explicit SessionStream(const SessionEnv& env) : env_(env) {}
  // Closes the sequences still open.
  ~SessionStream();

  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // Applies `request` and fills `response` (one result per op, in order).
  // `deadline` bounds inline compiles (the stream's deadline, if any). Not
  // thread-safe: a stream handles one request at a time.
  void Step(const v1::StepRequest& request, absl::Time deadline, v1::StepResponse* response);

  size_t open_sequences() const { return sequences_.size(); }

 private:
  struct Sequence {
    std::shared_ptr<const CompiledGrammar> grammar;  // for its tokenizer
    std::unique_ptr<Matcher> matcher;
    v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO;
    uint32_t vocab_size = 0;
  };
  struct Work;

  void Open(const v1::OpenSequence& open, absl::Time deadline, Work& work);
  void Advance(const v1::AdvanceSequence& advance, Sequence& sequence, Work& work);
  // Fills the mask, stop status and jump-forward of `work.result`.
  void Describe(Sequence& sequence, Work& work);

  SessionEnv env_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Sequence>> sequences_;
};

}  // namespace maskd

#endif  // MASKD_SERVICE_SESSION_STREAM_H_
