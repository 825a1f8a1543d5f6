// The "Bit widths" dock, made for reviewing: BitwidthChartDrawing's panels of the open document's
// finalized setup — quantizers per bit width (activations and weights as two groups, bars in the
// bit widths' colours, count and percentage on each), the share of weight parameters, weight bytes
// and BitOps per bit width, and the quantizers of each op type by bit width. The counts come from
// core's bitwidthBreakdown() (the review report draws the same panels to SVG); the drawing redraws
// whenever the quantization changes; clicking a bar or segment reports its bit width and the
// quantizers it counts (the main window then selects them in the graph and the Quantizers table).
#pragma once

#include "core/report/review_report.h"
#include "ui/graph_theme.h"

#include <QList>
#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

namespace qs::ui {

class BitwidthChartDrawing;
class GraphDocument;
struct ChartHit;

/// The painted charts; the panel scrolls them.
class BitwidthChartCanvas : public QWidget {
    Q_OBJECT

public:
    explicit BitwidthChartCanvas(QWidget* parent = nullptr);

    ~BitwidthChartCanvas() override;

    void setBreakdown(const report::BitwidthBreakdown& breakdown);

    /// Colours and text (the graph's theme, so the palettes agree).
    void setTheme(const GraphTheme& theme);

    /// The bar or segment at `point` (widget coordinates), after a paint.
    std::optional<ChartHit> hitAt(QPointF point) const;

    /// The centre of the first bar of `bits` (weights, activations) in the counts panel.
    std::optional<QPointF> barCenter(int bits, bool weights) const;

    QSize sizeHint() const override;

Q_SIGNALS:
    void hitClicked(const ChartHit& hit);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void relayout();

    report::BitwidthBreakdown m_breakdown;
    GraphTheme m_theme;
    std::unique_ptr<BitwidthChartDrawing> m_drawing;
};

/// The dock's widget.
class BitwidthChartPanel : public QWidget {
    Q_OBJECT

public:
    explicit BitwidthChartPanel(QWidget* parent = nullptr);

    /// Shows `document`'s distribution (nullptr: empty) and follows its changes.
    void setDocument(GraphDocument* document);

    /// The graph's theme (light/dark, colour-blind-safe palette).
    void setTheme(const GraphTheme& theme);

    /// What the charts show.
    const report::BitwidthBreakdown& breakdown() const { return m_breakdown; }

    BitwidthChartCanvas& canvas() const { return *m_canvas; }

    /// The quantizers of the finalized setup with `bits` bits, weight or activation ones, by id.
    QList<int> quantizersInBar(int bits, bool weights) const;

    /// Acts as a click on `hit` does.
    void activate(const ChartHit& hit);

Q_SIGNALS:
    /// A bar of bit width `bits` was clicked (0: float).
    void bitwidthClicked(int bits);

    /// A bar was clicked: the ids of the quantizers it counts.
    void quantizersClicked(const QList<int>& ids);

private:
    void reload();

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    report::BitwidthBreakdown m_breakdown;
    BitwidthChartCanvas* m_canvas;
};

} // namespace qs::ui
