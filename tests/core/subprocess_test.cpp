// Starting programs: what they print and how they end come back; a program that is not there is
// said to be; a child starts with default signals when asked, whatever its parent ignores.

#include "dstudio/common/subprocess.h"

#include <gtest/gtest.h>

#include <csignal>

#include "dstudio/common/error.h"

namespace dstudio {
namespace {

TEST(Subprocess, RunProgramCollectsBothStreamsAndTheExitStatus) {
  const auto out =
      run_program({"sh", "-c", "echo out; echo err >&2; read line || echo no-input; exit 3"});
  EXPECT_EQ(out.code, 3);
  EXPECT_EQ(out.text, "out\nerr\nno-input\n");
  const auto killed = run_program({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(killed.code, 128 + SIGTERM);
}

TEST(Subprocess, AProgramThatIsNotThereIs127AndNamed) {
  const auto out = run_program({"dstudio-no-such-program", "x"});
  EXPECT_EQ(out.code, 127);
  EXPECT_NE(out.text.find("dstudio-no-such-program"), std::string::npos) << out.text;
  EXPECT_THROW(spawn_program("/nonexistent/program", {"program"}), Error);
}

// A shell's background job ignores SIGINT, and an ignored signal stays ignored across exec.
TEST(Subprocess, DefaultSignalsUndoWhatTheParentIgnores) {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGINT, &ignore, &before), 0);
  const std::vector<std::string> argv{"sh", "-c", "kill -INT $$; exit 0"};
  SpawnOptions inherit;
  inherit.search_path = true;
  const int inherited = wait_for_exit(spawn_program("sh", argv, inherit));
  SpawnOptions fresh = inherit;
  fresh.default_signals = true;
  const int reset = wait_for_exit(spawn_program("sh", argv, fresh));
  sigaction(SIGINT, &before, nullptr);
  EXPECT_EQ(inherited, 0) << "SIGINT ignored, as inherited";
  EXPECT_EQ(reset, 128 + SIGINT) << "SIGINT at its default: the child ends";
}

}  // namespace
}  // namespace dstudio
