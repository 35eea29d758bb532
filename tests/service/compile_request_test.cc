// TranslateCompileRequest: defaults, refusals with the fitting code, and the
// handle (a content hash of what changes the compiled grammar, only that).
#include "service/compile_request.h"

#include "compiler/compile/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace maskd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

v1::CompileRequest Schema(const std::string& schema) {
  v1::CompileRequest request;
  request.set_tokenizer_id("0123456789abcdef0123456789abcdef");
  request.mutable_spec()->set_json_schema(schema);
  return request;
}

std::string Handle(const v1::CompileRequest& request, const CompileLimits& limits = {}) {
  absl::StatusOr<CompileJob> job = TranslateCompileRequest(request, limits);
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? job->handle : "";
}

TEST(CompileRequestTest, HandleIsAStableContentHash) {
  const std::string a = Handle(Schema(R"({"type":"integer"})"));
  EXPECT_THAT(a, ::testing::MatchesRegex("[0-9a-f]{64}"));
  EXPECT_EQ(Handle(Schema(R"({"type":"integer"})")), a);
  // Whitespace and string escapes are spelling, not schema (Python's
  // json.dumps vs a file): one handle. Member order is schema (property order).
  EXPECT_EQ(Handle(Schema(" {\"type\" :\n\t\"integer\"} ")), a);
  EXPECT_EQ(Handle(Schema(R"({"typ\u0065": "integer"})")), a);
  EXPECT_EQ(Handle(Schema(R"({"enum": ["\u00e9\ud83d\ude00\/"]})")),
            Handle(Schema("{\"enum\":[\"\xc3\xa9\xf0\x9f\x98\x80/\"]}")));
  EXPECT_EQ(Handle(Schema(R"({"properties": {"a": {}, "b": {}}})")),
            Handle(Schema(R"({"properties":{"a":{},"b":{}}})")));
  EXPECT_NE(Handle(Schema(R"({"properties":{"b":{},"a":{}}})")),
            Handle(Schema(R"({"properties":{"a":{},"b":{}}})")));
  EXPECT_NE(Handle(Schema(R"({"const": "a b"})")), Handle(Schema(R"({"const": "ab"})")));
  EXPECT_NE(Handle(Schema(R"({"const": 1.0})")), Handle(Schema(R"({"const": 1})")));
  // Invalid JSON is hashed as written: "1 2" is not "12".
  EXPECT_NE(Handle(Schema("{\"const\": 1 2}")), Handle(Schema("{\"const\": 12}")));
  // Regexes are not JSON: every byte counts.
  v1::CompileRequest spaced = Schema("");
  spaced.mutable_spec()->set_regex("a b");
  v1::CompileRequest unspaced = Schema("");
  unspaced.mutable_spec()->set_regex("ab");
  EXPECT_NE(Handle(spaced), Handle(unspaced));

  v1::CompileRequest other_tokenizer = Schema(R"({"type":"integer"})");
  other_tokenizer.set_tokenizer_id("fedcba9876543210fedcba9876543210");
  EXPECT_NE(Handle(other_tokenizer), a);

  v1::CompileRequest compact = Schema(R"({"type":"integer"})");
  compact.mutable_options()->set_whitespace(v1::WHITESPACE_MODE_COMPACT);
  EXPECT_NE(Handle(compact), a);
  // Defaults spelled out are the defaults.
  v1::CompileRequest bounded = Schema(R"({"type":"integer"})");
  bounded.mutable_options()->set_whitespace(v1::WHITESPACE_MODE_BOUNDED);
  bounded.mutable_options()->set_max_whitespace_run(32);
  bounded.mutable_options()->set_unknown_keywords(v1::UNKNOWN_KEYWORD_POLICY_STRICT);
  EXPECT_EQ(Handle(bounded), a);
  // Any-order properties are another language, so another handle.
  v1::CompileRequest any_order = Schema(R"({"type":"integer"})");
  any_order.mutable_options()->set_property_order(v1::PROPERTY_ORDER_ANY_ORDER);
  absl::StatusOr<CompileJob> any_order_job = TranslateCompileRequest(any_order, {});
  ASSERT_TRUE(any_order_job.ok()) << any_order_job.status();
  EXPECT_EQ(any_order_job->options.property_order, PropertyOrder::kAnyOrder);
  EXPECT_NE(any_order_job->handle, a);
  v1::CompileRequest ignore_formats = Schema(R"({"type":"integer"})");
  ignore_formats.mutable_options()->set_unknown_formats(v1::UNKNOWN_FORMAT_POLICY_IGNORE);
  absl::StatusOr<CompileJob> ignore_job = TranslateCompileRequest(ignore_formats, {});
  ASSERT_TRUE(ignore_job.ok()) << ignore_job.status();
  EXPECT_EQ(ignore_job->options.unknown_formats, UnknownFormats::kIgnore);
  EXPECT_NE(ignore_job->handle, a);
  v1::CompileRequest refuse_formats = Schema(R"({"type":"integer"})");
  refuse_formats.mutable_options()->set_unknown_formats(v1::UNKNOWN_FORMAT_POLICY_REFUSE);
  EXPECT_EQ(Handle(refuse_formats), a);  // the default spelled out
  // A default dialect reads the schema under other rules: another handle.
  v1::CompileRequest draft7 = Schema(R"({"type":"integer"})");
  draft7.mutable_options()->set_default_dialect("http://json-schema.org/draft-07/schema#");
  absl::StatusOr<CompileJob> draft7_job = TranslateCompileRequest(draft7, {});
  ASSERT_TRUE(draft7_job.ok()) << draft7_job.status();
  EXPECT_EQ(draft7_job->options.default_dialect, "http://json-schema.org/draft-07/schema#");
  EXPECT_NE(draft7_job->handle, a);
  // Schema resources are part of what a $ref means: translated, and each
  // document (in its canonical spelling) and URI changes the handle.
  auto with_resource = [](const std::string& uri, const std::string& json) {
    v1::CompileRequest r = Schema(R"({"type":"integer"})");
    v1::SchemaResource* resource = r.mutable_options()->add_schema_resources();
    resource->set_uri(uri);
    resource->set_json(json);
    return r;
  };
  const v1::CompileRequest tree =
      with_resource("https://example.com/t.json", R"({"type": "null"})");
  absl::StatusOr<CompileJob> tree_job = TranslateCompileRequest(tree, {});
  ASSERT_TRUE(tree_job.ok()) << tree_job.status();
  ASSERT_EQ(tree_job->options.schema_resources.size(), 1u);
  EXPECT_EQ(tree_job->options.schema_resources[0].uri, "https://example.com/t.json");
  EXPECT_EQ(tree_job->options.schema_resources[0].text, R"({"type": "null"})");
  EXPECT_NE(tree_job->handle, a);
  EXPECT_EQ(Handle(with_resource("https://example.com/t.json", R"({"type":"null"})")),
            tree_job->handle);
  EXPECT_NE(Handle(with_resource("https://example.com/u.json", R"({"type": "null"})")),
            tree_job->handle);
  EXPECT_NE(Handle(with_resource("https://example.com/t.json", R"({"type": "string"})")),
            tree_job->handle);
  // Limits do not change the grammar.
  v1::CompileRequest limited = Schema(R"({"type":"integer"})");
  limited.mutable_options()->mutable_compile_time_limit()->set_seconds(1);
  EXPECT_EQ(Handle(limited), a);

  // Choices are length-prefixed: ["ab"] and ["a", "b"] differ.
  v1::CompileRequest one = Schema("");
  one.mutable_spec()->mutable_choices()->add_choices("ab");
  v1::CompileRequest two = Schema("");
  two.mutable_spec()->mutable_choices()->add_choices("a");
  two.mutable_spec()->mutable_choices()->add_choices("b");
  EXPECT_NE(Handle(one), Handle(two));
  // The same text as a regex is another grammar.
  v1::CompileRequest regex = Schema("");
  regex.mutable_spec()->set_regex(R"({"type":"integer"})");
  EXPECT_NE(Handle(regex), a);
}

