// Publication export: venue sizes reach the files, style changes reach the drawing, fonts embed
// as TrueType, export_all skips empty views, and the export dialog remembers its choices.

#include "dstudio/viz/figures.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <QUrl>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "csv_check.h"
#include "dstudio/common/error.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/tsne_view.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::viz {
namespace {

namespace fs = std::filesystem;

class Figures : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override {
    QSettings().clear();
    QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
  }

  // A t-SNE layout of twelve tokens (R and s in turn, one window) of the model `title`.
  static void show_twelve_tokens(TsneView& tsne, const QString& title) {
    models::TokenCloud cloud;
    for (int i = 0; i < 12; ++i) {
      cloud.modality.push_back(i % 2 ? "s" : "R");
      cloud.window.push_back(0);
      cloud.timestep.push_back(i);
      cloud.return_to_go.push_back(100.0 - i);
    }
    tsne.setTokens(title, cloud);
    std::vector<double> xy;
    for (int i = 0; i < 12; ++i) xy.push_back(i), xy.push_back(i % 3);
    tsne.showLayout(10, xy);
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // The first page's MediaBox of a PDF Qt wrote (page dictionaries are not compressed).
  static std::pair<double, double> media_box(const fs::path& pdf) {
    const std::string text = read(pdf);
    std::smatch m;
    const std::regex box(R"(/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\])");
    if (!std::regex_search(text, m, box)) return {-1, -1};
    return {std::stod(m[3]) - std::stod(m[1]), std::stod(m[4]) - std::stod(m[2])};
  }

  // Font types a PDF uses: pdffonts when installed, else the font dictionaries' subtypes.
  static std::string font_listing(const fs::path& pdf) {
    QProcess p;
    p.start(QStringLiteral("pdffonts"), {QString::fromStdString(pdf.string())});
    if (p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
      return p.readAllStandardOutput().toStdString();
    std::string out;
    const std::string text = read(pdf);
    const std::regex subtype(
        R"(/Subtype\s*/(Type3|TrueType|CIDFontType2|CIDFontType0|Type1|Type0))");
    for (std::sregex_iterator it(text.begin(), text.end(), subtype), end; it != end; ++it)
      out += (*it)[1].str() + "\n";
    return out;
  }

  static std::vector<Series> two_series() {
    Series a{"mean return", {}, {}, {}, {}, false}, b{"baseline", {}, {}, {}, {}, false};
    for (int i = 0; i < 40; ++i) {
      a.x.push_back(i);
      a.y.push_back(std::sin(i * 0.2));
      a.low.push_back(std::sin(i * 0.2) - 0.2);
      a.high.push_back(std::sin(i * 0.2) + 0.2);
      b.x.push_back(i);
      b.y.push_back(0.5 * std::cos(i * 0.15));
    }
    return {a, b};
  }

  // Dark pixels: how much ink the lines and text put on the page.
  static int ink(const QImage& image) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x)
        if (qGray(image.pixel(x, y)) < 200) ++n;
    return n;
  }

  test::TempDir dir;
};

FigurePreset preset_named(const QString& prefix) {
  for (const auto& p : venue_presets())
    if (p.name.startsWith(prefix)) return p;
  ADD_FAILURE() << "no preset " << prefix.toStdString();
  return {};
}

TEST_F(Figures, VenuePresetsAreFoundBySlugOrFullNameInAnyCase) {
  const auto presets = venue_presets();
  const auto slugs = venue_preset_slugs();
  ASSERT_EQ(slugs.size(), presets.size());
  EXPECT_EQ(slugs,
            (std::vector<std::string>{"icml", "icml-page", "neurips", "aaai", "aaai-page", "cvpr",
                                      "cvpr-page", "ieee", "nature", "nature-page"}));
  for (std::size_t k = 0; k < presets.size(); ++k) {
    EXPECT_EQ(venue_preset_index(slugs[k]), static_cast<int>(k));
    EXPECT_EQ(venue_preset_index(presets[k].name.toUpper().toStdString()), static_cast<int>(k))
        << slugs[k];
  }
  const auto ieee = venue_preset(" IEEE ");
  ASSERT_TRUE(ieee.has_value());
  EXPECT_DOUBLE_EQ(ieee->width, 3.3);
  EXPECT_EQ(ieee->dpi, 600);
  EXPECT_EQ(ieee->font_family, QString(kSerifFamily));
  EXPECT_FALSE(venue_preset("acm").has_value());
  EXPECT_FALSE(venue_preset("").has_value());
  ExportDialog dialog;
  ASSERT_TRUE(dialog.selectPreset("nature-page"));
  EXPECT_EQ(dialog.presetName(), preset_named("Nature double").name);
}

