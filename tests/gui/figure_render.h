#pragma once
/// \file
/// `dstudio figure render RECIPE --out OUT` run as a user runs it (the dstudio these tests were
/// built with, DSTUDIO_CLI), for the GUI tests that draw an exported figure or a recorded clip
/// again from its recipe: on a machine of more cores than the window's computations use (LibTorch
/// and the BLAS told to take four threads), whose numbers must still be the window's.

#include <cstdlib>
#include <string>

namespace dstudio::test {

/// The command's exit status (0: drawn). What it prints goes to `log` ("/dev/null" to drop it),
/// or to the test's own output when `log` is empty.
inline int figure_render(const std::string& recipe, const std::string& out,
                         const std::string& log = {}) {
  const std::string command = "OMP_NUM_THREADS=4 OPENBLAS_NUM_THREADS=4 MKL_NUM_THREADS=4 " +
                              std::string(DSTUDIO_CLI) + " figure render '" + recipe + "' --out '" +
                              out + "'" + (log.empty() ? "" : " > '" + log + "'") + " 2>&1";
  return std::system(command.c_str());
}

}  // namespace dstudio::test
