// Failover with nothing lost: three real maskd replicas on loopback behind
// client-side round robin (an `ipv4:` list), 64 sequences generating with
// seeded sampling over several Session streams; one replica is killed with
// SIGKILL mid-run, then another drained with SIGTERM. Every sequence must
// finish with the same tokens and the same masks as a run without faults,
// and the sessions must report the failovers. With failover off, or when no
// replica is left, the stream failure is the caller's, as before.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <map>
#include <random>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cpp/spec.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

constexpr int kSessions = 8;
constexpr int kSequencesPerSession = 8;  // 64 sequences
constexpr size_t kMaxTokens = 40;

// Mixed specs: a sequence's spec is picked by its id.
std::vector<v1::ConstraintSpec> Specs() {
  return {
      client::JsonSchemaSpec(
          R"({"type":"object","properties":{"name":{"type":"string","maxLength":10},)"
          R"("age":{"type":"integer","minimum":0,"maximum":150}},"required":["name","age"],)"
          R"("additionalProperties":false})"),
      client::RegexSpec(R"([a-z]{2,8}@[a-z]{2,6}\.(com|org|net))"),
      client::ChoicesSpec({"red", "green", "blue", "a much longer choice of colour"}),
      client::JsonSchemaSpec(R"({"type":"array","items":{"type":"boolean"},"maxItems":6})"),
  };
}

// One sequence's run: its tokens and a fingerprint of every mask it got.
struct Transcript {
  std::vector<TokenId> tokens;
  std::vector<uint64_t> mask_hashes;
  bool operator==(const Transcript&) const = default;
};

uint64_t HashMask(const client::TokenMask& mask) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (uint32_t word : mask.words()) {
    h = (h ^ word) * 1099511628211ull;
  }
  return h;
}

struct Sequence {
  uint64_t id;
  std::mt19937_64 random;
  Transcript transcript;
  bool done = false;
};

// Drives kSessions sessions of kSequencesPerSession sequences each, one step
// of every session per round, sampling uniformly (seeded by sequence id)
// among the allowed tokens until EOS or kMaxTokens. `between_rounds(r)` runs
// after round r (the faults). Returns the transcripts by sequence id.
struct GenerationRun {
  std::map<uint64_t, Transcript> transcripts;
  int failovers = 0;
  std::vector<client::FailoverEvent> events;
  std::vector<std::string> errors;
};

GenerationRun Generate(const client::MaskdClient& client, const std::string& tokenizer_id,
                       const std::vector<TokenId>& eos,
                       const std::function<void(int)>& between_rounds) {
  GenerationRun run;
  const std::vector<v1::ConstraintSpec> specs = Specs();
  std::vector<std::unique_ptr<client::Session>> sessions;
  std::vector<std::vector<Sequence>> sequences(kSessions);
  client::SessionOptions options;
  options.failover.on_failover = [&](const client::FailoverEvent& event) {
    run.events.push_back(event);
  };
  for (int s = 0; s < kSessions; ++s) {
    sessions.push_back(client.StartSession(options));
    for (int i = 0; i < kSequencesPerSession; ++i) {
      const uint64_t id = s * kSequencesPerSession + i;
      sequences[s].push_back(Sequence{id, std::mt19937_64(id + 1), {}});
      v1::CompileRequest compile;
      compile.set_tokenizer_id(tokenizer_id);
      *compile.mutable_spec() = specs[id % specs.size()];
      sessions[s]->OpenInline(id, compile);
    }
  }
  for (int round = 0;; ++round) {
    bool any_live = false;
    for (int s = 0; s < kSessions; ++s) {
      if (round > 0) {
        bool live = false;
        for (Sequence& seq : sequences[s]) {
          if (seq.done) continue;
          live = true;
          const std::vector<TokenId>& tokens = seq.transcript.tokens;
          if (!tokens.empty() && tokens.size() < kMaxTokens &&
              std::find(eos.begin(), eos.end(), tokens.back()) == eos.end()) {
            sessions[s]->Advance(seq.id, {&tokens.back(), 1});
            continue;
          }
          sessions[s]->Close(seq.id);
          seq.done = true;
        }
        if (!live) continue;
      }
      any_live = true;
      absl::StatusOr<std::vector<client::SequenceResult>> results = sessions[s]->Step();
      if (!results.ok()) {
        run.errors.push_back(
            absl::StrCat("session ", s, " round ", round, ": ", results.status().ToString()));
        return run;
      }
      for (const client::SequenceResult& result : *results) {
        Sequence& seq = sequences[s][result.sequence_id() % kSequencesPerSession];
        if (seq.done) continue;  // the close's result
        if (!result.ok()) {
          run.errors.push_back(absl::StrCat("sequence ", seq.id, ": ", result.status().ToString()));
          seq.done = true;
          continue;
        }
        absl::StatusOr<client::TokenMask> mask = result.DecodeMask();
        if (!mask.ok() || mask->allowed_count() == 0) {
          run.errors.push_back(absl::StrCat("sequence ", seq.id, ": no usable mask"));
          seq.done = true;
          continue;
        }
        seq.transcript.mask_hashes.push_back(HashMask(*mask));
        const std::vector<TokenId> allowed = mask->AllowedTokens();
        seq.transcript.tokens.push_back(allowed[seq.random() % allowed.size()]);
      }
    }
    if (!any_live) break;
    between_rounds(round);
  }
  for (int s = 0; s < kSessions; ++s) {
    run.failovers += sessions[s]->failovers();
    EXPECT_TRUE(sessions[s]->Finish().ok());
    for (Sequence& seq : sequences[s]) run.transcripts[seq.id] = std::move(seq.transcript);
  }
  return run;
}