TEST_F(Figures, VenuePresetsHaveThePublishedSizes) {
  constexpr double golden = 1.618034;
  const struct {
    const char* name;
    double width, height, font;
    int dpi;
    bool serif;
  } expected[] = {
      // Height 0: the figure's own (a line plot the width over the golden ratio, a map squarer).
      {"ICML column", 3.25, 0, 8, 300, false},        {"ICML page", 6.75, 0, 9, 300, false},
      {"NeurIPS / ICLR", 5.5, 0, 9, 300, false},      {"AAAI column", 3.3, 0, 8, 300, false},
      {"AAAI page", 6.975, 0, 9, 300, false},         {"CVPR column", 3.25, 0, 8, 300, false},
      {"CVPR page", 6.875, 0, 9, 300, false},         {"IEEE column", 3.3, 2.5, 8, 600, true},
      {"Nature single", 89 / 25.4, 0, 7, 600, false},
  };
  for (const auto& e : expected) {
    const auto p = preset_named(e.name);
    EXPECT_NEAR(p.style.width, e.width, 1e-9) << e.name;
    EXPECT_NEAR(p.style.height, e.height, 1e-3) << e.name;
    EXPECT_EQ(p.style.axisFont(), e.font) << e.name;
    EXPECT_LE(p.style.tickFont(), e.font) << e.name;
    EXPECT_EQ(p.style.dpi, e.dpi) << e.name;
    EXPECT_EQ(p.style.font_family, e.serif ? QString(kSerifFamily) : QString(kSansFamily))
        << e.name;
  }

  // ICML's column: a PDF page 234 pt wide, 3.25 / golden ratio in high; at 600 dpi, 1950 px.
  auto icml = preset_named("ICML column").style;
  icml.dpi = 600;
  const auto base = (dir / "icml").string();
  const auto written = save_lines(base, two_series(), "step", "return", icml);
  ASSERT_EQ(written.size(), 3u);
  const auto [w, h] = media_box(base + ".pdf");
  EXPECT_NEAR(w, 234.0, 1.0);
  EXPECT_NEAR(h, 3.25 / golden * 72.0, 1.0);
  const QImage png(QString::fromStdString(base + ".png"));
  EXPECT_EQ(png.width(), 1950);
  EXPECT_NEAR(png.height(), 3.25 / golden * 600, 2);
  EXPECT_NEAR(png.dotsPerMeterX(), 600 / 0.0254, 1);  // the PNG says its resolution too

  // IEEE: 3.3 x 2.5 in exactly, 600 dpi, serif; the SVG has the same size in points.
  const auto ieee = preset_named("IEEE column").style;
  const auto ieee_base = (dir / "ieee").string();
  save_heatmap(ieee_base, analysis::TokenMatrix{3, {1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5}},
               {"R1", "s1", "a1"}, false, "weight", ieee);
  const auto [iw, ih] = media_box(ieee_base + ".pdf");
  EXPECT_NEAR(iw, 3.3 * 72, 1.0);
  EXPECT_NEAR(ih, 2.5 * 72, 1.0);
  const QImage ieee_png(QString::fromStdString(ieee_base + ".png"));
  EXPECT_EQ(ieee_png.width(), 1980);
  EXPECT_EQ(ieee_png.height(), 1500);
  const auto svg = read(ieee_base + ".svg");
  std::smatch mm;
  ASSERT_TRUE(std::regex_search(svg, mm, std::regex(R"(<svg width="([\d.]+)mm")")))
      << svg.substr(0, 400);
  EXPECT_NEAR(std::stod(mm[1]), 3.3 * 25.4, 0.36) << "3.3 in, within a point";
  EXPECT_NE(svg.find("DejaVu Serif"), std::string::npos);
}

