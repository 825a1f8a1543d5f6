// The "Inspector" dock: details of what is selected. For an op: its attributes, input and output
// tensors with shapes, and statistics of its weights (min/max/mean/std, parameter count, from
// core's tensorStatistics). For a quantizer (a badge or a Quantizers table row): its insertion
// point, state (active, merged into another, requantizer of its parent), unified-scale group,
// directly quantized ops and candidate configs, with the chosen one editable in a combo that
// pushes the same ChooseQuantizerConfigCommand as the table. It follows the document's changes.
#pragma once

#include <QPointer>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace qs::ui {

class GraphDocument;

/// Properties of the selected op or quantizer.
class InspectorPanel : public QWidget {
    Q_OBJECT

public:
    explicit InspectorPanel(QWidget* parent = nullptr);

    /// Inspects within `document` (nullptr: nothing) and follows its quantization changes.
    void setDocument(GraphDocument* document);

    /// Shows the op named `nodeName` (nothing if the document has no such op).
    void showNode(const QString& nodeName);

    /// Shows quantizer `id` of the document's quantizers (nothing if unknown).
    void showQuantizer(int id);

    /// Shows nothing.
    void clear();

    /// The header line ("Conv conv1", "Quantizer #3", or a hint).
    QString title() const;

    /// The properties: sections at the top level, "key: value" rows below.
    QTreeWidget& properties() const { return *m_tree; }

    /// The value of row `key` in section `section`, or a null string.
    QString value(const QString& section, const QString& key) const;

    /// The rows of `section` as "key: value" strings.
    QStringList rows(const QString& section) const;

    /// The chosen-config combo (enabled for a quantizer with more than one candidate).
    QComboBox& configCombo() const { return *m_configs; }

    /// The quantizer shown, or -1.
    int shownQuantizer() const { return m_quantizer; }

private:
    void refresh();

    void fillNode(const QString& nodeName);

    /// The sections the features' document states add for the op (DocumentState::nodeDetails).
    void fillFeatureDetails(const QString& nodeName);

    void fillQuantizer(int id);

    void chooseCandidate(int index);

    QTreeWidgetItem* addSection(const QString& name);

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QMetaObject::Connection m_stateConnection;
    QLabel* m_title;
    QLabel* m_configLabel;
    QComboBox* m_configs;
    QTreeWidget* m_tree;
    QString m_node;
    int m_quantizer = -1;
};

} // namespace qs::ui
