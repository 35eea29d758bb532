// maskbench's runner must not blame the schema for the engine's failures: a
// grammar that compiles but whose lazily built lexer DFA then hits its memory
// budget (CompiledGrammar::status() not OK) yields masks that may lack
// tokens, so the verdict is an engine error naming the status, never a
// validation error or a pass.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/maskbench/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/small_vocab_tokenizer.h"

namespace maskd::maskbench {
namespace {

using ::testing::HasSubstr;

// Strings whose last 15 characters start with `a`: 2^15 DFA states.
constexpr char kBlowUp[] =
    R"({"type":"string","pattern":"^[ab]*a[ab][ab][ab][ab][ab][ab][ab][ab][ab][ab][ab][ab][ab][ab]$"})";

std::shared_ptr<const Tokenizer> Vocab() {
  return std::make_shared<const testing::SmallVocabTokenizer>(
      std::vector<std::string>{"\"", "a", "b", "ab", "ba", "bb", "aab"}, "runner-status");
}

// A valid instance long enough to walk through thousands of DFA states.
SchemaCase BlowUpCase() {
  std::string text = "\"";
  std::mt19937 bits(11);  // not periodic: each window of 15 a new DFA state
  for (int i = 0; i < 3000; ++i) text += (bits() & 1) ? 'a' : 'b';
  text += "a" + std::string(14, 'b') + "\"";
  return SchemaCase{"blow_up", kBlowUp, {Instance{true, text}}};
}

SchemaResult RunBlowUp(uint64_t memory_limit_bytes) {
  RunOptions options;
  options.compile.memory_limit_bytes = memory_limit_bytes;
  std::atomic<bool> cancelled{false};
  return RunSchema(BlowUpCase(), Vocab(), options, cancelled);
}

TEST(MaskBenchRunnerStatusTest, ValidInstancePassesWithRoomToGrow) {
  const SchemaResult r = RunBlowUp(uint64_t{1} << 30);
  EXPECT_EQ(r.verdict, Verdict::kPass) << VerdictName(r.verdict) << ": " << r.reason;
  EXPECT_GT(r.tokens, 1000u);
}

TEST(MaskBenchRunnerStatusTest, GrammarHittingItsBudgetIsAnEngineError) {
  // Room for the compiled grammar and a few hundred more DFA states.
  GrammarSpec spec;
  spec.kind = SpecKind::kJsonSchema;
  spec.text = kBlowUp;
  auto unlimited = CompileGrammar(spec, CompileOptions(), Vocab());
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  const SchemaResult r = RunBlowUp((*unlimited)->SizeBytes() + 64 * 1024);
  EXPECT_EQ(r.verdict, Verdict::kEngineError) << VerdictName(r.verdict) << ": " << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("grammar status: RESOURCE_EXHAUSTED"));
}

}  // namespace
}  // namespace maskd::maskbench