TEST_F(Figures, LineWidthFontsAndAxisTitlesReachTheOutput) {
  FigureStyle thin;
  thin.line_width = 0.5;
  thin.svg = false;
  thin.pdf = false;
  FigureStyle thick = thin;
  thick.line_width = 3.0;
  const auto a = (dir / "thin").string(), b = (dir / "thick").string();
  save_lines(a, two_series(), "step", "return", thin);
  save_lines(b, two_series(), "step", "return", thick);
  const QImage ia(QString::fromStdString(a + ".png")), ib(QString::fromStdString(b + ".png"));
  ASSERT_EQ(ia.size(), ib.size());
  EXPECT_GT(ink(ib), ink(ia) * 1.3) << "thicker lines put more ink on the page";
  // Only the formats asked for are written.
  EXPECT_FALSE(fs::exists(a + ".pdf"));
  EXPECT_FALSE(fs::exists(a + ".svg"));

  // Fonts: family and sizes as asked, in the SVG's text.
  FigureStyle big;
  big.font_family = kSerifFamily;
  big.axis_font = 13;
  big.tick_font = 11;
  big.x_title = "environment steps (millions)";
  big.title = "Hopper";
  const auto c = (dir / "fonts").string();
  ASSERT_EQ(save_lines(c, two_series(), "step", "return", big).size(), 3u);
  const auto svg = read(c + ".svg");
  EXPECT_NE(svg.find("DejaVu Serif"), std::string::npos);
  EXPECT_EQ(svg.find("DejaVu Sans"), std::string::npos);
  // (At 13 pt the title is longer than a column's axis: it is broken into lines, not clipped.)
  EXPECT_NE(svg.find("environment steps"), std::string::npos) << "the axis title override";
  EXPECT_NE(svg.find("(millions)"), std::string::npos) << "the axis title override";
  EXPECT_EQ(svg.find(">step<"), std::string::npos) << "the default x title is replaced";
  EXPECT_NE(svg.find(">return<"), std::string::npos) << "the y title stays the figure's own";
  EXPECT_NE(svg.find(">Hopper<"), std::string::npos);
  const auto sizes = [](const std::string& text) {
    std::set<int> out;
    const std::regex size(R"(font-size=\"(\d+)\")");
    for (std::sregex_iterator it(text.begin(), text.end(), size), end; it != end; ++it)
      out.insert(std::stoi((*it)[1]));
    return out;
  };
  const auto seen = sizes(svg);
  EXPECT_TRUE(seen.count(13)) << "axis titles at 13 pt";
  EXPECT_TRUE(seen.count(11)) << "tick labels at 11 pt";
  FigureStyle plain;
  const auto d = (dir / "plain").string();
  save_lines(d, two_series(), "step", "return", plain);
  EXPECT_FALSE(sizes(read(d + ".svg")).count(13));
  // A hidden title is not drawn.
  big.show_title = false;
  const auto e = (dir / "untitled").string();
  save_lines(e, two_series(), "step", "return", big);
  EXPECT_EQ(read(e + ".svg").find(">Hopper<"), std::string::npos);
}

TEST_F(Figures, PdfFontsAreEmbeddedTrueTypeNeverType3) {
  for (const char* family : {kSansFamily, kSerifFamily}) {
    FigureStyle s;
    s.font_family = family;
    s.title = "Title";
    const auto base = (dir / family).string();
    std::vector<std::string> pdfs;
    save_lines(base + "-lines", two_series(), "step", "return", s);
    save_bars(base + "-bars", {{"none", 1.0, 0.1}, {"RTG", 0.5, 0.2}}, "score", s);
    save_scatter(base + "-scatter", {{"R", {0, 1, 2}, {1, 0, 2}}, {"s", {2, 3, 1}, {0, 1, 1}}}, s);
    save_value_scatter(base + "-value", {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, "timestep", s);
    save_heatmap(base + "-map", analysis::TokenMatrix{2, {1, 0, 0.5, 0.5}}, {"s1", "a1"}, false,
                 "weight", s);
    for (const char* kind : {"-lines", "-bars", "-scatter", "-value", "-map"}) {
      std::string pdf = base;
      pdf += kind;
      pdf += ".pdf";
      ASSERT_TRUE(fs::exists(pdf)) << pdf;
      const auto fonts = font_listing(pdf);
      EXPECT_EQ(fonts.find("Type 3"), std::string::npos) << pdf << "\n" << fonts;
      EXPECT_EQ(fonts.find("Type3"), std::string::npos) << pdf << "\n" << fonts;
      EXPECT_TRUE(fonts.find("TrueType") != std::string::npos ||
                  fonts.find("CIDFontType2") != std::string::npos)
          << pdf << "\n"
          << fonts;
      EXPECT_EQ(read(pdf).find("/Type3"), std::string::npos) << pdf;
    }
  }
}

// A view that counts how often it is asked to draw.
class CountingSource : public FigureSource {
 public:
  explicit CountingSource(bool has) : has_(has) {}
  QString figureName() const override { return QStringLiteral("counting"); }
  bool hasFigure() const override { return has_; }
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style) const override {
    ++calls;
    return save_bars(base, {{"a", 1.0, 0.1}}, "y", style);
  }
  mutable int calls = 0;

 private:
  bool has_;
};

