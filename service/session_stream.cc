#include "service/session_stream.h"

#include "compiler/grammar/heap_bytes.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile/compile.h"
#include "compiler/compile/reasoning_budget.h"
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
  // kAdvance: the sequence must go (its memory could not be charged, or an
  // allocation failed mid-way and its state is not to be trusted).
  bool drop_sequence = false;

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
  if (env_.budget != nullptr) {
    env_.budget->Release(MemoryKind::kSessions, charged_buffers_);
    env_.budget->Release(MemoryKind::kDictionaries, charged_dictionary_);
  }
}

namespace {

// What a std::bad_alloc inside one op becomes: that op fails, the server
// (and every other op and stream) goes on.
absl::Status OutOfMemory(const char* doing, bool sequence_closed) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the server ran out of memory (std::bad_alloc) while ", doing,
      sequence_closed ? "; the sequence was closed (its state could not be trusted)" : "",
      "; retry later or on another replica"));
}

}  // namespace

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
    if (op.op_case() == v1::SequenceOp::kOpen && CompileHandler::OpenMayCompile(op.open())) {
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
    // An allocation failing inside an op (a memory limit the budget did not
    // foresee) fails that op, never the server.
    try {
      if (work.kind == Work::Kind::kOpen) {
        Open(work.op->open(), deadline, precompiled, work);
      } else {
        Advance(work.op->advance(), *work.sequence, work);
      }
    } catch (const std::bad_alloc&) {
      work.opened.reset();
      work.has_mask = false;
      work.result->clear_mask();
      work.result->clear_jump_forward();
      work.result->clear_stop();
      const bool advancing = work.kind == Work::Kind::kAdvance;
      work.drop_sequence = advancing;
      work.Fail(
          OutOfMemory(advancing ? "advancing this sequence" : "opening this sequence", advancing));
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
    } else if ((work.error == absl::StatusCode::kOk &&
                work.op->op_case() == v1::SequenceOp::kClose) ||
               work.drop_sequence) {
      sequences_.erase(work.op->sequence_id());
      ++closed;
      ++quota_returned;
    }
  }
  if (env_.quotas != nullptr) env_.quotas->ReleaseSequences(tenant_, quota_returned);
  // Grammars grow as masks are computed (lazy lexer states, mask caches):
  // the cache charges that now, once per grammar this step used.
  absl::flat_hash_set<const CompiledGrammar*> used_grammars;
  for (Work& work : works) {
    const Sequence* sequence = work.sequence;
    if (sequence == nullptr) {
      auto it = work.kind == Work::Kind::kOpen ? sequences_.find(work.op->sequence_id())
                                               : sequences_.end();
      if (it != sequences_.end()) sequence = it->second.get();
    }
    if (sequence == nullptr || work.drop_sequence || sequence->handle.empty()) continue;
    if (used_grammars.insert(sequence->grammar.get()).second) {
      env_.store->ChargeGrowth(sequence->handle);
    }
  }
  metrics.CountTokens(accepted, rejected);
  if (jump_bytes > 0) metrics.CountJumpForwardBytes(jump_bytes);
  if (opened != closed) {
    metrics.active_sessions().Increment(static_cast<double>(opened - closed));
  }
  // Keep the mask buffers of at most a typical batch between steps (16 KiB
  // each for a 128k vocabulary).
  constexpr size_t kKeptBuffers = 256;
  if (buffers_.size() > kKeptBuffers) buffers_.resize(kKeptBuffers);
  ChargeBuffers();
  return absl::OkStatus();
}

void SessionStream::ChargeBuffers() {
  if (env_.budget == nullptr) return;
  // Already allocated (bounded by kKeptBuffers masks): charged, not asked.
  size_t bytes = sizeof(SessionStream) + buffers_.capacity() * sizeof(std::vector<uint32_t>);
  for (const std::vector<uint32_t>& b : buffers_) bytes += b.capacity() * sizeof(uint32_t);
  if (bytes > charged_buffers_) {
    env_.budget->Charge(MemoryKind::kSessions, bytes - charged_buffers_);
  } else {
    env_.budget->Release(MemoryKind::kSessions, charged_buffers_ - bytes);
  }
  charged_buffers_ = bytes;
}

bool SessionStream::ChargeGrowth(Sequence& sequence, Work& work) {
  if (env_.budget == nullptr) return true;
  // What the sequence holds on the heap: its block, its handle's, its
  // matcher's (Matcher::MemoryBytes counts malloc's block overhead too) and
  // its slot in the stream's map (about two slots per sequence: the table
  // doubles and is at most 7/8 full). session_memory_test checks the sum
  // against mallinfo2.
  constexpr size_t kMapSlotBytes = sizeof(std::pair<uint64_t, std::unique_ptr<Sequence>>) + 1;
  const size_t handle_bytes =
      sequence.handle.capacity() > 15 ? MallocBlockBytes(sequence.handle.capacity() + 1) : 0;
  const size_t now = MallocBlockBytes(sizeof(Sequence)) + handle_bytes + 2 * kMapSlotBytes +
                     sequence.matcher->MemoryBytes();
  if (now <= sequence.charged) return true;
  absl::Status charged =
      env_.budget->TryCharge(MemoryKind::kSequences, now - sequence.charged,
                             absl::StrCat("sequence ", work.op->sequence_id(), "'s parser state"));
  if (!charged.ok()) {
    work.Fail(charged);
    return false;
  }
  sequence.budget = env_.budget;
  sequence.charged = now;
  return true;
}

