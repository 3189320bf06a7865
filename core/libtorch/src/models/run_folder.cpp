// Training run folders. See run_folder.h.

#include "dstudio/models/run_folder.h"

#include <fstream>
#include <iterator>
#include <regex>

#include "dstudio/common/error.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/run_description.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {
namespace fs = std::filesystem;

RunFolder read_run_folder(const fs::path& dir) {
  RunFolder run;
  run.dir = fs::absolute(dir).lexically_normal();
  if (!run.dir.has_filename()) run.dir = run.dir.parent_path();  // "runs/a/" names "a"
  run.name = run.dir.filename().string();
  run.metrics = analysis::read_run_metrics(run.dir);
  std::error_code ec;
  run.complete = fs::exists(run.dir / "checkpoint.pt", ec);
  // What produced it: run.json (the studio's), else the checkpoint, else the folder's name.
  if (std::ifstream in(run.dir / "run.json"); in) {
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      const auto described = read_run_description(text, (run.dir / "run.json").string());
      run.label = described.label;
      if (described.training) {
        run.seed = std::to_string(described.training->seed);
        run.total_steps = described.training->steps;
      } else if (described.training_given) {
        run.seed = "0";  // a training object that does not read (edited by hand)
      }
      if (described.variant && described.training)
        run.config = run_config_values(*described.variant, *described.training);
      return run;
    } catch (const Error&) {
      // Not a run.json the studio wrote: named by its checkpoint or its folder below.
    }
  }
  if (run.complete) {
    try {
      // A listing needs the description only: the weights are read where they are used.
      const auto header = read_checkpoint_header(run.dir / "checkpoint.pt");
      const auto info = header ? *header : read_checkpoint_info(run.dir / "checkpoint.pt");
      run.label = info.variant.variant;
      run.seed = std::to_string(info.training.seed);
      run.total_steps = info.training.steps;
      run.config = run_config_values(info.variant, info.training);
      return run;
    } catch (const std::exception&) {
      // Named by its folder below.
    }
  }
  static const std::regex pattern(R"(^(.+)-seed(\d+)(-.*)?$)");
  std::smatch m;
  if (std::regex_match(run.name, m, pattern)) {
    run.label = m[1];
    run.seed = m[2];
  } else {
    run.label = run.name;
  }
  return run;
}

fs::path make_run_folder(const fs::path& root, const std::string& label, std::uint64_t seed,
                         const std::string& stamp) {
  const std::string base = label + "-seed" + std::to_string(seed) + "-" + stamp;
  std::error_code ec;
  fs::create_directories(root, ec);
  // A second run in the same second gets a suffix; create_directory says whether it was new.
  for (int n = 1; n < 10000; ++n) {
    const fs::path dir = root / (n == 1 ? base : base + "-" + std::to_string(n));
    if (fs::create_directory(dir, ec)) return fs::absolute(dir);
    if (ec) throw Error(root.string() + ": cannot make a run folder (" + ec.message() + ")");
  }
  throw Error(root.string() + ": too many run folders named " + base);
}

}  // namespace dstudio::models
