// Where the programs find their resources: from their own location (a build tree has the installed
// shape), or $DSTUDIO_RESOURCES; never from a path compiled into the library.

#include "dstudio/common/resources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "dstudio/common/error.h"

namespace fs = std::filesystem;

namespace {

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Resources, FoundBesideTheProgramAsWhenInstalled) {
  ScopedEnv env("DSTUDIO_RESOURCES", nullptr);
  const fs::path exe = dstudio::executable_path();
  ASSERT_FALSE(exe.empty());
  EXPECT_EQ(exe.filename(), "core_env_tests");
  const fs::path dir = dstudio::resources_dir();
  EXPECT_EQ(dir, exe.parent_path().parent_path() / "share" / "decision-studio");
  // The build tree's folder is the source tree's resources, file for file.
  const fs::path dt = dstudio::resource_file("checkpoints/hopper-medium-dt.pt");
  EXPECT_TRUE(
      fs::equivalent(dt, fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-dt.pt"));
  EXPECT_TRUE(fs::equivalent(dstudio::resource_file("lessons/index.json"),
                             fs::path(DSTUDIO_RESOURCES_DIR) / "lessons" / "index.json"));
  EXPECT_EQ(dstudio::private_lib_dir(), exe.parent_path().parent_path() / DSTUDIO_PRIVATE_LIBDIR);
  EXPECT_EQ(dstudio::installed_plugin_dir(), dstudio::private_lib_dir() / "plugins");
}

TEST(Resources, TheEnvironmentOverridesAndAMissingFileIsNamed) {
  const fs::path tmp =
      fs::temp_directory_path() / ("dstudio-resources-" + std::to_string(::getpid()));
  fs::create_directories(tmp / "checkpoints");
  {
    ScopedEnv env("DSTUDIO_RESOURCES", tmp.c_str());
    EXPECT_EQ(dstudio::resources_dir(), tmp);
    try {
      dstudio::resource_file("checkpoints/missing.pt");
      ADD_FAILURE() << "a missing file was returned";
    } catch (const dstudio::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("checkpoints/missing.pt"), std::string::npos) << what;
      EXPECT_NE(what.find(tmp.string()), std::string::npos) << what;
    }
  }
  {
    ScopedEnv env("DSTUDIO_RESOURCES", (tmp / "absent").c_str());
    EXPECT_TRUE(dstudio::resources_dir().empty());
    try {
      dstudio::resource_file("checkpoints/hopper-medium-dt.pt");
      ADD_FAILURE() << "a file was returned with no resources folder";
    } catch (const dstudio::Error& e) {
      EXPECT_NE(std::string(e.what()).find("absent"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(tmp);
}

}  // namespace
