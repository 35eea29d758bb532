// SequenceLedger (clients/cpp/sequence_ledger.h), no server: what it
// remembers of each op as its result reports it, and the requests that
// rebuild the sequences on a fresh stream.
#include "clients/cpp/sequence_ledger.h"

#include "gtest/gtest.h"

namespace maskd::client {
namespace {

v1::CompileRequest Regex(const std::string& pattern) {
  v1::CompileRequest request;
  request.set_tokenizer_id("tok");
  request.mutable_spec()->set_regex(pattern);
  return request;
}

// One op and its result, applied.
struct Step {
  v1::StepRequest request;
  v1::StepResponse response;
  v1::SequenceResult* Add(uint64_t id) {
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    v1::SequenceResult* result = response.add_results();
    result->set_sequence_id(id);
    return result;
  }
  v1::SequenceOp& op() { return *request.mutable_ops(request.ops_size() - 1); }
};

void AddAll(google::protobuf::RepeatedField<uint32_t>* field, std::vector<uint32_t> values) {
  field->Add(values.begin(), values.end());
}

std::vector<TokenId> Tokens(const SequenceLedger& ledger, uint64_t id) {
  return ledger.entries().at(id).tokens;
}

TEST(SequenceLedgerTest, FollowsOpensAdvancesRollbacksDraftsAndCloses) {
  auto book = std::make_shared<SpecBook>();
  book->Remember("h1", Regex("b+"));
  SequenceLedger ledger(book);
  Step open;
  open.Add(1);
  *open.op().mutable_open()->mutable_compile() = Regex("a+");
  open.op().mutable_open()->set_max_rollback_tokens(4);
  open.Add(2);
  open.op().mutable_open()->set_handle("h1");
  open.Add(3)->mutable_error()->set_code(3);  // a failed open: not open
  open.op().mutable_open()->set_handle("h1");
  ledger.Apply(open.request, open.response);
  ASSERT_EQ(ledger.entries().size(), 2u);
  EXPECT_EQ(ledger.entries().at(2).compile->spec().regex(), "b+");

  Step advance;
  v1::SequenceResult* r1 = advance.Add(1);
  AddAll(advance.op().mutable_advance()->mutable_tokens(), {5, 6, 7});
  AddAll(advance.op().mutable_advance()->mutable_draft_tokens(), {8, 9});
  r1->set_tokens_accepted(3);
  r1->set_drafts_accepted(1);
  v1::SequenceResult* r2 = advance.Add(2);  // the third token refused
  AddAll(advance.op().mutable_advance()->mutable_tokens(), {1, 2, 3});
  r2->set_tokens_accepted(2);
  r2->mutable_error()->set_code(3);
  ledger.Apply(advance.request, advance.response);
  EXPECT_EQ(Tokens(ledger, 1), (std::vector<TokenId>{5, 6, 7, 8}));
  EXPECT_EQ(Tokens(ledger, 2), (std::vector<TokenId>{1, 2}));

  Step rollback;
  rollback.Add(1)->set_tokens_accepted(1);
  rollback.op().mutable_advance()->set_rollback_tokens(2);
  rollback.op().mutable_advance()->add_tokens(11);
  // Sequence 2 opened without rollback snapshots: the server refuses it and
  // the sequence is unchanged.
  rollback.Add(2)->mutable_error()->set_code(3);
  rollback.op().mutable_advance()->set_rollback_tokens(1);
  ledger.Apply(rollback.request, rollback.response);
  EXPECT_EQ(Tokens(ledger, 1), (std::vector<TokenId>{5, 6, 11}));
  EXPECT_EQ(Tokens(ledger, 2), (std::vector<TokenId>{1, 2}));

  Step close;
  close.Add(2);
  close.op().mutable_close();
  ledger.Apply(close.request, close.response);
  EXPECT_EQ(ledger.entries().count(2), 0u);
  EXPECT_EQ(ledger.entries().count(1), 1u);
}

TEST(SequenceLedgerTest, RestoreOpensInlineThenReplaysInChunks) {
  auto book = std::make_shared<SpecBook>();
  book->Remember("known", Regex("k"));
  SequenceLedger ledger(book);
  Step open;
  for (uint64_t id : {1, 2, 3}) {
    open.Add(id);
    *open.op().mutable_open()->mutable_compile() = Regex("x");
  }
  open.Add(4);
  open.op().mutable_open()->set_handle("known");
  open.op().mutable_open()->set_mask_encoding(v1::MASK_ENCODING_BITMASK);
  open.Add(5);
  open.op().mutable_open()->set_handle("unknown");
  ledger.Apply(open.request, open.response);
  Step advance;
  advance.Add(1)->set_tokens_accepted(5);
  AddAll(advance.op().mutable_advance()->mutable_tokens(), {1, 2, 3, 4, 5});
  advance.Add(4)->set_tokens_accepted(2);
  AddAll(advance.op().mutable_advance()->mutable_tokens(), {7, 8});
  ledger.Apply(advance.request, advance.response);

  std::map<uint64_t, absl::Status> lost;
  const std::vector<v1::StepRequest> requests = ledger.RestoreRequests(3, 2, &lost);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost.at(5).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(lost.at(5).message().find("'unknown'"), std::string::npos) << lost.at(5);
  // Opens of 1, 2, 3 | 4; replays 1:[1,2] 4:[7,8] | 1:[3,4] | 1:[5].
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[0].ops_size(), 3);
  ASSERT_EQ(requests[1].ops_size(), 1);
  EXPECT_EQ(requests[1].ops(0).open().compile().spec().regex(), "k");
  EXPECT_EQ(requests[1].ops(0).open().mask_encoding(), v1::MASK_ENCODING_BITMASK);
  ASSERT_EQ(requests[2].ops_size(), 2);
  EXPECT_EQ(requests[2].ops(0).sequence_id(), 1u);
  EXPECT_TRUE(requests[2].ops(0).advance().omit_mask());
  EXPECT_EQ(requests[2].ops(1).advance().tokens_size(), 2);
  ASSERT_EQ(requests[3].ops_size(), 1);
  EXPECT_EQ(requests[3].ops(0).advance().tokens(1), 4u);
  ASSERT_EQ(requests[4].ops_size(), 1);
  EXPECT_EQ(requests[4].ops(0).advance().tokens(0), 5u);
}

}  // namespace
}  // namespace maskd::client

