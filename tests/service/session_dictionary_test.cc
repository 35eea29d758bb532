// The per-stream mask dictionary (session.proto, Mask.dictionary_ref):
// MaskDictionary's slot order (fill, then least recently used) and exact
// matching; and SessionStream with a dictionary: the grant and its cap, refs
// within one response, eviction, masks that stay exact through a client-side
// dictionary, settings that cannot change, independent streams.
#include "service/mask_dictionary.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/mask_encoding.h"
#include "service/session_stream.h"
#include "tests/service/session_harness.h"

namespace maskd {
namespace {

using ::maskd::testing::SessionHarness;
using ::testing::HasSubstr;

std::vector<uint32_t> Words(std::initializer_list<uint32_t> w) { return w; }

std::optional<uint32_t> Find(MaskDictionary& d, uint32_t vocab, const std::vector<uint32_t>& w) {
  return d.Find(MaskDictionary::Hash(vocab, w), vocab, w);
}

uint32_t Store(MaskDictionary& d, uint32_t vocab, const std::vector<uint32_t>& w) {
  return d.Store(MaskDictionary::Hash(vocab, w), vocab, w, w[0]);
}

TEST(MaskDictionaryTest, FillsInOrderThenReplacesTheLeastRecentlyUsed) {
  MaskDictionary dictionary(3);
  const auto a = Words({1, 0}), b = Words({2, 0}), c = Words({3, 0}), d = Words({4, 0});
  EXPECT_EQ(Find(dictionary, 64, a), std::nullopt);
  EXPECT_EQ(Store(dictionary, 64, a), 0u);
  EXPECT_EQ(Store(dictionary, 64, b), 1u);
  EXPECT_EQ(Store(dictionary, 64, c), 2u);
  EXPECT_EQ(dictionary.used(), 3u);
  // a is used again: b is now the least recently used and goes first.
  EXPECT_EQ(Find(dictionary, 64, a), 0u);
  EXPECT_EQ(Store(dictionary, 64, d), 1u);
  EXPECT_EQ(Find(dictionary, 64, b), std::nullopt);
  EXPECT_EQ(Find(dictionary, 64, d), 1u);
  EXPECT_EQ(dictionary.allowed_count(1), 4u);  // what Store was given
  // Order now (oldest first): c, a, d.
  EXPECT_EQ(Store(dictionary, 64, b), 2u);
  EXPECT_EQ(Find(dictionary, 64, c), std::nullopt);
  EXPECT_EQ(Find(dictionary, 64, a), 0u);
  EXPECT_EQ(Find(dictionary, 64, b), 2u);
  EXPECT_EQ(dictionary.used(), 3u);
}

TEST(MaskDictionaryTest, MatchesExactlyNeverByHashAlone) {
  MaskDictionary dictionary(4);
  const auto a = Words({0xff, 7});
  const auto other = Words({0xff, 6});
  const uint64_t hash_a = MaskDictionary::Hash(64, a);
  EXPECT_NE(hash_a, MaskDictionary::Hash(64, other));
  EXPECT_NE(hash_a, MaskDictionary::Hash(63, a));  // vocab_size is part of the mask
  ASSERT_EQ(dictionary.Store(hash_a, 64, a, 9), 0u);
  // A colliding hash with other words, or another vocab_size, is no match.
  EXPECT_EQ(dictionary.Find(hash_a, 64, other), std::nullopt);
  EXPECT_EQ(dictionary.Find(hash_a, 63, a), std::nullopt);
  EXPECT_EQ(dictionary.Find(hash_a, 64, Words({0xff, 7, 0})), std::nullopt);
  EXPECT_EQ(dictionary.Find(hash_a, 64, a), 0u);
  // The colliding mask gets its own slot; both stay exact.
  ASSERT_EQ(dictionary.Store(hash_a, 64, other, 8), 1u);
  EXPECT_EQ(dictionary.Find(hash_a, 64, other), 1u);
  EXPECT_EQ(dictionary.Find(hash_a, 64, a), std::nullopt);  // shadowed, never wrong
}

TEST(MaskDictionaryTest, HashSeesEveryWord) {
  std::vector<uint32_t> words(4009, 0);  // 128k vocabulary, and a tail past 8-word blocks
  const uint64_t zero = MaskDictionary::Hash(128256, words);
  for (size_t i : {size_t{0}, size_t{7}, size_t{8}, size_t{4000}, size_t{4008}}) {
    words[i] = 1;
    EXPECT_NE(MaskDictionary::Hash(128256, words), zero) << "word " << i;
    words[i] = 0;
  }
}

constexpr char kSchema[] = R"({"type": "object", "properties": {"a": {"type": "string"},
    "b": {"type": "array", "items": {"type": "integer"}}}, "required": ["a"],
    "additionalProperties": false})";

