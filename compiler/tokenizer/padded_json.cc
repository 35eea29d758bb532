#include "compiler/tokenizer/padded_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/tokenizer/huge_pages.h"

namespace maskd::tokenizer_internal {
namespace {

// simdjson::SIMDJSON_PADDING is 64; tokenizer_json.cc checks this covers it.
constexpr size_t kPadding = 64;

}  // namespace

PaddedJson::PaddedJson(size_t size) : size_(size), capacity_(size + kPadding) {
  if (capacity_ >= kHugePageThreshold) {
    data_ = static_cast<char*>(MapHugePages(capacity_));
    if (data_ != nullptr) {
      mapped_ = true;
      return;
    }
  }
  data_ = new char[capacity_];
  std::memset(data_ + size_, 0, kPadding);
}

PaddedJson::PaddedJson(PaddedJson&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      mapped_(std::exchange(other.mapped_, false)) {}

PaddedJson& PaddedJson::operator=(PaddedJson&& other) noexcept {
  // `other` takes this buffer and frees it.
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
  std::swap(mapped_, other.mapped_);
  return *this;
}

PaddedJson::~PaddedJson() {
  if (data_ == nullptr) return;
  if (mapped_) {
    FreeHugePages(data_, capacity_);
  } else {
    delete[] data_;
  }
}

PaddedJson PaddedJson::Copy(std::string_view text) {
  PaddedJson json(text.size());
  if (!text.empty()) std::memcpy(json.data_, text.data(), text.size());
  return json;
}

absl::StatusOr<PaddedJson> PaddedJson::ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": missing file"));
  struct stat info {};
  std::string unsized;  // Files whose size fstat cannot tell (pipes) are read here first.
  size_t expected = 0;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) expected = static_cast<size_t>(info.st_size);
  PaddedJson json(expected);
  size_t done = 0;
  bool failed = false;
  while (true) {
    char chunk[1 << 16];
    const bool into_json = done < expected;
    char* target = into_json ? json.data_ + done : chunk;
    const size_t room = into_json ? expected - done : sizeof(chunk);
    const ssize_t n = read(fd, target, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      failed = true;
      break;
    }
    if (n == 0) break;
    if (into_json) {
      done += static_cast<size_t>(n);
    } else {
      unsized.append(chunk, static_cast<size_t>(n));
    }
  }
  close(fd);
  if (failed) return absl::DataLossError(absl::StrCat("error reading ", path));
  if (!unsized.empty()) {  // The file grew, or fstat gave no size.
    unsized.insert(0, json.data_, done);
    return Copy(unsized);
  }
  // The file shrank: the bytes past its end must read as zero padding.
  std::memset(json.data_ + done, 0, json.capacity_ - done);
  json.size_ = done;
  return json;
}

}  // namespace maskd::tokenizer_internal
