// BitwidthChartDrawing: the bit-width charts of a setup, painted with QPainter so that the Bit
// Widths dock and the review report's SVG are the same drawing. Three panels:
//   - quantizers per bit width, activations and weights as two groups, each bar in its bit
//     width's colour (DESIGN.md) and labelled with its count and percentage;
//   - the share per bit width of weight parameters, weight bytes and BitOps, as 100 % stacked
//     bars with the percentages written out, so a 4-bit sliver stays readable;
//   - per op type, its quantizers stacked by bit width.
// Every bar and segment keeps its rectangle, so a click can be mapped back to (bits, weights).
#pragma once

#include "core/report/review_report.h"
#include "ui/graph_theme.h"

#include <QByteArray>
#include <QRectF>
#include <QString>

#include <optional>
#include <vector>

class QPainter;

namespace qs::ui {

/// A clickable bar or segment: its quantizers are those of `bits` (weights, activations, or
/// both when `weights` is unset).
struct ChartHit {
    QRectF rect;
    int bits = 0;
    std::optional<bool> weights;
    QString opType; ///< set: only the quantizers of this op type
};

class BitwidthChartDrawing {
public:
    enum class Panels { All, Distribution, OpTypes };

    BitwidthChartDrawing(report::BitwidthBreakdown breakdown, GraphTheme theme,
                         Panels panels = Panels::All);

    /// The height the drawing needs at `width`.
    double heightFor(double width);

    /// Paints at `width` from the painter's origin; remembers the hit rectangles.
    void paint(QPainter& painter, double width);

    /// After paint(): the bar or segment under `point`, if any.
    std::optional<ChartHit> hitAt(QPointF point) const;

    /// After paint(): every bar and segment.
    const std::vector<ChartHit>& hits() const { return m_hits; }

    const report::BitwidthBreakdown& breakdown() const { return m_breakdown; }

private:
    /// A panel's bold title at `top` (drawn only with a painter); returns the top below it.
    double panelTitle(QPainter* painter, double top, double width, const QString& title) const;
    double countsPanel(QPainter* painter, double top, double width);
    double sharesPanel(QPainter* painter, double top, double width);
    double opTypesPanel(QPainter* painter, double top, double width);
    double layout(QPainter* painter, double width);

    report::BitwidthBreakdown m_breakdown;
    GraphTheme m_theme;
    Panels m_panels;
    std::vector<ChartHit> m_hits;
};

/// The drawing as SVG markup (QSvgGenerator), `width` points wide.
QByteArray bitwidthChartSvg(const report::BitwidthBreakdown& breakdown, const GraphTheme& theme,
                            BitwidthChartDrawing::Panels panels, double width = 640);

} // namespace qs::ui
