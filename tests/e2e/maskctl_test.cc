// maskctl against a real maskd: each command's output and exit code
// (0 ok, 1 rejected, 2 usage, 3 server/RPC error, 4 token limit), as a
// shell script would see them.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/data_paths.h"
#include "re2/re2.h"
#include "tests/e2e/e2e_support.h"
#include "tests/support/real_tokenizer.h"

extern char** environ;

namespace maskd::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/maskctl_test_", getpid(), "_", name);
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// Runs maskctl with `args`, stdout and stderr captured in files.
Outcome RunMaskctl(std::vector<std::string> args) {
  const std::string out_path = TempPath("stdout"), err_path = TempPath("stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  args.insert(args.begin(), MASKCTL_BINARY);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  Outcome outcome;
  pid_t pid = -1;
  if (posix_spawn(&pid, MASKCTL_BINARY, &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  outcome.out = testing::ReadFileOrEmpty(out_path);
  outcome.err = testing::ReadFileOrEmpty(err_path);
  return outcome;
}

// "--server=ADDRESS" for the shared server.
class MaskctlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server = StartMaskd();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    server_flag_ = new std::string("--server=" + server_->grpc_address());
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
      delete server_;
    }
  }

  // The handle maskctl prints for `spec_path`; fails the test otherwise.
  static std::string CompileHandle(const std::string& spec_path) {
    const Outcome compiled = RunMaskctl({"compile", spec_path, *server_flag_});
    EXPECT_EQ(compiled.exit_code, 0) << compiled.err;
    const std::vector<std::string> lines = absl::StrSplit(compiled.out, '\n');
    return !lines.empty() && lines[0].rfind("handle: ", 0) == 0 ? lines[0].substr(8) : "";
  }

  static testing::MaskdProcess* server_;
  static std::string* server_flag_;
};

testing::MaskdProcess* MaskctlTest::server_ = nullptr;
std::string* MaskctlTest::server_flag_ = nullptr;

constexpr char kAgeSchema[] =
    R"({"type":"object","properties":{"age":{"type":"integer"}},"required":["age"],)"
    R"("additionalProperties":false})";

