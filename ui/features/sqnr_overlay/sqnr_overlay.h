// The SQNR overlay (View ▸ SQNR Overlay): once a model is calibrated, every quantizer badge gets a
// ring coloured from red (low SQNR) to green (high) with its SQNR in dB next to it, and a legend
// in the view's top-left corner shows the scale — or says that the calibration is missing or
// stale. Independently of the toggle, a fresh calibration adds each quantizer's range, scale,
// zero point and SQNR to its badge tooltip. The overlay re-applies itself whenever the badges are
// redrawn (a quantization change, a new layout) or the calibration changes.
#pragma once

#include <QGraphicsItem>
#include <QPointer>
#include <QWidget>

namespace qs::ui {

class GraphDocument;
class GraphPage;
class QuantizerBadgeItem;

/// A coloured ring and dB label around one quantizer badge (a child of the badge).
class SqnrHaloItem : public QGraphicsItem {
public:
    enum { Type = UserType + 20 };

    SqnrHaloItem(QuantizerBadgeItem* badge, double sqnrDb);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    double sqnrDb() const { return m_sqnrDb; }

    QColor color() const;

private:
    bool m_weight;
    double m_sqnrDb;
};

/// The scale of the overlay, or why there is none.
class SqnrLegend : public QWidget {
    Q_OBJECT

public:
    explicit SqnrLegend(QWidget* parent = nullptr);

    /// Empty: the colour scale; otherwise this message instead ("stale — recalibrate").
    void setMessage(const QString& message);

    const QString& message() const { return m_message; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_message;
};

/// Keeps the halos, tooltips and legend of the graph page in step with the calibration.
class SqnrOverlay : public QObject {
    Q_OBJECT

public:
    explicit SqnrOverlay(GraphPage& page, QObject* parent = nullptr);

    /// Follows `document` (the one the page shows).
    void setDocument(GraphDocument* document);

    void setEnabled(bool enabled);

    bool isEnabled() const { return m_enabled; }

    SqnrLegend& legend() const { return *m_legend; }

    /// Number of badges that carry a halo now.
    int haloCount() const;

    /// Re-applies halos, tooltips and legend.
    void refresh();

private:
    void updateToolTips();

    GraphPage& m_page;
    SqnrLegend* m_legend;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_quantizationConnection;
    QMetaObject::Connection m_calibrationConnection;
    bool m_enabled = false;
};

} // namespace qs::ui
