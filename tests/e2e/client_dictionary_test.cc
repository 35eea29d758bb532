// The C++ client's side of the mask dictionary against a scripted in-process
// server (no maskd): it asks for its slots on the first request only,
// resolves references into the masks stored before, and treats a server that
// breaks the protocol (more slots than asked, a reference to an empty or
// missing slot, a store out of range) as a broken stream (INTERNAL), never a
// wrong mask. A server that grants nothing (an older maskd) still works.
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "clients/cpp/client.h"
#include "gmock/gmock.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "maskd/v1/maskd.grpc.pb.h"

namespace maskd::client {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kVocab = 100;

v1::Mask Allow(std::vector<uint32_t> ids) {
  v1::Mask mask;
  mask.set_vocab_size(kVocab);
  mask.set_allowed_count(static_cast<uint32_t>(ids.size()));
  mask.mutable_allow_list()->mutable_token_ids()->Add(ids.begin(), ids.end());
  return mask;
}

v1::Mask Stored(std::vector<uint32_t> ids, uint32_t slot) {
  v1::Mask mask = Allow(std::move(ids));
  mask.set_dictionary_store(slot);
  return mask;
}

v1::Mask Ref(uint32_t slot, uint32_t allowed_count) {
  v1::Mask mask;
  mask.set_vocab_size(kVocab);
  mask.set_allowed_count(allowed_count);
  mask.set_dictionary_ref(slot);
  return mask;
}

// Answers the n-th request of a stream with script(n, request): one result
// per op carrying the scripted masks in order.
class ScriptedMaskd final : public v1::Maskd::Service {
 public:
  using Script = std::function<v1::StepResponse(int, const v1::StepRequest&)>;
  explicit ScriptedMaskd(Script script) : script_(std::move(script)) {}

  grpc::Status Session(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::StepResponse, v1::StepRequest>* stream) override {
    v1::StepRequest request;
    for (int n = 0; stream->Read(&request); ++n) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(request);
      }
      v1::StepResponse response = script_(n, request);
      response.set_request_id(request.request_id());
      if (!stream->Write(response)) break;
    }
    return grpc::Status::OK;
  }

  std::vector<v1::StepRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  Script script_;
  std::mutex mu_;
  std::vector<v1::StepRequest> requests_;
};

// One result per op, with `masks` in order.
v1::StepResponse Respond(const v1::StepRequest& request, const std::vector<v1::Mask>& masks,
                         uint32_t granted = 0, bool grant = false) {
  v1::StepResponse response;
  for (int i = 0; i < request.ops_size(); ++i) {
    v1::SequenceResult* result = response.add_results();
    result->set_sequence_id(request.ops(i).sequence_id());
    if (static_cast<size_t>(i) < masks.size()) *result->mutable_mask() = masks[i];
  }
  if (grant) response.mutable_session_grant()->set_mask_dictionary_slots(granted);
  return response;
}

