// The whole engine on real MaskBench schemas with real Llama-3 token ids, as
// the benchmark runs it: a deterministic sample of the dev split must give no
// invalidation error (an invalid instance accepted), no validation error (a
// valid one rejected), no disagreement between masks and AcceptToken, and no
// timeout. Schemas the engine refuses are allowed here (refusals carry a
// reason; the MaskBench tool counts them) but must be a minority.
#include <cstdlib>
#include <string>

#include "bench/maskbench/runner.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "harness/maskbench_data.h"

namespace maskd::maskbench {
namespace {

TEST(MaskBenchEngineTest, DevSampleHasNoWrongVerdicts) {
  auto tokenizer = Tokenizer::FromDirectory(testing::TokenizerDir("llama3"));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  auto cases = LoadMaskBench(testing::MaskBenchPath());
  ASSERT_TRUE(cases.ok()) << cases.status();

  RunOptions options;
  options.compile.strict = false;
  std::atomic<bool> cancelled{false};
  size_t compiled = 0, with_tests = 0, instances = 0;
  for (size_t i : DeterministicSample(cases->size(), 60)) {
    const SchemaCase& c = (*cases)[i];
    if (c.tests.empty()) continue;
    ++with_tests;
    SchemaResult r = RunSchema(c, *tokenizer, options, cancelled);
    if (r.verdict == Verdict::kCompileError) continue;
    ++compiled;
    instances += c.tests.size();
    EXPECT_EQ(r.verdict, Verdict::kPass)
        << c.name << ": " << VerdictName(r.verdict) << ": " << r.reason;
  }
  EXPECT_GT(with_tests, 40u);
  EXPECT_GT(compiled * 10, with_tests * 7) << compiled << " of " << with_tests << " compiled";
  EXPECT_GT(instances, 100u);
}

// MaskBench's instances spelled as json.dumps's default writes them
// (ensure_ascii=True: \u escapes, a surrogate pair for an emoji) pass through
// the harness with real token ids: the valid ones are forced through the
// masks, the invalid ones refused (maxLength counts code points, however
// spelled). Each valid one was a validation error with raw-only strings.
TEST(MaskBenchEngineTest, AsciiSpelledInstancesPass) {
  auto tokenizer = Tokenizer::FromDirectory(testing::TokenizerDir("llama3"));
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  SchemaCase c;
  c.name = "ensure_ascii";
  c.schema = R"({"type":"object","properties":{
      "status":{"enum":["En cours","Termin\u00e9","\u4e2d\u6587"]},
      "note":{"type":"string","pattern":"^[^0-9]*$","maxLength":5},
      "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},
      "required":["status","note"]})";
  c.tests = {
      {true, R"({"status": "Termin\u00e9", "note": "\u00e9t\u00e9 \ud83d\ude00"})"},
      {true, R"({"status": "\u4e2d\u6587", "note": "caf\u00e9", "tags": ["\u00e9", "e"]})"},
      {true, "{\"status\": \"Termin\\u00e9\", \"note\": \"\xc3\xa9t\\u00e9\"}"},
      {false, R"({"status": "Termin\u00e9", "note": "\u00e9t\u00e9 \ud83d\ude00!"})"},
      {false, R"({"status": "Termin\u00e8", "note": ""})"},
      {false, R"({"status": "En cours", "note": "", "tags": ["\u00e9", "\u00e9"]})"},
  };
  RunOptions options;
  options.compile.strict = false;
  std::atomic<bool> cancelled{false};
  SchemaResult r = RunSchema(c, *tokenizer, options, cancelled);
  EXPECT_EQ(r.verdict, Verdict::kPass) << VerdictName(r.verdict) << ": " << r.reason;
}

}  // namespace
}  // namespace maskd::maskbench