TEST_F(MaskctlTest, HealthAndTokenizers) {
  Outcome health = RunMaskctl({"health", *server_flag_});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(health.out, "SERVING\n");
  health = RunMaskctl({"health", *server_flag_, "--service=maskd.v1.Maskd"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  health = RunMaskctl({"health", *server_flag_, "--service=no.such.Service"});
  EXPECT_EQ(health.exit_code, 3);
  EXPECT_THAT(health.err, HasSubstr("NOT_FOUND"));

  const Outcome listed = RunMaskctl({"tokenizers", *server_flag_});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  absl::StatusOr<std::shared_ptr<const Tokenizer>> llama3 = Llama3();
  ASSERT_TRUE(llama3.ok()) << llama3.status();
  EXPECT_THAT(listed.out, MatchesRegex(absl::StrCat("NAME +ID.*\nllama3 +", (*llama3)->id(),
                                                    " +byte_level_bpe +128256 .*yes\n")));
}

TEST_F(MaskctlTest, CompilePrintsTheServersHandleOrItsError) {
  const std::string schema = TempPath("age.json");
  WriteFile(schema, kAgeSchema);
  const Outcome compiled = RunMaskctl({"compile", schema, *server_flag_});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.out, MatchesRegex("handle: [0-9a-f]+\ntokenizer: llama3 \\([0-9a-f]+\\)\n"
                                         "kind: json_schema\ncompile_time: [0-9.]+ ms\n"
                                         "cache_hit: (true|false)\n(.*\n)*"));
  // The handle is the server's content hash: the client library gets the
  // same one for the same request.
  std::unique_ptr<client::MaskdClient> client = ClientOf(*server_);
  absl::StatusOr<CompiledSchema> direct = CompileForLlama3(*client, kAgeSchema);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(CompileHandle(schema), direct->handle);

  // Kinds from extensions.
  const std::string regex = TempPath("zip.regex"), choices = TempPath("colors.txt");
  WriteFile(regex, "[0-9]{5}\n");
  WriteFile(choices, "red\ngreen\nblue\n");
  EXPECT_THAT(RunMaskctl({"compile", regex, *server_flag_}).out, HasSubstr("kind: regex\n"));
  EXPECT_THAT(RunMaskctl({"compile", choices, *server_flag_}).out, HasSubstr("kind: choices\n"));
  EXPECT_THAT(RunMaskctl({"compile", "--kind=builtin_json", *server_flag_}).out,
              HasSubstr("kind: builtin_json\n"));
  // Grammars by extension: GBNF, Lark, EBNF; a grammar error names its line.
  const std::string gbnf = TempPath("g.gbnf"), lark = TempPath("g.lark"), ebnf = TempPath("g.ebnf");
  WriteFile(gbnf, "root ::= \"a\" [0-9]+\n");
  WriteFile(lark, "start: \"a\" NUM\nNUM: /[0-9]+/\n");
  WriteFile(ebnf, "root ::= \"a\" digit+\ndigit ::= [0-9]\n");
  for (const auto& [path, dialect] : std::vector<std::pair<std::string, std::string>>{
           {gbnf, "gbnf"}, {lark, "lark"}, {ebnf, "ebnf"}}) {
    const Outcome grammar = RunMaskctl({"compile", path, *server_flag_});
    EXPECT_EQ(grammar.exit_code, 0) << path << ": " << grammar.err;
    EXPECT_THAT(grammar.out, HasSubstr("kind: " + dialect + "\n")) << path;
  }
  WriteFile(gbnf, "root ::= \"a\"\nunused ::= \"b\"\n");
  EXPECT_THAT(RunMaskctl({"compile", gbnf, *server_flag_}).out,
              HasSubstr("warning: rule 'unused' (line 2:1) is unreachable from 'root'\n"));
  WriteFile(gbnf, "root ::= \"a\" |\n  nope\n");
  const Outcome bad_grammar = RunMaskctl({"compile", gbnf, *server_flag_});
  EXPECT_EQ(bad_grammar.exit_code, 1);
  EXPECT_THAT(bad_grammar.err, HasSubstr("line 2:3"));

  // The server's errors, with code and place: exit 1.
  const std::string unsupported = TempPath("not.json"), malformed = TempPath("bad.json");
  WriteFile(unsupported, R"({"type":"object","properties":{"a":{"type":"array","uniqueItems":true,)"
                         R"("items":{"type":"integer","minimum":0}}}})");
  WriteFile(malformed, R"({"type": "object",)");
  Outcome refused = RunMaskctl({"compile", unsupported, *server_flag_});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("maskctl compile: UNIMPLEMENTED: "));
  EXPECT_THAT(refused.err, HasSubstr("/properties/a"));
  refused = RunMaskctl({"compile", malformed, *server_flag_});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("INVALID_ARGUMENT"));

  // Usage errors: exit 2, nothing sent.
  EXPECT_EQ(RunMaskctl({"compile", TempPath("x.yaml"), *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"compile", TempPath("missing.json"), *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"compile", schema, "--kind=yaml", *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"compile", schema, "--seed=1", *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"compile", schema, "--bogus", *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"frobnicate"}).exit_code, 2);

  // Server-side failures: exit 3.
  const Outcome no_tokenizer = RunMaskctl({"compile", schema, "--tokenizer=nope", *server_flag_});
  EXPECT_EQ(no_tokenizer.exit_code, 3);
  EXPECT_THAT(no_tokenizer.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(no_tokenizer.err, HasSubstr("llama3"));  // names what the server has
  const Outcome unreachable =
      RunMaskctl({"compile", schema, "--server=127.0.0.1:1", "--deadline=2s"});
  EXPECT_EQ(unreachable.exit_code, 3);
  EXPECT_THAT(unreachable.err, HasSubstr("UNAVAILABLE"));
}

