// tokenizer_load: loads one tokenizer once and prints how long it took. Run
// it as a fresh process: that first load (cold heap, fresh pages) is what a
// server pays at start, and what Google Benchmark's repeated loads hide.
//
//   tokenizer_load [NAME|DIR]     (default llama3)
//
// NAME is looked up under $MASKD_TOKENIZER_DIR (default
// ${XDG_CACHE_HOME:-~/.cache}/maskd/tokenizers); anything with a '/' is a
// directory. Prints wall time (file reading included, as maskd's preload)
// and the CPU time and minor page faults the load took.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/tokenizer/tokenizer.h"
#include "harness/data_paths.h"

namespace {

using ::maskd::testing::TokenizerDir;

struct Usage {
  double cpu_ms;  // User + system: unlike wall time, not inflated by other processes.
  long minor_faults;
};

Usage CurrentUsage() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return {ms(usage.ru_utime) + ms(usage.ru_stime), usage.ru_minflt};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && std::string(argv[1]).starts_with("-"))) {
    std::fprintf(stderr, "usage: %s [NAME|DIR]   (default llama3)\n", argv[0]);
    return 2;
  }
  const std::string dir = TokenizerDir(argc == 2 ? argv[1] : "llama3");
  const Usage before = CurrentUsage();
  const auto start = std::chrono::steady_clock::now();
  auto tokenizer = maskd::Tokenizer::FromDirectory(dir);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  const Usage after = CurrentUsage();
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "%s: %s\n", dir.c_str(),
                 std::string(tokenizer.status().message()).c_str());
    return 1;
  }
  std::printf("%s: %zu tokens, loaded in %.1f ms wall, %.1f ms cpu, %ld minor page faults\n",
              dir.c_str(), (*tokenizer)->vocab_size(), took.count(), after.cpu_ms - before.cpu_ms,
              after.minor_faults - before.minor_faults);
  return 0;
}