// What a client keeps: the masks of its slots.
class ClientDictionary {
 public:
  explicit ClientDictionary(uint32_t slots) : slots_(slots) {}

  // The bitmask `mask` stands for, applying its store; fails the test on a
  // reference to an empty or missing slot.
  std::vector<uint32_t> Resolve(const v1::Mask& mask) {
    if (mask.encoding_case() == v1::Mask::kDictionaryRef) {
      ++refs_;
      EXPECT_FALSE(mask.has_dictionary_store());
      EXPECT_LT(mask.dictionary_ref(), slots_.size());
      if (mask.dictionary_ref() >= slots_.size()) return {};
      const std::optional<std::vector<uint32_t>>& held = slots_[mask.dictionary_ref()];
      EXPECT_TRUE(held.has_value()) << "slot " << mask.dictionary_ref() << " is empty";
      return held.value_or(std::vector<uint32_t>{});
    }
    std::vector<uint32_t> words = DecodeMask(mask);
    if (mask.has_dictionary_store()) {
      EXPECT_LT(mask.dictionary_store(), slots_.size());
      if (mask.dictionary_store() >= slots_.size()) return words;
      if (slots_[mask.dictionary_store()].has_value()) ++evictions_;
      slots_[mask.dictionary_store()] = words;
      ++stores_;
    }
    return words;
  }

  int refs() const { return refs_; }
  int stores() const { return stores_; }
  int evictions() const { return evictions_; }

 private:
  std::vector<std::optional<std::vector<uint32_t>>> slots_;
  int refs_ = 0, stores_ = 0, evictions_ = 0;
};

class SessionDictionaryTest : public ::testing::Test {
 protected:
  static SessionLimits Limits(uint32_t max_slots) {
    SessionLimits limits;
    limits.max_mask_dictionary_slots = max_slots;
    // The fake vocabulary's masks are one word: store them all.
    limits.dictionary_min_payload_bytes = 0;
    return limits;
  }

  SessionDictionaryTest() : harness_(2, Limits(4)) {}

  v1::StepResponse Step(SessionStream& stream, const v1::StepRequest& request) {
    v1::StepResponse response;
    EXPECT_TRUE(stream.Step(request, absl::InfiniteFuture(), &response).ok());
    EXPECT_EQ(response.results_size(), request.ops_size());
    return response;
  }

  void Open(v1::StepRequest& request, uint64_t id,
            v1::MaskEncoding encoding = v1::MASK_ENCODING_AUTO) {
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    *op->mutable_open()->mutable_compile() = harness_.SchemaRequest(kSchema);
    op->mutable_open()->set_mask_encoding(encoding);
  }

  void Advance(v1::StepRequest& request, uint64_t id, TokenId token) {
    v1::SequenceOp* op = request.add_ops();
    op->set_sequence_id(id);
    op->mutable_advance()->add_tokens(token);
  }

  std::vector<uint32_t> Reference(const std::string& text) {
    return harness_.ReferenceMask(kSchema, text);
  }

  SessionHarness harness_;
};