TEST_F(Figures, ExportAllWritesEveryViewWithAFigureAndSkipsTheEmptyOnes) {
  AttentionMapView attention;  // no checkpoint: nothing to draw
  ReturnAnalysisView returns;
  returns.setAblation("DT", {{0, 5, 3000, 100, 90, 3},
                             {0, 5, 1000, 200, 30, 6},
                             {0, 5, 2500, 90, 75, 3},
                             {0, 5, 2000, 50, 60, 2}});
  EntropyRewardView rollout;
  models::RolloutResult result;
  for (int e = 0; e < 2; ++e) {
    models::EpisodeTrace trace;
    trace.length = 30;
    for (int t = 0; t < 30; ++t) {
      trace.rewards.push_back(1.0 + 0.1 * t + e);
      trace.entropy.push_back(2.0 - 0.02 * t);
    }
    result.episodes.push_back(trace);
  }
  rollout.setRollout("DT", result, 5);
  TsneView tsne;
  show_twelve_tokens(tsne, "DT");
  ASSERT_TRUE(tsne.hasFigure());
  CountingSource empty(false);

  const auto out = dir / "all";
  const auto written = export_all({&attention, &returns, &rollout, &tsne, &empty, nullptr},
                                  out.string(), FigureStyle{});
  EXPECT_EQ(empty.calls, 0);
  for (const char* name : {"returns_zeroing", "entropy_reward", "tsne"})
    for (const char* ext : {".pdf", ".svg", ".png", ".csv"}) {
      const auto f = out / (std::string(name) + ext);
      EXPECT_TRUE(fs::exists(f)) << f;
      EXPECT_NE(std::find(written.begin(), written.end(), f.string()), written.end()) << f;
    }
  EXPECT_TRUE(fs::exists(out / "entropy_reward_correlation.pdf"));
  EXPECT_FALSE(fs::exists(out / "attention.pdf"));
  EXPECT_FALSE(fs::exists(out / "counting.pdf"));
  EXPECT_FALSE(fs::exists(out / "returns_sweep.pdf")) << "no sweep was run";
  EXPECT_EQ(written.size(), 4u + 4u + 3u + 4u);
  // The numbers behind the figures: one row per point or bar, as drawn.
  const auto tsne_csv = read(out / "tsne.csv");
  EXPECT_EQ(std::count(tsne_csv.begin(), tsne_csv.end(), '\n'), 13);
  EXPECT_EQ(tsne_csv.rfind("x,y,modality,window,episode,timestep,return_to_go\n", 0), 0u);
  EXPECT_NE(tsne_csv.find("\n11,2,s,0,-1,11,89\n"), std::string::npos)
      << tsne_csv;  // no episode known: -1
  const auto zeroing = read(out / "returns_zeroing.csv");
  EXPECT_NE(zeroing.find("RTG,30,6,1000,200,5"), std::string::npos) << zeroing;
  const auto series = read(out / "entropy_reward.csv");
  EXPECT_EQ(std::count(series.begin(), series.end(), '\n'), 61);
  // Every table the views wrote parses with a standard CSV reader to its header's width.
  const auto report = test::check_csv_files(out);
  EXPECT_TRUE(test::all_ok(report)) << test::joined(report);
  EXPECT_EQ(report.size(), 3u) << test::joined(report);

  // Written together or not at all: where one file cannot be written (a folder has the name of
  // tsne.csv), no view's new file is there, the earlier files are as they were, and no temporary
  // is left.
  const auto blocked = dir / "blocked";
  fs::create_directories(blocked / "tsne.csv");
  std::ofstream(blocked / "returns_zeroing.pdf") << "an earlier export";
  EXPECT_THROW(export_all({&returns, &rollout, &tsne}, blocked.string(), FigureStyle{}), Error);
  EXPECT_EQ(read(blocked / "returns_zeroing.pdf"), "an earlier export");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(blocked))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"returns_zeroing.pdf", "tsne.csv"}));

  // A view with data but only a PDF asked for.
  FigureStyle pdf_only;
  pdf_only.svg = pdf_only.png = false;
  CountingSource full(true);
  const auto some = export_all({&full}, (dir / "pdf-only").string(), pdf_only);
  EXPECT_EQ(full.calls, 1);
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(fs::path(some.front()).filename(), "counting.pdf");
}