TEST_F(MaskctlTest, CheckSaysWhereTheTextLeavesTheGrammar) {
  const std::string schema = TempPath("age_check.json");
  WriteFile(schema, kAgeSchema);
  const std::string handle = CompileHandle(schema);
  ASSERT_FALSE(handle.empty());

  const Outcome match = RunMaskctl({"check", handle, R"({"age": 42})", *server_flag_});
  EXPECT_EQ(match.exit_code, 0) << match.err;
  EXPECT_THAT(match.out, HasSubstr("verdict: match"));
  EXPECT_THAT(match.out, HasSubstr("no tokenize RPC"));

  // Byte 9 is the 'x': the first byte no continuation allows.
  const std::string bad = R"({"age": 3x})";
  const Outcome leaves = RunMaskctl({"check", handle, bad, *server_flag_});
  EXPECT_EQ(leaves.exit_code, 1) << leaves.err;
  absl::StatusOr<std::shared_ptr<const Tokenizer>> llama3 = Llama3();
  ASSERT_TRUE(llama3.ok());
  const std::vector<TokenId> tokens = (*llama3)->Encode(bad);
  size_t index = 0, start = 0;
  while (start + (*llama3)->token_bytes(tokens[index]).size() <= 9) {
    start += (*llama3)->token_bytes(tokens[index++]).size();
  }
  EXPECT_THAT(leaves.out, HasSubstr(absl::StrCat("verdict: leaves the grammar at byte 9 (token ",
                                                 index, " of ", tokens.size())));
  EXPECT_THAT(leaves.out, HasSubstr("accepted: \"{\\\"age\\\": 3\"\n"));

  const Outcome incomplete = RunMaskctl({"check", handle, R"({"age": 4)", *server_flag_});
  EXPECT_EQ(incomplete.exit_code, 1);
  EXPECT_THAT(incomplete.out, HasSubstr("verdict: incomplete"));

  const Outcome unknown = RunMaskctl({"check", std::string(32, 'e'), "{}", *server_flag_});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_THAT(unknown.err, HasSubstr("NOT_FOUND"));

  // A local tokenizer that is not byte for byte the server's is refused.
  const std::string other_dir = TempPath("other_tokenizer");
  mkdir(other_dir.c_str(), 0700);
  WriteFile(other_dir + "/tokenizer.json",
            testing::ReadFileOrEmpty(Llama3Dir() + "/tokenizer.json") + "\n");
  const Outcome mismatch =
      RunMaskctl({"check", handle, "{}", "--tokenizer_dir=" + other_dir, *server_flag_});
  EXPECT_EQ(mismatch.exit_code, 2);
  EXPECT_THAT(mismatch.err, HasSubstr("but the server's tokenizer 'llama3' has id"));
  EXPECT_EQ(RunMaskctl({"check", handle, *server_flag_}).exit_code, 2);
}

TEST_F(MaskctlTest, GenerateSamplesOnlyWhatTheGrammarAllows) {
  const std::string regex = TempPath("gen.regex");
  WriteFile(regex, "[a-z]{2,6}-[0-9]{2,4}");
  const Outcome first = RunMaskctl({"generate", regex, "--random", "--seed=7", *server_flag_});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_FALSE(first.out.empty());
  EXPECT_TRUE(RE2::FullMatch(first.out.substr(0, first.out.size() - 1), "[a-z]{2,6}-[0-9]{2,4}"))
      << first.out;
  EXPECT_THAT(first.err, HasSubstr("seed 7"));
  const Outcome again = RunMaskctl({"generate", regex, "--random", "--seed=7", *server_flag_});
  EXPECT_EQ(again.out, first.out);

  const std::string choices = TempPath("gen.txt");
  WriteFile(choices, "north\nsouth\neast\nwest\n");
  const Outcome chosen = RunMaskctl({"generate", choices, "--random", "--seed=3", *server_flag_});
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_THAT(chosen.out, MatchesRegex("(north|south|east|west)\n"));

  // Llama 3 digit tokens hold at most 3 digits: 2 tokens cannot finish 30.
  const std::string digits = TempPath("digits.regex");
  WriteFile(digits, "[0-9]{30}");
  const Outcome limited =
      RunMaskctl({"generate", digits, "--random", "--max_tokens=2", *server_flag_});
  EXPECT_EQ(limited.exit_code, 4) << limited.err;
  EXPECT_THAT(limited.out, MatchesRegex("[0-9]{1,6}\n"));
  EXPECT_THAT(limited.err, HasSubstr("--max_tokens=2 reached before the output could end"));

  EXPECT_EQ(RunMaskctl({"generate", regex, *server_flag_}).exit_code, 2);  // no --random
}

