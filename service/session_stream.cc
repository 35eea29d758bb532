#include "service/session_stream.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "google/protobuf/io/coded_stream.h"
#include "service/mask_encoding.h"
#include "service/spec_error.h"

namespace maskd {

// One op of the current request: its input, its result slot, and what it
// did, summed into the metrics once the parallel part is over.
struct SessionStream::Work {
  enum class Kind { kNone, kOpen, kAdvance };
  Kind kind = Kind::kNone;
  int index = 0;  // in the request
  const v1::SequenceOp* op = nullptr;
  v1::SequenceResult* result = nullptr;
  Sequence* sequence = nullptr;      // kAdvance: the sequence it applies to
  std::unique_ptr<Sequence> opened;  // kOpen: the new sequence, on success

  absl::StatusCode error = absl::StatusCode::kOk;
  uint64_t tokens_accepted = 0;
  uint64_t tokens_rejected = 0;
  uint64_t jump_forward_bytes = 0;
  bool has_mask = false;
  double mask_seconds = 0;
  EncodedMaskInfo mask_info;
  bool dictionary_ref = false;  // the mask went as a dictionary_ref

  // With a dictionary: the mask, computed by Describe and encoded (or
  // referenced) by AssignDictionary.
  std::vector<uint32_t>* words = nullptr;
  uint32_t vocab_size = 0;
  v1::MaskEncoding wanted = v1::MASK_ENCODING_AUTO;
  MaskAnalysis analysis;
  uint64_t hash = 0;