// The Analyses tab's figures go in a folder of their own, by the names `dstudio analyze` gives
// them: an analysis called action-lens writes analyses/action_lens.*, never
// action-lens_action_lens.*, and an earlier export's files there are found before replacing.
TEST_F(Figures, ExportAllPutsTheAnalysesFiguresInTheirFolderByTheCommandLinesNames) {
  auto definition = std::make_shared<analysis::AnalysisDefinition>();
  definition->name = "action-lens";
  definition->title = "Action lens";
  AnalysisView view(definition);
  auto* export_button = view.findChild<QPushButton*>("exportFigure");
  ASSERT_NE(export_button, nullptr) << "every view exports its figure, the Analyses tab's too";
  EXPECT_FALSE(export_button->isEnabled()) << "nothing to export before a result";
  analysis::AnalysisResult result;
  result.summary_json = "{}";
  analysis::AnalysisFigure lens;
  lens.name = "action_lens";
  lens.x_label = "layer";
  lens.y_label = "error";
  lens.series.push_back({"thigh", {1, 2, 3}, {0.3, 0.2, 0.0}, {}, false, {}, {}});
  analysis::AnalysisFigure other = lens;
  other.name = "spread";
  result.figures = {lens, other};
  view.setResult(result, "DT");
  ASSERT_TRUE(view.hasFigure());
  EXPECT_TRUE(export_button->isEnabled());
  FigureStyle pdf_only;
  pdf_only.svg = pdf_only.png = false;
  const auto out = dir / "all";
  export_all({&view}, out.string(), pdf_only);
  EXPECT_TRUE(fs::exists(out / "analyses" / "action_lens.pdf"));
  EXPECT_TRUE(fs::exists(out / "analyses" / "action-lens_spread.pdf"));
  EXPECT_FALSE(fs::exists(out / "analyses" / "action-lens_action_lens.pdf"));
  EXPECT_FALSE(fs::exists(out / "action_lens.pdf")) << "beside the other views' files";
  EXPECT_EQ(AnalysisView::figure_file_base("/f/patching", "patching_stream"), "/f/patching_stream");
  EXPECT_EQ(AnalysisView::figure_file_base("/f/steering", "steering"), "/f/steering");
  EXPECT_EQ(AnalysisView::figure_file_base("/f/mine", "patching_stream"),
            "/f/mine_patching_stream");
  const QStringList earlier = ExportDialog::earlierFigures(QString::fromStdString(out.string()));
  EXPECT_TRUE(earlier.contains("analyses/action_lens.pdf")) << earlier.join(' ').toStdString();
  QString error;
  ASSERT_TRUE(ExportDialog::removeEarlierFigures(QString::fromStdString(out.string()), &error))
      << error.toStdString();
  EXPECT_FALSE(fs::exists(out / "analyses" / "action_lens.pdf"));
}

