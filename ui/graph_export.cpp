#include "ui/graph_export.h"

#include "core/layout/layout.h"
#include "core/support/atomic_file.h"
#include "ui/graph_scene.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <algorithm>
#include <string_view>

namespace qs::ui {

namespace {
constexpr double kPngScale = 2.0;       ///< pixels per scene point, for crisp text
constexpr double kMaxPngSide = 16000.0; ///< bigger graphs are scaled down to this
constexpr double kMaxPngPixels = 120e6;

Result<void> writeBytes(const QString& path, const QByteArray& bytes) {
    return writeFileAtomically(
        path.toStdString(), std::string_view(bytes.constData(), static_cast<size_t>(bytes.size())));
}

QByteArray svgBytes(GraphScene& scene, const QRectF& source) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(QStringLiteral("Quantscope graph"));
    svg.setDescription(
        QStringLiteral("Drawn by Quantscope %1").arg(QString::fromLatin1(QS_VERSION)));
    QPainter painter(&svg);
    painter.fillRect(QRectF(QPointF(0, 0), source.size()), scene.theme().background);
    scene.render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    painter.end();
    return buffer.data();
}

QByteArray pngBytes(GraphScene& scene, const QRectF& source) {
    double scale = std::min(kPngScale, kMaxPngSide / std::max(source.width(), source.height()));
    scale = std::min(scale, std::sqrt(kMaxPngPixels / (source.width() * source.height())));
    const QSize size(std::max(1, static_cast<int>(source.width() * scale)),
                     std::max(1, static_cast<int>(source.height() * scale)));
    QImage image(size, QImage::Format_RGB32);
    image.fill(scene.theme().background);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source);
    }
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return buffer.data();
}

/// QPdfWriter stamps the current time into the document; a fixed date keeps output stable.
QByteArray pdfBytes(GraphScene& scene, const QRectF& source) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("Quantscope %1").arg(QString::fromLatin1(QS_VERSION)));
        pdf.setTitle(QStringLiteral("Quantscope graph"));
        pdf.setPageSize(QPageSize(source.size(), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setResolution(72);
        QPainter painter(&pdf);
        painter.fillRect(QRectF(QPointF(0, 0), source.size()), scene.theme().background);
        scene.render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    }
    QByteArray bytes = buffer.data();
    static const QRegularExpression date(QStringLiteral("\\(D:[0-9+\\-Z']+\\)"));
    QString text = QString::fromLatin1(bytes);
    text.replace(date, QStringLiteral("(D:20000101000000Z)"));
    return text.toLatin1();
}
} // namespace

std::optional<ImageFormat> imageFormatForPath(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("svg")) {
        return ImageFormat::Svg;
    }
    if (suffix == QLatin1String("png")) {
        return ImageFormat::Png;
    }
    if (suffix == QLatin1String("pdf")) {
        return ImageFormat::Pdf;
    }
    if (suffix == QLatin1String("dot") || suffix == QLatin1String("gv")) {
        return ImageFormat::Dot;
    }
    return std::nullopt;
}

Result<void> writeSceneImage(GraphScene& scene, const QString& path, ImageFormat format) {
    const QRectF source = scene.sceneRect();
    if (source.isEmpty()) {
        return Error(Errc::InvalidArgument, "there is no graph to draw");
    }
    switch (format) {
    case ImageFormat::Svg:
        return writeBytes(path, svgBytes(scene, source));
    case ImageFormat::Png:
        return writeBytes(path, pngBytes(scene, source));
    case ImageFormat::Pdf:
        return writeBytes(path, pdfBytes(scene, source));
    case ImageFormat::Dot:
        break;
    }
    return Error(Errc::InvalidArgument, "DOT is written from the layout input, not the scene");
}

Result<void> writeDot(const graph::Graph& graph, const layout::GraphLayoutModel& model,
                      const QString& path) {
    std::vector<std::string> labels;
    labels.reserve(model.items.size());
    for (const layout::LayoutItem& item : model.items) {
        labels.push_back(layout::itemLabel(graph, item));
    }
    const std::string dot = layout::toDot(model.input, labels);
    return writeFileAtomically(path.toStdString(), dot);
}

Result<void> renderGraphFile(const graph::Graph& graph, const QString& path,
                             const GraphTheme& theme, Progress& progress,
                             const std::vector<quantization::QuantizerMark>& quantizers) {
    const std::optional<ImageFormat> format = imageFormatForPath(path);
    if (!format) {
        return Error(Errc::InvalidArgument, "cannot tell the image format from '" +
                                                path.toStdString() +
                                                "': use .svg, .png, .pdf or .dot");
    }
    GraphScene scene;
    scene.setTheme(theme);
    const layout::GraphLayoutModel model = scene.prepareLayout(graph);
    if (*format == ImageFormat::Dot) {
        return writeDot(graph, model, path);
    }
    // The whole graph, every group open: each dot call stays one group's size.
    const layout::GroupTree tree =
        layout::buildGroupTree(model.input, layout::itemScopes(graph, model));
    const std::vector<bool> expanded = layout::expandAll(tree);
    QS_ASSIGN_OR_RETURN(const layout::GroupedLayout placed,
                        layout::computeGroupedLayout(model.input, tree, expanded,
                                                     scene.measureGroups(graph, model, tree), {},
                                                     progress));
    scene.populate(graph, model, tree, expanded, placed);
    scene.showQuantizers(quantizers);
    return writeSceneImage(scene, path, *format);
}

Result<QByteArray> sceneSvg(GraphScene& scene) {
    const QRectF source = scene.sceneRect();
    if (source.isEmpty()) {
        return Error(Errc::InvalidArgument, "there is no graph to draw");
    }
    return svgBytes(scene, source);
}

Result<QByteArray> renderGraphSvg(const graph::Graph& graph, const GraphTheme& theme,
                                  Progress& progress,
                                  const std::vector<quantization::QuantizerMark>& quantizers,
                                  const GraphSvgOptions& options) {
    GraphScene scene;
    scene.setTheme(theme);
    const layout::GraphLayoutModel model = scene.prepareLayout(graph);
    const layout::GroupTree tree =
        layout::buildGroupTree(model.input, layout::itemScopes(graph, model));
    std::vector<bool> expanded =
        options.expandAll ? layout::expandAll(tree) : layout::autoExpand(tree);
    if (!options.expandAll && options.expandedGroups) {
        const std::vector<std::string>& keys = *options.expandedGroups;
        for (uint32_t g = 1; g < tree.groups.size() && g < expanded.size(); ++g) {
            expanded[g] =
                std::find(keys.begin(), keys.end(), layout::groupKey(tree.groups[g])) != keys.end();
        }
    }
    QS_ASSIGN_OR_RETURN(const layout::GroupedLayout placed,
                        layout::computeGroupedLayout(model.input, tree, expanded,
                                                     scene.measureGroups(graph, model, tree), {},
                                                     progress));
    scene.populate(graph, model, tree, expanded, placed);
    scene.showQuantizers(quantizers);
    if (options.decorate) {
        options.decorate(scene);
    }
    return sceneSvg(scene);
}

} // namespace qs::ui
