// The "Sensitivity" dock: the Hessian trace (per-tensor score) of every scored op as a horizontal
// bar on a log10 axis, sorted from the most to the least sensitive, with the dataset and the state
// of the scores above it (none yet, fresh, stale) and a Compute… button. Clicking a bar selects
// that op in the graph (barClicked); the op selected in the graph is highlighted in the chart.
#pragma once

#include <QPointer>
#include <QString>
#include <QWidget>

#include <string>
#include <vector>

class QLabel;
class QPushButton;
class QScrollArea;

namespace qs::ui {

class GraphDocument;

/// The bars, painted.
class SensitivityChart : public QWidget {
    Q_OBJECT

public:
    struct Bar {
        QString node;
        QString opType;
        double score = 0.0;
    };

    explicit SensitivityChart(QWidget* parent = nullptr);

    /// Sorts `bars` by score, largest first.
    void setBars(std::vector<Bar> bars);

    const std::vector<Bar>& bars() const { return m_bars; }

    void setHighlighted(const QString& node);

    /// The bar under widget point `point` (-1: none).
    int barAt(const QPoint& point) const;

    /// The rectangle of bar `index`'s row (for tests that click it).
    QRect rowRect(int index) const;

    QSize sizeHint() const override;

Q_SIGNALS:
    void barClicked(const QString& node);

protected:
    void paintEvent(QPaintEvent* event) override;

    void mousePressEvent(QMouseEvent* event) override;

private:
    std::vector<Bar> m_bars;
    QString m_highlighted;
    double m_lowDecade = 0.0;
    double m_highDecade = 1.0;
    double m_lowLog = 0.0;  ///< the smallest and largest log10 score: the colour ramp's ends,
    double m_highLog = 0.0; ///< as on the overlay
};

class SensitivityPanel : public QWidget {
    Q_OBJECT

public:
    explicit SensitivityPanel(QWidget* parent = nullptr);

    void setDocument(GraphDocument* document);

    SensitivityChart& chart() const { return *m_chart; }

    /// The line above the chart ("12 ops · random 8 (seed 0) · 8 samples, 100 iterations").
    QString summary() const;

    QPushButton& computeButton() const { return *m_compute; }

    void refresh();

Q_SIGNALS:
    void computeRequested();

private:
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QLabel* m_summary;
    QPushButton* m_compute;
    QScrollArea* m_scroll;
    SensitivityChart* m_chart;
};

} // namespace qs::ui
