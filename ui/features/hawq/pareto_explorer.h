// ParetoExplorer: the HAWQ dock. Tab "Pareto": every candidate as a point (BitOps compression ratio
// across, metric on a log axis up), the front drawn as a line, the chosen point ringed in red; a
// ratio slider re-selects instantly (selectHawqCandidate: traces and perturbations reused), a
// hover shows a point's bit widths (and asks for a preview of them on the graph badges, as does
// dragging the slider before release), a click applies it. Tab "Traces": the average trace per
// layer (log axis) as bars coloured by the chosen bit width (2 purple, 4 red, 6 orange, 8 green).
#pragma once

#include "core/mixed_precision/hawq_workflow.h"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QSlider;
class QTabWidget;

namespace qs::ui {

/// The scatter of candidates with the front.
class ParetoPlot : public QWidget {
    Q_OBJECT

public:
    explicit ParetoPlot(QWidget* parent = nullptr);

    void setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome, size_t selected);

    void setSelected(size_t selected);

    /// The candidate nearest `position` (within a few pixels), if any.
    std::optional<size_t> candidateAt(QPointF position) const;

    /// Where candidate `index` is drawn.
    QPointF pointOf(size_t index) const;

    QSize sizeHint() const override { return {520, 260}; }

Q_SIGNALS:
    void hovered(std::optional<size_t> index);
    void clicked(size_t index);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    QRectF plotArea() const;

    std::shared_ptr<const mixed_precision::HawqOutcome> m_outcome;
    size_t m_selected = 0;
    std::optional<size_t> m_hover;
    double m_minRatio = 1.0;
    double m_maxRatio = 2.0;
    double m_minLog = -1.0;
    double m_maxLog = 1.0;
};

/// Average traces per layer, bars coloured by the selected candidate's bits.
class TracesPlot : public QWidget {
    Q_OBJECT

public:
    explicit TracesPlot(QWidget* parent = nullptr);

    void setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome, size_t selected);

    QSize sizeHint() const override { return {520, 260}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::shared_ptr<const mixed_precision::HawqOutcome> m_outcome;
    size_t m_selected = 0;
};

class ParetoExplorer : public QWidget {
    Q_OBJECT

public:
    explicit ParetoExplorer(QWidget* parent = nullptr);

    /// Shows `outcome` with `selected` as the chosen candidate (nullptr: empty).
    void setOutcome(std::shared_ptr<const mixed_precision::HawqOutcome> outcome, size_t selected);

    /// Marks the result as stale (its model changed since): the summary says so.
    void setStale(bool stale);

    bool isStale() const { return m_stale; }

    /// Re-selects for `ratio` (the slider does this); false when it is out of range.
    bool setTargetRatio(double ratio);

    size_t selected() const { return m_selected; }

    ParetoPlot& plot() const { return *m_plot; }

    QSlider& slider() const { return *m_slider; }

    QTabWidget& tabs() const { return *m_tabs; }

Q_SIGNALS:
    /// The user asked to apply candidate `index` (a click on the plot, or the slider's choice).
    void applyRequested(size_t index);

    /// Candidate `index` is hovered (or chosen by a slider still held down): preview its bits;
    /// nullopt: the hover or the drag ended, restore the badges.
    void previewRequested(std::optional<size_t> index);

private:
    void onSlider(int value);
    void showSummary(std::optional<size_t> hovered);

    std::shared_ptr<const mixed_precision::HawqOutcome> m_outcome;
    size_t m_selected = 0;
    QTabWidget* m_tabs;
    ParetoPlot* m_plot;
    TracesPlot* m_traces;
    QSlider* m_slider;
    QLabel* m_summary;
    double m_minRatio = 1.0;
    double m_maxRatio = 2.0;
    bool m_stale = false;
};

} // namespace qs::ui
