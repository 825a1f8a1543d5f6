// The sensitivity overlay (View ▸ Sensitivity Overlay): once Hessian scores are computed, every
// scored op gets a frame coloured by log10 of its per-tensor score on a purple → orange → yellow
// ramp (plasma; unlike the red/green of SQNR and the bit-width colours) with the exponent next to
// it, and a legend in the view's top-right corner shows the range — or says that there are no
// scores yet or that they are stale. It re-applies itself on every new layout and score change.
#pragma once

#include <QGraphicsItem>
#include <QPointer>
#include <QWidget>

namespace qs::ui {

class GraphDocument;
class GraphPage;
class NodeItem;

/// The colour of `t` in [0, 1] on the overlay's ramp.
QColor sensitivityColor(double t);

/// A coloured frame and log10 label around one op box (a child of the box).
class SensitivityHaloItem : public QGraphicsItem {
public:
    enum { Type = UserType + 30 };

    /// `t` places `log10Score` on the ramp (0: the least sensitive op, 1: the most).
    SensitivityHaloItem(NodeItem* node, double log10Score, double t);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    double log10Score() const { return m_log10; }

    QColor color() const { return sensitivityColor(m_t); }

private:
    QRectF m_box;
    double m_log10;
    double m_t;
};

/// The overlay's scale, or why there is none.
class SensitivityLegend : public QWidget {
    Q_OBJECT

public:
    explicit SensitivityLegend(QWidget* parent = nullptr);

    /// The range of log10 scores shown.
    void setRange(double low, double high);

    /// Empty: the colour scale; otherwise this message instead.
    void setMessage(const QString& message);

    const QString& message() const { return m_message; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString m_message;
    double m_low = 0.0;
    double m_high = 0.0;
};

/// Keeps the frames and the legend of the graph page in step with the document's scores.
class SensitivityOverlay : public QObject {
    Q_OBJECT

public:
    explicit SensitivityOverlay(GraphPage& page, QObject* parent = nullptr);

    void setDocument(GraphDocument* document);

    void setEnabled(bool enabled);

    bool isEnabled() const { return m_enabled; }

    SensitivityLegend& legend() const { return *m_legend; }

    /// Op boxes that carry a frame now.
    int haloCount() const;

    /// The frame on op `nodeName`, or nullptr (not scored, not drawn, overlay off).
    const SensitivityHaloItem* halo(const QString& nodeName) const;

    void refresh();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void placeLegend();

    GraphPage& m_page;
    SensitivityLegend* m_legend;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_stateConnection;
    bool m_enabled = false;
};

} // namespace qs::ui
