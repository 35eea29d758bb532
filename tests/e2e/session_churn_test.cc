// 1,000 sequences opened and closed in churn on 10 concurrent Session
// streams of one maskd: every op succeeds, every mask allows the token the
// instance needs next, inline-compile opens and handle opens mix, and when
// the streams end the server holds no sequence and no stream.
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

constexpr int kStreams = 10;
constexpr int kSequencesPerStream = 100;
constexpr int kOpensPerStep = 5;
// Each sequence lives this many steps after its open (advancing one token
// each), so about kOpensPerStep * kLifetime sequences are open per stream.
constexpr size_t kLifetime = 6;

constexpr char kSchema[] =
    R"({"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array",)"
    R"("items":{"type":"string"}}},"required":["id","tags"]})";
constexpr char kInstance[] = R"({"id": 12345, "tags": ["alpha", "beta", "gamma"]})";

struct Live {
  uint64_t id;
  size_t next;  // index of the next token
};

// One stream's churn; returns a failure description or "".
std::string Churn(const client::MaskdClient& client, int stream, const std::string& handle,
                  const v1::CompileRequest& inline_compile, const std::vector<TokenId>& tokens) {
  std::unique_ptr<client::Session> session = client.StartSession();
  std::vector<Live> live;
  uint64_t next_id = static_cast<uint64_t>(stream) * 1'000'000;
  int opened = 0;
  while (opened < kSequencesPerStream || !live.empty()) {
    // The ops of this step: advance or close every live sequence, open new.
    std::vector<Live> after;
    for (const Live& seq : live) {
      if (seq.next >= kLifetime || seq.next >= tokens.size()) {
        session->Close(seq.id);
      } else {
        session->Advance(seq.id, {&tokens[seq.next], 1});
        after.push_back({seq.id, seq.next + 1});
      }
    }
    for (int k = 0; k < kOpensPerStep && opened < kSequencesPerStream; ++k, ++opened) {
      // Every fourth open compiles inline: all streams race on the same
      // content hash, which the server must compile once and share.
      if (opened % 4 == 0) {
        session->OpenInline(next_id, inline_compile);
      } else {
        session->Open(next_id, handle);
      }
      after.push_back({next_id++, 0});
    }
    absl::StatusOr<std::vector<client::SequenceResult>> results = session->Step();
    if (!results.ok()) return absl::StrCat("stream ", stream, ": ", results.status().ToString());
    for (const client::SequenceResult& result : *results) {
      if (!result.ok()) {
        return absl::StrCat("stream ", stream, " sequence ", result.sequence_id(), ": ",
                            result.status().ToString());
      }
    }
    for (const Live& seq : after) {
      // The result for this sequence is the one with its id.
      for (const client::SequenceResult& result : *results) {
        if (result.sequence_id() != seq.id) continue;
        if (seq.next < tokens.size() && !result.Allows(tokens[seq.next])) {
          return absl::StrCat("stream ", stream, " sequence ", seq.id, ": token ", seq.next,
                              " not allowed");
        }
      }
    }
    live = std::move(after);
  }
  const absl::Status finished = session->Finish();
  return finished.ok() ? "" : absl::StrCat("stream ", stream, " finish: ", finished.ToString());
}

TEST(SessionChurnTest, ThousandSequencesOnTenStreams) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server = StartMaskd();
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Llama3();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const std::vector<TokenId> tokens = (*tokenizer)->Encode(kInstance);
  ASSERT_GT(tokens.size(), kLifetime);

  std::unique_ptr<client::MaskdClient> client = ClientOf(**server);
  absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client, kSchema);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // The same schema with a trailing space, opened inline: different bytes,
  // so the inline opens of all streams race to compile (or find) it.
  v1::CompileRequest inline_compile;
  inline_compile.set_tokenizer_id(compiled->tokenizer_id);
  *inline_compile.mutable_spec() = client::JsonSchemaSpec(absl::StrCat(kSchema, " "));

  std::vector<std::string> failures(kStreams);
  std::vector<std::thread> threads;
  for (int s = 0; s < kStreams; ++s) {
    threads.emplace_back(
        [&, s] { failures[s] = Churn(*client, s, compiled->handle, inline_compile, tokens); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");

  // Everything the streams held is gone.
  std::optional<double> sessions, streams;
  for (int i = 0; i < 200; ++i) {
    const std::string metrics = FetchMetrics((*server)->metrics_address());
    sessions = MetricValue(metrics, "maskd_active_sessions");
    streams = MetricValue(metrics, "maskd_active_streams");
    if (sessions == 0 && streams == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(sessions, 0);
  EXPECT_EQ(streams, 0);
  EXPECT_EQ((*server)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
}

}  // namespace
}  // namespace maskd::e2e
