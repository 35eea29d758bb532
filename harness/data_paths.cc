#include "harness/data_paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace maskd::testing {
namespace {

// $NAME when set and not empty.
const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

}  // namespace

std::string TokenizerRootDir() {
  if (const char* dir = Env("MASKD_TOKENIZER_DIR")) return dir;
  if (const char* cache = Env("XDG_CACHE_HOME")) return std::string(cache) + "/maskd/tokenizers";
  const char* home = Env("HOME");
  return std::string(home == nullptr ? "" : home) + "/.cache/maskd/tokenizers";
}

std::string TokenizerDir(std::string_view name) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  return TokenizerRootDir() + "/" + std::string(name);
}

std::string MaskBenchPath() {
#ifndef MASKD_SOURCE_DIR
#error "MASKD_SOURCE_DIR must be defined by CMake"
#endif
  if (const char* path = Env("MASKD_MASKBENCH")) return path;
  return std::string(MASKD_SOURCE_DIR) + "/../shared/maskbench/dev.jsonl.gz";
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace maskd::testing
