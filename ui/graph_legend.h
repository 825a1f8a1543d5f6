// Legend: what the quantizer marks on the graph mean, drawn over the bottom-left corner of a
// GraphView with the very badge items the scene uses (so it follows the theme and the
// colour-blind palette): the fill per bit width, the candidate count beside a badge, a weight
// quantizer, a requantizer, a merged-away ghost and a unified-scale ring. It starts folded to its
// title line; a click unfolds and folds it.
#pragma once

#include <QWidget>

namespace qs::ui {

class GraphView;

class GraphLegend : public QWidget {
    Q_OBJECT

public:
    explicit GraphLegend(GraphView& view);

    /// Folded to its title line.
    bool isFolded() const { return m_folded; }

    void setFolded(bool folded);

    /// The rows' texts, top to bottom (for tests and the accessible description).
    static QStringList rowTexts();

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

    void mousePressEvent(QMouseEvent* event) override;

private:
    GraphView& m_view;
    bool m_folded = true; // one line until asked: on a big graph the rows would hide nodes
};

} // namespace qs::ui
