// QuantizerTableModel: the table adapter of the "Quantizers" dock (QuantizerPanel). It shows the
// open document's quantizers (core QuantizerMark list) — id, insertion point, kind, candidates,
// chosen config, state (active / merged / requant), unified-scale group, and the calibrated range,
// scale, zero point and SQNR once calibrated — and turns an edit of the chosen-config cell (a combo
// of the point's candidates, QuantizerConfigDelegate) into a ChooseQuantizerConfigCommand.
#pragma once

#include "core/quantization/quantization_state.h"

#include <QAbstractTableModel>
#include <QPointer>

#include <vector>

namespace qs::ui {

class GraphDocument;

/// Table adapter over the document's quantizers; rebuilt when the quantization changes.
class QuantizerTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Id,
        Point,
        OpType,
        Kind,
        Candidates,
        Config,
        State,
        Group,
        Low,       ///< calibrated range (lowest channel's low), when calibrated and not stale
        High,      ///<
        Scale,     ///< per-tensor value, or "a … b (N ch)"
        ZeroPoint, ///<
        Sqnr,      ///< float model vs quantized model at this quantizer, dB
        ColumnCount
    };

    /// Role of the Config column: the candidate configs as strings (QStringList).
    static constexpr int CandidatesRole = Qt::UserRole + 1;
    /// Role of the Config column: index of the chosen candidate (int).
    static constexpr int ChosenIndexRole = Qt::UserRole + 2;

    explicit QuantizerTableModel(QObject* parent = nullptr);

    /// Shows `document`'s quantizers (nullptr: none) and follows its changes.
    void setDocument(GraphDocument* document);

    int rowCount(const QModelIndex& parent = {}) const override;

    int columnCount(const QModelIndex& parent = {}) const override;

    QVariant data(const QModelIndex& index, int role) const override;

    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    Qt::ItemFlags flags(const QModelIndex& index) const override;

    /// Config column, EditRole, candidate index: pushes a ChooseQuantizerConfigCommand.
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    /// The quantizer on `row`.
    const quantization::QuantizerMark& markAt(int row) const {
        return m_marks.at(static_cast<size_t>(row));
    }

    /// The document shown, or nullptr.
    GraphDocument* document() const { return m_document.data(); }

    /// The row of quantizer `id`, or -1.
    int rowOf(int id) const;

private:
    void reload();

    /// Takes `marks` row by row when they are the rows shown (same quantizers at the same
    /// points), signalling only the changed rows; false (nothing touched) otherwise.
    bool updateChangedRows(const std::vector<quantization::QuantizerMark>& marks);

    const quantization::QuantizerConfigList* candidates(int id) const;

    /// CandidatesRole / ChosenIndexRole of the Config column.
    QVariant candidatesData(const quantization::QuantizerMark& mark, int role) const;

    /// DisplayRole of the setup columns.
    QVariant displayData(int row, int column) const;

    /// The calibration columns' display value of `mark` (a number where one sorts well).
    QVariant calibrationData(const quantization::QuantizerMark& mark, int column) const;

    QPointer<GraphDocument> m_document;
    QMetaObject::Connection m_connection;
    QMetaObject::Connection m_calibrationConnection;
    std::vector<quantization::QuantizerMark> m_marks;
    std::vector<QString> m_opTypes; ///< by row
};

} // namespace qs::ui
