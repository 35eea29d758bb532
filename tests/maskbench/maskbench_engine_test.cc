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

}  // namespace
}  // namespace maskd::maskbench
