// Exit codes scripts rely on: what a command throws decides between "the work failed" (1) and
// "the command line is wrong" (2).

#include <gtest/gtest.h>

#include <stdexcept>

#include "commands.h"
#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio::cli {
namespace {

TEST(RunGuarded, DataAndIoProblemsAreFailuresNotUsageErrors) {
  EXPECT_EQ(run_guarded([] {}), kOk);
  EXPECT_EQ(run_guarded([] { throw Error("d.hdf5: not an HDF5 file"); }), kFailed);
  EXPECT_EQ(
      run_guarded([] { throw data::DatasetError("d.hdf5", "/rewards", "has 3 rows, not 4"); }),
      kFailed);
  // A standard library's complaint about data it was given (std::stoi on a file's text) is data.
  EXPECT_EQ(run_guarded([] { throw std::invalid_argument("stoll"); }), kFailed);
  EXPECT_EQ(run_guarded([] { throw std::out_of_range("vector"); }), kFailed);
}

TEST(RunGuarded, UsageErrorsAndCancellationHaveTheirOwnCodes) {
  EXPECT_EQ(run_guarded([] { throw UsageError("unknown variant 'dtt'"); }), kUsage);
  EXPECT_EQ(run_guarded([] { throw CLI::ValidationError("--layer", "must be positive"); }), kUsage);
  EXPECT_EQ(run_guarded([] { throw Cancelled(); }), 130);
}

}  // namespace
}  // namespace dstudio::cli
