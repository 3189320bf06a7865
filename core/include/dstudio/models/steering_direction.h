#pragma once
/// \file
/// A steering direction's file (direction_L<layer>.json, written by `dstudio analyze steering`,
/// read by `steer:` interventions): the direction in the stream, how it was made and the checkpoint
/// it was made for. One field table writes and reads it. Free of LibTorch.

#include <string>
#include <vector>

namespace dstudio::models {

struct SteeringDirectionFile {
  std::vector<double> direction;  ///< one number per stream dimension, each within float32's range
  int layer = 0;                  ///< the block after which it was measured (0: not said)
  double high_target = 0.0, low_target = 0.0;  ///< the targets whose mean streams it separates
  double norm = 0.0;
  std::string checkpoint;       ///< the model it was made for ("" in files that do not say)
  std::string checkpoint_hash;  ///< file_content_hash of that checkpoint ("": not said)
};

/// The file's text (indented JSON and a newline).
std::string steering_direction_text(const SteeringDirectionFile& file);

/// Reads a direction file's text; `where` names it in messages. Throws UsageError "<where>: not a
/// steering direction (...)" for text that is not one, "<where>: <key> ..." for a wrong value.
SteeringDirectionFile read_steering_direction(const std::string& text, const std::string& where);

}  // namespace dstudio::models