// Exporting several views: the dialog lists them with their models, leaves out those with
// nothing to draw, warns when the chosen ones show different models, and previews the selected
// one as it will be written at the chosen size.
TEST_F(Figures, ExportDialogChoosesViewsWarnsOfMixedModelsAndPreviewsAtTheChosenSize) {
  ReturnAnalysisView returns;
  returns.setAblation("dt-seed0", {{0, 5, 3000, 100, 90, 3},
                                   {0, 5, 1000, 200, 30, 6},
                                   {0, 5, 2500, 90, 75, 3},
                                   {0, 5, 2000, 50, 60, 2}});
  TsneView tsne;  // the same model, captioned with its variant
  show_twelve_tokens(tsne, "dt-seed0 (dt)");
  EntropyRewardView rollout;    // nothing to draw yet
  CountingSource curves(true);  // a figure of no model in particular

  ExportDialog dialog(nullptr, true);
  dialog.setSources({&returns, &rollout, &tsne, &curves});
  EXPECT_EQ(dialog.chosenSources(), (std::vector<const FigureSource*>{&returns, &tsne, &curves}));
  EXPECT_FALSE(dialog.setSourceChosen("entropy_reward", true)) << "nothing to draw";
  EXPECT_EQ(dialog.mixedModelsWarning(), "") << "one model, and curves of none";

  // Another model's rollout arrives: the warning names the views and their models.
  models::RolloutResult result;
  models::EpisodeTrace trace;
  trace.length = 30;
  for (int t = 0; t < 30; ++t)
    trace.rewards.push_back(1.0 + 0.1 * t), trace.entropy.push_back(2.0 - 0.02 * t);
  result.episodes.push_back(trace);
  rollout.setRollout("gdt-seed1", result, 5);
  dialog.setSources({&returns, &rollout, &tsne, &curves});
  const QString warning = dialog.mixedModelsWarning();
  EXPECT_TRUE(warning.contains("Zeroing and target sweep, Token t-SNE from dt-seed0"))
      << warning.toStdString();
  EXPECT_TRUE(warning.contains("Entropy and reward from gdt-seed1")) << warning.toStdString();
  ASSERT_TRUE(dialog.setSourceChosen("entropy_reward", false));
  EXPECT_EQ(dialog.mixedModelsWarning(), "");
  EXPECT_EQ(dialog.chosenSources().size(), 3u);

  // The preview is the figure as written, at the chosen width.
  ASSERT_TRUE(dialog.selectPreset("icml"));
  dialog.selectSource("returns");
  dialog.updatePreview();
  ASSERT_FALSE(dialog.preview().isNull());
  const int icml = dialog.preview().width();
  EXPECT_NEAR(icml, 3.25 * 110, 1.5);
  ASSERT_TRUE(dialog.selectPreset("neurips"));
  dialog.updatePreview();
  EXPECT_NEAR(dialog.preview().width(), dialog.style().width * 110, 1.5);
  EXPECT_GT(dialog.preview().width(), icml);
  ASSERT_TRUE(dialog.setSourceChosen("entropy_reward", true));
  dialog.selectSource("entropy_reward");
  dialog.updatePreview();
  EXPECT_FALSE(dialog.preview().isNull());
  dialog.show();
  dialog.updatePreview();
  // The whole figure is in view, scaled into its label with its shape kept: nothing cropped.
  for (const QSize dialog_size : {QSize(900, 700), QSize(700, 520), QSize(1400, 900)}) {
    dialog.resize(dialog_size);
    QApplication::processEvents();
    const QPixmap shown = dialog.previewLabel()->pixmap();
    ASSERT_FALSE(shown.isNull());
    const QRect room = dialog.previewLabel()->contentsRect();
    EXPECT_LE(shown.width(), room.width()) << dialog_size.width();
    EXPECT_LE(shown.height(), room.height()) << dialog_size.width();
    EXPECT_NEAR(static_cast<double>(shown.width()) / shown.height(),
                static_cast<double>(dialog.preview().width()) / dialog.preview().height(), 0.02);
  }
  QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
  dialog.grab().save(DSTUDIO_SCREENSHOT_DIR "/export-dialog.png");

  // What was written names its folder as a link.
  const QString report = ExportDialog::writtenReport(
      {(dir / "figs" / "a.pdf").string(), (dir / "figs" / "a.png").string()});
  EXPECT_TRUE(report.startsWith("Wrote 2 files in")) << report.toStdString();
  EXPECT_TRUE(report.contains(
      QUrl::fromLocalFile(QString::fromStdString((dir / "figs").string())).toString()))
      << report.toStdString();
}

