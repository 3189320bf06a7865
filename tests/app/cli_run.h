#pragma once
// Runs the dstudio command line as a user does, from the tests: its exit code, stdout and stderr.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "h5_fixture.h"

namespace dstudio::test {

struct CliResult {
  int exit_code = -1;  ///< 128 + the signal when it was killed
  std::string out, err;
};

/// `dstudio <args>` through the shell (so quoting works as typed); stderr goes through a file in
/// `dir`.
inline CliResult run_cli(const std::string& args, const TempDir& dir) {
  const auto err_file = dir / "stderr.txt";
  const std::string cmd = std::string(DSTUDIO_CLI) + " " + args + " 2>" + err_file.string();
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1);
  std::ifstream in(err_file);
  std::stringstream s;
  s << in.rdbuf();
  r.err = s.str();
  return r;
}

/// A suite whose tests train on one small hopper dataset of random actions (3000 transitions,
/// seed 1), made once as a user makes one, in a folder of the suite's: the sweep and run-folder
/// tests.
class RandomDatasetSuite : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const auto r =
        run_cli("dataset generate --env hopper --kind random --transitions 3000 --seed 1 --out " +
                    dataset(),
                *dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string dataset() { return (*dir_ / "random.hdf5").string(); }
  static inline TempDir* dir_ = nullptr;
};

}  // namespace dstudio::test
