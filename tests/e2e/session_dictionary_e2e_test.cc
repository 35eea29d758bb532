// The mask dictionary between the real maskd and the C++ client: the grant
// and its caps (the client's ask, --max_mask_dictionary_slots), references
// resolved into the same masks as a stream without the dictionary, streams
// with independent dictionaries, and a request that changes the stream's
// settings ending only that stream with INVALID_ARGUMENT.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"

namespace maskd::e2e {
namespace {

constexpr char kSchema[] =
    R"({"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array",)"
    R"("items":{"type":"string"}}},"required":["name","tags"],"additionalProperties":false})";
constexpr char kInstance[] = R"({"name": "ab", "tags": ["alpha", "beta", "alpha", "beta"]})";

class SessionDictionaryE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
        StartMaskd({"--max_mask_dictionary_slots=64"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    client_ = ClientOf(*server_).release();
    absl::StatusOr<CompiledSchema> compiled = CompileForLlama3(*client_, kSchema);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    handle_ = new std::string(compiled->handle);
    absl::StatusOr<std::shared_ptr<const Tokenizer>> tokenizer = Llama3();
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokens_ = new std::vector<TokenId>((*tokenizer)->Encode(kInstance));
  }

  static void TearDownTestSuite() {
    delete client_;
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
    }
    delete server_;
    delete handle_;
    delete tokens_;
  }

  std::unique_ptr<client::Session> Start(uint32_t slots) {
    client::SessionOptions options;
    options.mask_dictionary_slots = slots;
    return client_->StartSession(options);
  }

  // Teacher-forces the instance on `sequences` sequences of one stream, all
  // in step; returns each step's decoded masks (sequence-major per step) and
  // counts the masks that came as references.
  std::vector<std::vector<uint32_t>> Run(client::Session& session, int sequences, size_t* refs) {
    std::vector<std::vector<uint32_t>> masks;
    for (int s = 0; s < sequences; ++s) session.Open(s, *handle_);
    for (size_t i = 0; i <= tokens_->size(); ++i) {
      absl::StatusOr<std::vector<client::SequenceResult>> results = session.Step();
      EXPECT_TRUE(results.ok()) << results.status();
      if (!results.ok()) return masks;
      for (const client::SequenceResult& result : *results) {
        EXPECT_TRUE(result.ok()) << result.status();
        absl::StatusOr<client::TokenMask> mask = result.DecodeMask();
        EXPECT_TRUE(mask.ok()) << mask.status();
        if (!mask.ok()) return masks;
        masks.emplace_back(mask->words().begin(), mask->words().end());
        if (result.wire_mask().encoding_case() == v1::Mask::kDictionaryRef) {
          ++*refs;
          EXPECT_NE(result.dictionary_mask(), nullptr);
          EXPECT_EQ(result.wire_mask().allowed_count(), mask->allowed_count());
        }
        if (i < tokens_->size()) {
          EXPECT_TRUE(result.Allows((*tokens_)[i])) << "token " << i;
        }
      }
      if (i < tokens_->size()) {
        for (int s = 0; s < sequences; ++s) session.Advance(s, {&(*tokens_)[i], 1});
      }
    }
    EXPECT_TRUE(session.Finish().ok());
    return masks;
  }