// --prompt_tail heals the prompt's end at open: the prompt "Visit https:"
// loses a tail a longer token covers (at least ":"), stderr says how many
// prompt tokens to drop, and the output is those bytes, then the spec.
TEST_F(MaskctlTest, GenerateHealsThePromptTail) {
  const std::string regex = TempPath("heal.regex");
  WriteFile(regex, "//[a-z]{3}\\.com");
  const Outcome healed = RunMaskctl(
      {"generate", regex, "--random", "--seed=5", "--prompt_tail=Visit https:", *server_flag_});
  ASSERT_EQ(healed.exit_code, 0) << healed.err;
  EXPECT_THAT(healed.err, HasSubstr("healing: drop "));
  std::string removed;
  ASSERT_TRUE(RE2::FullMatch(healed.out, "(.*?)//[a-z]{3}\\.com\n", &removed)) << healed.out;
  EXPECT_FALSE(removed.empty());
  EXPECT_TRUE(std::string("Visit https:").ends_with(removed)) << removed;
  EXPECT_THAT(healed.err, HasSubstr(absl::StrCat("the output starts with ", removed)));
  // The same tail by id gives the same output.
  const std::vector<TokenId> ids = testing::LoadRealTokenizer("llama3")->Encode("Visit https:");
  const Outcome by_id =
      RunMaskctl({"generate", regex, "--random", "--seed=5",
                  "--prompt_tail_tokens=" + absl::StrJoin(ids, ","), *server_flag_});
  EXPECT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_EQ(by_id.out, healed.out);
  // Without healing the output is the spec alone.
  const Outcome plain = RunMaskctl({"generate", regex, "--random", "--seed=5", *server_flag_});
  EXPECT_TRUE(RE2::FullMatch(plain.out, "//[a-z]{3}\\.com\n")) << plain.out;
  EXPECT_THAT(plain.err, Not(HasSubstr("healing")));
  // Bad ids and both flags at once are usage errors.
  EXPECT_EQ(RunMaskctl({"generate", regex, "--random", "--prompt_tail_tokens=1,x", *server_flag_})
                .exit_code,
            2);
  EXPECT_EQ(RunMaskctl({"generate", regex, "--random", "--prompt_tail=a", "--prompt_tail_tokens=1",
                        *server_flag_})
                .exit_code,
            2);
}