  void Fail(const absl::Status& status) {
    error = status.code();
    FillError(status, result->mutable_error());
  }
};

namespace {

// A token for error messages: id and (escaped, shortened) bytes.
std::string DescribeToken(const Tokenizer& tokenizer, TokenId id) {
  std::string bytes(tokenizer.token_bytes(id).substr(0, 40));
  return absl::StrCat(id, " (\"", absl::CHexEscape(bytes), "\")");
}

}  // namespace

SessionStream::~SessionStream() {
  if (!sequences_.empty()) {
    env_.metrics->active_sessions().Decrement(static_cast<double>(sequences_.size()));
    if (env_.quotas != nullptr) env_.quotas->ReleaseSequences(tenant_, sequences_.size());
  }
}

bool SessionStream::RunsInline(const v1::StepRequest& request) const {
  if (static_cast<size_t>(request.ops_size()) > env_.limits.max_inline_step_ops) return false;
  for (const v1::SequenceOp& op : request.ops()) {
    if (op.op_case() == v1::SequenceOp::kOpen) return false;
  }
  return true;
}

std::vector<int> SessionStream::InlineCompiles(const v1::StepRequest& request) const {
  std::vector<int> out;
  if (static_cast<size_t>(request.ops_size()) > env_.limits.max_ops_per_request) return out;
  for (int i = 0; i < request.ops_size(); ++i) {
    const v1::SequenceOp& op = request.ops(i);
    if (op.op_case() == v1::SequenceOp::kOpen &&
        op.open().grammar_case() == v1::OpenSequence::kCompile) {
      out.push_back(i);
    }
  }
  return out;
}

absl::Status SessionStream::Step(const v1::StepRequest& request, absl::Time deadline,
                                 v1::StepResponse* response,
                                 const PrecompiledGrammars* precompiled) {
  // Stream settings: granted on the first request, fixed afterwards.
  const uint32_t asked_slots = request.session_options().mask_dictionary_slots();
  if (!configured_) {
    configured_ = true;
    requested_dictionary_slots_ = asked_slots;
    const uint32_t granted = std::min(asked_slots, env_.limits.max_mask_dictionary_slots);
    if (granted > 0) dictionary_ = std::make_unique<MaskDictionary>(granted);
    response->mutable_session_grant()->set_mask_dictionary_slots(granted);
  } else if (request.has_session_options() && asked_slots != requested_dictionary_slots_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request ", request.request_id(), " sets session_options.mask_dictionary_slots to ",
        asked_slots, " but the stream's first request set ", requested_dictionary_slots_,
        "; session options cannot change on a stream (open a new stream); no op applied"));
  }
  response->set_request_id(request.request_id());
  const int n = request.ops_size();
  response->mutable_results()->Reserve(n);
  std::vector<Work> works(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    works[i].index = i;
    works[i].op = &request.ops(i);
    works[i].result = response->add_results();
    works[i].result->set_sequence_id(request.ops(i).sequence_id());
  }

  // Planning, in request order: what each op applies to and whether it may.
  if (static_cast<size_t>(n) > env_.limits.max_ops_per_request) {
    const absl::Status too_many = absl::ResourceExhaustedError(
        absl::StrCat("request has ", n, " ops, over this server's limit of ",
                     env_.limits.max_ops_per_request, " (--max_ops_per_request); no op applied"));
    for (Work& work : works) work.Fail(too_many);
  } else {
    absl::flat_hash_map<uint64_t, int> first_op;
    size_t opening = 0;
    for (int i = 0; i < n; ++i) {
      Work& work = works[i];
      const uint64_t id = work.op->sequence_id();
      if (auto [it, inserted] = first_op.emplace(id, i); !inserted) {
        work.Fail(absl::InvalidArgumentError(
            absl::StrCat("sequence ", id, " appears more than once in this request (ops ",
                         it->second, " and ", i, "); only op ", it->second, " was applied")));
        continue;
      }
      auto found = sequences_.find(id);
      switch (work.op->op_case()) {
        case v1::SequenceOp::kOpen:
          if (found != sequences_.end()) {
            work.Fail(absl::AlreadyExistsError(
                absl::StrCat("sequence ", id, " is already open on this stream; close it first")));
          } else if (sequences_.size() + opening >= env_.limits.max_sequences_per_stream) {
            work.Fail(absl::ResourceExhaustedError(
                absl::StrCat("stream already has ", sequences_.size() + opening,
                             " open sequences, this server's limit (--max_sequences_per_stream)")));
          } else if (absl::Status quota = env_.quotas != nullptr
                                              ? env_.quotas->AcquireSequence(tenant_)
                                              : absl::OkStatus();
                     !quota.ok()) {
            work.Fail(quota);
          } else {
            // The quota place is given back below if the open fails.
            work.kind = Work::Kind::kOpen;
            ++opening;
          }
          break;
        case v1::SequenceOp::kAdvance:
        case v1::SequenceOp::kClose:
          if (found == sequences_.end()) {
            work.Fail(
                absl::NotFoundError(absl::StrCat("sequence ", id, " is not open on this stream")));
          } else if (work.op->op_case() == v1::SequenceOp::kAdvance) {
            work.kind = Work::Kind::kAdvance;
            work.sequence = found->second.get();
          }
          break;
        case v1::SequenceOp::OP_NOT_SET:
          work.Fail(absl::InvalidArgumentError(
              absl::StrCat("op ", i, " (sequence ", id, ") sets none of open, advance, close")));
          break;
      }
    }
  }

  // The ops themselves, in parallel: each touches only its own sequence.
  std::vector<Work*> runnable;
  for (Work& work : works) {
    if (work.kind != Work::Kind::kNone) runnable.push_back(&work);
  }
  if (dictionary_ != nullptr) {
    // Each op's mask outlives the parallel part.
    if (buffers_.size() < runnable.size()) buffers_.resize(runnable.size());
    for (size_t i = 0; i < runnable.size(); ++i) runnable[i]->words = &buffers_[i];
  }
  env_.pool->ParallelFor(runnable.size(), [&](size_t i) {
    Work& work = *runnable[i];
    if (work.kind == Work::Kind::kOpen) {
      Open(work.op->open(), deadline, precompiled, work);
    } else {
      Advance(work.op->advance(), *work.sequence, work);
    }
  });
  if (dictionary_ != nullptr) AssignDictionary(works);
  if (env_.limits.max_response_bytes > 0 &&
      response->ByteSizeLong() > env_.limits.max_response_bytes) {
    FitResponse(works, response);
  }

  // Bookkeeping, in request order again.
  ServiceMetrics& metrics = *env_.metrics;
  uint64_t accepted = 0;
  uint64_t rejected = 0;
  uint64_t jump_bytes = 0;
  int64_t opened = 0;
  int64_t closed = 0;
  size_t quota_returned = 0;  // opens that took a quota place and failed, and closes
  for (Work& work : works) {
    if (work.error != absl::StatusCode::kOk) metrics.CountError(work.error);
    accepted += work.tokens_accepted;
    rejected += work.tokens_rejected;
    jump_bytes += work.jump_forward_bytes;
    if (work.has_mask) {
      metrics.ObserveMask(work.mask_seconds);
      using Label = ServiceMetrics::MaskEncodingLabel;
      const Label label = work.dictionary_ref ? Label::kDictionaryRef
                          : work.mask_info.encoding == v1::MASK_ENCODING_ALLOW_LIST ? Label::kAllow
                          : work.mask_info.encoding == v1::MASK_ENCODING_DENY_LIST
                              ? Label::kDeny
                              : Label::kBitmask;
      metrics.CountMaskBytes(label, work.mask_info.payload_bytes);
    }
    if (work.opened != nullptr) {
      sequences_.emplace(work.op->sequence_id(), std::move(work.opened));
      ++opened;
    } else if (work.kind == Work::Kind::kOpen) {
      ++quota_returned;
    } else if (work.error == absl::StatusCode::kOk &&
               work.op->op_case() == v1::SequenceOp::kClose) {
      sequences_.erase(work.op->sequence_id());
      ++closed;
      ++quota_returned;
    }
  }
  if (env_.quotas != nullptr) env_.quotas->ReleaseSequences(tenant_, quota_returned);
  metrics.CountTokens(accepted, rejected);
  if (jump_bytes > 0) metrics.CountJumpForwardBytes(jump_bytes);
  if (opened != closed) {
    metrics.active_sessions().Increment(static_cast<double>(opened - closed));
  }
  // Keep the mask buffers of at most a typical batch between steps (16 KiB
  // each for a 128k vocabulary).
  constexpr size_t kKeptBuffers = 256;
  if (buffers_.size() > kKeptBuffers) buffers_.resize(kKeptBuffers);
  return absl::OkStatus();
}

