// Our serializer must write MaskBench instances byte for byte as Python's
// json.dumps(ensure_ascii=False) does: the token ids we teacher-force come from
// those bytes.
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "harness/maskbench_data.h"
#include "harness/python_json.h"

namespace maskd::maskbench {
namespace {

using ::maskd::testing::MaskBenchPath;

TEST(PythonFloatReprTest, MatchesPythonFormattingRules) {
  // Expected strings are what CPython 3.11 prints for repr(x).
  EXPECT_EQ(PythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(PythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonFloatRepr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(0.00001), "1e-05");
  EXPECT_EQ(PythonFloatRepr(-1.5e-7), "-1.5e-07");
  EXPECT_EQ(PythonFloatRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(PythonFloatRepr(5e-324), "5e-324");
  EXPECT_EQ(PythonFloatRepr(3.14), "3.14");
  EXPECT_EQ(PythonFloatRepr(100.0), "100.0");
}

TEST(PythonJsonDumpsTest, SpacingEscapesAndNumbers) {
  EXPECT_EQ(
      *PythonJsonDumps(R"({"a":[1,2.50,{"b":null}],"c":"x\"\\\n\u0001\u00e9\ud83d\ude00"})"),
      "{\"a\": [1, 2.5, {\"b\": null}], \"c\": \"x\\\"\\\\\\n\\u0001\xC3\xA9\xF0\x9F\x98\x80\"}");
  EXPECT_EQ(*PythonJsonDumps("-0"), "0");
  EXPECT_EQ(*PythonJsonDumps("1E2"), "100.0");
  EXPECT_EQ(*PythonJsonDumps("123456789012345678901234567890"), "123456789012345678901234567890");
  EXPECT_EQ(*PythonJsonDumps(" true "), "true");
  EXPECT_EQ(*PythonJsonDumps("\"\x7f/\""), "\"\x7f/\"");
  EXPECT_EQ(*PythonJsonDumps("[]"), "[]");
  EXPECT_EQ(*PythonJsonDumps("{}"), "{}");
  EXPECT_EQ(*PythonJsonDumps("1e400"), "Infinity");
  EXPECT_EQ(*PythonJsonDumps("-1e400"), "-Infinity");
  EXPECT_EQ(*PythonJsonDumps("-1e-400"), "-0.0");
}

TEST(PythonJsonDumpsTest, RejectsMalformedJson) {
  EXPECT_FALSE(PythonJsonDumps("{\"a\":}").ok());
  EXPECT_FALSE(PythonJsonDumps("[1,]").ok());
  EXPECT_FALSE(PythonJsonDumps("1 2").ok());
  EXPECT_FALSE(PythonJsonDumps("").ok());
}

TEST(MaskBenchDataTest, ParsesOneCase) {
  absl::StatusOr<SchemaCase> c = ParseSchemaCase(
      R"({"name":"n.json","schema":{"type":"integer"},"tests":[{"valid":true,"data":3},)"
      R"({"valid":false,"data":"x","description":"d"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "n.json");
  EXPECT_EQ(c->schema, R"({"type":"integer"})");
  ASSERT_EQ(c->tests.size(), 2u);
  EXPECT_TRUE(c->tests[0].valid);
  EXPECT_EQ(c->tests[0].text, "3");
  EXPECT_FALSE(c->tests[1].valid);
  EXPECT_EQ(c->tests[1].text, "\"x\"");
  EXPECT_FALSE(ParseSchemaCase(R"({"name":"no schema"})").ok());
  EXPECT_FALSE(ParseSchemaCase(R"({"schema":{},"tests":[{"valid":true}]})").ok());
}

TEST(MaskBenchDataTest, DeterministicSampleIsSpreadAndStable) {
  std::vector<size_t> s = DeterministicSample(100, 10);
  ASSERT_EQ(s.size(), 10u);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s[1], 10u);
  EXPECT_EQ(s, DeterministicSample(100, 10));
  EXPECT_EQ(DeterministicSample(3, 10).size(), 3u);
}

TEST(MaskBenchDataTest, EveryDevInstanceSerializesAsPythonDoes) {
  absl::StatusOr<std::vector<SchemaCase>> cases = LoadMaskBench(MaskBenchPath());
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::ifstream reference(MASKBENCH_REFERENCE);
  ASSERT_TRUE(reference.good()) << "missing " << MASKBENCH_REFERENCE;
  size_t instances = 0, mismatches = 0;
  std::string line, expected;
  for (const SchemaCase& c : *cases) {
    for (const Instance& instance : c.tests) {
      ASSERT_TRUE(std::getline(reference, line)) << "reference has fewer instances than data";
      ASSERT_TRUE(absl::Base64Unescape(line, &expected));
      ++instances;
      if (instance.text != expected && ++mismatches <= 5) {
        ADD_FAILURE() << c.name << ": ours " << instance.text.substr(0, 300) << "\n python "
                      << expected.substr(0, 300);
      }
    }
  }
  EXPECT_FALSE(std::getline(reference, line)) << "reference has more instances than data";
  EXPECT_EQ(mismatches, 0u) << "of " << instances;
  EXPECT_GT(instances, 1000u);
}

}  // namespace
}  // namespace maskd::maskbench
