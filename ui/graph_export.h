// Graph export: writes the graph scene as SVG (QSvgGenerator), PNG (QImage) or PDF (QPdfWriter),
// or the layout input as DOT, always through a temporary file and a rename. renderGraphFile() is
// the whole `quantscope-cli render` pipeline — measure, lay out, build the scene, write — so the
// CLI and the GUI draw with the same code. Output is deterministic for the same model and theme.
#pragma once

#include "core/graph/graph.h"
#include "core/layout/graph_layout.h"
#include "core/quantization/quantization_state.h"
#include "core/support/progress.h"
#include "core/support/result.h"
#include "ui/graph_theme.h"

#include <QString>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qs::ui {

class GraphScene;

enum class ImageFormat { Svg, Png, Pdf, Dot };

/// The format named by `path`'s suffix (.svg, .png, .pdf, .dot/.gv), if any.
std::optional<ImageFormat> imageFormatForPath(const QString& path);

/// Writes the scene's whole graph to `path` as SVG, PNG or PDF.
Result<void> writeSceneImage(GraphScene& scene, const QString& path, ImageFormat format);

/// Writes the layout input of `graph` (boxes with their sizes, edges, labels) as DOT.
Result<void> writeDot(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                      const QString& path);

/// Lays out `graph` with `theme`'s fonts and writes it to `path` in the format its suffix names,
/// with a quantizer badge per mark of `quantizers` (as GraphScene::showQuantizers draws them).
Result<void> renderGraphFile(const graph::Graph& graph, const QString& path,
                             const GraphTheme& theme, Progress& progress,
                             const std::vector<quantization::QuantizerMark>& quantizers = {});

/// A scene as it is laid out now (the GUI page's, overlays included) as SVG markup; an empty scene
/// is an error.
Result<QByteArray> sceneSvg(GraphScene& scene);

/// How renderGraphSvg opens groups and what it adds to the scene.
struct GraphSvgOptions {
    bool expandAll = false; ///< every group open
    /// These groups open (layout::groupKey; a session's or the GUI's), the others closed; unset:
    /// as the GUI first opens them.
    std::optional<std::vector<std::string>> expandedGroups;
    /// Called on the finished scene before it is drawn (overlays such as pruning bars).
    std::function<void(GraphScene&)> decorate;
};

/// The graph as SVG markup, laid out as renderGraphFile() does, its groups opened as `options`
/// says, for pages that inline it (the review report).
Result<QByteArray> renderGraphSvg(const graph::Graph& graph, const GraphTheme& theme,
                                  Progress& progress,
                                  const std::vector<quantization::QuantizerMark>& quantizers,
                                  const GraphSvgOptions& options = {});

} // namespace qs::ui
