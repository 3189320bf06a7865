#pragma once
/// \file
/// The studio's resources. Small ones (MJCF models, behaviour policies, lessons) are compiled into
/// the library, so every executable has them wherever it runs. The rest (the shipped checkpoints,
/// the user guide) are files found from the running program's own location, never from a path
/// compiled in: an installed program in `<prefix>/bin` reads `<prefix>/share/decision-studio`, and
/// a build tree has the same shape (`build/<preset>/share/decision-studio` links to `resources/`).

#include <filesystem>
#include <optional>
#include <string_view>

namespace dstudio {

/// The bytes of `resources/<path>`, or nullopt when no such file is embedded.
std::optional<std::string_view> embedded_resource(std::string_view path);

/// The running executable, from /proc/self/exe; empty when that cannot be read.
std::filesystem::path executable_path();

/// The folder of the shipped resources: $DSTUDIO_RESOURCES when set, else
/// `<executable's folder>/../share/decision-studio`. Empty when neither is a folder.
std::filesystem::path resources_dir();

/// `resources_dir() / relative`; throws dstudio::Error naming the file and the folders looked in
/// when it does not exist.
std::filesystem::path resource_file(const std::filesystem::path& relative);

/// The studio's private library folder: `<executable's folder>/../lib/<multiarch>/decision-studio`
/// (e.g. /usr/lib/x86_64-linux-gnu/decision-studio), where its libraries and helper programs are
/// installed (architecture-dependent files stay out of share/). Empty when the executable cannot be
/// found. A build tree keeps its libraries in lib/ and its programs in bin/ instead.
std::filesystem::path private_lib_dir();

/// Where the installed plugins are: `private_lib_dir() / "plugins"`.
std::filesystem::path installed_plugin_dir();

/// A helper program of the studio (such as `dstudio-probe`, the dataset reader): beside the
/// running program (a build tree), else in `private_lib_dir()` (installed, it is no command for
/// users). Empty when it is in neither.
std::filesystem::path private_program(std::string_view name);

}  // namespace dstudio
