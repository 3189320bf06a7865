#pragma once
/// \file
/// A named collection of definitions that the studio and its plugins add to: model variants,
/// token mixers, analyses, dataset formats. Every entry says where it came from (built in, or a
/// plugin and its version), so a plugin whose registration fails can be taken out again and a
/// checkpoint can name the plugin it needs. Thread-safe; entries are shared and immutable once
/// added, so a caller may keep one while the registry changes.

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/common/error.h"

namespace dstudio {

/// Where a registered definition comes from.
struct Origin {
  std::string plugin;   ///< the plugin's name; empty for what is built into the studio
  std::string version;  ///< the plugin's version
  std::string
      file;  ///< the plugin's library, for a program that must load it too (a reader process)
  [[nodiscard]] bool builtin() const { return plugin.empty(); }
  /// "built in" or "<plugin> <version>".
  [[nodiscard]] std::string label() const {
    return builtin() ? "built in" : plugin + " " + version;
  }
};

/// Definitions of type T by name, in the order they were added. T has `name` and `origin`.
template <class T>
class Registry {
 public:
  /// `what` names the kind in messages ("variant", "analysis").
  explicit Registry(std::string what) : what_(std::move(what)) {}

  /// Adds `definition`; throws UsageError when its name is empty or already taken (saying by
  /// whom), so a plugin cannot silently replace what another provides.
  void add(T definition) {
    std::lock_guard lock(mutex_);
    if (definition.name.empty()) throw UsageError("a " + what_ + " needs a name");
    for (const auto& e : entries_)
      if (e->name == definition.name)
        throw UsageError("the " + what_ + " '" + definition.name + "' is already defined (" +
                         e->origin.label() + ")");
    entries_.push_back(std::make_shared<const T>(std::move(definition)));
  }
  /// The definition called `name`, or null.
  [[nodiscard]] std::shared_ptr<const T> find(const std::string& name) const {
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_)
      if (e->name == name) return e;
    return nullptr;
  }
  /// Every definition, in the order added (the studio's own first).
  [[nodiscard]] std::vector<std::shared_ptr<const T>> all() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  /// Every name, in the order added.
  [[nodiscard]] std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e->name);
    return out;
  }
  /// Removes what the plugin `plugin` added (a plugin whose registration failed half-way).
  void remove_plugin(const std::string& plugin) {
    std::lock_guard lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const auto& e) {
                                    return !e->origin.builtin() && e->origin.plugin == plugin;
                                  }),
                   entries_.end());
  }
  /// "a, b, c": for messages listing what is known.
  [[nodiscard]] std::string joined_names() const {
    std::string out;
    for (const auto& n : names()) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  [[nodiscard]] const std::string& what() const { return what_; }

 private:
  std::string what_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const T>> entries_;
};

}  // namespace dstudio
