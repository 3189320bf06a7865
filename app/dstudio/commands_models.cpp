// dstudio variants: the model variants and their default configurations.

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::cli {

void add_model_commands(CLI::App& app, int& exit_code) {
  auto* variants = app.add_subcommand("variants", "List the model variants with their default configurations");
  auto json = std::make_shared<bool>(false);
  variants->add_flag("--json", *json, "Print one JSON object: variant name -> default configuration");
  variants->callback([&exit_code, json] {
    if (*json) {
      nlohmann::ordered_json all;
      for (const auto& name : models::variant_names()) all[name] = nlohmann::ordered_json::parse(models::to_json(models::make_variant(name)));
      std::cout << all.dump(2) << std::endl;
    } else {
      std::printf("%-17s %-12s %-19s %-7s %s\n", "variant", "tokens", "mixer", "K", "layers x hidden, heads");
      for (const auto& name : models::variant_names()) {
        const auto c = models::make_variant(name);
        std::string mixer = models::to_string(c.mixer);
        if (c.hybrid) mixer += " + attention";
        if (c.single_filter && c.tokenizer == models::Tokenizer::Triplet) mixer += " (1 filter)";
        std::string tokens = models::to_string(c.tokenizer);
        if (c.tokenizer == models::Tokenizer::Merged) tokens += "/" + std::string(models::to_string(c.merger));
        std::printf("%-17s %-12s %-19s %-7d %d x %d, %d\n", name.c_str(), tokens.c_str(), mixer.c_str(), c.context_length,
                    c.layers, c.hidden, c.heads);
      }
      std::printf("\nhier takes --merger none|concat|attention|conv|pooling and --mixer "
                  "none|attention|linear-attention|conv|pooling (DHi = conv + pooling).\n");
    }
    exit_code = kOk;
  });
}

}  // namespace dstudio::cli