// --property_order and --unknown_formats reach the server's CompileOptions:
// each changes what compiles and what a check accepts.
TEST_F(MaskctlTest, PropertyOrderAndUnknownFormatsFlags) {
  const std::string schema = TempPath("order.json");
  WriteFile(schema,
            R"({"type":"object","properties":{"a":{"type":"integer"},)"
            R"("b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false})");
  const std::string schema_handle = CompileHandle(schema);
  const Outcome any = RunMaskctl({"compile", schema, "--property_order=any", *server_flag_});
  ASSERT_EQ(any.exit_code, 0) << any.err;
  const std::string any_handle = any.out.substr(8, any.out.find('\n') - 8);
  EXPECT_NE(any_handle, schema_handle);  // another option, another grammar
  const std::string reversed = R"({"b": 1, "a": 2})";
  EXPECT_EQ(RunMaskctl({"check", any_handle, reversed, *server_flag_}).exit_code, 0);
  EXPECT_EQ(RunMaskctl({"check", schema_handle, reversed, *server_flag_}).exit_code, 1);
  EXPECT_EQ(RunMaskctl({"check", any_handle, R"({"a": 1, "a": 2})", *server_flag_}).exit_code, 1);
  const Outcome schema_order =
      RunMaskctl({"compile", schema, "--property_order=schema", *server_flag_});
  ASSERT_EQ(schema_order.exit_code, 0) << schema_order.err;
  EXPECT_THAT(schema_order.out, StartsWith("handle: " + schema_handle + "\n"));

  const std::string path_format = TempPath("path_format.json");
  WriteFile(path_format,
            R"({"type":"object","properties":{"p":{"type":"string","format":"path"}}})");
  const Outcome refused = RunMaskctl({"compile", path_format, *server_flag_});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("UNIMPLEMENTED"));
  EXPECT_THAT(refused.err, HasSubstr("\"path\""));
  EXPECT_EQ(
      RunMaskctl({"compile", path_format, "--unknown_formats=refuse", *server_flag_}).exit_code, 1);
  const Outcome ignored =
      RunMaskctl({"compile", path_format, "--unknown_formats=ignore", *server_flag_});
  ASSERT_EQ(ignored.exit_code, 0) << ignored.err;
  EXPECT_THAT(ignored.out, HasSubstr("ignored_keywords: format \"path\" at /properties/p\n"));
  const std::string ignored_handle = ignored.out.substr(8, ignored.out.find('\n') - 8);
  EXPECT_EQ(RunMaskctl({"check", ignored_handle, R"({"p": "any text"})", *server_flag_}).exit_code,
            0);

  // Both flags on generate too; other values are usage errors (exit 2).
  const std::string pair = TempPath("pair.json");
  WriteFile(pair, R"({"type":"object","properties":{"a":{"const":"x"},"b":{"const":"y"}},)"
                  R"("required":["a","b"],"additionalProperties":false})");
  for (int seed = 1; seed <= 4; ++seed) {
    const Outcome generated = RunMaskctl(
        {"generate", pair, "--random", absl::StrCat("--seed=", seed), "--property_order=any",
         "--unknown_formats=ignore", "--whitespace=compact", *server_flag_});
    EXPECT_EQ(generated.exit_code, 0) << generated.err;
    EXPECT_THAT(generated.out,
                MatchesRegex("(\\{\"a\":\"x\",\"b\":\"y\"\\}|\\{\"b\":\"y\",\"a\":\"x\"\\})\n"));
  }
  EXPECT_EQ(RunMaskctl({"compile", schema, "--property_order=sorted", *server_flag_}).exit_code, 2);
  EXPECT_EQ(RunMaskctl({"compile", schema, "--unknown_formats=warn", *server_flag_}).exit_code, 2);
  EXPECT_EQ(
      RunMaskctl({"check", any_handle, "{}", "--property_order=any", *server_flag_}).exit_code, 2);
}

