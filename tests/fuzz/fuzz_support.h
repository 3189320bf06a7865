#pragma once
/// \file
/// What the fuzz targets share: the input as a file (the readers under test take paths), UBSan's
/// defaults, and the rule for exceptions. A target passes the bytes to the project's own API;
/// `dstudio::Error` and its subclasses are the documented way to refuse input, so they are caught.
/// Anything else that escapes (another exception type), a crash, a leak, undefined behaviour or a
/// broken property of an accepted input's result is a finding: the process aborts and libFuzzer
/// keeps the input. Include this header in one translation unit per target.

#include <cxxabi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "dstudio/common/error.h"

namespace dstudio::fuzz {

/// A folder of this process for its input files: under $DSTUDIO_FUZZ_TMP when set
/// (packaging/fuzz.sh sets it and removes it afterwards, also after crashes), else in /dev/shm
/// (memory, not the disk). Removed when the process exits normally.
class InputFolder {
 public:
  InputFolder() {
    const char* base = std::getenv("DSTUDIO_FUZZ_TMP");
    std::filesystem::path root = base != nullptr && *base != '\0' ? std::filesystem::path(base)
                                 : std::filesystem::exists("/dev/shm")
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    path_ = root / ("dstudio-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~InputFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  InputFolder(const InputFolder&) = delete;
  InputFolder& operator=(const InputFolder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The input written to the file `name` of this process's folder, rewritten for each input. The
/// name is chosen so that a reader that looks at the extension sees what it expects.
inline std::filesystem::path input_file(const uint8_t* data, size_t size, const std::string& name) {
  static const InputFolder folder;
  std::filesystem::path path = folder.path() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

/// Runs `body`; a dstudio::Error is a refusal, any other exception a finding.
template <class Body>
void run(Body&& body) {
  try {
    body();
  } catch (const dstudio::Error&) {
    // The input was refused with a message: what the project promises.
  } catch (const std::exception& e) {
    int status = 0;
    char* type = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    std::fprintf(stderr, "fuzz: an exception that is not a dstudio::Error escaped: %s: %s\n",
                 status == 0 ? type : typeid(e).name(), e.what());
    std::free(type);
    std::abort();
  }
}

/// A property the result of an accepted input must have; its failure is a finding.
inline void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: an accepted input broke a property: %s\n", what);
  std::abort();
}

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace dstudio::fuzz

/// UBSan stops at the first report and prints its stack, so undefined behaviour fails the run.
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}
