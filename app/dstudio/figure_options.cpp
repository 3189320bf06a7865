// The figure options of the commands that draw figures. See figure_options.h.

#include "figure_options.h"

#include <algorithm>

#include "commands.h"
#include "dstudio/common/error.h"

namespace dstudio::cli {
namespace {

bool given(const CLI::Option* o) {
  return o && o->count() > 0;
}

// "icml, icml-page, ...": for the help and the message about an unknown preset.
std::string preset_list(bool with_names) {
  std::string list;
  for (const auto& p : viz::venue_presets()) {
    if (!list.empty()) list += ", ";
    list += p.slug.toStdString();
    if (with_names) {
      list += " (";
      list += p.name.toStdString();
      list += ')';
    }
  }
  return list;
}

}  // namespace

viz::FigureStyle FigureOptions::resolve() const {
  viz::FigureStyle s;
  if (!preset.empty()) {
    const auto p = viz::venue_preset(preset);
    if (!p) throw UsageError("unknown figure preset: " + preset);
    s = *p;
  }
  if (preset.empty() || given(width_given)) {
    // A preset's height follows a new width, so the venue's proportions stay.
    if (given(width_given) && s.height > 0 && !given(height_given)) s.height *= width / s.width;
    s.width = width;
  }
  if (given(height_given)) s.height = height;
  if (preset.empty() || given(font_given)) {
    // Axis and tick fonts keep the preset's proportions to the main font.
    const double ratio = font / s.font;
    if (s.axis_font > 0) s.axis_font *= ratio;
    if (s.tick_font > 0) s.tick_font *= ratio;
    s.font = font;
  }
  if (preset.empty() || given(line_width_given)) s.line_width = line_width;
  if (preset.empty() || given(family_given)) {
    const QString family = QString::fromStdString(font_family).trimmed();
    if (family.compare(QStringLiteral("sans"), Qt::CaseInsensitive) == 0)
      s.font_family = QString::fromLatin1(viz::kSansFamily);
    else if (family.compare(QStringLiteral("serif"), Qt::CaseInsensitive) == 0)
      s.font_family = QString::fromLatin1(viz::kSerifFamily);
    else
      s.font_family = family;
  }
  if (preset.empty() || given(dpi_given)) s.dpi = dpi;
  s.pdf = std::find(formats.begin(), formats.end(), "pdf") != formats.end();
  s.svg = std::find(formats.begin(), formats.end(), "svg") != formats.end();
  s.png = std::find(formats.begin(), formats.end(), "png") != formats.end();
  s.show_title = !no_title;
  return s;
}

void add_figure_options(CLI::App* cmd, FigureOptions& f, const std::string& always_written) {
  std::string preset_help =
      "Figure size, fonts, line width and dpi of a venue, as in the studio's export dialog: ";
  preset_help += preset_list(false);
  preset_help += " (or the dialog's full name; any case). Options given explicitly override it";
  const CLI::Validator known_preset(
      [](std::string& name) {
        if (viz::venue_preset_index(name) >= 0) return std::string();
        std::string message = "unknown preset '";
        message += name;
        message += "'; known presets: ";
        message += preset_list(true);
        return message;
      },
      "PRESET");
  cmd->add_option("--preset", f.preset, preset_help)->check(known_preset)->group("Figures");
  f.width_given =
      cmd->add_option("--width", f.width,
                      "Figure width in inches (ICML column 3.25, page 6.75; NeurIPS 5.5); "
                      "with --preset, the height keeps the venue's proportions")
          ->capture_default_str()
          ->check(real_number(0, 40, true))
          ->group("Figures");
  f.height_given =
      cmd->add_option("--height", f.height,
                      "Figure height in inches; 0: width over the golden ratio (maps and "
                      "embeddings a little squarer)")
          ->capture_default_str()
          ->check(real_number(0, 40))
          ->group("Figures");
  f.font_given =
      cmd->add_option("--font", f.font,
                      "Font size in points of titles and legends; axis and tick labels follow in "
                      "proportion")
          ->capture_default_str()
          ->check(real_number(0, 72, true))
          ->group("Figures");
  f.line_width_given =
      cmd->add_option("--line-width", f.line_width,
                      "Data line width in points (axes and grid thinner, in proportion)")
          ->capture_default_str()
          ->check(real_number(0, 20, true))
          ->group("Figures");
  f.family_given =
      cmd->add_option("--font-family", f.font_family,
                      "sans (DejaVu Sans), serif (DejaVu Serif) or an installed family's name")
          ->capture_default_str()
          ->group("Figures");
  // The choices of the export dialog: journals ask for 300 or 600 dpi.
  f.dpi_given = cmd->add_option("--dpi", f.dpi, "Resolution of the PNG: 300 or 600")
                    ->capture_default_str()
                    ->check(CLI::IsMember({300, 600}))
                    ->group("Figures");
  cmd->add_option("--formats", f.formats,
                  "Figure files to write, a subset of pdf,svg,png (default all three; " +
                      always_written + " always)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pdf", "svg", "png"}, CLI::ignore_case))
      ->group("Figures");
  cmd->add_flag("--no-title", f.no_title, "Figures without a title (a caption says it)")
      ->group("Figures");
}

}  // namespace dstudio::cli