TEST_F(SessionDictionaryTest, OffByDefaultAndTheGrantIsCapped) {
  SessionStream off(harness_.env());
  v1::StepRequest open;
  Open(open, 1);
  Open(open, 2);
  v1::StepResponse response = Step(off, open);
  EXPECT_TRUE(response.has_session_grant());
  EXPECT_EQ(response.session_grant().mask_dictionary_slots(), 0u);
  for (const v1::SequenceResult& result : response.results()) {
    EXPECT_NE(result.mask().encoding_case(), v1::Mask::kDictionaryRef);
    EXPECT_FALSE(result.mask().has_dictionary_store());
    EXPECT_EQ(DecodeMask(result.mask()), Reference(""));
  }
  EXPECT_EQ(off.dictionary_slots(), 0u);

  // Far more than the server's cap (4 here): granted the cap, not an error.
  SessionStream capped(harness_.env());
  v1::StepRequest greedy;
  greedy.mutable_session_options()->set_mask_dictionary_slots(1u << 30);
  Open(greedy, 1);
  response = Step(capped, greedy);
  EXPECT_EQ(response.session_grant().mask_dictionary_slots(), 4u);
  EXPECT_EQ(capped.dictionary_slots(), 4u);
  EXPECT_EQ(response.results(0).mask().dictionary_store(), 0u);
  // Only the first response carries the grant.
  v1::StepRequest next;
  Advance(next, 1, harness_.tokenizer().Encode("{").at(0));
  EXPECT_FALSE(Step(capped, next).has_session_grant());

  // A server with the dictionary off grants none.
  SessionHarness no_dictionary(1, Limits(0));
  SessionStream refused(no_dictionary.env());
  v1::StepRequest asks;
  asks.mutable_session_options()->set_mask_dictionary_slots(16);
  asks.add_ops()->set_sequence_id(1);
  *asks.mutable_ops(0)->mutable_open()->mutable_compile() = no_dictionary.SchemaRequest(kSchema);
  response = Step(refused, asks);
  EXPECT_EQ(response.session_grant().mask_dictionary_slots(), 0u);
  EXPECT_FALSE(response.results(0).mask().has_dictionary_store());
  EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference(""));
  v1::StepRequest repeat;
  repeat.add_ops()->set_sequence_id(2);
  *repeat.mutable_ops(0)->mutable_open()->mutable_compile() = no_dictionary.SchemaRequest(kSchema);
  response = Step(refused, repeat);
  EXPECT_NE(response.results(0).mask().encoding_case(), v1::Mask::kDictionaryRef);
  EXPECT_EQ(DecodeMask(response.results(0).mask()), Reference(""));
}

TEST_F(SessionDictionaryTest, ARepeatInTheSameResponseIsAReference) {
  SessionStream stream(harness_.env());
  v1::StepRequest open;
  open.mutable_session_options()->set_mask_dictionary_slots(4);
  Open(open, 1);
  Open(open, 2, v1::MASK_ENCODING_DENY_LIST);  // full masks would differ in encoding only
  Open(open, 3);
  v1::StepResponse response = Step(stream, open);
  const std::vector<uint32_t> expected = Reference("");
  const v1::Mask& first = response.results(0).mask();
  EXPECT_EQ(first.dictionary_store(), 0u);
  EXPECT_EQ(DecodeMask(first), expected);
  for (int i : {1, 2}) {
    const v1::Mask& mask = response.results(i).mask();
    EXPECT_EQ(mask.encoding_case(), v1::Mask::kDictionaryRef) << i;
    EXPECT_EQ(mask.dictionary_ref(), 0u) << i;
    EXPECT_FALSE(mask.has_dictionary_store()) << i;
    EXPECT_EQ(mask.vocab_size(), harness_.tokenizer().vocab_size()) << i;
    EXPECT_EQ(mask.allowed_count(), first.allowed_count()) << i;
  }
  EXPECT_THAT(harness_.MetricsText(),
              HasSubstr("maskd_mask_bytes_total{encoding=\"dictionary_ref\"} 2"));
}

