#pragma once
// The figure fields a venue preset sets and a figure recipe keeps, copied alike between
// FigureStyle and RecipeFigure (figures.cpp, export_dialog.cpp).

namespace dstudio::viz {

/// Copies the size, fonts, line width and resolution. The font family, which a preset sets too,
/// is a QString in one and a std::string in the other: each caller copies it.
template <class To, class From>
void copy_size_and_fonts(To& to, const From& from) {
  to.width = from.width;
  to.height = from.height;
  to.font = from.font;
  to.axis_font = from.axis_font;
  to.tick_font = from.tick_font;
  to.line_width = from.line_width;
  to.dpi = from.dpi;
}

}  // namespace dstudio::viz