void SessionStream::AssignDictionary(std::vector<Work>& works) {
  std::vector<Work*> full;  // masks sent in full, encoded below
  for (Work& work : works) {
    if (!work.has_mask) continue;
    const std::span<const uint32_t> words(*work.words);
    v1::Mask* mask = work.result->mutable_mask();
    if (std::optional<uint32_t> slot = dictionary_->Find(work.hash, work.vocab_size, words)) {
      const uint32_t allowed_count = dictionary_->allowed_count(*slot);
      mask->set_vocab_size(work.vocab_size);
      mask->set_allowed_count(allowed_count);
      mask->set_dictionary_ref(*slot);
      work.dictionary_ref = true;
      work.mask_info.allowed_count = allowed_count;
      work.mask_info.payload_bytes =
          static_cast<size_t>(google::protobuf::io::CodedOutputStream::VarintSize32(*slot));
      continue;
    }
    // Counted only for masks sent in full: a reference takes the count
    // stored with its slot.
    work.analysis = AnalyzeMask(words, work.vocab_size);
    const v1::MaskEncoding chosen = work.analysis.Choose(work.wanted);
    if (work.analysis.PayloadBytes(chosen) > env_.limits.dictionary_min_payload_bytes) {
      mask->set_dictionary_store(
          dictionary_->Store(work.hash, work.vocab_size, words, work.analysis.allowed_count));
    }
    full.push_back(&work);
  }
  env_.pool->ParallelFor(full.size(), [&](size_t i) {
    Work& work = *full[i];
    work.mask_info = EncodeMask(*work.words, work.vocab_size, work.analysis, work.wanted,
                                work.result->mutable_mask());
  });
}

void SessionStream::FitResponse(std::vector<Work>& works, v1::StepResponse* response) {
  const size_t limit = env_.limits.max_response_bytes;
  const absl::Status cut = absl::ResourceExhaustedError(absl::StrCat(
      "the response would pass this server's message limit of ", limit,
      " bytes (--max_message_bytes) with this mask: the op was applied (an opened sequence is "
      "open, an advance kept tokens_accepted tokens) but its mask was left out; ask for it "
      "again with an advance without tokens, or send fewer ops per request"));
  // What each result costs as it is (plus its tag and length prefix), and
  // what it would cost with its mask cut.
  constexpr size_t kFraming = 6;
  const size_t cut_cost = cut.message().size() + 64;
  const size_t n = works.size();
  std::vector<size_t> cost(n);
  std::vector<size_t> after(n + 1, 0);  // cost of results i.. with their masks cut
  for (size_t i = n; i-- > 0;) {
    const v1::SequenceResult& result = *works[i].result;
    cost[i] = result.ByteSizeLong() + kFraming;
    after[i] = after[i + 1] + (result.has_mask() ? std::min(cost[i], cut_cost) : cost[i]);
  }
  // Room for the response's own fields.
  constexpr size_t kReserve = 64;
  size_t used =
      kReserve +
      (response->has_session_grant() ? response->session_grant().ByteSizeLong() + kFraming : 0);
  bool full = false;
  for (size_t i = 0; i < n; ++i) {
    Work& work = works[i];
    v1::SequenceResult& result = *work.result;
    // Kept whole while everything after it still fits with masks cut.
    if (!full && used + cost[i] + after[i + 1] <= limit) {
      used += cost[i];
      continue;
    }
    full = true;  // later masks go too, so no reference outlives its store
    if (!result.has_mask()) continue;
    if (result.mask().has_dictionary_store()) dictionary_->Forget(result.mask().dictionary_store());
    result.clear_mask();
    result.clear_jump_forward();
    result.clear_stop();
    work.has_mask = false;
    work.Fail(cut);
  }
}

