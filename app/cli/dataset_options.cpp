#include "app/cli/command.h"

namespace qs::cli {

void addDatasetOptions(CLI::App& app, runtime::DatasetSource& source,
                       const DatasetOptionHelp& help) {
    auto* npy = app.add_option(source.names.npy, source.npyFiles, help.npy);
    auto* images = app.add_option(source.names.images, source.imagesDir, help.images);
    auto* random = app.add_option(source.names.random, source.randomSamples, help.random);
    npy->excludes(random);
    images->excludes(npy);
    images->excludes(random);
}

} // namespace qs::cli
