// The real maskd binary against the in-process engine on a deterministic
// MaskBench dev sample with real Llama-3 token ids: the same compile
// outcomes, and for every instance, at every step, the same verdict, the
// identical mask (whatever wire encoding carried it), the same stop status
// and the same jump-forward bytes and tokens.
//
// All instances of all sampled schemas run as concurrent sequences of one
// Session stream, one token each per step, so the stream also carries large
// batches whose sequences open, fail and close at different steps. The run
// is repeated without a mask dictionary, with the client's default one, and
// with one so small that slots are replaced all the time.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "clients/cpp/spec.h"
#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "harness/maskbench_data.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

// Small enough for ASan; large enough to cover objects, arrays, strings with
// formats, numbers with bounds, refusals.
constexpr size_t kSampleSchemas = 15;
// Disagreements reported in detail before the rest are only counted.
constexpr int kReportedMismatches = 8;

// One MaskBench instance teacher-forced through both the server and the
// engine.
struct InstanceRun {
  std::string name;  // schema name + instance index, for messages
  std::vector<TokenId> tokens;
  std::unique_ptr<Matcher> engine;
  size_t next = 0;  // index of the next token to send
  bool done = false;
  bool server_accepted = true;  // every token so far accepted by the server
  bool engine_accepted = true;
  bool server_may_stop = false;  // after the last step
};

v1::MaskEncoding EncodingFor(size_t i) {
  static constexpr v1::MaskEncoding kAll[] = {v1::MASK_ENCODING_AUTO, v1::MASK_ENCODING_BITMASK,
                                              v1::MASK_ENCODING_ALLOW_LIST,
                                              v1::MASK_ENCODING_DENY_LIST};
  return kAll[i % 4];
}

class Comparer {
 public:
  explicit Comparer(size_t vocab) : words_((vocab + 31) / 32) {}

  // Checks the server's answer for a step against the engine, which has
  // already taken the same token.
  void Compare(InstanceRun& run, const client::SequenceResult& result) {
    const std::string where = absl::StrCat(run.name, " at token ", run.next);
    absl::StatusOr<client::TokenMask> mask = result.DecodeMask();
    if (!mask.ok()) return Mismatch(where, absl::StrCat("mask: ", mask.status().ToString()));
    if (result.wire_mask().encoding_case() == v1::Mask::kDictionaryRef) ++dictionary_refs_;
    run.engine->FillMask(words_);
    if (!std::equal(words_.begin(), words_.end(), mask->words().begin(), mask->words().end())) {
      size_t first = 0;
      while (first < words_.size() && words_[first] == mask->words()[first]) ++first;
      return Mismatch(where,
                      absl::StrCat("masks differ first at word ", first, " (engine ", words_[first],
                                   ", server ", mask->words()[first], "), encoding ",
                                   client::MaskEncodingName(result.wire_mask())));
    }
    const bool can_stop = run.engine->CanStop();
    const v1::StopStatus expected_stop = !can_stop                ? v1::STOP_STATUS_CONTINUE
                                         : run.engine->MustStop() ? v1::STOP_STATUS_MUST_STOP
                                                                  : v1::STOP_STATUS_MAY_STOP;
    if (result.stop() != expected_stop) {
      return Mismatch(where, absl::StrCat("stop status ", v1::StopStatus_Name(result.stop()),
                                          ", engine ", v1::StopStatus_Name(expected_stop)));
    }
    const JumpForward jump = run.engine->ComputeJumpForward();
    const std::vector<TokenId> server_jump(result.jump_forward_tokens().begin(),
                                           result.jump_forward_tokens().end());
    if (jump.bytes != result.jump_forward_bytes() || jump.tokens != server_jump) {
      return Mismatch(where, absl::StrCat("jump-forward '", result.jump_forward_bytes(),
                                          "', engine '", jump.bytes, "'"));
    }
    ++compared_masks_;
  }

  void Mismatch(const std::string& where, const std::string& what) {
    if (++mismatches_ <= kReportedMismatches) ADD_FAILURE() << where << ": " << what;
  }

  int mismatches() const { return mismatches_; }
  size_t compared_masks() const { return compared_masks_; }
  size_t dictionary_refs() const { return dictionary_refs_; }

 private:
  std::vector<uint32_t> words_;
  size_t dictionary_refs_ = 0;
  int mismatches_ = 0;
  size_t compared_masks_ = 0;
};