namespace maskd::client {
namespace {

// A reopen heals and budgets as the first open did: the replayed tokens
// were accepted under the healed grammar and the budget.
TEST(SequenceLedgerTest, ReopensWithThePromptTailAndTheReasoningBudget) {
  SequenceLedger ledger(nullptr);
  Step open;
  open.Add(1);
  *open.op().mutable_open()->mutable_compile() = Regex("a+");
  AddAll(open.op().mutable_open()->mutable_prompt_tail_tokens(), {11, 12});
  open.op().mutable_open()->set_max_reasoning_tokens(7);
  open.Add(2);
  *open.op().mutable_open()->mutable_compile() = Regex("b+");
  ledger.Apply(open.request, open.response);
  std::map<uint64_t, absl::Status> lost;
  std::vector<v1::StepRequest> requests = ledger.RestoreRequests(16, 16, &lost);
  ASSERT_EQ(requests.size(), 1u);
  ASSERT_EQ(requests[0].ops_size(), 2);
  const v1::OpenSequence& healed = requests[0].ops(0).open();
  EXPECT_EQ(
      std::vector<uint32_t>(healed.prompt_tail_tokens().begin(), healed.prompt_tail_tokens().end()),
      (std::vector<uint32_t>{11, 12}));
  ASSERT_TRUE(healed.has_max_reasoning_tokens());
  EXPECT_EQ(healed.max_reasoning_tokens(), 7u);
  EXPECT_EQ(requests[0].ops(1).open().prompt_tail_tokens_size(), 0);
  EXPECT_FALSE(requests[0].ops(1).open().has_max_reasoning_tokens());
}

}  // namespace
}  // namespace maskd::client
