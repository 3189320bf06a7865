// One writer per folder, between processes: a second claim is refused naming the holder, a holder
// killed with SIGKILL leaves the folder free, and claims within one process are counted. Reading
// named files: special files and oversized ones are refused before a byte is read.

#include "dstudio/common/folder_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "dstudio/common/read_file.h"
#include "h5_fixture.h"

namespace dstudio {
namespace {

// A child process that claims `folder`, says so on a pipe, and holds it until killed.
pid_t hold_in_child(const std::filesystem::path& folder) {
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    try {
      const FolderLock lock(folder);
      const char ok = '1';
      (void)!::write(ready[1], &ok, 1);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(2);
    }
  }
  ::close(ready[1]);
  char got = 0;
  EXPECT_EQ(::read(ready[0], &got, 1), 1) << "the child could not claim the folder";
  ::close(ready[0]);
  return pid;
}

// Whether a fresh process can claim `folder` now.
bool another_process_can_claim(const std::filesystem::path& folder) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      const FolderLock lock(folder);
      ::_exit(0);
    } catch (...) {
      ::_exit(1);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(FolderLock, ASecondProcessIsRefusedNamingTheHolderAndSigkillFreesTheFolder) {
  test::TempDir dir;
  const auto run = dir / "run";
  const pid_t holder = hold_in_child(run);
  try {
    const FolderLock lock(run);
    ADD_FAILURE() << "a second writer was let in";
  } catch (const FolderBusy& e) {
    EXPECT_EQ(e.holder(), holder);
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string()), std::string::npos) << what;
    EXPECT_NE(what.find("process " + std::to_string(holder)), std::string::npos) << what;
  }
  const auto seen = folder_holder(run);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->pid, holder);

  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_FALSE(folder_holder(run).has_value()) << "the kernel releases a killed holder's lock";
  const FolderLock lock(run);  // and the folder is usable at once
  EXPECT_TRUE(std::filesystem::exists(run / kFolderLockFile));
}

TEST(FolderLock, ClaimsInOneProcessAreCountedAndTheLastReleaseFreesTheFolder) {
  test::TempDir dir;
  const auto run = dir / "run";
  {
    const FolderLock outer(run);
    {
      const FolderLock inner(run / ".");  // the same folder, named otherwise
      EXPECT_FALSE(folder_holder(run).has_value()) << "this process's own claims are not another's";
      EXPECT_FALSE(another_process_can_claim(run));
    }
    EXPECT_FALSE(another_process_can_claim(run)) << "the outer claim still holds";
    FolderLock moved(run);
    FolderLock taken(std::move(moved));
  }
  EXPECT_TRUE(another_process_can_claim(run));
}

TEST(ReadRegularFile, ReadsAFileWholeAndRefusesSpecialFilesAndOversizedOnesBeforeReading) {
  test::TempDir dir;
  const auto file = dir / "a.txt";
  std::ofstream(file, std::ios::binary) << std::string("abc\0def", 7);
  EXPECT_EQ(read_regular_file(file, 7), std::string("abc\0def", 7));
  const auto refused = [](const std::filesystem::path& p, std::uint64_t max,
                          const std::string& why) {
    try {
      (void)read_regular_file(p, max);
      ADD_FAILURE() << p << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(p.string(), 0), 0u) << e.what();
    }
  };
  refused(file, 6, "is 7 bytes, more than the 6 bytes");
  refused("/dev/zero", 1 << 20, "not a regular file (a character device)");
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  refused(fifo, 1 << 20,
          "not a regular file (a FIFO)");  // without a writer, and without waiting for one
  refused(dir.path(), 1 << 20, "is a folder");
  refused(dir / "missing", 1 << 20, "no such file");
  EXPECT_EQ(byte_size_text(64u << 20), "64 MiB");
  EXPECT_EQ(byte_size_text(1536), "1.5 KiB");
}

}  // namespace
}  // namespace dstudio