TEST_F(SessionDictionaryTest, MasksStayExactThroughEvictions) {
  // Two slots, one sequence walking through a document: more distinct masks
  // than slots, so slots are replaced, and states that come back are refs.
  SessionHarness harness(2, Limits(2));
  SessionStream stream(harness.env());
  ClientDictionary client(2);
  v1::StepRequest open;
  open.mutable_session_options()->set_mask_dictionary_slots(2);
  Open(open, 1);
  v1::StepResponse response = Step(stream, open);
  ASSERT_EQ(response.session_grant().mask_dictionary_slots(), 2u);
  EXPECT_EQ(client.Resolve(response.results(0).mask()), Reference(""));
  const std::string text = R"({"a":"abab","b":[1,12,2,1,12,2]})";
  std::string prefix;
  for (TokenId token : harness_.tokenizer().Encode(text)) {
    v1::StepRequest step;
    Advance(step, 1, token);
    response = Step(stream, step);
    ASSERT_FALSE(response.results(0).has_error()) << response.results(0).error().message();
    prefix += harness_.tokenizer().token_bytes(token);
    EXPECT_EQ(client.Resolve(response.results(0).mask()), Reference(prefix)) << prefix;
    EXPECT_FALSE(response.has_session_grant());
  }
  EXPECT_GT(client.refs(), 0);
  EXPECT_GT(client.evictions(), 0);
  EXPECT_EQ(stream.dictionary_used(), 2u);
}

TEST_F(SessionDictionaryTest, ChangingTheSettingsEndsTheStreamAndAppliesNothing) {
  SessionStream stream(harness_.env());
  v1::StepRequest open;
  open.mutable_session_options()->set_mask_dictionary_slots(3);
  Open(open, 1);
  Step(stream, open);
  // The same settings again, or none: fine.
  v1::StepRequest same;
  same.mutable_session_options()->set_mask_dictionary_slots(3);
  Open(same, 2);
  Step(stream, same);
  EXPECT_EQ(stream.open_sequences(), 2u);

  v1::StepRequest change;
  change.set_request_id(9);
  change.mutable_session_options()->set_mask_dictionary_slots(2);
  Open(change, 3);
  v1::StepResponse response;
  const absl::Status status = stream.Step(change, absl::InfiniteFuture(), &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("mask_dictionary_slots to 2"));
  EXPECT_EQ(response.results_size(), 0);
  EXPECT_EQ(stream.open_sequences(), 2u);
  EXPECT_EQ(stream.dictionary_slots(), 3u);
}

TEST_F(SessionDictionaryTest, StreamsHaveIndependentDictionaries) {
  SessionStream a(harness_.env());
  SessionStream b(harness_.env());
  v1::StepRequest open;
  open.mutable_session_options()->set_mask_dictionary_slots(4);
  Open(open, 1);
  EXPECT_EQ(Step(a, open).results(0).mask().dictionary_store(), 0u);
  // Stream a holds the mask; stream b has not sent it yet: full again.
  v1::StepResponse on_b = Step(b, open);
  EXPECT_NE(on_b.results(0).mask().encoding_case(), v1::Mask::kDictionaryRef);
  EXPECT_EQ(on_b.results(0).mask().dictionary_store(), 0u);
  EXPECT_EQ(DecodeMask(on_b.results(0).mask()), Reference(""));
  // Each stream now references its own copy.
  v1::StepRequest again;
  Open(again, 2);
  EXPECT_EQ(Step(a, again).results(0).mask().dictionary_ref(), 0u);
  EXPECT_EQ(Step(b, again).results(0).mask().dictionary_ref(), 0u);
  // Advancing on a adds to a's dictionary only.
  v1::StepRequest advance;
  Advance(advance, 1, harness_.tokenizer().Encode("{").at(0));
  EXPECT_EQ(Step(a, advance).results(0).mask().dictionary_store(), 1u);
  EXPECT_EQ(a.dictionary_used(), 2u);
  EXPECT_EQ(b.dictionary_used(), 1u);
}

}  // namespace
}  // namespace maskd