bool SessionStream::ChargeDictionaryStore(size_t words) {
  if (env_.budget == nullptr) return true;
  // A store into a never-used slot adds a mask; replacing one reuses its
  // words. A refusal only means the mask is not stored (it is sent in full,
  // as a stream without a dictionary would get it).
  if (dictionary_->used() < dictionary_->slots()) {
    const size_t bytes = words * sizeof(uint32_t) + sizeof(uint64_t) * 4;
    // Dictionaries only save bandwidth: together they get at most a quarter
    // of the budget, so they never crowd out sequences (in the soak, 94
    // streams' dictionaries took 369 of a 512 MiB budget and opens failed).
    const size_t limit = env_.budget->limit();
    if (limit > 0 && env_.budget->used(MemoryKind::kDictionaries) + bytes > limit / 4) return false;
    if (!env_.budget->TryCharge(MemoryKind::kDictionaries, bytes, "a mask dictionary store").ok()) {
      return false;
    }
    charged_dictionary_ += bytes;
  }
  return true;
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
    if (work.analysis.PayloadBytes(chosen) > env_.limits.dictionary_min_payload_bytes &&
        ChargeDictionaryStore(words.size())) {
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
  std::optional<absl::StatusOr<OpenedGrammar>> resolved;
  if (precompiled != nullptr && static_cast<size_t>(work.index) < precompiled->size() &&
      (*precompiled)[work.index].has_value()) {
    resolved = *(*precompiled)[work.index];
  } else {
    resolved = env_.compiler->OpenGrammar(open, deadline);
  }
  if (!resolved->ok()) {
    work.Fail(resolved->status());
    return;
  }
  const OpenedGrammar& opened = **resolved;
  const std::shared_ptr<const CompiledGrammar>& grammar = opened.grammar;
  auto sequence = std::make_unique<Sequence>();
  MatcherOptions options;
  options.max_rollback = open.max_rollback_tokens();
  options.max_parser_depth = env_.limits.max_parser_depth;
  sequence->grammar = grammar;
  sequence->handle = opened.handle;
  if (open.has_max_reasoning_tokens()) {
    ReasoningBudget budget;
    budget.end_marker = opened.reasoning_end_marker;
    budget.max_tokens = open.max_reasoning_tokens();
    budget.prefix_bytes = opened.required_prefix_bytes;
    absl::StatusOr<std::unique_ptr<Matcher>> budgeted =
        CreateBudgetedMatcher(grammar, budget, options);
    if (!budgeted.ok()) {
      work.Fail(absl::InvalidArgumentError(
          absl::StrCat("open.max_reasoning_tokens: ", budgeted.status().message())));
      return;
    }
    sequence->matcher = *std::move(budgeted);
  } else {
    sequence->matcher = Matcher::Create(grammar, options);
  }
  if (opened.healing.has_value()) {
    v1::Healing* healing = work.result->mutable_healing();
    healing->set_prompt_tokens_to_drop(opened.healing->tokens_to_drop);
    healing->set_removed_bytes(opened.healing->removed_bytes);
    healing->set_healed_handle(opened.healed_handle);
  }
  sequence->encoding = open.mask_encoding();
  sequence->vocab_size = static_cast<uint32_t>(grammar->tokenizer().vocab_size());
  // Charged before its first mask (so a refused open costs little), and for
  // what the mask's walk grew.
  if (!ChargeGrowth(*sequence, work)) return;
  Describe(*sequence, work);
  if (!ChargeGrowth(*sequence, work)) {
    work.has_mask = false;
    work.result->clear_mask();
    work.result->clear_jump_forward();
    work.result->clear_stop();
    return;
  }
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
      if (matcher.HitDepthLimit()) {
        work.Fail(absl::ResourceExhaustedError(absl::StrCat(
            "tokens[", i, "] would take the sequence's parser past ", env_.limits.max_parser_depth,
            " lexemes, this server's limit (--max_parser_depth); the sequence keeps the ", i,
            " tokens before it")));
      } else if (absl::Status grammar = sequence.grammar->status(); !grammar.ok()) {
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
    // The parser's buffers grow by doubling: charged as they grow, so one
    // op cannot take more than the budget holds. Past the budget the memory
    // is already taken: the sequence goes to give it back.
    if (!ChargeGrowth(sequence, work)) {
      work.Fail(absl::ResourceExhaustedError(
          absl::StrCat("tokens[", i, "]: ", work.result->error().message(),
                       "; the sequence was closed to give its memory back")));
      work.drop_sequence = true;
      work.result->set_tokens_accepted(static_cast<uint32_t>(i + 1));
      work.tokens_accepted += static_cast<uint64_t>(i + 1);
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
  if (!ChargeGrowth(sequence, work)) {
    work.Fail(absl::ResourceExhaustedError(absl::StrCat(
        work.result->error().message(), "; the sequence was closed to give its memory back")));
    work.drop_sequence = true;
    work.has_mask = false;
    work.result->clear_mask();
    work.result->clear_jump_forward();
    work.result->clear_stop();
  }
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