double ActiveStreams(const testing::MaskdProcess& process) {
  return MetricValue(FetchMetrics(process.metrics_address()), "maskd_active_streams").value_or(-1);
}

class FailoverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Three replicas, started together (each loads Llama 3).
    std::vector<std::thread> starters;
    for (int r = 0; r < 3; ++r) {
      starters.emplace_back([r] {
        absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> process =
            StartMaskd({"--shutdown_grace=3s"});
        if (process.ok()) {
          replicas_[r] = *std::move(process);
        } else {
          start_errors_[r] = process.status().ToString();
        }
      });
    }
    for (std::thread& t : starters) t.join();
  }
  static void TearDownTestSuite() {
    for (auto& replica : replicas_) replica.reset();
  }
  void SetUp() override {
    for (int r = 0; r < 3; ++r) {
      ASSERT_NE(replicas_[r], nullptr) << "replica " << r << ": " << start_errors_[r];
    }
  }

  static std::unique_ptr<testing::MaskdProcess> replicas_[3];
  static std::string start_errors_[3];
};
std::unique_ptr<testing::MaskdProcess> FailoverTest::replicas_[3];
std::string FailoverTest::start_errors_[3];

TEST_F(FailoverTest, KillAndDrainMidRunLoseNothing) {
  // The reference: every stream on replica 0, no faults.
  std::unique_ptr<client::MaskdClient> direct = ClientOf(*replicas_[0]);
  absl::StatusOr<v1::TokenizerInfo> info = direct->FindTokenizer("llama3");
  ASSERT_TRUE(info.ok()) << info.status();
  const std::vector<TokenId> eos(info->eos_token_ids().begin(), info->eos_token_ids().end());
  const GenerationRun reference = Generate(*direct, info->tokenizer_id(), eos, [](int) {});
  ASSERT_TRUE(reference.errors.empty()) << absl::StrJoin(reference.errors, "\n");
  ASSERT_EQ(reference.transcripts.size(), kSessions * kSequencesPerSession);
  EXPECT_EQ(reference.failovers, 0);

  // The same through round robin over the three replicas, with faults.
  client::ChannelOptions options;
  options.target = absl::StrCat("ipv4:", replicas_[0]->grpc_address(), ",",
                                replicas_[1]->grpc_address(), ",", replicas_[2]->grpc_address());
  options.load_balancing_policy = "round_robin";
  options.rpc_deadline = absl::Seconds(120);
  client::MaskdClient balanced(options);
  ASSERT_TRUE(balanced.CheckHealth().ok());
  absl::SleepFor(absl::Milliseconds(300));  // more replicas connected: a wider spread

  // Each fault hits the live replica holding the most streams at that
  // moment (round robin's spread depends on when each replica connected).
  auto busiest = [&](int except) {
    int best = -1;
    double most = -1;
    for (int r = 0; r < 3; ++r) {
      if (r == except) continue;
      const double streams = ActiveStreams(*replicas_[r]);
      if (streams > most) best = r, most = streams;
    }
    return std::pair<int, double>(best, most);
  };
  int killed = -1;
  double streams_on_killed = 0;
  double streams_on_drained = 0;
  std::thread killer;
  std::thread drainer;
  std::atomic<bool> drained_cleanly{false};
  const GenerationRun faulty = Generate(balanced, info->tokenizer_id(), eos, [&](int round) {
    // SIGKILL from another thread while the next steps are in flight.
    if (round == 3) {
      std::tie(killed, streams_on_killed) = busiest(-1);
      killer = std::thread([&, pid = replicas_[killed]->pid()] { kill(pid, SIGKILL); });
    }
    if (round == 8) {
      int drained;
      std::tie(drained, streams_on_drained) = busiest(killed);
      drainer = std::thread([&, drained] {
        absl::StatusOr<int> exit = replicas_[drained]->Stop(SIGTERM, std::chrono::seconds(30));
        drained_cleanly = exit.ok() && *exit == 0;
      });
    }
  });
  if (killer.joinable()) killer.join();
  if (drainer.joinable()) drainer.join();
  ASSERT_TRUE(faulty.errors.empty()) << absl::StrJoin(faulty.errors, "\n");

  // Both faulted replicas held streams when they went, so nothing could
  // finish without failing over.
  EXPECT_GT(streams_on_killed, 0);
  EXPECT_GT(streams_on_drained, 0);
  EXPECT_TRUE(drained_cleanly);
  ASSERT_EQ(faulty.transcripts.size(), reference.transcripts.size());
  for (const auto& [id, transcript] : reference.transcripts) {
    EXPECT_TRUE(faulty.transcripts.at(id) == transcript)
        << "sequence " << id << ": " << faulty.transcripts.at(id).tokens.size() << " tokens vs "
        << transcript.tokens.size() << " without faults";
  }
  std::cout << "streams on the killed replica " << streams_on_killed << ", on the drained one "
            << streams_on_drained << "; failovers " << faulty.failovers << "\n";
  // At least one failover per stream of each faulted replica, every one
  // reported, none losing a sequence.
  EXPECT_GE(faulty.failovers, streams_on_killed + streams_on_drained);
  EXPECT_EQ(faulty.events.size(), static_cast<size_t>(faulty.failovers));
  for (const client::FailoverEvent& event : faulty.events) {
    EXPECT_TRUE(event.cause.code() == absl::StatusCode::kUnavailable ||
                event.cause.code() == absl::StatusCode::kCancelled)
        << event.cause;
    EXPECT_TRUE(event.sequences_lost.empty());
    EXPECT_GT(event.sequences_restored, 0u);
    EXPECT_GE(event.attempts, 1);
  }
}

