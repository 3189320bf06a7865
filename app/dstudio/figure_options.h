#pragma once
// The figure options of the commands that draw figures (`analyze`, `sweep collect`): the studio
// export dialog's choices on the command line. A venue preset (viz::venue_presets()), then size,
// fonts, line width, dpi, formats and titles; options given explicitly override the preset. And
// the recipe of each figure `analyze` writes. Built only with the GUI libraries, which draw the
// figures.

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/viz/figures.h"

namespace dstudio::cli {

/// The figure options as given; resolve() turns them into a style. Options given explicitly
/// override the preset, so the option pointers record what was given.
struct FigureOptions {
  std::string preset, font_family = "sans";
  double width = 3.25, height = 0.0, font = 8.0, line_width = 1.2;
  int dpi = 300;
  std::vector<std::string> formats = {"pdf", "svg", "png"};
  bool no_title = false;
  CLI::Option *width_given = nullptr, *height_given = nullptr, *font_given = nullptr,
              *line_width_given = nullptr, *family_given = nullptr, *dpi_given = nullptr;

  /// The style these options ask for. Throws UsageError for an unknown preset.
  [[nodiscard]] viz::FigureStyle resolve() const;
};

/// Registers --preset, --width, --height, --font, --line-width, --font-family, --dpi, --formats
/// and --no-title on `cmd` (in its "Figures" group), writing into `options`, which must outlive
/// the parse. `always_written` names what --formats does not choose ("CSV and summary.json").
void add_figure_options(CLI::App* cmd, FigureOptions& options,
                        const std::string& always_written = "CSV and summary.json");

}  // namespace dstudio::cli
