#pragma once
/// \file
/// The panel of one registered analysis (analysis_registry.h), made from its definition alone:
/// an option form from its options schema (integers, numbers with their ranges, text, choices,
/// flags, each with its default), Run and Cancel, a progress bar, and once it has run its summary,
/// its tables and its figures. It computes nothing: Run asks for the analysis with the form's
/// options (runRequested) and whoever runs it hands the result back (setResult). Its figures
/// export like every other view's (FigureSource).

#include <QWidget>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/viz/figures.h"

class QComboBox;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTreeWidget;

namespace dstudio::viz {

/// The folder of an export of every view that holds the Analyses tab's figures.
inline constexpr char kAnalysesExportFolder[] = "analyses";

class AnalysisView : public QWidget, public FigureSource {
  Q_OBJECT
 public:
  explicit AnalysisView(std::shared_ptr<const analysis::AnalysisDefinition> definition,
                        QWidget* parent = nullptr);

  [[nodiscard]] const analysis::AnalysisDefinition& definition() const { return *definition_; }
  /// The form's values by option key, as the command line would pass them; an option without a
  /// default that is left at "default" is not among them.
  [[nodiscard]] std::map<std::string, std::string> options() const;
  /// Sets the form's value of `key` (as text); false when there is no such option.
  bool setOption(const std::string& key, const std::string& value);
  /// Run is offered once there is something to run on; `note` says what it will run on.
  void setReady(bool ready, const QString& note = {});
  void setRunning(bool running);
  void setProgress(double fraction, const QString& stage);
  /// Shows what the analysis computed and ends the run; `model` names the checkpoint it ran on.
  void setResult(const analysis::AnalysisResult& result, const QString& model = {});
  /// Forgets the result (another checkpoint was opened).
  void clearResult();
  /// Ends the run without a result: `why` (cancelled, or an error).
  void stop(const QString& why);
  [[nodiscard]] bool hasResult() const { return result_ != nullptr; }
  [[nodiscard]] const analysis::AnalysisResult* result() const { return result_.get(); }
  [[nodiscard]] QString status() const;
  /// Adds a sentence to the status line under the figure (what was written where).
  void appendStatus(const QString& sentence);
  /// The figure on screen (index into the result's figures).
  void showFigure(int index);
  [[nodiscard]] QTabWidget* tables() const { return tables_; }
  [[nodiscard]] QTreeWidget* summary() const { return summary_; }

  [[nodiscard]] QString figureName() const override;
  /// "Analyses: <the analysis's title>", apart from the tabs that show the same analysis.
  [[nodiscard]] QString figureTitle() const override;
  [[nodiscard]] bool hasFigure() const override;
  [[nodiscard]] FigureText figureText() const override;
  [[nodiscard]] QString figureModel() const override { return result_ ? model_ : QString(); }
  /// kAnalysesExportFolder: an export of every view puts these figures in a folder of their own.
  [[nodiscard]] QString exportFolder() const override;
  /// Every figure of the result at figure_file_base(base, figure), each with its numbers as CSV,
  /// and, when the result has a recipe maker, a .recipe.json beside it (what `dstudio figure
  /// render` draws it again from).
  std::vector<std::string> exportFigure(const std::string& base,
                                        const FigureStyle& style = {}) const override;
  /// Where the figure `name` of an export to `base` goes: the figure's own name, as `dstudio
  /// analyze` writes it, beside `base` when base's file name is the analysis's ("patching" and
  /// "patching_stream": patching_stream, never patching_patching_stream); else base_<name>.
  static std::string figure_file_base(const std::string& base, const std::string& name);

  /// What made the result, as a recipe without the figure's name, outputs and time, for the style
  /// given (dstudio/common/figure_recipe.h); set with the result by whoever ran it. It may throw
  /// (an input that cannot be read), which the export reports.
  using RecipeMaker = std::function<FigureRecipe(const FigureStyle&)>;
  void setRecipeMaker(RecipeMaker maker) { recipe_maker_ = std::move(maker); }
  /// The recipe of the figure on screen in the default style, as JSON text; empty without a
  /// result or a recipe maker. What "Copy Figure Recipe" puts on the clipboard.
  [[nodiscard]] std::string figureRecipeText() const;

 signals:
  void runRequested();
  void cancelRequested();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The panel's parts, built in this order by the constructor between its heading and its
  // summary: the option form, a field an option (typed as its schema says, holding its
  // default); Run, Cancel and the progress; then the figure, its choice, recipe and export, over
  // the tables.
  QWidget* buildOptionsForm();
  QWidget* optionField(const analysis::AnalysisOption& o);
  QHBoxLayout* buildRunRow();
  QSplitter* buildFigureSide();
  void redrawFigure();

  std::shared_ptr<const analysis::AnalysisDefinition> definition_;
  std::map<std::string, QWidget*> fields_;
  QLabel* note_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QTreeWidget* summary_;
  QTabWidget* tables_;
  QComboBox* figure_choice_;
  QLabel* figure_;
  std::shared_ptr<const analysis::AnalysisResult> result_;
  QString model_;
  RecipeMaker recipe_maker_;
  QPushButton* copy_recipe_;
  QPushButton* export_;
  bool ready_ = false;
};

}  // namespace dstudio::viz