// --schema_resource serves documents to the schema's $refs; --default_dialect
// reads a schema without $schema under that draft.
TEST_F(MaskctlTest, SchemaResourceAndDefaultDialectFlags) {
  const std::string leaf = TempPath("leaf.json");
  WriteFile(leaf, R"({"type":"integer","minimum":0})");
  const std::string schema = TempPath("uses_leaf.json");
  WriteFile(schema, R"({"type":"array","items":{"$ref":"https://example.com/leaf.json"}})");
  const Outcome refused = RunMaskctl({"compile", schema, *server_flag_});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("UNIMPLEMENTED"));
  EXPECT_THAT(refused.err, HasSubstr("https://example.com/leaf.json"));
  const Outcome served =
      RunMaskctl({"compile", schema, "--schema_resource=https://example.com/leaf.json=" + leaf,
                  *server_flag_});
  ASSERT_EQ(served.exit_code, 0) << served.err;
  const std::string handle = served.out.substr(8, served.out.find('\n') - 8);
  EXPECT_EQ(RunMaskctl({"check", handle, "[0, 7]", *server_flag_}).exit_code, 0);
  EXPECT_EQ(RunMaskctl({"check", handle, "[-1]", *server_flag_}).exit_code, 1);
  EXPECT_EQ(RunMaskctl({"compile", schema, "--schema_resource=https://example.com/leaf.json",
                        *server_flag_})
                .exit_code,
            2);
  EXPECT_EQ(RunMaskctl({"compile", schema,
                        "--schema_resource=https://example.com/leaf.json=" + TempPath("none.json"),
                        *server_flag_})
                .exit_code,
            2);

  // Draft 7 ignores $ref's siblings: "type": "string" does not apply.
  const std::string sibling = TempPath("sibling.json");
  WriteFile(sibling, R"({"definitions":{"n":{"type":"integer"}},"$ref":"#/definitions/n",)"
                     R"("type":"string"})");
  const Outcome draft7 =
      RunMaskctl({"compile", sibling, "--default_dialect=http://json-schema.org/draft-07/schema#",
                  *server_flag_});
  ASSERT_EQ(draft7.exit_code, 0) << draft7.err;
  const std::string draft7_handle = draft7.out.substr(8, draft7.out.find('\n') - 8);
  EXPECT_EQ(RunMaskctl({"check", draft7_handle, "12", *server_flag_}).exit_code, 0);
  const Outcome draft2020 = RunMaskctl({"compile", sibling, *server_flag_});
  ASSERT_EQ(draft2020.exit_code, 0) << draft2020.err;
  const std::string draft2020_handle = draft2020.out.substr(8, draft2020.out.find('\n') - 8);
  EXPECT_EQ(RunMaskctl({"check", draft2020_handle, "12", *server_flag_}).exit_code, 1);
}

TEST_F(MaskctlTest, StructuralTagsAndToolCalls) {
  // A structural tag file: free text with <n>INTEGER</n> tags.
  const std::string tag = TempPath("tag.json");
  WriteFile(tag, R"({"format":{"type":"triggered_tags","triggers":["<n>"],"tags":[)"
                 R"({"type":"tag","begin":"<n>","content":{"type":"json_schema",)"
                 R"("json_schema":{"type":"integer"}},"end":"</n>"}]}})");
  const Outcome compiled = RunMaskctl({"compile", tag, "--kind=structural_tag", *server_flag_});
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_THAT(compiled.out, HasSubstr("kind: structural_tag\n"));
  const std::string tag_handle = compiled.out.substr(8, compiled.out.find('\n') - 8);
  EXPECT_EQ(
      RunMaskctl({"check", tag_handle, "so <n>12</n> and <n>7</n>!", *server_flag_}).exit_code, 0);
  const Outcome bad_content = RunMaskctl({"check", tag_handle, "so <n>x</n>", *server_flag_});
  EXPECT_EQ(bad_content.exit_code, 1);
  EXPECT_THAT(bad_content.out, HasSubstr("leaves the grammar at byte 6"));
  // Its errors name their JSON pointer.
  const std::string wrong = TempPath("wrong_tag.json");
  WriteFile(wrong, R"({"format":{"type":"sequence","elements":[{"type":"bogus"}]}})");
  const Outcome refused = RunMaskctl({"compile", wrong, "--kind=structural_tag", *server_flag_});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("/format/elements/0/type"));

  // Tools, OpenAI style, as Llama-3 JSON calls.
  const std::string tools = TempPath("tools.json");
  WriteFile(tools, R"([{"type":"function","function":{"name":"get_weather","parameters":)"
                   R"({"type":"object","properties":{"city":{"type":"string"}},)"
                   R"("required":["city"],"additionalProperties":false}}}])");
  const Outcome made = RunMaskctl({"tools", tools, "--format=llama3_json", *server_flag_});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_THAT(made.out, HasSubstr("kind: structural_tag\n"));
  const std::string handle = made.out.substr(8, made.out.find('\n') - 8);
  EXPECT_EQ(
      RunMaskctl({"check", handle, R"({"name": "get_weather", "parameters": {"city": "Oslo"}})",
                  *server_flag_})
          .exit_code,
      0);
  EXPECT_EQ(
      RunMaskctl({"check", handle, R"({"name": "get_time", "parameters": {}})", *server_flag_})
          .exit_code,
      1);
  EXPECT_EQ(RunMaskctl({"tools", tools, "--format=mistral", *server_flag_}).exit_code, 2);
  // Harmony needs gpt-oss's special tokens, which Llama 3 lacks.
  const Outcome harmony = RunMaskctl({"tools", tools, "--format=harmony", *server_flag_});
  EXPECT_EQ(harmony.exit_code, 1) << harmony.err;
  EXPECT_THAT(harmony.err, HasSubstr("\"<|channel|>\" is not a special token of tokenizer llama3"));
}

