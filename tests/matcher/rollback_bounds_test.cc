// Matcher::Rollback at its bounds: with MatcherOptions::max_rollback = k, the
// last k accepted tokens (EOS included) can be undone, restoring the exact
// masks and CanStop seen then, and k + 1 is OutOfRange and changes nothing.
// A history that kept one token too few (or one too many) fails here; the
// older tests only rolled back well inside the bound.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/compile/compile.h"
#include "compiler/matcher/matcher.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd {
namespace {

struct Seen {
  std::vector<uint32_t> mask;
  bool can_stop;
  friend bool operator==(const Seen&, const Seen&) = default;
};

class RollbackBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> vocab;
    for (int b = 0; b < 256; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
    tokenizer_ = std::make_shared<testing::SmallVocabTokenizer>(vocab, "bytes");
    GrammarSpec spec;
    spec.kind = SpecKind::kJsonSchema;
    // Every position has its own mask: no rollback can pass by luck.
    spec.text = R"({"enum": ["abcdefghijklmnop", "abcdefghijklmnopq"]})";
    auto g = CompileGrammar(spec, CompileOptions(), tokenizer_);
    ASSERT_TRUE(g.ok()) << g.status();
    grammar_ = *g;
  }

  Seen Look(Matcher& m) {
    Seen s{std::vector<uint32_t>((tokenizer_->vocab_size() + 31) / 32), m.CanStop()};
    m.FillMask(s.mask);
    return s;
  }

  std::shared_ptr<testing::SmallVocabTokenizer> tokenizer_;
  std::shared_ptr<const CompiledGrammar> grammar_;
};

TEST_F(RollbackBoundsTest, ExactlyMaxRestoresAndOnePastIsRefused) {
  const std::string doc = "\"abcdefghijklmnopq\"";
  for (uint32_t max : {1u, 2u, 5u, 8u}) {
    for (size_t accepted : {size_t{max} - 1, size_t{max}, size_t{max} + 1, doc.size()}) {
      MatcherOptions options;
      options.max_rollback = max;
      auto m = Matcher::Create(grammar_, options);
      std::vector<Seen> seen = {Look(*m)};
      for (size_t i = 0; i < accepted; ++i) {
        ASSERT_TRUE(m->AcceptToken(static_cast<unsigned char>(doc[i])));
        seen.push_back(Look(*m));
      }
      const uint32_t kept = static_cast<uint32_t>(std::min<size_t>(max, accepted));
      SCOPED_TRACE(::testing::Message() << "max_rollback " << max << ", accepted " << accepted);
      const absl::Status past = m->Rollback(kept + 1);
      EXPECT_EQ(past.code(), absl::StatusCode::kOutOfRange) << past;
      EXPECT_EQ(Look(*m), seen.back()) << "a refused rollback changed the state";
      ASSERT_TRUE(m->Rollback(kept).ok());
      EXPECT_EQ(Look(*m), seen[accepted - kept]);
      EXPECT_EQ(m->Rollback(1).code(), absl::StatusCode::kOutOfRange);
      // Accepting again refills the history one token at a time.
      if (accepted > 0) {
        ASSERT_TRUE(m->AcceptToken(static_cast<unsigned char>(doc[accepted - kept])));
        EXPECT_EQ(Look(*m), seen[accepted - kept + 1]);
        ASSERT_TRUE(m->Rollback(1).ok());
        EXPECT_EQ(Look(*m), seen[accepted - kept]);
      }
    }
  }
}

TEST_F(RollbackBoundsTest, EosCountsAsOneOfTheKeptTokens) {
  const std::string doc = "\"abcdefghijklmnop\"";
  MatcherOptions options;
  options.max_rollback = 3;
  auto m = Matcher::Create(grammar_, options);
  std::vector<Seen> seen = {Look(*m)};
  for (char c : doc) {
    ASSERT_TRUE(m->AcceptToken(static_cast<unsigned char>(c)));
    seen.push_back(Look(*m));
  }
  ASSERT_TRUE(m->AcceptToken(tokenizer_->eos_ids()[0]));
  EXPECT_TRUE(m->MustStop());
  EXPECT_EQ(m->Rollback(4).code(), absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(m->Rollback(3).ok());  // EOS and the last two bytes
  EXPECT_EQ(Look(*m), seen[doc.size() - 2]);
}

}  // namespace
}  // namespace maskd
