#pragma once
/// \file
/// The recipe of a figure of a registered analysis (dstudio/common/figure_recipe.h): what
/// `dstudio analyze` writes beside each figure, what the studio's Analyses tab writes when it
/// exports one or copies its recipe, and what `dstudio figure render` reads back. The two
/// directions of the mapping between a run and its recipe share these helpers.

#include <filesystem>
#include <map>
#include <string>

#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/viz/figures.h"

namespace dstudio::recipes {

/// Absolute and normal, without a trailing separator: "runs/dc/" and "./runs/dc" name one folder.
std::string absolute_path(const std::string& path);
/// The option `key` of `definition`, or null.
const analysis::AnalysisOption* option_of(const analysis::AnalysisDefinition& definition,
                                          const std::string& key);
/// Whether `definition` has an option `key` of `type`.
bool has_option(const analysis::AnalysisDefinition& definition, const std::string& key,
                analysis::AnalysisOption::Type type);
/// The second checkpoint of an analysis that compares two (--compare): a recipe field of its own.
bool is_compared_checkpoint(const analysis::AnalysisDefinition& definition, const std::string& key);
/// The options a recipe holds in fields of their own: the second checkpoint, the seed, the
/// rollout step and the target return.
bool held_by_field(const analysis::AnalysisDefinition& definition, const std::string& key);
/// A run folder's training log (metrics.jsonl or metrics.csv), "" when it has none.
std::string training_log(const std::filesystem::path& folder);
/// The content fingerprint of a dataset, read in the reader process (once per version of the
/// file: its size and modification time).
std::string dataset_fingerprint(const std::string& path);
/// The checkpoint's own dataset where the analyses find it, "" when it is not on this machine.
std::string own_dataset(const std::string& checkpoint);

/// What an analysis runs on, its paths absolute: the analysis is given these, so that whatever it
/// draws from a path (a run folder's name in a legend) is the same when a recipe is re-rendered
/// from another folder.
struct AnalysisCall {
  std::string checkpoint, dataset;           ///< "" when not given
  std::map<std::string, std::string> given;  ///< the options given; those naming a path absolute
};

/// `given` (option name without dashes -> text) with the checkpoint, the dataset and every text
/// option naming an existing file or folder made absolute.
AnalysisCall absolute_call(const analysis::AnalysisDefinition& definition,
                           const std::string& checkpoint, const std::string& dataset,
                           const std::map<std::string, std::string>& given);

/// The recipe the figures of one run of `definition` share, without the figure's name, outputs
/// and time: the options resolved (defaults included), each input's content hash and the
/// dataset's fingerprint, the style in force (`preset`: the venue it came from, "" for none).
/// Throws as reading the inputs does.
FigureRecipe analysis_recipe(const analysis::AnalysisDefinition& definition,
                             const AnalysisCall& call, const std::string& preset,
                             const viz::FigureStyle& style);

}  // namespace dstudio::recipes