TEST(CompileRequestTest, TranslatesOptions) {
  v1::CompileRequest request = Schema("{}");
  request.mutable_options()->set_whitespace(v1::WHITESPACE_MODE_FLEXIBLE);
  request.mutable_options()->set_unknown_keywords(v1::UNKNOWN_KEYWORD_POLICY_PERMISSIVE);
  request.mutable_options()->mutable_compile_time_limit()->set_seconds(60);
  CompileLimits limits;
  limits.compile_time_limit = absl::Seconds(3);
  absl::StatusOr<CompileJob> job = TranslateCompileRequest(request, limits);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.kind, SpecKind::kJsonSchema);
  EXPECT_STREQ(job->kind, "json_schema");
  EXPECT_EQ(job->options.whitespace, WhitespaceMode::kFlexible);
  EXPECT_FALSE(job->options.strict);
  EXPECT_EQ(job->time_limit, absl::Seconds(3));  // capped by the server
  EXPECT_EQ(job->options.max_recursion_depth, CompileOptions().max_recursion_depth);

  request.mutable_options()->set_max_recursion_depth(kMaxRecursionDepthLimit);
  absl::StatusOr<CompileJob> deep = TranslateCompileRequest(request, limits);
  ASSERT_TRUE(deep.ok()) << deep.status();
  EXPECT_EQ(deep->options.max_recursion_depth, kMaxRecursionDepthLimit);
  EXPECT_NE(deep->handle, job->handle);  // a spec may compile under one limit only
}