// Exporting every view into a folder an earlier export filled asks first: Cancel keeps the dialog
// open and the folder as it was; Replace removes the earlier figures, CSVs and recipes (and
// nothing else) before the dialog accepts.
TEST_F(Figures, ExportAllAsksBeforeReplacingAnEarlierExportsFigures) {
  const QString folder = QString::fromStdString((dir / "figures").string());
  QDir().mkpath(folder);
  for (const char* name : {"tsne.pdf", "tsne.png", "tsne.csv", "tsne.recipe.json", "notes.txt"})
    std::ofstream((dir / "figures" / name).string()) << "an earlier export";
  EXPECT_EQ(ExportDialog::earlierFigures(folder),
            (QStringList{"tsne.csv", "tsne.pdf", "tsne.png", "tsne.recipe.json"}));

  CountingSource counting(true);
  ExportDialog dialog(nullptr, true);
  dialog.setSources({&counting});
  dialog.setOutput(folder);
  dialog.show();
  auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save);
  ASSERT_NE(ok, nullptr);
  ASSERT_TRUE(ok->isEnabled());
  // The question is modal: answered from the event loop it runs.
  const auto answer = [](const QString& button) {
    QTimer::singleShot(0, [button] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      ASSERT_NE(box, nullptr);
      EXPECT_EQ(box->objectName(), "replaceFiguresDialog");
      EXPECT_TRUE(box->text().contains("holds 4 files of an earlier export"))
          << box->text().toStdString();
      bool clicked = false;
      for (auto* b : box->buttons())
        if (b->text().remove('&') == button) {
          b->click();
          clicked = true;
        }
      EXPECT_TRUE(clicked) << button.toStdString();
    });
  };
  answer("Cancel");
  ok->click();
  EXPECT_EQ(dialog.result(), QDialog::Rejected) << "still open, nothing accepted";
  EXPECT_TRUE(dialog.isVisible());
  EXPECT_EQ(ExportDialog::earlierFigures(folder).size(), 4);

  answer("Replace");
  ok->click();
  EXPECT_EQ(dialog.result(), QDialog::Accepted);
  EXPECT_TRUE(ExportDialog::earlierFigures(folder).isEmpty());
  EXPECT_TRUE(std::filesystem::exists(dir / "figures" / "notes.txt"));
}

TEST_F(Figures, ExportDialogRoundTripsItsSettings) {
  {
    ExportDialog dialog;
    // Defaults: ICML's column.
    EXPECT_EQ(dialog.presetName(), preset_named("ICML column").name);
    ASSERT_TRUE(dialog.selectPreset(preset_named("IEEE column").name));
    auto s = dialog.style();
    EXPECT_DOUBLE_EQ(s.width, 3.3);
    EXPECT_DOUBLE_EQ(s.height, 2.5);
    EXPECT_EQ(s.dpi, 600);
    EXPECT_EQ(s.font_family, QString(kSerifFamily));
    EXPECT_EQ(dialog.presetName(), preset_named("IEEE column").name);
    // Editing a field makes it a custom style.
    s.line_width = 2.25;
    s.tick_font = 6.5;
    s.svg = false;
    s.title = "only this figure";
    s.x_title = "steps";
    dialog.setStyle(s);
    EXPECT_EQ(dialog.presetName(), QStringLiteral("Custom"));
    EXPECT_FALSE(dialog.selectPreset("No such venue"));
    dialog.setOutput(QString::fromStdString((dir / "figs" / "attention").string()));
    dialog.setDefaultText({"DT\nOne layer", "key", "query"});
    dialog.show();
    dialog.grab().save(QDir(DSTUDIO_SCREENSHOT_DIR).filePath("export-dialog.png"));
    dialog.remember();
  }
  EXPECT_EQ(QSettings().value("export/dpi").toInt(), 600);
  ExportDialog again;
  const auto s = again.style();
  EXPECT_DOUBLE_EQ(s.width, 3.3);
  EXPECT_DOUBLE_EQ(s.height, 2.5);
  EXPECT_DOUBLE_EQ(s.line_width, 2.25);
  EXPECT_DOUBLE_EQ(s.tickFont(), 6.5);
  EXPECT_DOUBLE_EQ(s.axisFont(), 8.0);
  EXPECT_EQ(s.font_family, QString(kSerifFamily));
  EXPECT_EQ(s.dpi, 600);
  EXPECT_TRUE(s.pdf);
  EXPECT_FALSE(s.svg);
  EXPECT_TRUE(s.png);
  EXPECT_TRUE(s.title.isEmpty()) << "titles belong to one figure";
  EXPECT_TRUE(s.x_title.isEmpty());
  EXPECT_EQ(again.presetName(), QStringLiteral("Custom"));
  EXPECT_EQ(QSettings().value("export/folder").toString(),
            QString::fromStdString((dir / "figs").string()));
  // The folder dialog (export all) starts in the remembered folder.
  ExportDialog folder(nullptr, true);
  EXPECT_EQ(folder.output(), QString::fromStdString((dir / "figs").string()));
  folder.show();
  folder.grab().save(QDir(DSTUDIO_SCREENSHOT_DIR).filePath("export-all-dialog.png"));
  // What the dialog returns drives a real export.
  AttentionMapView view;
  EXPECT_FALSE(view.hasFigure());
  EXPECT_TRUE(view.exportFigure((dir / "none").string(), s).empty());
}

}  // namespace
}  // namespace dstudio::viz