// With failover off, and with it on but no replica left, the stream failure
// is Step()'s error (after the bounded attempts).
TEST_F(FailoverTest, OffOrNoReplicaLeftFailsTheStep) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> lone = StartMaskd();
  ASSERT_TRUE(lone.ok()) << lone.status();
  std::unique_ptr<client::MaskdClient> client = ClientOf(**lone);
  absl::StatusOr<v1::TokenizerInfo> info = client->FindTokenizer("llama3");
  ASSERT_TRUE(info.ok()) << info.status();
  v1::CompileRequest compile;
  compile.set_tokenizer_id(info->tokenizer_id());
  *compile.mutable_spec() = client::RegexSpec("[a-z]{1,5}");

  client::SessionOptions off;
  off.failover.enabled = false;
  client::SessionOptions bounded;
  bounded.failover.max_attempts = 3;
  bounded.failover.initial_backoff = absl::Milliseconds(10);
  int reported = 0;
  bounded.failover.on_failover = [&](const client::FailoverEvent&) { ++reported; };
  std::unique_ptr<client::Session> without = client->StartSession(off);
  std::unique_ptr<client::Session> with = client->StartSession(bounded);
  for (client::Session* session : {without.get(), with.get()}) {
    session->OpenInline(1, compile);
    ASSERT_TRUE(session->Step().ok());
  }
  kill((*lone)->pid(), SIGKILL);
  (*lone)->Stop(SIGKILL, std::chrono::seconds(10)).IgnoreError();  // reaps it

  const TokenId a = 64;  // "a" in Llama 3
  without->Advance(1, {&a, 1});
  absl::StatusOr<std::vector<client::SequenceResult>> failed = without->Step();
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_EQ(without->failovers(), 0);

  with->Advance(1, {&a, 1});
  failed = with->Step();
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_NE(failed.status().message().find("failover gave up after 3 new streams"),
            std::string::npos)
      << failed.status();
  EXPECT_EQ(with->failovers(), 0);
  EXPECT_EQ(reported, 0);
  // The session stays failed.
  EXPECT_EQ(with->Step().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace maskd::e2e