void SessionStream::Open(const v1::OpenSequence& open, absl::Time deadline,
                         const PrecompiledGrammars* precompiled, Work& work) {
  if (!v1::MaskEncoding_IsValid(open.mask_encoding())) {
    work.Fail(absl::InvalidArgumentError(
        absl::StrCat("open.mask_encoding ", open.mask_encoding(), " is not a known MaskEncoding")));
    return;
  }
  if (open.max_rollback_tokens() > env_.limits.max_rollback_tokens) {
    work.Fail(absl::InvalidArgumentError(absl::StrCat(
        "open.max_rollback_tokens ", open.max_rollback_tokens(), " is over this server's limit of ",
        env_.limits.max_rollback_tokens, " (--max_rollback_tokens)")));
    return;
  }
  std::shared_ptr<const CompiledGrammar> grammar;
  switch (open.grammar_case()) {
    case v1::OpenSequence::kHandle:
      grammar = env_.store->Find(open.handle());
      if (grammar == nullptr) {
        work.Fail(absl::NotFoundError(absl::StrCat(
            "grammar handle \"", open.handle().substr(0, 80),
            "\" is not in this replica's cache (compiled on another replica, evicted, or "
            "never compiled); open with an inline `compile` request instead")));
        return;
      }
      break;
    case v1::OpenSequence::kCompile: {
      if (precompiled != nullptr && static_cast<size_t>(work.index) < precompiled->size() &&
          (*precompiled)[work.index].has_value()) {
        const auto& compiled = *(*precompiled)[work.index];
        if (!compiled.ok()) {
          work.Fail(absl::Status(compiled.status().code(),
                                 absl::StrCat("open.compile: ", compiled.status().message())));
          return;
        }
        grammar = *compiled;
        break;
      }
      bool spec_error = false;
      absl::StatusOr<CompileOutcome> outcome =
          env_.compiler->CompileGrammar(open.compile(), deadline, &spec_error);
      if (!outcome.ok()) {
        work.Fail(absl::Status(outcome.status().code(),
                               absl::StrCat("open.compile: ", outcome.status().message())));
        return;
      }
      grammar = outcome->handle.grammar;
      break;
    }
    case v1::OpenSequence::GRAMMAR_NOT_SET:
      work.Fail(absl::InvalidArgumentError("open sets neither handle nor compile"));
      return;
  }
  auto sequence = std::make_unique<Sequence>();
  MatcherOptions options;
  options.max_rollback = open.max_rollback_tokens();
  sequence->grammar = grammar;
  sequence->matcher = Matcher::Create(grammar, options);
  sequence->encoding = open.mask_encoding();
  sequence->vocab_size = static_cast<uint32_t>(grammar->tokenizer().vocab_size());
  Describe(*sequence, work);
  work.opened = std::move(sequence);
}

