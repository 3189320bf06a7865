// A checkpoint's description read without its weights: the same description the full read gives,
// from a few kilobytes of the file; damaged weights do not stop it (they are not read), a damaged
// description does; files laid out otherwise are left to the full read.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "dstudio/common/read_file.h"
#include "dstudio/common/system_info.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_description.h"
#include "dstudio/models/checkpoint_info.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

const std::filesystem::path kShipped =
    std::filesystem::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-dt.pt";

void write_all(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(CheckpointHeader, SaysWhatTheFullReadSaysFromAFewKilobytes) {
  const auto before = bytes_read_so_far();
  const auto header = read_checkpoint_header(kShipped);
  const auto read = bytes_read_so_far() - before;
  ASSERT_TRUE(header);
  const auto full = read_checkpoint_info(kShipped);
  EXPECT_EQ(header->variant, full.variant);
  EXPECT_EQ(to_json(header->training), to_json(full.training));
  EXPECT_EQ(header->step, full.step);
  EXPECT_EQ(header->state_mean, full.state_mean);
  EXPECT_EQ(header->state_std, full.state_std);
  EXPECT_EQ(header->dataset_fingerprint, full.dataset_fingerprint);
  EXPECT_EQ(header->env_id, full.env_id);
  EXPECT_EQ(header->path, full.path);
  // The file's last kilobyte (the directory's end), the directory and the pickle: not the
  // weights, which are nearly all of the file.
  const auto size = static_cast<long long>(std::filesystem::file_size(kShipped));
  ASSERT_GE(before, 0);
  EXPECT_LT(read, 40'000) << "of " << size;
  EXPECT_GT(size, 800'000);
}

TEST(CheckpointHeader, DamagedWeightsAreNotReadADamagedDescriptionIsRefused) {
  test::TempDir dir;
  const auto bytes = read_regular_file(kShipped, 1 << 30);
  // The first record is the first tensor's data (LibTorch writes data/0 first).
  auto weights = bytes;
  weights[1000] = static_cast<char>(weights[1000] ^ 0x10);
  write_all(dir / "weights.pt", weights);
  EXPECT_THROW((void)read_checkpoint_info(dir / "weights.pt"), CheckpointError);
  const auto header = read_checkpoint_header(dir / "weights.pt");
  ASSERT_TRUE(header);
  EXPECT_EQ(header->variant.variant, "dt");

  auto description = bytes;
  const auto at = description.find("\"dstudio-checkpoint-1\"");
  ASSERT_NE(at, std::string::npos);
  description[at + 3] = 'X';  // within the pickle: its CRC-32 no longer matches
  write_all(dir / "description.pt", description);
  EXPECT_FALSE(read_checkpoint_header(dir / "description.pt"));

  write_all(dir / "text.pt", "not a checkpoint at all");
  EXPECT_FALSE(read_checkpoint_header(dir / "text.pt"));
  write_all(dir / "truncated.pt", bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(read_checkpoint_header(dir / "truncated.pt"));
  EXPECT_THROW((void)read_checkpoint_header(dir / "missing.pt"), CheckpointError);
  EXPECT_THROW((void)read_checkpoint_header(dir.path()), CheckpointError);
}

// The keys of `again` that `written` has, in `again`'s order; the others must hold `defaults`'
// values (fields added since `written` was made).
nlohmann::ordered_json as_written(const nlohmann::ordered_json& again,
                                  const nlohmann::ordered_json& written,
                                  const nlohmann::ordered_json& defaults) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : again.items()) {
    if (written.contains(key))
      out[key] = value;
    else
      EXPECT_EQ(value, defaults.at(key)) << key << " is not the default of a later field";
  }
  return out;
}

// Every checkpoint the studio ships was written by an earlier release: the variant and training
// configurations its description holds read back and write again as the same JSON, key for key,
// in the same order, with numbers in the same text; a field added since writes its default.
TEST(CheckpointHeader, TheShippedCheckpointsConfigurationsWriteBackAsTheyWereWritten) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(DSTUDIO_RESOURCES_DIR) / "checkpoints")) {
    if (entry.path().extension() != ".pt") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = bytes.find(R"({"format":"dstudio-checkpoint-)");
    ASSERT_NE(at, std::string::npos) << entry.path();
    // A pickled text: its length in the four bytes before it, little-endian.
    std::uint32_t length = 0;
    for (int i = 0; i < 4; ++i)
      length |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at - 4 + i]))
                << (8 * i);
    const auto written = nlohmann::ordered_json::parse(bytes.substr(at, length));
    const auto info = read_checkpoint_header(entry.path());
    ASSERT_TRUE(info) << entry.path();
    const auto again = [](const auto& config) {
      return nlohmann::ordered_json::parse(to_json(config));
    };
    EXPECT_EQ(as_written(again(info->variant), written.at("variant"),
                         again(make_variant(info->variant.variant)))
                  .dump(),
              written.at("variant").dump())
        << entry.path();
    EXPECT_EQ(
        as_written(again(info->training), written.at("training"), again(TrainingConfig{})).dump(),
        written.at("training").dump())
        << entry.path();
    // The rest of the description (dataset, scale, step, the trainer's streams or the weights'
    // origin, metrics, software) writes back as the same text, key for key.
    const std::string text = bytes.substr(at, length);
    const auto extras = description_extras(entry.path().string(), text);
    auto again_whole = nlohmann::ordered_json::parse(
        checkpoint_description_text(*info, extras.trainer, extras.origin));
    again_whole["variant"] = written.at("variant");
    again_whole["training"] = written.at("training");
    EXPECT_EQ(again_whole.dump(), text) << entry.path();
    ++seen;
  }
  EXPECT_GE(seen, 12);
}

}  // namespace
}  // namespace dstudio::models