class MaskBenchE2eTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(MaskBenchE2eTest, ServerGivesTheEnginesVerdictsAndMasksAtEveryStep) {
  const uint32_t dictionary_slots = GetParam();
  const absl::Time start = absl::Now();
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Llama3();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  absl::StatusOr<std::vector<maskbench::SchemaCase>> cases =
      maskbench::LoadMaskBench(testing::MaskBenchPath());
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server = StartMaskd();
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**server);
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer("llama3");
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->tokenizer_id(), (*tokenizer)->id());
  ASSERT_EQ(info->vocab_size(), (*tokenizer)->vocab_size());

  // Permissive on both sides: more of the sample compiles, so more masks are
  // compared.
  CompileOptions engine_options;
  engine_options.strict = false;
  v1::CompileOptions wire_options;
  wire_options.set_unknown_keywords(v1::UNKNOWN_KEYWORD_POLICY_PERMISSIVE);

  client::SessionOptions session_options;
  session_options.mask_dictionary_slots = dictionary_slots;
  std::unique_ptr<client::Session> session = client->StartSession(session_options);
  std::vector<InstanceRun> runs;
  size_t compiled = 0, refused = 0;
  for (size_t index : maskbench::DeterministicSample(cases->size(), kSampleSchemas)) {
    const maskbench::SchemaCase& schema = (*cases)[index];
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    spec.text = schema.schema;
    absl::StatusOr<std::shared_ptr<const CompiledGrammar>> engine =
        CompileGrammar(spec, engine_options, *tokenizer);
    absl::StatusOr<client::CompileResult> remote =
        client->Compile(info->tokenizer_id(), client::JsonSchemaSpec(schema.schema), wire_options);
    ASSERT_EQ(remote.ok(), engine.ok())
        << schema.name << ": server " << remote.status() << ", engine " << engine.status();
    if (!engine.ok()) {
      EXPECT_EQ(remote.status().code(), engine.status().code()) << schema.name;
      ++refused;
      continue;
    }
    ++compiled;
    for (size_t t = 0; t < schema.tests.size(); ++t) {
      InstanceRun run;
      run.name = absl::StrCat(schema.name, " test ", t);
      run.tokens = (*tokenizer)->Encode(schema.tests[t].text);
      run.engine = Matcher::Create(*engine);
      client::OpenOptions open;
      open.encoding = EncodingFor(runs.size());
      session->Open(runs.size(), remote->handle, open);
      runs.push_back(std::move(run));
    }
  }
  ASSERT_GE(compiled, kSampleSchemas / 2) << "too few schemas compiled to compare anything";
  const absl::Time stepping = absl::Now();

  Comparer comparer((*tokenizer)->vocab_size());
  size_t steps = 0, verdicts_compared = 0;
  // Step 0 answers the opens; each later step advances every live run by one
  // token, or closes it after its last token.
  absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(session->dictionary_slots(), dictionary_slots);
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE((*results)[i].ok()) << runs[i].name << ": " << (*results)[i].status();
    runs[i].server_may_stop = (*results)[i].may_stop();
    comparer.Compare(runs[i], (*results)[i]);
  }
  while (true) {
    std::vector<size_t> advanced;  // the run each op of this step is for
    for (size_t i = 0; i < runs.size(); ++i) {
      InstanceRun& run = runs[i];
      if (run.done) continue;
      if (!run.server_accepted || !run.engine_accepted || run.next == run.tokens.size()) {
        // Finished: same verdict on both sides.
        const bool server_verdict = run.server_accepted && run.server_may_stop;
        const bool engine_verdict = run.engine_accepted && run.engine->CanStop();
        EXPECT_EQ(server_verdict, engine_verdict) << run.name;
        ++verdicts_compared;
        session->Close(i);
        run.done = true;
        advanced.push_back(i);
        continue;
      }
      const TokenId token = run.tokens[run.next];
      session->Advance(i, {&token, 1});
      run.engine_accepted = run.engine->AcceptToken(token);
      advanced.push_back(i);
    }
    if (advanced.empty()) break;
    results = session->Step();
    ASSERT_TRUE(results.ok()) << results.status();
    ++steps;
    for (size_t k = 0; k < advanced.size(); ++k) {
      InstanceRun& run = runs[advanced[k]];
      const client::SequenceResult& result = (*results)[k];
      ASSERT_EQ(result.sequence_id(), advanced[k]);
      if (run.done) {
        EXPECT_TRUE(result.ok()) << run.name << " close: " << result.status();
        continue;
      }
      run.server_accepted = result.ok() && result.tokens_accepted() == 1;
      if (run.server_accepted != run.engine_accepted) {
        comparer.Mismatch(run.name,
                          absl::StrCat("token ", run.next, ": server ", result.status().ToString(),
                                       ", engine ", run.engine_accepted ? "accepts" : "refuses"));
        run.server_accepted = run.engine_accepted = false;  // end it; counted as a mismatch
        continue;
      }
      if (!run.server_accepted) {
        EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << run.name;
        EXPECT_EQ(result.tokens_accepted(), 0u) << run.name;
        EXPECT_FALSE(result.has_mask()) << run.name;
        continue;
      }
      ++run.next;
      run.server_may_stop = result.may_stop();
      comparer.Compare(run, result);
    }
  }
  EXPECT_TRUE(session->Finish().ok());
  EXPECT_EQ(comparer.mismatches(), 0);
  EXPECT_EQ(verdicts_compared, runs.size());
  EXPECT_GT(comparer.compared_masks(), 1000u);
  if (dictionary_slots == 0) {
    EXPECT_EQ(comparer.dictionary_refs(), 0u);
  } else {
    // Most masks repeat (the same lexer state gives the same mask).
    EXPECT_GT(comparer.dictionary_refs(), comparer.compared_masks() / 4);
  }
  std::printf(
      "dictionary slots %u: %zu schemas compiled, %zu refused by both; %zu instances, %zu "
      "steps, %zu masks identical (%zu as dictionary refs); setup and compiles %.1f s, steps "
      "%.1f s\n",
      dictionary_slots, compiled, refused, runs.size(), steps, comparer.compared_masks(),
      comparer.dictionary_refs(), absl::ToDoubleSeconds(stepping - start),
      absl::ToDoubleSeconds(absl::Now() - stepping));
  EXPECT_EQ((*server)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
}

// 0: off; 256: the client's default; 8: slots replaced all the time.
INSTANTIATE_TEST_SUITE_P(DictionarySlots, MaskBenchE2eTest, ::testing::Values(0u, 256u, 8u),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return absl::StrCat("Slots", info.param);
                         });

}  // namespace
}  // namespace maskd::e2e
