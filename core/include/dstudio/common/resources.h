#pragma once
/// \file
/// Files from `resources/` compiled into the library (MJCF models, behaviour policies), so every
/// executable finds them wherever it is installed.

#include <optional>
#include <string_view>

namespace dstudio {

/// The bytes of `resources/<path>`, or nullopt when no such file is embedded.
std::optional<std::string_view> embedded_resource(std::string_view path);

}  // namespace dstudio
