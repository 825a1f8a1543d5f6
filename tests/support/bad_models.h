// Hostile and broken model files for the importer's bad-input tests (unit tests, the CLI test
// and the fuzz corpus): each is written into a folder by writeBadModels().
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace qs::testing {

struct BadModel {
    std::string name;                ///< file name inside the folder
    std::string expectedMessagePart; ///< a phrase the one-line error must contain
};

/// Writes every bad model (and the side files they point at) into `dir`; returns the cases.
std::vector<BadModel> writeBadModels(const std::filesystem::path& dir);

/// Writes a valid model whose initializer "w" lives in the side file "weights.bin".
void writeExternalDataModel(const std::filesystem::path& dir, const std::string& fileName);

/// A small valid model (Relu over a 1x4 float input, plus a Constant-fed Add), serialized.
std::string validModelBytes();

} // namespace qs::testing
