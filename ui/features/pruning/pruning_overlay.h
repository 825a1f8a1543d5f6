// The pruning annotations on the graph (View ▸ Pruning Overlay, on by default): once a model is
// pruned, the members of each pruning section (entry, intermediates, exit) share a tint behind
// their boxes — a node that is the exit of one section and the entry of the next is tinted in the
// next one's colour and ringed in the previous one's; each entry shows "256 → 160" and its kept
// fraction as a bar under its box (kept channels in the section's colour, pruned ones grey); every
// other op gets a small "no entry" mark on its header whose tooltip (and the box's) says why it
// is not prunable (a fan-out, a residual Add, a Concat, a grouped convolution…). Redrawn after
// every layout and every change of the document's pruning.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QPointer>

#include <cstdint>
#include <optional>

namespace qs::ui {

class GraphDocument;
class GraphPage;
class NodeItem;

/// The colour of pruning section `section` (a fixed cycle of distinct hues).
QColor pruningSectionColor(int section);

/// The tint behind one section member's box (a child of the box, stacked behind it).
class PruningTintItem : public QGraphicsItem {
public:
    enum { Type = UserType + 40 };

    /// `fill`: the colour of the section the node enters or is inside; `exitRing`: the colour of
    /// the section it leaves, when it is an exit.
    PruningTintItem(NodeItem* node, int section, const QColor& fill,
                    std::optional<QColor> exitRing);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    int section() const { return m_section; }

    QColor fill() const { return m_fill; }

private:
    QRectF m_box;
    int m_section;
    QColor m_fill;
    std::optional<QColor> m_exitRing;
};

/// "256 → 160" and the kept-fraction bar under an entry's box (a child of the box).
class PruningEntryItem : public QGraphicsItem {
public:
    enum { Type = UserType + 41 };

    PruningEntryItem(NodeItem* node, int section, int64_t channels, int64_t kept,
                     const QColor& color, bool constrained);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    int section() const { return m_section; }

    /// "256 → 160".
    QString label() const;

    double keptFraction() const;

private:
    QRectF m_box;
    int m_section;
    int64_t m_channels;
    int64_t m_kept;
    QColor m_color;
    bool m_constrained;
};

/// The mark of an op outside every section; its tooltip says why.
class NotPrunableItem : public QGraphicsItem {
public:
    enum { Type = UserType + 42 };

    NotPrunableItem(NodeItem* node, const QString& reason);

    int type() const override { return Type; }

    QRectF boundingRect() const override;

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const QString& reason() const { return m_reason; }

private:
    QString m_reason;
};

/// Keeps the graph page's annotations in step with the document's pruning.
class PruningOverlay : public QObject {
    Q_OBJECT

public:
    explicit PruningOverlay(GraphPage& page, QObject* parent = nullptr);

    void setDocument(GraphDocument* document);

    void setEnabled(bool enabled);

    bool isEnabled() const { return m_enabled; }

    /// The annotation of type T on op `nodeName`'s box, or nullptr (none, not drawn, off).
    template <typename T>
    const T* item(const QString& nodeName) const {
        return static_cast<const T*>(find(nodeName, T::Type));
    }

    /// How many annotations of item type `type` are on the scene.
    int count(int type) const;

    void refresh();

private:
    const QGraphicsItem* find(const QString& nodeName, int type) const;

    void clear();

    GraphPage& m_page;
    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_stateConnection;
    bool m_enabled = true;
};

} // namespace qs::ui