class ClientDictionaryTest : public ::testing::Test {
 protected:
  void Serve(ScriptedMaskd::Script script) {
    service_ = std::make_unique<ScriptedMaskd>(std::move(script));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ChannelOptions options;
    options.target = "127.0.0.1:" + std::to_string(port);
    client_ = std::make_unique<MaskdClient>(options);
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // One step of `ops` advances on a session.
  absl::StatusOr<std::vector<SequenceResult>> Step(Session& session, int ops) {
    for (int i = 0; i < ops; ++i) session.Advance(i, {});
    return session.Step();
  }

  std::unique_ptr<ScriptedMaskd> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MaskdClient> client_;
};

TEST_F(ClientDictionaryTest, StoresAndReferencesResolveToTheSameMasks) {
  Serve([](int n, const v1::StepRequest& request) {
    switch (n) {
      case 0:  // slot 0 stored and referenced in the same response
        return Respond(request, {Stored({1, 2, 3}, 0), Ref(0, 3), Allow({9})}, 2, true);
      case 1:
        return Respond(request, {Stored({50, 99}, 1), Ref(0, 3)});
      default:  // slot 0 replaced
        return Respond(request, {Stored({7}, 0), Ref(0, 1), Ref(1, 2)});
    }
  });
  std::unique_ptr<Session> session = client_->StartSession();
  absl::StatusOr<std::vector<SequenceResult>> results = Step(*session, 3);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(session->dictionary_slots(), 2u);
  ASSERT_TRUE((*results)[1].DecodeMask().ok());
  EXPECT_EQ((*results)[1].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{1, 2, 3}));
  EXPECT_TRUE((*results)[1].Allows(2));
  EXPECT_FALSE((*results)[1].Allows(4));
  EXPECT_EQ((*results)[1].dictionary_mask(), (*results)[0].dictionary_mask());
  EXPECT_EQ((*results)[2].dictionary_mask(), nullptr);  // not stored
  EXPECT_EQ((*results)[2].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{9}));

  results = Step(*session, 2);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[1].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{1, 2, 3}));
  results = Step(*session, 3);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[1].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{7}));
  EXPECT_EQ((*results)[2].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{50, 99}));
  EXPECT_TRUE(session->Finish().ok());

  // The slots were asked for on the first request only.
  const std::vector<v1::StepRequest> requests = service_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].session_options().mask_dictionary_slots(), 256u);
  EXPECT_FALSE(requests[1].has_session_options());
  EXPECT_FALSE(requests[2].has_session_options());
}

TEST_F(ClientDictionaryTest, AServerWithoutTheDictionaryStillWorks) {
  Serve([](int, const v1::StepRequest& request) { return Respond(request, {Allow({4, 5})}); });
  std::unique_ptr<Session> session = client_->StartSession();
  absl::StatusOr<std::vector<SequenceResult>> results = Step(*session, 1);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(session->dictionary_slots(), 0u);
  EXPECT_EQ((*results)[0].DecodeMask()->AllowedTokens(), (std::vector<TokenId>{4, 5}));
}

TEST_F(ClientDictionaryTest, ProtocolViolationsBreakTheStream) {
  struct Case {
    const char* name;
    uint32_t asked;
    v1::StepResponse (*respond)(const v1::StepRequest&);
    const char* message;
  };
  const Case cases[] = {
      {"more slots than asked", 4,
       [](const v1::StepRequest& r) { return Respond(r, {Allow({1})}, 5, true); },
       "granted 5 mask dictionary slots; 4 were asked for"},
      {"reference to an empty slot", 4,
       [](const v1::StepRequest& r) { return Respond(r, {Ref(1, 0)}, 4, true); }, "is empty"},
      {"reference past the slots", 4,
       [](const v1::StepRequest& r) { return Respond(r, {Ref(4, 0)}, 4, true); },
       "out of range (4 slots granted)"},
      {"store past the slots", 4,
       [](const v1::StepRequest& r) { return Respond(r, {Stored({1}, 9)}, 4, true); },
       "out of range"},
      {"reference without a dictionary", 0,
       [](const v1::StepRequest& r) { return Respond(r, {Ref(0, 0)}); },
       "out of range (0 slots granted)"},
      {"reference whose count disagrees", 4,
       [](const v1::StepRequest& r) {
         return Respond(r, {Stored({1, 2}, 0), Ref(0, 3)}, 4, true);
       },
       "allowing 2 ids, the reference says"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto respond = c.respond;
    Serve([respond](int, const v1::StepRequest& request) { return respond(request); });
    SessionOptions options;
    options.mask_dictionary_slots = c.asked;
    std::unique_ptr<Session> session = client_->StartSession(options);
    absl::StatusOr<std::vector<SequenceResult>> results = Step(*session, 2);
    EXPECT_EQ(results.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(results.status().message(), HasSubstr(c.message));
    // Sticky: the stream is unusable afterwards.
    EXPECT_EQ(Step(*session, 1).status().code(), absl::StatusCode::kInternal);
    session.reset();
    server_->Shutdown();
    server_.reset();
  }
}

}  // namespace
}  // namespace maskd::client