TEST(CompileRequestTest, RefusesWithTheFittingCode) {
  CompileLimits limits;
  limits.max_spec_bytes = 10;
  absl::StatusOr<CompileJob> big = TranslateCompileRequest(Schema(std::string(11, ' ')), limits);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("--max_spec_bytes"));
  // Schema resources count toward the same limit.
  v1::CompileRequest small = Schema("{}");
  v1::SchemaResource* resource = small.mutable_options()->add_schema_resources();
  resource->set_uri("u:a");
  ASSERT_TRUE(TranslateCompileRequest(small, limits).ok());
  resource->set_json("{\"type\": 1}");
  absl::StatusOr<CompileJob> big_resource = TranslateCompileRequest(small, limits);
  EXPECT_EQ(big_resource.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big_resource.status().message(), HasSubstr("schema_resources"));

  v1::CompileRequest none;
  EXPECT_EQ(TranslateCompileRequest(none, {}).status().code(), absl::StatusCode::kInvalidArgument);

  v1::CompileRequest no_choices = Schema("");
  no_choices.mutable_spec()->mutable_choices();
  EXPECT_EQ(TranslateCompileRequest(no_choices, {}).status().code(),
            absl::StatusCode::kInvalidArgument);

  v1::CompileRequest dialect = Schema("");
  dialect.mutable_spec()->mutable_grammar()->set_text("root ::= \"a\"");
  absl::StatusOr<CompileJob> no_dialect = TranslateCompileRequest(dialect, {});
  EXPECT_EQ(no_dialect.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_dialect.status().message(), HasSubstr("dialect"));

  v1::CompileRequest bad_enum = Schema("{}");
  bad_enum.mutable_options()->set_whitespace(static_cast<v1::WhitespaceMode>(42));
  EXPECT_EQ(TranslateCompileRequest(bad_enum, {}).status().code(),
            absl::StatusCode::kInvalidArgument);

  v1::CompileRequest bad_formats = Schema("{}");
  bad_formats.mutable_options()->set_unknown_formats(static_cast<v1::UnknownFormatPolicy>(9));
  absl::StatusOr<CompileJob> bad_formats_job = TranslateCompileRequest(bad_formats, {});
  EXPECT_EQ(bad_formats_job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_formats_job.status().message(), HasSubstr("unknown_formats"));
  v1::CompileRequest too_deep = Schema("{}");
  too_deep.mutable_options()->set_max_recursion_depth(kMaxRecursionDepthLimit + 1);
  absl::StatusOr<CompileJob> refused = TranslateCompileRequest(too_deep, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("options.max_recursion_depth"), HasSubstr("1000")));

  v1::CompileRequest negative = Schema("{}");
  negative.mutable_options()->mutable_compile_time_limit()->set_seconds(-1);
  EXPECT_EQ(TranslateCompileRequest(negative, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace maskd
