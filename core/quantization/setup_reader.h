// Reading a setup JSON (what `quantize --setup-out` writes, SingleConfigQuantizerSetup::toJson)
// back, as strictly as the model importer reads a model: every field of its JSON type and in
// range, no unknown fields and no id given twice, then every point checked against the model it
// is applied to (the node exists, the input port is one of its inputs, a post-hook node has an
// output, a weight point's node has a constant weight, group members are activation points of
// compatible configs). Each failure is one Error naming the JSON path and the problem, e.g.
// "quantization_points[3].qip.input_port_id: node 'conv' has 2 inputs, no input 77".
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace qs::quantization {

/// The setup held by `json`, with every field checked for type and range (not yet against a
/// model).
Result<SingleConfigQuantizerSetup> setupFromJson(const nlohmann::json& json);

/// Checks every point, group and link of `setup` against `model`.
Result<void> checkSetupForModel(const SingleConfigQuantizerSetup& setup, const graph::Graph& model);

/// Parses `text` strictly (repeated keys refused), reads the setup and checks it against `model`.
Result<SingleConfigQuantizerSetup> parseSetup(std::string_view text, const graph::Graph& model);

/// parseSetup on the file at `path`; errors carry "setup '<path>'" (read errors name the file).
Result<SingleConfigQuantizerSetup> readSetupFile(const std::filesystem::path& path,
                                                 const graph::Graph& model);

} // namespace qs::quantization