// `maskctl tools --format=harmony` with the real gpt-oss tokenizer: the
// handle accepts a harmony call written with its special tokens (maskctl
// check walks the text's canonical tokens, special ones included) and
// refuses a call to an unknown tool.
TEST(MaskctlHarmonyTest, HarmonyToolCallsWithGptOss) {
  absl::StatusOr<std::unique_ptr<testing::MaskdProcess>> server =
      StartMaskd({"--tokenizer=gptoss=" + testing::TokenizerDir("gptoss")});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string flag = "--server=" + (*server)->grpc_address();
  const std::string tools = TempPath("harmony_tools.json");
  WriteFile(tools, R"([{"type":"function","function":{"name":"get_weather","parameters":)"
                   R"({"type":"object","properties":{"city":{"type":"string"}},)"
                   R"("required":["city"],"additionalProperties":false}}}])");
  const Outcome made = RunMaskctl({"tools", tools, "--format=harmony", "--tokenizer=gptoss", flag});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_THAT(made.out, HasSubstr("kind: structural_tag\n"));
  const std::string handle = made.out.substr(8, made.out.find('\n') - 8);
  const Outcome good =
      RunMaskctl({"check", handle,
                  "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
                  R"({"city": "Oslo"}<|call|>)",
                  "--tokenizer=gptoss", flag});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  // An analysis message first, then the recipient in the role header.
  const Outcome analysis_then_call =
      RunMaskctl({"check", handle,
                  "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
                  " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>"
                  R"({"city": "Oslo"}<|call|>)",
                  "--tokenizer=gptoss", flag});
  EXPECT_EQ(analysis_then_call.exit_code, 0) << analysis_then_call.out << analysis_then_call.err;
  const Outcome bad = RunMaskctl(
      {"check", handle,
       "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>",
       "--tokenizer=gptoss", flag});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_EQ((*server)->Stop(SIGTERM, std::chrono::seconds(30)).value_or(-1), 0);
}

TEST(MaskctlHelpTest, EveryCommandHasHelp) {
  const Outcome general = RunMaskctl({"--help"});
  EXPECT_EQ(general.exit_code, 0);
  EXPECT_THAT(general.out, HasSubstr("Exit codes:"));
  for (const char* command : {"compile", "check", "generate", "health", "tokenizers"}) {
    const Outcome help = RunMaskctl({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_THAT(help.out, StartsWith(absl::StrCat("Usage: maskctl ", command))) << command;
    EXPECT_THAT(help.out, HasSubstr("--server=127.0.0.1:50051")) << command;
    EXPECT_EQ(RunMaskctl({"help", command}).out, help.out) << command;
  }
  EXPECT_THAT(RunMaskctl({"check", "--help"}).out, HasSubstr("--tokenizer_dir"));
  EXPECT_THAT(RunMaskctl({"generate", "-h"}).out, HasSubstr("--seed=0"));
}

}  // namespace
}  // namespace maskd::e2e