  static testing::MaskdProcess* server_;
  static client::MaskdClient* client_;
  static std::string* handle_;
  static std::vector<TokenId>* tokens_;
};

testing::MaskdProcess* SessionDictionaryE2eTest::server_ = nullptr;
client::MaskdClient* SessionDictionaryE2eTest::client_ = nullptr;
std::string* SessionDictionaryE2eTest::handle_ = nullptr;
std::vector<TokenId>* SessionDictionaryE2eTest::tokens_ = nullptr;

TEST_F(SessionDictionaryE2eTest, SameMasksWithAndWithoutTheDictionary) {
  size_t refs_off = 0, refs_on = 0, refs_tiny = 0;
  std::unique_ptr<client::Session> off = Start(0);
  const std::vector<std::vector<uint32_t>> expected = Run(*off, 3, &refs_off);
  EXPECT_EQ(off->dictionary_slots(), 0u);
  EXPECT_EQ(refs_off, 0u);
  ASSERT_EQ(expected.size(), 3 * (tokens_->size() + 1));

  std::unique_ptr<client::Session> on = Start(client::SessionOptions().mask_dictionary_slots);
  EXPECT_EQ(Run(*on, 3, &refs_on), expected);
  // Sequences 1 and 2 repeat sequence 0's mask in every response.
  EXPECT_GE(refs_on, 2 * tokens_->size());
  std::unique_ptr<client::Session> tiny = Start(1);
  EXPECT_EQ(Run(*tiny, 3, &refs_tiny), expected);
  EXPECT_EQ(tiny->dictionary_slots(), 1u);
  EXPECT_GT(refs_tiny, 0u);
}

TEST_F(SessionDictionaryE2eTest, TheGrantIsCappedByTheServer) {
  // Out of range for this server (--max_mask_dictionary_slots=64): granted
  // 64, not refused.
  std::unique_ptr<client::Session> greedy = Start(4'000'000'000u);
  size_t refs = 0;
  EXPECT_FALSE(Run(*greedy, 2, &refs).empty());
  EXPECT_EQ(greedy->dictionary_slots(), 64u);
  EXPECT_GT(refs, 0u);
  // The default client asks for 256: also capped.
  std::unique_ptr<client::Session> plain = client_->StartSession();
  plain->Open(1, *handle_);
  ASSERT_TRUE(plain->Step().ok());
  EXPECT_EQ(plain->dictionary_slots(), 64u);
}

TEST_F(SessionDictionaryE2eTest, StreamsHaveTheirOwnDictionaries) {
  std::unique_ptr<client::Session> a = Start(8);
  std::unique_ptr<client::Session> b = Start(8);
  a->Open(1, *handle_);
  a->Open(2, *handle_);
  absl::StatusOr<std::vector<client::SequenceResult>> on_a = a->Step();
  ASSERT_TRUE(on_a.ok()) << on_a.status();
  EXPECT_TRUE((*on_a)[0].wire_mask().has_dictionary_store());
  EXPECT_EQ((*on_a)[1].wire_mask().encoding_case(), v1::Mask::kDictionaryRef);
  b->Open(1, *handle_);
  absl::StatusOr<std::vector<client::SequenceResult>> on_b = b->Step();
  ASSERT_TRUE(on_b.ok()) << on_b.status();
  EXPECT_NE((*on_b)[0].wire_mask().encoding_case(), v1::Mask::kDictionaryRef);
  absl::StatusOr<client::TokenMask> mask_a = (*on_a)[1].DecodeMask();
  absl::StatusOr<client::TokenMask> mask_b = (*on_b)[0].DecodeMask();
  ASSERT_TRUE(mask_a.ok() && mask_b.ok());
  EXPECT_TRUE(std::equal(mask_a->words().begin(), mask_a->words().end(), mask_b->words().begin(),
                         mask_b->words().end()));
}

TEST_F(SessionDictionaryE2eTest, ChangingTheSettingsEndsThatStreamOnly) {
  std::unique_ptr<client::Session> changer = Start(8);
  std::unique_ptr<client::Session> bystander = Start(8);
  changer->Open(1, *handle_);
  bystander->Open(1, *handle_);
  ASSERT_TRUE(changer->Step().ok());
  ASSERT_TRUE(bystander->Step().ok());
  v1::StepRequest change;
  change.mutable_session_options()->set_mask_dictionary_slots(16);
  absl::StatusOr<v1::StepResponse> response = changer->Send(change);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), ::testing::HasSubstr("cannot change"));
  EXPECT_EQ(changer->Step().status().code(), absl::StatusCode::kInvalidArgument);
  // The other stream goes on, its dictionary intact.
  bystander->Open(2, *handle_);
  absl::StatusOr<std::vector<client::SequenceResult>> results = bystander->Step();
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].wire_mask().encoding_case(), v1::Mask::kDictionaryRef);
  EXPECT_TRUE((*results)[0].DecodeMask().ok());
}

}  // namespace
}  // namespace maskd::e2e