void SessionStream::Advance(const v1::AdvanceSequence& advance, Sequence& sequence, Work& work) {
  const size_t tokens = static_cast<size_t>(advance.tokens_size() + advance.draft_tokens_size());
  if (env_.limits.max_tokens_per_op > 0 && tokens > env_.limits.max_tokens_per_op) {
    work.Fail(absl::ResourceExhaustedError(absl::StrCat(
        "advance carries ", tokens, " tokens and draft tokens, over this server's limit of ",
        env_.limits.max_tokens_per_op, " per op (--max_tokens_per_op); sequence unchanged")));
    return;
  }
  Matcher& matcher = *sequence.matcher;
  if (advance.rollback_tokens() > 0) {
    if (absl::Status s = matcher.Rollback(advance.rollback_tokens()); !s.ok()) {
      work.Fail(absl::InvalidArgumentError(
          absl::StrCat("rollback_tokens ", advance.rollback_tokens(), ": ", s.message(),
                       " (at most open.max_rollback_tokens and the tokens accepted since); "
                       "sequence unchanged")));
      return;
    }
  }
  const uint32_t vocab_size = sequence.vocab_size;
  for (int i = 0; i < advance.tokens_size(); ++i) {
    const TokenId token = advance.tokens(i);
    if (token >= vocab_size) {
      work.Fail(absl::InvalidArgumentError(
          absl::StrCat("tokens[", i, "] = ", token, " is outside the vocabulary (vocab_size ",
                       vocab_size, "); the sequence keeps the ", i, " tokens before it")));
    } else if (!matcher.AcceptToken(token)) {
      if (absl::Status grammar = sequence.grammar->status(); !grammar.ok()) {
        // The lexer automaton hit its limit while taking the token: the
        // token was not refused by the grammar.
        work.Fail(absl::ResourceExhaustedError(
            absl::StrCat("tokens[", i, "]: the grammar hit a limit (", grammar.message(),
                         "); the sequence keeps the ", i, " tokens before it")));
      } else {
        work.Fail(absl::InvalidArgumentError(
            absl::StrCat("tokens[", i, "] = ", DescribeToken(sequence.grammar->tokenizer(), token),
                         " is not allowed here; the sequence keeps the ", i, " tokens before it")));
      }
    }
    if (work.error != absl::StatusCode::kOk) {
      work.result->set_tokens_accepted(static_cast<uint32_t>(i));
      work.tokens_accepted += static_cast<uint64_t>(i);
      work.tokens_rejected += 1;
      return;
    }
  }
  work.result->set_tokens_accepted(static_cast<uint32_t>(advance.tokens_size()));
  work.tokens_accepted += static_cast<uint64_t>(advance.tokens_size());
  int drafts = 0;
  for (; drafts < advance.draft_tokens_size(); ++drafts) {
    const TokenId token = advance.draft_tokens(drafts);
    if (token >= vocab_size || !matcher.AcceptToken(token)) {
      work.tokens_rejected += 1;
      break;
    }
  }
  work.result->set_drafts_accepted(static_cast<uint32_t>(drafts));
  work.tokens_accepted += static_cast<uint64_t>(drafts);
  if (!advance.omit_mask()) Describe(sequence, work);
}

void SessionStream::Describe(Sequence& sequence, Work& work) {
  Matcher& matcher = *sequence.matcher;
  // Without a dictionary the mask is encoded at once: one scratch bitmask per
  // pool thread (16 KiB for a 128k vocabulary) instead of one per sequence.
  thread_local std::vector<uint32_t> scratch;
  std::vector<uint32_t>& words = work.words != nullptr ? *work.words : scratch;
  // FillMask writes every word.
  words.resize((static_cast<size_t>(sequence.vocab_size) + 31) / 32);
  const auto start = std::chrono::steady_clock::now();
  matcher.FillMask(words);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  work.mask_seconds = took.count();
  if (absl::Status grammar = sequence.grammar->status(); !grammar.ok()) {
    // Past a limit, masks may lack tokens (matcher.h): never send one.
    work.Fail(absl::ResourceExhaustedError(
        absl::StrCat("the grammar hit a limit while computing this mask (", grammar.message(),
                     "); the sequence cannot go on")));
    return;
  }
  work.has_mask = true;
  work.vocab_size = sequence.vocab_size;
  work.wanted = sequence.encoding;
  if (work.words != nullptr) {
    work.hash = MaskDictionary::Hash(sequence.vocab_size, words);
  } else {
    work.mask_info =
        EncodeMask(words, sequence.vocab_size, sequence.encoding, work.result->mutable_mask());
  }

  v1::StopStatus stop = v1::STOP_STATUS_CONTINUE;
  if (matcher.CanStop())
    stop = matcher.MustStop() ? v1::STOP_STATUS_MUST_STOP : v1::STOP_STATUS_MAY_STOP;
  work.result->set_stop(stop);
  if (stop == v1::STOP_STATUS_CONTINUE) {
    JumpForward jump = matcher.ComputeJumpForward();
    if (!jump.bytes.empty()) {
      work.jump_forward_bytes = jump.bytes.size();
      v1::JumpForward* out = work.result->mutable_jump_forward();
      out->set_bytes(std::move(jump.bytes));
      out->mutable_token_ids()->Add(jump.tokens.begin(), jump.tokens.end());
    }
  }
}

}  // namespace maskd
